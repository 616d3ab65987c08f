"""The Lambda functions end to end on a real OpenSearch: S3 -> SQS -> ingest -> embed queue -> embed, then the
search, answer and audit functions, each invoked with the event shape AWS sends (events/), with moto for S3,
SQS and DynamoDB and the embedded OpenSearch node for the index."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from sourcerer.retrieval.embedders import local_embedder

ROOT = Path(__file__).resolve().parents[2]
KEY = "tenants/acme/alpha/runbook.md"
RUNBOOK = (
    "# Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby region "
    "completed in 42 seconds.\nThe database replica lag stayed under two seconds throughout.\n"
)


class Context:
    function_name = "sourcerer"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:sourcerer"
    aws_request_id = "req-1"

    def get_remaining_time_in_millis(self):
        return 600_000


def function(path: str):
    """A fresh copy of one function's module (each keeps its own cached clients, as a new container would)."""
    spec = importlib.util.spec_from_file_location(f"fn_{path.replace('/', '_')[:-3]}", ROOT / "functions" / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def s3_event(name: str, key: str, version: str, sequencer: str) -> dict:
    event = json.loads((ROOT / "events" / name).read_text())
    body = json.loads(event["Records"][0]["body"])
    obj = body["Records"][0]["s3"]
    obj["bucket"]["name"] = "docs"
    obj["object"].update(key=key, versionId=version, sequencer=sequencer)
    event["Records"][0]["body"] = json.dumps(body)
    return event


def drain(sqs, url: str) -> dict:
    """The embed queue's messages as the SQS event the embed function receives."""
    template = json.loads((ROOT / "events" / "sqs_s3_object_created.json").read_text())["Records"][0]
    records = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            record = copy.deepcopy(template)
            record.update(messageId=message["MessageId"], receiptHandle=message["ReceiptHandle"], body=message["Body"])
            records.append(record)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return {"Records": records}


@pytest.fixture
def stack(opensearch_index, monkeypatch, tmp_path):
    from sourcerer.service.tenancy import new_key
    from sourcerer.service.wiring import get_service
    from test_ledgers import table_from_template

    index = opensearch_index(local_embedder())
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Sourcerer",
        "SOURCERER_HOME": str(tmp_path),
        "SOURCERER_TABLE": "ledger",
        "SOURCERER_INDEX": f"opensearch://{index.host}:{index.port}/{index.index}?engine=lucene",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        boto3.resource("dynamodb").create_table(**table_from_template("ledger"))
        sqs = boto3.client("sqs")
        queue = sqs.create_queue(QueueName="embed")["QueueUrl"]
        monkeypatch.setenv("SOURCERER_EMBED_QUEUE", queue)
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="docs")
        s3.put_bucket_versioning(Bucket="docs", VersioningConfiguration={"Status": "Enabled"})
        get_service.cache_clear()
        service = get_service()
        service.ledger.create_tenant("acme", "pro")
        key, record = new_key("acme", ["acme"], ["read", "write"])
        service.ledger.put_key(record)
        yield {"s3": s3, "sqs": sqs, "queue": queue, "service": service, "key": key, "index": index}
        get_service.cache_clear()


def call(module, method: str, path: str, key: str, body: dict) -> tuple[int, dict]:
    from sourcerer.http.serve import to_event

    response = module.lambda_handler(to_event(method, path, {"Authorization": f"Bearer {key}"}, json.dumps(body)), Context())
    return response["statusCode"], json.loads(response["body"])


def test_an_uploaded_object_is_searchable_answerable_audited_and_gone_when_deleted(stack):
    s3, sqs, service, key = stack["s3"], stack["sqs"], stack["service"], stack["key"]
    ingest, embed = function("ingest/s3.py"), function("ingest/embed.py")
    search, answer, audit = function("search/app.py"), function("answer/app.py"), function("audit/app.py")

    version = s3.put_object(Bucket="docs", Key=KEY, Body=RUNBOOK.encode())["VersionId"]
    created = s3_event("sqs_s3_object_created.json", KEY, version, "0A1B2C3D4E5F678901")
    assert ingest.lambda_handler(created, Context()) == {"batchItemFailures": []}
    assert ingest.lambda_handler(copy.deepcopy(created), Context()) == {"batchItemFailures": []}  # redelivered
    assert service.index.pending_count("acme") > 0  # keyword-searchable now, vectors to come

    assert embed.lambda_handler(drain(sqs, stack["queue"]), Context()) == {"batchItemFailures": []}
    assert service.index.pending_count("acme") == 0

    status, found = call(search, "POST", "/v1/search", key, {"q": "how quickly did we switch regions", "mode": "semantic"})
    assert status == 200, found
    (hit,) = [h for h in found["hits"] if h["source_uri"] == f"s3://docs/{KEY}"][:1]
    assert hit["scope"] == "acme/alpha" and hit["locator"]["kind"] == "lines" and "42 seconds" in hit["text"]

    status, answered = call(answer, "POST", "/v1/answer", key, {"q": "How long did the failover cutover take?"})
    assert status == 200 and not answered["answer"]["refused"], answered
    assert "42 seconds" in answered["answer"]["text"]
    assert {c["source_uri"] for c in answered["answer"]["citations"]} == {f"s3://docs/{KEY}#L3"}  # the cited line

    changed = s3.put_object(Bucket="docs", Key=KEY, Body=RUNBOOK.replace("42", "97").encode())["VersionId"]
    replaced = s3_event("sqs_s3_object_created.json", KEY, changed, "0A1B2C3D4E5F678902")
    assert ingest.lambda_handler(replaced, Context()) == {"batchItemFailures": []}
    assert embed.lambda_handler(drain(sqs, stack["queue"]), Context()) == {"batchItemFailures": []}
    event = json.loads((ROOT / "events" / "schedule_audit.json").read_text())
    audited = audit.lambda_handler(event, Context())
    assert audited["answers_checked"] == 1 and audited["new_findings"]["source_changed"] == 1, audited

    marker = s3.delete_object(Bucket="docs", Key=KEY)["VersionId"]
    removed = s3_event("sqs_s3_object_removed.json", KEY, marker, "0A1B2C3D4E5F678903")
    assert ingest.lambda_handler(removed, Context()) == {"batchItemFailures": []}
    status, found = call(search, "POST", "/v1/search", key, {"q": "failover cutover"})
    assert status == 200 and found["hits"] == []
    assert service.index.list_documents("acme") == []
