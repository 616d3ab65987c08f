"""The SQLite and DynamoDB (moto) ledgers against one contract (the quota races included)."""

import threading

import boto3
import pytest
from ledger_contract import LedgerContract
from moto import mock_aws
from sourcerer.ledger.dynamodb import DynamoDBLedger, table_definition
from sourcerer.ledger.sqlite import SQLiteLedger


class TestSQLiteLedger(LedgerContract):
    @pytest.fixture
    def ledger(self, tmp_path):
        return SQLiteLedger(tmp_path / "ledger.db")


def test_a_ledger_from_before_the_question_and_vector_columns_keeps_its_cached_answers(tmp_path):
    """A ledger file whose answer cache predates the `question` and `vector` columns: opening it adds them, its
    entries' questions and vectors are read from their records, and new entries fill the columns."""
    import sqlite3
    import time

    from sourcerer.ledger.base import CachedAnswer

    now = time.time()
    old = CachedAnswer(tenant="acme", context="c", key="old", question="Old?", vector=[0.6, 0.8], answer={}, created_at=now, expires_at=now + 60)
    with sqlite3.connect(tmp_path / "ledger.db") as conn:
        conn.execute(
            "CREATE TABLE answer_cache (tenant TEXT NOT NULL, context TEXT NOT NULL, key TEXT NOT NULL, created_at REAL NOT NULL,"
            " expires_at REAL NOT NULL, record TEXT NOT NULL, PRIMARY KEY (tenant, context, key))"
        )
        conn.execute("INSERT INTO answer_cache VALUES (?, ?, ?, ?, ?, ?)", ("acme", "c", "old", now, now + 60, old.model_dump_json()))
    ledger = SQLiteLedger(tmp_path / "ledger.db")
    ledger.put_cached_answer(old.model_copy(update={"key": "new", "question": "New?", "created_at": now + 1}))
    found = {c.key: (c.question, list(c.vector)) for c in ledger.cached_questions("acme", "c", now)}
    assert found == {"new": ("New?", pytest.approx([0.6, 0.8])), "old": ("Old?", pytest.approx([0.6, 0.8]))}
    assert ledger.cached_answer("acme", "c", "old", now).question == "Old?"


@pytest.fixture
def dynamodb_ledger(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        resource = boto3.resource("dynamodb")
        resource.create_table(**table_from_template("sourcerer-ledger"))
        ledger = DynamoDBLedger("sourcerer-ledger", resource=resource)
        # moto's in-memory tables are not thread-safe (racing writes fail inside its deepcopy); on AWS the condition
        # expressions make racing charges exact, so here each call is serialised and the conditions still decide
        client = ledger.table.meta.client
        lock = threading.Lock()
        for name in ("transact_write_items", "update_item"):
            original = getattr(client, name)

            def serialised(*args, _original=original, **kwargs):
                with lock:
                    return _original(*args, **kwargs)

            setattr(client, name, serialised)
        yield ledger


class TestDynamoDBLedger(LedgerContract):
    @pytest.fixture
    def ledger(self, dynamodb_ledger):
        return dynamodb_ledger


def table_from_template(name):
    """The ledger table exactly as template.yaml declares it, so the tests cannot drift from the infrastructure."""
    from pathlib import Path

    from cfnlint.decode import decode

    template, _ = decode(str(Path(__file__).resolve().parents[2] / "template.yaml"))
    props = template["Resources"]["LedgerTable"]["Properties"]
    definition = {k: props[k] for k in ("AttributeDefinitions", "KeySchema", "BillingMode")}
    assert definition == {k: v for k, v in table_definition(name).items() if k != "TableName"}
    return {"TableName": name, **definition}


def test_dynamodb_reads_every_page_of_a_query(dynamodb_ledger, monkeypatch):
    """DynamoDB returns at most 1 MB per query: the adapter must follow LastEvaluatedKey (forced small pages here)."""
    import time

    from ledger_contract import answer_record

    ledger = dynamodb_ledger
    records = [answer_record(created_at=time.time() - 100 + i) for i in range(23)]
    for record in records:
        ledger.put_answer(record)
    pages = []
    query = ledger.table.query

    def small_pages(**kwargs):
        page = query(Limit=5, **kwargs)
        pages.append(len(page["Items"]))
        return page

    monkeypatch.setattr(ledger.table, "query", small_pages)
    assert [a.answer_id for a in ledger.answers("acme")] == [r.answer_id for r in records]
    assert len(pages) >= 5


def test_dynamodb_throttling_and_a_missing_table_are_typed_errors_not_500s(monkeypatch):
    """What botocore raises on the wire (Stubber) becomes the errors the API maps to 503: throttling retried later,
    a missing table the operator's configuration error; a condition refusal stays the ledger's own business."""
    from botocore.stub import Stubber
    from sourcerer.errors import ConfigurationError, ProviderError
    from sourcerer.http.statuses import status_of

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    resource = boto3.resource("dynamodb", aws_access_key_id="x", aws_secret_access_key="x")
    ledger = DynamoDBLedger("sourcerer-ledger", resource=resource)
    with Stubber(resource.meta.client) as stub:
        stub.add_client_error("get_item", "ProvisionedThroughputExceededException", http_status_code=400)
        with pytest.raises(ProviderError) as throttled:
            ledger.find_key("0" * 64)
        assert status_of(throttled.value) == (503, "backend_unavailable")
        stub.add_client_error("query", "ThrottlingException", http_status_code=400)
        with pytest.raises(ProviderError):
            list(ledger.answers("acme"))  # raised while the result is read, page by page
        stub.add_client_error("get_item", "ResourceNotFoundException", http_status_code=400)
        with pytest.raises(ConfigurationError) as missing:
            ledger.get_tenant("acme")
        assert status_of(missing.value) == (503, "configuration_error") and "sourcerer-ledger" in str(missing.value)
        stub.add_client_error("update_item", "ConditionalCheckFailedException", http_status_code=400)
        assert ledger.consume("acme", "queries", 1, 0, "2026-12") is False  # a refused condition is an answer
