"""S3 events arrive late, twice, and out of order; versions and delete markers come and go. Whatever the order
of delivery, the index must end equal to the bucket, with no duplicate chunk, and no event may land in the
dead-letter queue because the version it names was deleted since.

Each scenario runs real operations on a versioned bucket (moto), collects the event each operation would emit
(with S3's per-key sequencer), then delivers those events in every order, duplicated, and with a dead-letter
redrive of the oldest at the end.
"""

from __future__ import annotations

import itertools

import boto3
import pytest
from moto import mock_aws
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.core import Service
from sourcerer.service.s3ingest import handle_record
from sourcerer.store.sqlite import SQLiteIndex

BUCKET, KEY = "docs", "tenants/acme/alpha/runbook.md"
TEXTS = {
    "v1": b"# Runbook\n\nThe failover cutover took 42 seconds.\n",
    "v2": b"# Runbook\n\nThe failover cutover took 17 seconds.\n",
    "v3": b"# Runbook\n\nThe failover cutover took 9 seconds.\n",
}

# each step: ("put", text name) | ("marker",) a delete marker | ("delete", n) deletes the version made by put number n
SCENARIOS = {
    "two puts": [("put", "v1"), ("put", "v2")],
    "put then delete marker": [("put", "v1"), ("marker",)],
    "delete marker then put again": [("put", "v1"), ("marker",), ("put", "v2")],
    "current version deleted": [("put", "v1"), ("put", "v2"), ("delete", 1)],
    "noncurrent version deleted": [("put", "v1"), ("put", "v2"), ("delete", 0)],
    "only version deleted": [("put", "v1"), ("delete", 0)],
    "three puts": [("put", "v1"), ("put", "v2"), ("put", "v3")],
}


@pytest.fixture
def s3(monkeypatch):
    for name, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t"}.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = boto3.client("s3")
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        yield client


def _event(name: str, version: str | None, sequence: int) -> dict:
    return {
        "eventName": name,
        "s3": {
            "bucket": {"name": BUCKET},
            "object": {"key": KEY, "versionId": version, "sequencer": f"{0x5F00000000 + sequence:X}"},
        },
    }


def _run(s3, steps) -> list[dict]:
    """Do the operations; return the events S3 would have emitted, in order."""
    events, versions = [], []
    for sequence, step in enumerate(steps, start=1):
        if step[0] == "put":
            version = s3.put_object(Bucket=BUCKET, Key=KEY, Body=TEXTS[step[1]])["VersionId"]
            versions.append(version)
            events.append(_event("ObjectCreated:Put", version, sequence))
        elif step[0] == "marker":
            marker = s3.delete_object(Bucket=BUCKET, Key=KEY)["VersionId"]
            events.append(_event("ObjectRemoved:DeleteMarkerCreated", marker, sequence))
        else:
            s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=versions[step[1]])
            events.append(_event("ObjectRemoved:Delete", versions[step[1]], sequence))
    return events


def _bucket_text(s3) -> bytes | None:
    try:
        return s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None


def _deliveries(events: list[dict]) -> list[list[dict]]:
    orders = [list(p) for p in itertools.permutations(events)]
    orders.append([e for e in events for _ in range(2)])  # every event delivered twice
    orders.append(events[::-1] + [events[0]])  # newest first, then the oldest redriven from the DLQ
    return orders


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_any_order_of_delivery_ends_with_the_index_equal_to_the_bucket(s3, tmp_path, scenario):
    events = _run(s3, SCENARIOS[scenario])
    expected = _bucket_text(s3)
    for n, order in enumerate(_deliveries(events)):
        index = SQLiteIndex(tmp_path / f"{n}.db", embedder=None)
        ledger = SQLiteLedger(tmp_path / f"{n}-ledger.db")
        ledger.create_tenant("acme", "pro")
        for event in order:
            handle_record(event, service=Service(index=index, ledger=ledger, reranker=None), s3=s3)  # never raises: nothing goes to the DLQ
        documents = index.list_documents("acme")
        chunks = list(index.search("failover cutover", tenant="acme", k=10, mode="keyword"))
        if expected is None:
            assert documents == [] and chunks == [], f"{scenario}: order {n} left a deleted object searchable"
        else:
            wanted = "Runbook\n" + expected.decode().split("\n\n")[1].strip()  # the chunk opens with its heading
            assert len(documents) == 1 and [c.text for c in chunks] == [wanted], f"{scenario}: order {n}"
        index.close()


def test_a_newer_event_applied_first_makes_the_older_one_stale(s3, tmp_path):
    events = _run(s3, SCENARIOS["two puts"])
    index, ledger = SQLiteIndex(tmp_path / "i.db", embedder=None), SQLiteLedger(tmp_path / "l.db")
    ledger.create_tenant("acme", "pro")
    assert handle_record(events[1], service=Service(index=index, ledger=ledger, reranker=None), s3=s3)["status"] == "ingested"
    assert handle_record(events[0], service=Service(index=index, ledger=ledger, reranker=None), s3=s3)["status"] == "stale"
    assert handle_record(events[1], service=Service(index=index, ledger=ledger, reranker=None), s3=s3)["status"] == "unchanged"  # a redelivery


def test_a_race_with_a_newer_event_re_applies_the_current_state(s3, tmp_path):
    """The older event read v1 before v2 existed, and writes after the newer event was applied."""
    events = _run(s3, [("put", "v1")])
    index, ledger = SQLiteIndex(tmp_path / "i.db", embedder=None), SQLiteLedger(tmp_path / "l.db")
    ledger.create_tenant("acme", "pro")

    class RacingBucket:
        """Answers the first read with v1, then a newer event is claimed and v2 is put, as if concurrently."""

        def __init__(self):
            self.reads = 0

        def get_object(self, **kwargs):
            self.reads += 1
            body = s3.get_object(**kwargs)
            if self.reads == 1:
                s3.put_object(Bucket=BUCKET, Key=KEY, Body=TEXTS["v2"])
                assert ledger.claim_sequencer(f"s3://{BUCKET}/{KEY}", f"{0x5F00000009:X}".rjust(32, "0"))
            return body

    bucket = RacingBucket()
    handle_record(events[0], service=Service(index=index, ledger=ledger, reranker=None), s3=bucket)
    assert bucket.reads == 2
    assert [c.text for c in index.search("failover", tenant="acme", k=5, mode="keyword")] == [
        "Runbook\nThe failover cutover took 17 seconds."
    ]


def test_an_s3_upload_is_metered_as_the_same_document_posted_to_the_api(s3, tmp_path):
    """One metered ingest, whichever way a document comes: the same usage units (chunks and the embedding spend)
    and the same price, and a retried event charges nothing."""
    from sourcerer.retrieval.embedders import CachedEmbedder, local_embedder
    from sourcerer.service.schemas import DocumentRequest
    from sourcerer.service.tenancy import Context, tier_named

    model = local_embedder().inner
    ledger = SQLiteLedger(tmp_path / "l.db")
    for tenant in ("acme", "globex"):
        ledger.create_tenant(tenant, "pro")
    # an index each, with its own embedding cache: each ingest runs the model for its chunks
    index, other = (SQLiteIndex(tmp_path / f"{n}.db", embedder=CachedEmbedder(model, tmp_path / f"{n}-cache.db")) for n in "ab")
    service = Service(index=index, ledger=ledger, reranker=None)
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=TEXTS["v1"])
    assert handle_record(_event("ObjectCreated:Put", None, 1), service=service, s3=s3)["status"] == "ingested"
    poster = Context(tenant="globex", tier=tier_named("pro"), key_id="k1", scopes=["globex/alpha"], perms=["write"])
    posted = DocumentRequest(source_uri="runbook.md", text=TEXTS["v1"].decode(), metadata={"title": "runbook.md"})  # as S3 names it
    assert Service(index=other, ledger=ledger, reranker=None).ingest(poster, "globex/alpha", posted, "r1").status == "ingested"

    uploaded, api = ledger.usage_records("acme"), ledger.usage_records("globex")
    assert [r.units for r in uploaded] == [r.units for r in api] and uploaded[0].units["embedding_tokens"] > 0
    assert uploaded[0].est_cost_usd == api[0].est_cost_usd and uploaded[0].settled and api[0].settled
    handle_record(_event("ObjectCreated:Put", None, 2), service=service, s3=s3)  # a redelivery: unchanged
    assert len(ledger.usage_records("acme")) == 1
    index.close()
    other.close()
