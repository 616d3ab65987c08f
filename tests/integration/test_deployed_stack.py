"""The deployed-stack smoke test: the check a deployer runs after `sam deploy` (see docs/scaling.md, README).

It reads the stack's outputs, creates a tenant and an API key in the ledger table, uploads a document to the
documents bucket, waits until S3 ingestion lists it, asks a question through the API, runs the audit function,
and cleans up. Skipped unless AWS credentials and SOURCERER_STACK are set. It talks to AWS, so run it without
the test suite's loopback-only socket guard:

    SOURCERER_STACK=sourcerer-dev AWS_REGION=eu-west-1 .venv/bin/python -m pytest tests/integration -o addopts="" -q
"""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest

STACK = os.environ.get("SOURCERER_STACK")
RUNBOOK = (
    "# Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby region "
    "completed in 42 seconds.\n"
)


def _credentials() -> bool:
    try:
        import boto3

        return boto3.Session().get_credentials() is not None
    except Exception:  # noqa: BLE001 - no boto3 or no configuration: skip
        return False


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not STACK or not _credentials(),
        reason="set SOURCERER_STACK=<stack name> with AWS credentials to smoke-test a deployed stack",
    ),
]


@pytest.fixture(scope="module")
def stack():
    import boto3

    described = boto3.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def _wait(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(5)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def test_upload_ask_audit_and_clean_up(stack):
    import boto3
    import httpx
    from sourcerer.ledger.dynamodb import DynamoDBLedger
    from sourcerer.service.admin import issue_key

    tenant = f"smoke-{uuid.uuid4().hex[:8]}"
    key_name = f"tenants/{tenant}/ops/runbook.md"
    ledger = DynamoDBLedger(stack["LedgerTableName"])
    issued = issue_key(ledger, tenant, [tenant], ["read", "write", "admin"], tier="pro")
    headers = {"Authorization": f"Bearer {issued.key}"}
    s3 = boto3.client("s3")
    try:
        s3.put_object(Bucket=stack["DocumentsBucketName"], Key=key_name, Body=RUNBOOK.encode())
        with httpx.Client(base_url=stack["ApiUrl"], timeout=30) as api:
            assert api.get("/health").json()["status"] == "ok"
            listed = _wait(
                lambda: [
                    d
                    for d in api.get("/v1/documents", headers=headers).json().get("documents", [])
                    if d["source_uri"].endswith(key_name)
                ],
                300,
                "the uploaded document to be ingested (S3 -> SQS -> IngestS3Function)",
            )
            assert listed[0]["scope"] == f"{tenant}/ops"
            answered = _wait(
                lambda: (
                    (r := api.post("/v1/answer", headers=headers, json={"q": "How long did the failover cutover take?"}).json())
                    and not r["answer"]["refused"]
                    and r
                ),
                120,
                "a cited answer (vectors are computed by EmbedFunction; keyword search answers meanwhile)",
            )
            assert "42" in answered["answer"]["text"] and answered["answer"]["citations"]
            run = boto3.client("lambda").invoke(
                FunctionName=stack["AuditFunctionName"],
                Payload=json.dumps(
                    {"detail-type": "Scheduled Event", "source": "smoke", "detail": {"tenant": tenant, "since": "1h"}}
                ),
            )
            summary = json.loads(run["Payload"].read())
            assert summary["answers_checked"] >= 1 and summary["findings"]["ok"] >= 1, summary
            logged = api.get(f"/v1/answers/{answered['answer_id']}", headers=headers).json()["answer"]
            assert logged["audit"]["status"] == "ok"
    finally:
        versions = s3.list_object_versions(Bucket=stack["DocumentsBucketName"], Prefix=key_name)
        for version in versions.get("Versions", []) + versions.get("DeleteMarkers", []):
            s3.delete_object(Bucket=stack["DocumentsBucketName"], Key=key_name, VersionId=version["VersionId"])
        ledger.revoke_key(issued.record.key_id)
