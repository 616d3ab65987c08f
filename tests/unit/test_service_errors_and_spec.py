"""The bugs the service redesign fixed, each pinned: operator faults are 503s that charge nothing, an unexpected
exception is a logged 500 with a request id and no internals (and gives its quota back), configuration is read
at use, never at import, and the spec documents every body the code returns."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from sourcerer.http import api
from sourcerer.http.serve import LocalContext, to_event
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.core import Service
from sourcerer.service.tenancy import month_of
from sourcerer.store.sqlite import SQLiteIndex

ROOT = Path(__file__).resolve().parents[2]
SPEC = json.loads((ROOT / "docs" / "openapi.json").read_text())


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A service on a keyword-only SQLite index behind the full resolver, and an admin key for tenant acme."""
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    monkeypatch.setattr(api, "get_service", lambda: service)
    key = issue_key(service.ledger, "acme", ["acme"], ["read", "write", "admin"], tier="pro").key
    return service, {"Authorization": f"Bearer {key}"}


def _call(method, path, headers, body=None, request_id="req-1"):
    event = to_event(method, path, headers, json.dumps(body) if body is not None else None)
    event["requestContext"]["requestId"] = request_id
    result = api.build_app().resolve(event, LocalContext())
    return result["statusCode"], json.loads(result["body"])


def test_a_malformed_tier_table_is_a_503_naming_nothing_to_the_client_and_charging_nothing(served, monkeypatch, caplog):
    service, headers = served
    monkeypatch.setenv("SOURCERER_TIERS", '{"pro": {"monthly_queries": "lots"}}')
    with caplog.at_level(logging.ERROR, logger="sourcerer.http.api"):
        status, body = _call("POST", "/v1/search", headers, {"q": "failover"})
    assert status == 503 and body["error"]["code"] == "configuration_error"
    assert "SOURCERER_TIERS" not in json.dumps(body) and "SOURCERER_TIERS" in caplog.text  # the operator's log names it
    monkeypatch.delenv("SOURCERER_TIERS")
    assert service.ledger.usage("acme", month_of()).get("queries", 0) == 0 and service.ledger.usage_records("acme") == []


def test_tiers_are_read_when_used_not_when_imported(monkeypatch):
    from sourcerer.service.tenancy import tiers

    assert tiers()["pro"].monthly_queries == 50_000
    monkeypatch.setenv("SOURCERER_TIERS", '{"pro": {"monthly_queries": 7}}')
    assert tiers()["pro"].monthly_queries == 7


def test_an_unexpected_exception_is_a_500_with_a_request_id_no_internals_and_no_charge(served, monkeypatch, caplog):
    service, headers = served

    def broken(*args, **kwargs):
        raise KeyError("secret internal detail")

    monkeypatch.setattr(service.index, "search", broken)
    with caplog.at_level(logging.ERROR, logger="sourcerer.http.api"):
        status, body = _call("POST", "/v1/search", headers, {"q": "failover"}, request_id="req-500")
    assert status == 500 and body["error"]["code"] == "internal_error" and body["error"]["request_id"] == "req-500"
    assert "secret" not in json.dumps(body) and "KeyError" not in json.dumps(body)
    assert "req-500" in caplog.text and "secret internal detail" in caplog.text
    assert service.ledger.usage("acme", month_of()).get("queries", 0) == 0 and service.ledger.usage_records("acme") == []


def test_a_body_that_is_not_json_is_a_415(served):
    _, headers = served
    event = to_event("POST", "/v1/search", {**headers, "Content-Type": "multipart/form-data"}, '{"q": "x"}')
    result = api.build_app().resolve(event, LocalContext())
    assert result["statusCode"] == 415 and json.loads(result["body"])["error"]["code"] == "unsupported_media_type"


def test_the_answer_log_is_served_as_its_response_model_not_the_stored_record(served):
    service, headers = served
    _call("POST", "/v1/documents", headers, {"source_uri": "ops.md", "text": "Failover takes 42 seconds."})
    status, answered = _call("POST", "/v1/answer", headers, {"q": "How long does failover take?"})
    assert status == 200
    status, logged = _call("GET", f"/v1/answers/{answered['answer_id']}", headers)
    assert status == 200
    assert set(logged["answer"]) == set(SPEC["components"]["schemas"]["LoggedAnswer"]["properties"])
    assert "groups" not in logged["answer"] and logged["answer"]["audit"] == {"status": "not_audited"}


def _resolve(ref: dict) -> dict:
    return SPEC["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]] if "$ref" in ref else ref


def test_every_response_of_every_route_has_a_schema_and_errors_share_one():
    assert SPEC["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "an API key from `sourcerer keys create`",
    }
    for path, methods in SPEC["paths"].items():
        for method, operation in methods.items():
            where = f"{method.upper()} {path}"
            assert (operation.get("security") == [{"bearerAuth": []}]) == (path != "/health"), where
            for status, response in operation["responses"].items():
                if path.endswith("/original") and status in ("200", "206"):  # a document's own bytes
                    assert set(response["content"]) == {"application/pdf", "text/plain"}, where
                    assert all(c["schema"] == {"type": "string", "format": "binary"} for c in response["content"].values())
                    continue
                schema = response["content"]["application/json"]["schema"]
                assert "$ref" in schema, f"{where} {status} is a free-form body"
                if status != "200":
                    assert schema["$ref"].endswith("/Error"), f"{where} {status}"
                else:
                    assert _resolve(schema).get("properties"), f"{where} 200 has no fields"
            if any(p["in"] in ("query", "header") for p in operation.get("parameters", [])):
                assert "422" in operation["responses"], f"{where} validates parameters but does not declare 422"


def test_the_api_offers_every_content_type_the_parsers_read():
    from typing import get_args

    from sourcerer.service.schemas import ContentType
    from sourcerer.store.parsers import EXTENSIONS

    assert sorted(get_args(ContentType)) == sorted(set(EXTENSIONS.values()))


def test_the_documents_the_api_lists_are_the_documents_the_index_port_gives():
    """`DocumentInfo` (the wire) and `DocumentListing` (the port) are written apart, one a pydantic model for the
    spec and one a typed dict for mypy; this keeps them the same fields."""
    from typing import get_type_hints

    from sourcerer.service.schemas import DocumentInfo
    from sourcerer.store.base import DocumentListing

    assert set(DocumentInfo.model_fields) == set(get_type_hints(DocumentListing))
