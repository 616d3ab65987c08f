"""The Lambda handler modules, invoked with realistic API Gateway events, and the committed OpenAPI spec."""

import importlib.util
import json
from pathlib import Path

import pytest
from sourcerer.http.api import openapi_spec
from sourcerer.http.serve import LocalContext, to_event

ROOT = Path(__file__).resolve().parents[2]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"function_{name}", ROOT / "functions" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def powertools_env(monkeypatch, tmp_path):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "sourcerer-test")
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    from sourcerer.service.wiring import get_service

    get_service.cache_clear()
    yield
    get_service.cache_clear()


def test_committed_openapi_matches_the_code():
    assert json.loads((ROOT / "docs" / "openapi.json").read_text()) == json.loads(openapi_spec()), "regenerate docs/openapi.json"


def test_each_function_serves_only_its_routes():
    search = _load("search")
    health = search.lambda_handler(to_event("GET", "/health", {}, None), LocalContext())
    assert health["statusCode"] == 200 and json.loads(health["body"])["status"] == "ok"
    answer_on_search = search.lambda_handler(to_event("POST", "/v1/answer", {"Authorization": "Bearer x"}, "{}"), LocalContext())
    assert answer_on_search["statusCode"] == 404
    ingest = _load("ingest")
    unauthorised = ingest.lambda_handler(
        to_event("POST", "/v1/documents", {}, json.dumps({"source_uri": "a.txt", "text": "hi"})), LocalContext()
    )
    assert unauthorised["statusCode"] == 401 and json.loads(unauthorised["body"])["error"]["code"] == "unauthorized"
    answer = _load("answer")
    invalid = answer.lambda_handler(to_event("POST", "/v1/answer", {"Authorization": "Bearer x"}, json.dumps({"q": ""})), LocalContext())
    assert invalid["statusCode"] == 401  # an unknown key first, whatever the body
    reader, _ = _reader_and_admin()
    invalid = answer.lambda_handler(
        to_event("POST", "/v1/answer", {"Authorization": f"Bearer {reader}"}, json.dumps({"q": ""})), LocalContext()
    )
    assert invalid["statusCode"] == 422


def _reader_and_admin() -> tuple[str, str]:
    """Tenant acme on pro, with a read-write key and an admin key (in the ledger the functions open)."""
    from sourcerer.service.tenancy import new_key
    from sourcerer.service.wiring import get_service

    ledger = get_service().ledger
    ledger.create_tenant("acme", "pro")
    keys = []
    for perms in (["read", "write"], ["admin"]):
        key, record = new_key("acme", ["acme"], perms)
        ledger.put_key(record)
        keys.append(key)
    return keys[0], keys[1]


def test_the_answer_function_serves_the_answer_log_and_audits():
    reader, admin = _reader_and_admin()
    answer = _load("answer")
    ingest = _load("ingest")
    document = {
        "source_uri": "runbook.md",
        "text": "# Failover\n\nDuring the March drill, the failover cutover from the "
        "primary region to the standby region completed in 42 seconds.\nThe replica lag stayed under two seconds.\n",
    }
    assert (
        ingest.lambda_handler(
            to_event("POST", "/v1/documents", {"Authorization": f"Bearer {reader}"}, json.dumps(document)), LocalContext()
        )["statusCode"]
        == 200
    )
    asked = answer.lambda_handler(
        to_event(
            "POST", "/v1/answer", {"Authorization": f"Bearer {reader}"}, json.dumps({"q": "How long did the failover take?"})
        ),
        LocalContext(),
    )
    answer_id = json.loads(asked["body"])["answer_id"]

    stored = answer.lambda_handler(
        to_event("GET", f"/v1/answers/{answer_id}", {"Authorization": f"Bearer {reader}"}, None), LocalContext()
    )
    assert stored["statusCode"] == 200 and json.loads(stored["body"])["answer"]["answer_id"] == answer_id
    forbidden = answer.lambda_handler(to_event("GET", "/v1/audits", {"Authorization": f"Bearer {reader}"}, None), LocalContext())
    assert forbidden["statusCode"] == 403
    listed = answer.lambda_handler(
        to_event("GET", "/v1/audits?since=1h", {"Authorization": f"Bearer {admin}"}, None), LocalContext()
    )
    assert listed["statusCode"] == 200 and json.loads(listed["body"])["findings"] == []  # nothing audited yet


def test_the_answer_function_returns_a_streamed_answer_as_one_event_stream_body_and_serves_handoffs():
    """API Gateway (REST) with Python's managed runtime cannot stream a response: the answer function returns the
    same server-sent events in one text/event-stream body, whose `done` is the unstreamed response."""
    from sourcerer.http.events import parse_sse

    reader, admin = _reader_and_admin()
    text = "# Failover\n\nDuring the March drill, the failover cutover completed in 42 seconds.\n"
    _load("ingest").lambda_handler(
        to_event("POST", "/v1/documents", {"Authorization": f"Bearer {reader}"}, json.dumps({"source_uri": "runbook.md", "text": text})),
        LocalContext(),
    )
    answer = _load("answer")
    headers = {"Authorization": f"Bearer {reader}", "Accept": "text/event-stream"}
    streamed = answer.lambda_handler(to_event("POST", "/v1/answer", headers, json.dumps({"q": "How long did the failover take?"})), LocalContext())
    assert streamed["statusCode"] == 200 and streamed["multiValueHeaders"]["Content-Type"] == ["text/event-stream"]
    events = parse_sse(streamed["body"])
    assert [e["event"] for e in events] == ["retrieve", "citation", "delta", "done"]
    assert events[-1]["response"]["answer"]["text"] == events[2]["text"]

    refused = answer.lambda_handler(
        to_event("POST", "/v1/answer", {"Authorization": f"Bearer {reader}"}, json.dumps({"q": "What is the parental leave policy?", "handoff": True})),
        LocalContext(),
    )
    handed = json.loads(refused["body"])
    assert handed["answer"]["refused"] and handed["handoff"]["question"] == "What is the parental leave policy?"
    listed = answer.lambda_handler(to_event("GET", "/v1/handoffs", {"Authorization": f"Bearer {admin}"}, None), LocalContext())
    assert [h["answer_id"] for h in json.loads(listed["body"])["handoffs"]] == [handed["answer_id"]]


@pytest.mark.parametrize("function", ["ingest/app", "ingest/s3", "ingest/embed", "search/app"])
def test_functions_that_never_answer_never_import_the_answer_pipeline(function):
    """Cold start: what does not answer does not load the pipeline, the judge, the reader or the HTTP client at
    import (they load on first use); `bench/coldstart.py` times every function's import."""
    import subprocess
    import sys
    from pathlib import Path

    folder, module = function.split("/")
    root = Path(__file__).resolve().parents[2]
    probe = (
        f"import sys; import {module}; "
        "print(sorted(m for m in ('sourcerer.pipeline', 'sourcerer.verify', 'sourcerer.reading', 'sourcerer.streaming', 'httpx') if m in sys.modules))"
    )
    env = {"POWERTOOLS_SERVICE_NAME": "test", "AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin", "POWERTOOLS_TRACE_DISABLED": "true"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=root / "functions" / folder, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
