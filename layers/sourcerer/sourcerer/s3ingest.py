"""Ingestion from S3: objects under `tenants/{tenant}/{scope path}/{file}` in the documents bucket.

Created objects are ingested into `{tenant}` at scope `{tenant}/{scope path}`; removed objects delete their
document. The document id is derived from `s3://bucket/key`, so a retried event (same bucket, key and version)
finds the same content and reports `unchanged`: it never duplicates chunks. Keys outside the layout and
tenants that do not exist raise `RejectedObject`, so the message ends in the dead-letter queue with the reason
logged — never ingested somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from sourcerer.errors import SourcererError
from sourcerer.ledger.base import Ledger, UsageRecord
from sourcerer.store.base import Index
from sourcerer.store.models import Access, Document, document_id_for, normalize_scope, validate_tenant
from sourcerer.tenancy import TIERS, month_of

PREFIX = "tenants/"


class RejectedObject(SourcererError):
    """The object cannot be ingested (bad key layout, unknown tenant, over quota); the reason says why."""


@dataclass
class ObjectRef:
    bucket: str
    key: str
    version_id: str | None
    tenant: str
    scope: str
    removed: bool

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
        event = record["eventName"]
    except (KeyError, TypeError) as exc:
        raise RejectedObject(f"not an S3 event record: missing {exc}") from exc
    parts = key.split("/")
    if not key.startswith(PREFIX) or len(parts) < 3 or not parts[-1]:
        raise RejectedObject(f"key {key!r} is not under tenants/{{tenant}}/{{scope path}}/{{file}}")
    tenant = parts[1]
    try:
        validate_tenant(tenant)
        scope = normalize_scope("/".join([tenant, *parts[2:-1]]), tenant)
    except ValueError as exc:
        raise RejectedObject(f"key {key!r}: {exc}") from exc
    return ObjectRef(
        bucket=bucket,
        key=key,
        version_id=record["s3"]["object"].get("versionId"),
        tenant=tenant,
        scope=scope,
        removed=event.startswith("ObjectRemoved"),
    )


def handle_record(record: dict[str, Any], *, index: Index, ledger: Ledger, s3: Any, request_id: str = "s3") -> dict[str, Any]:
    """Ingest or delete the object one record names. Returns what happened."""
    ref = parse_record(record)
    tenant = ledger.get_tenant(ref.tenant)
    if tenant is None:
        raise RejectedObject(f"tenant {ref.tenant!r} does not exist; object {ref.key!r} not ingested")
    if ref.removed:
        deleted = index.delete_document(ref.tenant, document_id_for(ref.tenant, ref.scope, ref.source_uri), access=ref.access)
        return {"status": "deleted" if deleted else "absent", "key": ref.key}
    kwargs = {"Bucket": ref.bucket, "Key": ref.key}
    if ref.version_id:
        kwargs["VersionId"] = ref.version_id
    body = s3.get_object(**kwargs)["Body"].read()
    document = Document(
        source_uri=ref.source_uri,
        content=body,
        tenant=ref.tenant,
        scope=ref.scope,
        metadata={"title": ref.key.rsplit("/", 1)[-1], "s3_version": ref.version_id or ""},
    )
    limit = TIERS[tenant["tier"]].limit("chunks")

    charged: UsageRecord | None = None
    month = month_of()

    def admit(chunks: int) -> None:  # only new or changed content is metered; a retried event is unchanged
        nonlocal charged
        record = UsageRecord(tenant=ref.tenant, route="s3:ObjectCreated", request_id=request_id, units={"chunks": chunks})
        if not ledger.charge(record, "chunks", chunks, limit, month):
            raise RejectedObject(f"tenant {ref.tenant!r} is over its monthly chunk quota; {ref.key!r} not ingested")
        charged = record

    try:
        result = index.ingest_document(document, admit=admit, access=ref.access)
    except Exception:
        if charged is not None:  # the write failed after the quota was taken: the retry will take it again
            ledger.release(charged, "chunks", int(charged.units["chunks"]), month)
        raise
    if charged is not None and result["status"] == "unchanged":  # a concurrent delivery wrote it first
        ledger.release(charged, "chunks", int(charged.units["chunks"]), month)
    return {**result, "key": ref.key}
