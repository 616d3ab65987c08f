"""The Lambda handler modules, invoked with realistic API Gateway events, and the committed OpenAPI spec."""

import importlib.util
import json
from pathlib import Path

import pytest
from sourcerer.api import openapi_spec
from sourcerer.serve import LocalContext, to_event

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
    from sourcerer.api import get_service

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
    invalid = answer.lambda_handler(
        to_event("POST", "/v1/answer", {"Authorization": "Bearer x"}, json.dumps({"q": ""})), LocalContext()
    )
    assert invalid["statusCode"] == 422
