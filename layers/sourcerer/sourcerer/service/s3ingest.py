"""Ingestion from S3: objects under `tenants/{tenant}/{scope path}/{file}` in the documents bucket.

Created objects are ingested into `{tenant}` at scope `{tenant}/{scope path}`; removed objects delete their
document; either way the bucket's current state decides, not the event (see `handle_record`). The document id
is derived from the scope and `s3://bucket/key`, so a retried event finds the same content and reports
`unchanged`: it never duplicates chunks. Keys outside the layout and
tenants that do not exist raise `RejectedObject`, so the message ends in the dead-letter queue with the reason
logged — never ingested somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from sourcerer.errors import InvalidRequest, QuotaExceeded, RejectedObject
from sourcerer.ledger.base import sequencer_key
from sourcerer.scopes import Access, normalize_scope, validate_tenant
from sourcerer.service.core import Service
from sourcerer.service.tenancy import Context, tier_named
from sourcerer.store.models import Document, document_id_for

PREFIX = "tenants/"


@dataclass
class ObjectRef:
    bucket: str
    key: str
    tenant: str
    scope: str
    sequencer: str | None = None  # normalised (`sequencer_key`); absent in hand-made events

    @property
    def source_uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @property
    def access(self) -> Access:
        """Whoever may write the object key may write its scope, and only that scope: the key's path is the grant."""
        return Access(scopes=(self.scope,), groups=None)


def parse_record(record: dict[str, Any]) -> ObjectRef:
    """One S3 event notification record -> where it belongs (raises `RejectedObject`)."""
    try:
        bucket = record["s3"]["bucket"]["name"]
        key = unquote_plus(record["s3"]["object"]["key"])
        record["eventName"]  # the event's kind and version are only hints: the bucket's current state decides
    except (KeyError, TypeError) as exc:
        raise RejectedObject(f"not an S3 event record: missing {exc}") from exc
    parts = key.split("/")
    if not key.startswith(PREFIX) or len(parts) < 3 or not parts[-1]:
        raise RejectedObject(f"key {key!r} is not under tenants/{{tenant}}/{{scope path}}/{{file}}")
    tenant = parts[1]
    try:
        validate_tenant(tenant)
        scope = normalize_scope("/".join([tenant, *parts[2:-1]]), tenant)
    except InvalidRequest as exc:
        raise RejectedObject(f"key {key!r}: {exc}") from exc
    return ObjectRef(
        bucket=bucket,
        key=key,
        tenant=tenant,
        scope=scope,
        sequencer=sequencer_key(record["s3"]["object"]["sequencer"]) if record["s3"]["object"].get("sequencer") else None,
    )


def handle_record(record: dict[str, Any], *, service: Service, s3: Any, request_id: str = "s3") -> dict[str, Any]:
    """Bring the index in line with the object one record names. Returns what happened.

    Events arrive late, twice and out of order, so the event is only a hint: the handler claims the event's
    `sequencer` for the key (an older one than already applied is `stale` and skipped), then reads the object's
    *current* state from the bucket and ingests it, or deletes the document when the key has no current object
    (deleted, or a delete marker on top). If a newer event was claimed while it worked, it reads and applies
    the current state once more, so whatever the order of delivery, the index ends equal to the bucket.
    """
    ref = parse_record(record)
    ledger = service.ledger
    tenant = ledger.get_tenant(ref.tenant)
    if tenant is None:
        raise RejectedObject(f"tenant {ref.tenant!r} does not exist; object {ref.key!r} not ingested")
    if ref.sequencer is not None and not ledger.claim_sequencer(ref.source_uri, ref.sequencer):
        return {"status": "stale", "key": ref.key}
    uploader = Context(tenant=ref.tenant, tier=tier_named(tenant["tier"]), key_id="s3", scopes=[ref.scope], perms=["write"])
    for _ in range(3):
        outcome = _apply_current(ref, uploader, service=service, s3=s3, request_id=request_id)
        latest = ledger.sequencer(ref.source_uri) if ref.sequencer is not None else None
        if latest == ref.sequencer:
            return outcome
        ref.sequencer = latest  # a newer event raced this one: apply what is current now
    return outcome


def _apply_current(ref: ObjectRef, uploader: Context, *, service: Service, s3: Any, request_id: str) -> dict[str, Any]:
    try:
        current = s3.get_object(Bucket=ref.bucket, Key=ref.key)
    except Exception as exc:  # botocore's ClientError; NoSuchKey also when a delete marker is current
        if _error_code(exc) not in ("NoSuchKey", "404"):
            raise
        deleted = service.index.delete_document(ref.tenant, document_id_for(ref.tenant, ref.scope, ref.source_uri), access=ref.access)
        return {"status": "deleted" if deleted else "absent", "key": ref.key}
    version = current.get("VersionId") or ""
    document = Document(
        source_uri=ref.source_uri,
        content=current["Body"].read(),
        tenant=ref.tenant,
        scope=ref.scope,
        metadata={"title": ref.key.rsplit("/", 1)[-1], "s3_version": "" if version == "null" else version},
    )
    try:  # metered as an API ingest is: the same usage record for the same document, whichever way it came
        result = service.ingest_document(uploader, document, ref.access, "s3:ObjectCreated", request_id)
    except QuotaExceeded as exc:
        raise RejectedObject(f"tenant {ref.tenant!r} is over its monthly chunk quota; {ref.key!r} not ingested") from exc
    return {**result, "key": ref.key}


def _error_code(exc: Exception) -> str | None:
    code = getattr(exc, "response", {}).get("Error", {}).get("Code")
    return str(code) if code else None
