"""Reranking: Bedrock's Rerank API on the exact request botocore sends (Stubber), and the service reordering a
search's candidates by a reranker before it keeps the top_k."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber
from sourcerer.errors import ProviderError
from sourcerer.retrieval.rerank import BedrockReranker, make_reranker


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    return boto3.client("bedrock-agent-runtime", region_name="eu-west-1")


def test_bedrock_rerank_sends_the_documented_request_and_reads_scores_by_index(client):
    stub = Stubber(client)
    stub.add_response(
        "rerank",
        {"results": [{"index": 1, "relevanceScore": 0.91}, {"index": 0, "relevanceScore": 0.12}]},
        {
            "queries": [{"type": "TEXT", "textQuery": {"text": "how long is the failover?"}}],
            "sources": [
                {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": "pricing"}}},
                {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": "failover: 42 s"}}},
            ],
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": 2,
                    "modelConfiguration": {"modelArn": "arn:aws:bedrock:eu-west-1::foundation-model/amazon.rerank-v1:0"},
                },
            },
        },
    )
    with stub:
        scores = BedrockReranker(client=client).rerank("how long is the failover?", ["pricing", "failover: 42 s"])
    assert scores == [0.12, 0.91]
    stub.assert_no_pending_responses()


def test_a_rerank_failure_is_a_provider_error(client):
    stub = Stubber(client)
    stub.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
    with stub, pytest.raises(ProviderError, match="rerank failed"):
        BedrockReranker(model="cohere.rerank-v3-5:0", client=client).rerank("q", ["a"])


def test_the_reranker_is_chosen_by_configuration(monkeypatch):
    assert make_reranker() is None
    monkeypatch.setenv("SOURCERER_RERANKER", "bedrock")
    monkeypatch.setenv("SOURCERER_RERANK_MODEL", "cohere.rerank-v3-5:0")
    assert make_reranker().name == "bedrock:cohere.rerank-v3-5:0"


class Reversing:
    """A stand-in reranker that ranks candidates by how much of 'pricing' they mention (deterministic)."""

    name = "test:pricing-first"

    def __init__(self):
        self.calls = []

    def rerank(self, query, texts):
        self.calls.append(len(texts))
        return [1.0 if "Pro plan" in t else 0.0 for t in texts]


def test_the_service_reorders_candidates_by_the_reranker_and_traces_it(tmp_path, monkeypatch):
    from sourcerer.http import api
    from sourcerer.http.serve import LocalContext, to_event
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.admin import issue_key
    from sourcerer.service.core import Service
    from sourcerer.store.sqlite import SQLiteIndex

    reranker = Reversing()
    service = Service(
        index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"), reranker=reranker
    )
    monkeypatch.setattr(api, "get_service", lambda: service)
    headers = {"Authorization": f"Bearer {issue_key(service.ledger, 'acme', ['acme'], ['read', 'write'], tier='pro').key}"}
    for uri, text in (("ops.md", "Failover failover failover took 42 seconds."), ("pricing.md", "The Pro plan covers failover.")):
        event = to_event("POST", "/v1/documents", headers, json.dumps({"source_uri": uri, "text": text}))
        assert api.build_app().resolve(event, LocalContext())["statusCode"] == 200

    def search(body):
        result = api.build_app().resolve(to_event("POST", "/v1/search", headers, json.dumps(body)), LocalContext())
        return json.loads(result["body"])

    plain = search({"q": "failover", "top_k": 1})
    assert plain["hits"][0]["source_uri"] == "ops.md" and reranker.calls == []
    reranked = search({"q": "failover", "top_k": 1, "rerank": True})
    assert reranked["hits"][0]["source_uri"] == "pricing.md" and reranker.calls == [2]  # all candidates, then top_k
    detail = reranked["trace"]["stages"][0]["detail"]["rerank"]
    assert detail["by"] == "test:pricing-first" and detail["candidates"] == 2
    assert "rerank" in {s["stage"] for s in reranked["trace"]["stages"]}
    rushed = search({"q": "failover", "top_k": 1, "rerank": True, "budget": {"max_ms": 100}})
    assert rushed["hits"][0]["source_uri"] == "ops.md" and "budget" in rushed["trace"]["stages"][0]["detail"]["rerank"]
