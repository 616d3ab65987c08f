"""The SAM template (cfn-lint), the ledger table built from it, and the S3 -> SQS ingest function under moto."""

import copy
import importlib.util
import json
import time
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from sourcerer.ledger.dynamodb import DynamoDBLedger
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.store.sqlite import SQLiteIndex

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = b"# Failover\n\nThe failover cutover from the primary region to the standby region completed in 42 seconds.\n"


def _template():
    from cfnlint.decode import decode

    template, errors = decode(str(ROOT / "template.yaml"))
    assert not errors
    return template


def test_template_passes_cfn_lint():
    from cfnlint.api import lint_all

    problems = lint_all((ROOT / "template.yaml").read_text())
    assert [str(p) for p in problems if p.rule.id[0] in "EW"] == []  # errors and warnings; informational notes aside


def test_every_api_route_in_the_spec_has_a_function_event():
    spec = json.loads((ROOT / "docs" / "openapi.json").read_text())
    routed = set()
    for resource in _template()["Resources"].values():
        for event in resource.get("Properties", {}).get("Events", {}).values():
            if event["Type"] == "Api":
                routed.add((event["Properties"]["Path"], event["Properties"]["Method"]))
    assert {(path, method) for path, ops in spec["paths"].items() for method in ops} == routed


@pytest.fixture
def aws(monkeypatch):
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield


def test_ledger_table_from_the_template_works_under_moto(aws):
    props = _template()["Resources"]["LedgerTable"]["Properties"]
    client = boto3.client("dynamodb")
    client.create_table(
        TableName="ledger",
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        BillingMode=props["BillingMode"],
    )
    client.update_time_to_live(
        TableName="ledger",
        TimeToLiveSpecification={"AttributeName": props["TimeToLiveSpecification"]["AttributeName"], "Enabled": True},
    )
    ledger = DynamoDBLedger("ledger", resource=boto3.resource("dynamodb"))
    ledger.create_tenant("acme", "pro")
    assert ledger.consume("acme", "queries", 1, 1, "2026-11") and not ledger.consume("acme", "queries", 1, 1, "2026-11")


def _s3_function(monkeypatch, tmp_path):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "test")
    from sourcerer.http import api
    from sourcerer.service.core import Service

    service = Service(index=SQLiteIndex(tmp_path / "index.db", embedder=None), ledger=SQLiteLedger(tmp_path / "ledger.db"))
    monkeypatch.setattr(api, "get_service", lambda: service)
    spec = importlib.util.spec_from_file_location("function_ingest_s3", ROOT / "functions" / "ingest" / "s3.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "get_service", lambda: service)
    return module, service


def _event(name, bucket, key, version, sequencer="0A1B2C3D4E5F678901"):
    event = json.loads((ROOT / "events" / name).read_text())
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["bucket"]["name"] = bucket
    body["Records"][0]["s3"]["object"]["key"] = key
    body["Records"][0]["s3"]["object"]["versionId"] = version
    body["Records"][0]["s3"]["object"]["sequencer"] = sequencer
    event["Records"][0]["body"] = json.dumps(body)
    return event


class Context:
    function_name = "ingest-s3"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:ingest-s3"
    aws_request_id = "req-1"


def test_s3_uploads_are_ingested_once_and_deleted_on_removal(aws, monkeypatch, tmp_path):
    function, service = _s3_function(monkeypatch, tmp_path)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="docs")
    s3.put_bucket_versioning(Bucket="docs", VersioningConfiguration={"Status": "Enabled"})
    version = s3.put_object(Bucket="docs", Key="tenants/acme/alpha/backend/runbook.md", Body=RUNBOOK)["VersionId"]
    service.ledger.create_tenant("acme", "pro")
    created = _event("sqs_s3_object_created.json", "docs", "tenants/acme/alpha/backend/runbook.md", version)

    assert function.lambda_handler(created, Context()) == {"batchItemFailures": []}
    assert function.lambda_handler(copy.deepcopy(created), Context()) == {"batchItemFailures": []}  # a retried event
    hits = service.index.search("failover cutover", tenant="acme", scope="acme/alpha", k=10, mode="keyword")
    assert (
        len(hits) == 1
        and hits[0].source_uri == "s3://docs/tenants/acme/alpha/backend/runbook.md"
        and hits[0].scope == "acme/alpha/backend"
    )
    assert service.ledger.usage("acme", __import__("sourcerer.service.tenancy", fromlist=["month_of"]).month_of())["chunks"] == 1

    marker = s3.delete_object(Bucket="docs", Key="tenants/acme/alpha/backend/runbook.md")["VersionId"]
    removed = _event(
        "sqs_s3_object_removed.json", "docs", "tenants/acme/alpha/backend/runbook.md", marker, sequencer="0A1B2C3D4E5F678902"
    )
    assert function.lambda_handler(removed, Context()) == {"batchItemFailures": []}
    assert list(service.index.search("failover cutover", tenant="acme", k=10, mode="keyword")) == []


@pytest.mark.parametrize("key", ["uploads/runbook.md", "tenants/ghost/alpha/runbook.md", "tenants/acme/../globex/x.md"])
def test_objects_outside_the_layout_or_tenants_go_to_the_dlq(aws, monkeypatch, tmp_path, key):
    function, service = _s3_function(monkeypatch, tmp_path)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="docs")
    s3.put_object(Bucket="docs", Key=key, Body=RUNBOOK)
    s3.put_object(Bucket="docs", Key="tenants/acme/ok.md", Body=RUNBOOK)
    service.ledger.create_tenant("acme", "pro")
    bad = _event("sqs_s3_object_created.json", "docs", key, None)
    good = _event("sqs_s3_object_created.json", "docs", "tenants/acme/ok.md", None)
    good["Records"][0]["messageId"] = "good-message"
    batch = {"Records": [good["Records"][0], bad["Records"][0]]}

    result = function.lambda_handler(batch, Context())

    # only the bad message is reported failed: SQS retries it, then moves it to the dead-letter queue
    assert result == {"batchItemFailures": [{"itemIdentifier": bad["Records"][0]["messageId"]}]}
    assert [d["source_uri"] for d in service.index.list_documents("acme")] == ["s3://docs/tenants/acme/ok.md"]
    assert service.index.list_documents("ghost") == [] and service.index.list_documents("globex") == []


def test_search_event_against_the_dynamodb_ledger_under_moto(aws, monkeypatch, tmp_path):
    from sourcerer.service.tenancy import new_key
    from sourcerer.service.wiring import get_service
    from test_ledgers import table_from_template

    boto3.resource("dynamodb").create_table(**table_from_template("ledger"))
    monkeypatch.setenv("SOURCERER_TABLE", "ledger")
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "test")
    get_service.cache_clear()
    ledger = DynamoDBLedger("ledger", resource=boto3.resource("dynamodb"))
    ledger.create_tenant("acme", "pro")
    key, record = new_key("acme", ["acme/alpha"], ["read"])
    ledger.put_key(record)
    spec = importlib.util.spec_from_file_location("function_search_moto", ROOT / "functions" / "search" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    event["headers"]["Authorization"] = event["multiValueHeaders"]["Authorization"][0] = f"Bearer {key}"

    response = module.lambda_handler(event, Context())

    assert response["statusCode"] == 200, response["body"]
    body = json.loads(response["body"])
    assert body["hits"] == [] and body["context"]["scopes"] == ["acme/alpha"]
    stored = ledger.usage_records("acme")
    assert [(r.route, r.request_id, r.units) for r in stored] == [
        ("POST /v1/search", event["requestContext"]["requestId"], {"queries": 1.0, "embedding_tokens": 0.0})
    ]
    get_service.cache_clear()


def test_a_down_backend_is_a_503_without_internals(monkeypatch, tmp_path):
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.tenancy import new_key
    from sourcerer.service.wiring import get_service

    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    monkeypatch.setenv("SOURCERER_INDEX", "opensearch://127.0.0.1:9/docs")  # nothing listens on port 9
    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "test")
    get_service.cache_clear()
    ledger = SQLiteLedger(tmp_path / "ledger.db")
    ledger.create_tenant("acme", "pro")
    key, record = new_key("acme", [], ["read"])
    ledger.put_key(record)
    spec = importlib.util.spec_from_file_location("function_search_down", ROOT / "functions" / "search" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from sourcerer.http.serve import to_event

    response = module.lambda_handler(
        to_event("POST", "/v1/search", {"Authorization": f"Bearer {key}"}, json.dumps({"q": "failover"})), Context()
    )
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["error"]["code"] == "backend_unavailable" and "127.0.0.1" not in response["body"]
    from sourcerer.service.tenancy import month_of

    assert ledger.usage("acme", month_of()) == {"queries": 0}  # the failed request was not counted
    get_service.cache_clear()


def test_search_event_from_events_folder_reaches_the_handler(monkeypatch, tmp_path):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "test")
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    from sourcerer.service.wiring import get_service

    get_service.cache_clear()
    spec = importlib.util.spec_from_file_location("function_search", ROOT / "functions" / "search" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    response = module.lambda_handler(event, Context())
    assert response["statusCode"] == 401 and json.loads(response["body"])["error"]["code"] == "unauthorized"
    get_service.cache_clear()


class AuditContext(Context):
    function_name = "audit"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:audit"

    def get_remaining_time_in_millis(self):
        return 600_000


def test_schedule_event_audits_answers_in_the_dynamodb_ledger_under_moto(aws, monkeypatch, tmp_path, capsys):
    from sourcerer.service.schemas import AnswerRequest, DocumentRequest
    from sourcerer.service.tenancy import new_key
    from sourcerer.service.wiring import get_service
    from test_ledgers import table_from_template

    boto3.resource("dynamodb").create_table(**table_from_template("ledger"))
    monkeypatch.setenv("SOURCERER_TABLE", "ledger")
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Sourcerer")
    get_service.cache_clear()
    service = get_service()
    service.ledger.create_tenant("acme", "pro")
    key, record = new_key("acme", ["acme"], ["read", "write"])
    service.ledger.put_key(record)
    ctx = service.authenticate(f"Bearer {key}")
    runbook = (
        "# Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby region "
        "completed in 42 seconds.\nThe database replica lag stayed under two seconds throughout.\n"
    )
    service.ingest(ctx, None, DocumentRequest(source_uri="runbook.md", text=runbook)).model_dump(mode="json")
    billing = "# Billing\n\nInvoices are sent on the first business day of each month.\nPayment is due within 30 days.\n"
    service.ingest(ctx, None, DocumentRequest(source_uri="billing.md", text=billing)).model_dump(mode="json")
    answered = service.answer(ctx, None, AnswerRequest(q="How long did the failover cutover take?")).model_dump(mode="json")
    assert not answered["answer"]["refused"], answered["answer"]
    changed = answered["answer_id"]
    kept = service.answer(ctx, None, AnswerRequest(q="When are invoices sent?")).model_dump(mode="json")["answer_id"]
    service.ingest(
        ctx, None, DocumentRequest(source_uri="runbook.md", text=runbook.replace("42 seconds", "97 seconds"))
    ).model_dump(mode="json")
    spec = importlib.util.spec_from_file_location("function_audit_moto", ROOT / "functions" / "audit" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    event = json.loads((ROOT / "events" / "schedule_audit.json").read_text())
    # a search whose function died after charging (20 minutes ago, on another host): the audit gives it back
    from sourcerer.ledger.base import UsageRecord
    from sourcerer.service.tenancy import month_of

    cut_short = UsageRecord(
        tenant="acme", route="POST /v1/search", request_id="lost", units={"queries": 1}, timestamp=time.time() - 1200,
        settled=False, work={"owner": "another-host:7:1"},
    )
    assert service.ledger.charge(cut_short, "queries", 1, None, month_of(cut_short.timestamp))
    used_before = service.ledger.usage("acme", month_of(cut_short.timestamp)).get("queries", 0)
    capsys.readouterr()

    first = module.lambda_handler(event, AuditContext())
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    again = module.lambda_handler(copy.deepcopy(event), AuditContext())

    assert first["answers_checked"] == 2 and first["complete"] and first["errors"] == []
    assert first["charges_recovered"] == {"settled": 0, "released": 1} and service.ledger.pending_usage(time.time()) == []
    assert service.ledger.usage("acme", month_of(cut_short.timestamp))["queries"] == used_before - 1
    assert first["new_findings"] == {"ok": 1, "source_changed": 1, "source_deleted": 0, "unfaithful": 0, "error": 0}
    assert again["findings"] == first["findings"] and sum(again["new_findings"].values()) == 0  # idempotent
    ledger = DynamoDBLedger("ledger", resource=boto3.resource("dynamodb"))
    assert {f.answer_id: f.status for f in ledger.findings("acme")} == {changed: "source_changed", kept: "ok"}
    assert ledger.get_answer("acme", changed).audit.status == "source_changed"
    # Powertools Metrics (CloudWatch embedded metric format): answers checked, and findings by status
    names = {m["Name"] for e in emitted for d in e["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    assert {"AnswersChecked", "AuditErrors", "AuditIncomplete", "Findings", "NewFindings"} <= names
    new_by_status = {e["status"]: e["NewFindings"] for e in emitted if "NewFindings" in e}
    assert new_by_status == {"ok": [1.0], "source_changed": [1.0], "source_deleted": [0.0], "unfaithful": [0.0], "error": [0.0]}
    assert next(e for e in emitted if "AnswersChecked" in e)["AnswersChecked"] == [2.0]
    get_service.cache_clear()


def test_the_embed_queue_sends_one_message_per_batch_of_chunks(aws):
    from sourcerer.store.background import EmbedQueue

    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="embed")["QueueUrl"]
    EmbedQueue(url, client=sqs)("acme", [f"u{i}" for i in range(70)])
    bodies = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            break
        bodies += [json.loads(m["Body"]) for m in messages]
    assert sorted(len(b["unit_ids"]) for b in bodies) == [6, 32, 32] and {b["tenant"] for b in bodies} == {"acme"}
    assert sorted(u for b in bodies for u in b["unit_ids"]) == sorted(f"u{i}" for i in range(70))


def test_the_embed_function_reports_only_failed_messages(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "test")
    spec = importlib.util.spec_from_file_location("function_ingest_embed", ROOT / "functions" / "ingest" / "embed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []

    class Index:
        def embed_units(self, tenant, unit_ids):
            calls.append((tenant, unit_ids))
            if "boom" in unit_ids:
                raise RuntimeError("bedrock throttled")
            return len(unit_ids)

    monkeypatch.setattr(module, "index", lambda: Index())
    event = json.loads((ROOT / "events" / "sqs_s3_object_created.json").read_text())
    good, bad = copy.deepcopy(event["Records"][0]), copy.deepcopy(event["Records"][0])
    good.update(messageId="m-good", body=json.dumps({"tenant": "acme", "unit_ids": ["u1", "u2"]}))
    bad.update(messageId="m-bad", body=json.dumps({"tenant": "acme", "unit_ids": ["boom"]}))
    response = module.lambda_handler({"Records": [good, bad]}, Context())
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-bad"}]}
    assert calls == [("acme", ["u1", "u2"]), ("acme", ["boom"])]


def test_only_the_ingest_functions_defer_embedding_to_the_embed_function():
    template = (ROOT / "template.yaml").read_text()
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    resources = yaml.load(template, Loader=Loader)["Resources"]
    for name in ("IngestFunction", "IngestS3Function"):
        assert "SOURCERER_EMBED_QUEUE" in resources[name]["Properties"]["Environment"]["Variables"]
    embed = resources["EmbedFunction"]["Properties"]
    assert embed["Handler"] == "embed.lambda_handler" and "Environment" not in embed
    assert embed["Events"]["Pending"]["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
