"""Reranking: the learned local reranker (what it reads, and that it never embeds a passage), Bedrock's Rerank API
on the exact request botocore sends (Stubber), and the service and CLI reordering a search's candidates by a
reranker before they keep the top_k."""

from __future__ import annotations

import json

import boto3
import numpy as np
import pytest
from botocore.stub import Stubber
from sourcerer.errors import ConfigurationError, ProviderError
from sourcerer.models import Passage, Segment
from sourcerer.retrieval.rerank import (
    RERANK_FEATURES,
    BedrockReranker,
    LocalReranker,
    TreeEnsemble,
    make_reranker,
    rerank_features,
)


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
        scores = BedrockReranker(client=client).rerank(
            "how long is the failover?", [Passage(text="pricing"), Passage(text="failover: 42 s")]
        )
    assert scores == [0.12, 0.91]
    stub.assert_no_pending_responses()


def test_a_rerank_failure_is_a_provider_error(client):
    stub = Stubber(client)
    stub.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
    with stub, pytest.raises(ProviderError, match="rerank failed"):
        BedrockReranker(model="cohere.rerank-v3-5:0", client=client).rerank("q", [Passage(text="a")])


def test_the_reranker_is_chosen_by_configuration(monkeypatch):
    assert isinstance(make_reranker(), LocalReranker)  # the default: no network, no download
    monkeypatch.setenv("SOURCERER_RERANKER", "bedrock")
    monkeypatch.setenv("SOURCERER_RERANK_MODEL", "cohere.rerank-v3-5:0")
    assert make_reranker().name == "bedrock:cohere.rerank-v3-5:0"
    monkeypatch.setenv("SOURCERER_RERANKER", "none")
    assert make_reranker() is None
    monkeypatch.setenv("SOURCERER_RERANKER", "cohere")
    with pytest.raises(ConfigurationError, match="use local, bedrock or none"):
        make_reranker()


def passage(text, score, vectors=None):
    from sourcerer.sentences import sentence_spans

    segments = [Segment(start=a, end=b) for a, b in sentence_spans(text)]
    return Passage(text=text, score=score, sentences=segments, vectors=vectors)


CANDIDATES = [
    passage("Shipping policy overview. We ship worldwide from two warehouses. Orders are packed daily.", 0.52),
    passage("Store hours and contact details. Our support team answers e-mail within a day.", 0.51),
    passage("Our policies in brief. Returns are accepted within 30 days of delivery for a full refund.", 0.5),
]


def stored(passages, embedder):
    """`passages` carrying their text's and sentences' vectors, as a search over the index returns them."""
    out = []
    for p in passages:
        texts = [p.text, *[p.text[s.start : s.end] for s in p.sentences]]
        out.append(p.model_copy(update={"vectors": dict(zip(texts, embedder.embed(texts, "passage"), strict=True))}))
    return out


def test_the_local_reranker_lifts_the_passage_whose_sentence_answers_the_question():
    from sourcerer.retrieval.embedders import local_embedder

    embedder = local_embedder()
    question = "How long do I have to send something back and get my money?"
    reranker = LocalReranker(embedder)
    assert reranker.embedder is embedder  # the model the semantic weights were trained with
    scores = reranker.rerank(question, stored(CANDIDATES, embedder))
    assert len(scores) == 3 and max(range(3), key=scores.__getitem__) == 2
    lexical = LocalReranker(None).rerank(question, CANDIDATES)  # no model: the lexical weights, no vectors read
    assert len(lexical) == 3 and lexical == LocalReranker(None).rerank(question, stored(CANDIDATES, embedder))
    assert reranker.rerank(question, []) == []


class SpyEmbedder:
    """A deterministic embedder that records what it was asked to embed (the reranker may embed the question only)."""

    model_id = "spy"

    def __init__(self):
        self.calls = []

    def embed(self, texts, role):
        self.calls.append((role, len(texts)))
        rows = np.array([[1.0, float(len(t) % 7), float(sum(map(ord, t)) % 11)] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def calibrate(self, cosine):
        return cosine


def test_semantic_features_come_only_from_vectors_stored_at_ingest():
    spy = SpyEmbedder()
    with_vectors = stored(CANDIDATES, spy)
    spy.calls.clear()
    feature_set, rows = rerank_features("return window for a refund", with_vectors, spy)
    assert feature_set == "semantic" and spy.calls == [("query", 1)]
    assert set(rows[0]) == set(RERANK_FEATURES["semantic"])
    spy.calls.clear()
    # one candidate without stored vectors: lexical features for all, and still no passage is embedded
    feature_set, rows = rerank_features("return window for a refund", [*with_vectors[:2], CANDIDATES[2]], spy)
    assert feature_set == "lexical" and spy.calls == [] and set(rows[0]) == set(RERANK_FEATURES["lexical"])
    # another embedding model's cosines have another scale: the local reranker then uses its lexical model
    assert LocalReranker(spy).embedder is None


def test_phrase_number_and_neighbourhood_features():
    spy = SpyEmbedder()
    hits = stored(
        [
            passage("Returns are accepted within 30 days of delivery.", 0.6),
            passage("Delivery within 14 days; returns accepted on request.", 0.5),
        ],
        spy,
    )
    _, rows = rerank_features("returns accepted within 30 days", hits, spy)
    # "returns accepted", "accepted within", "within 30", "30 days": all four pairs adjacent in the first, one in the second
    assert rows[0]["bigrams"] == 1.0 and rows[1]["bigrams"] == 0.25 and rows[1]["bigrams_gap"] == 0.75
    assert rows[0]["numbers"] == 1.0 and rows[1]["numbers"] == 0.0  # the question's 30 is only in the first
    assert rerank_features("when are returns accepted", hits, spy)[1][0]["numbers"] == 0.5  # no number asked
    assert rows[0]["length"] > 0
    # with two candidates, both are in the neighbourhood: each one's cosine to their normalised mean
    first, second = (np.asarray(h.vectors[h.text]) for h in hits)
    centre = (first + second) / np.linalg.norm(first + second)
    assert rows[1]["neighbourhood"] == pytest.approx(float(second @ centre), abs=1e-6)


def test_a_tree_ensemble_sums_the_leaf_each_tree_sends_a_row_to():
    # tree 1: x <= 0.5 ? 1.0 : (y <= 2 ? 2.0 : 3.0); tree 2: a single leaf of -0.5
    ensemble = TreeEnsemble.from_json(
        {
            "features": ["x", "y"],
            "trees": {
                "feature": [0, 1],
                "threshold": [0.5, 2.0],
                "left": [-1, -2],
                "right": [1, -3],
                "value": [1.0, 2.0, 3.0, -0.5],
                "roots": [0, -4],
            },
        }
    )
    rows = [{"x": 0.5, "y": 9.0}, {"x": 0.6, "y": 2.0}, {"x": 0.6, "y": 2.1}, {}]
    assert ensemble.scores(rows).tolist() == [0.5, 1.5, 2.5, 0.5]  # a missing feature reads as 0
    assert TreeEnsemble.from_json(ensemble.to_json()).scores(rows).tolist() == [0.5, 1.5, 2.5, 0.5]


def test_the_shipped_trees_score_as_lightgbm_does():
    """`bench/train/reranker.flatten` turns LightGBM's trees into the arrays served: same scores, numpy only."""
    lightgbm = pytest.importorskip("lightgbm")
    from bench.train.reranker import LAMBDAMART, flatten

    rng = np.random.default_rng(7)
    matrix = rng.random((600, 3))
    labels = (matrix[:, 0] + 0.5 * matrix[:, 1] > 0.9).astype(int)
    params = {**LAMBDAMART, "seed": 1, "num_leaves": 7, "min_data_in_leaf": 5, "num_threads": 1}
    booster = lightgbm.train(params, lightgbm.Dataset(matrix, labels, group=[50] * 12), num_boost_round=20)
    ensemble = TreeEnsemble.from_json(flatten(booster.dump_model(), ["a", "b", "c"]).to_json())
    rows = [dict(zip("abc", row, strict=True)) for row in matrix]
    assert np.allclose(ensemble.scores(rows), booster.predict(matrix), atol=1e-6)


class Reversing:
    """A stand-in reranker that ranks candidates by how much of 'pricing' they mention (deterministic)."""

    name = "test:pricing-first"
    typical_ms = 400

    def __init__(self):
        self.calls = []

    def rerank(self, query, hits):
        self.calls.append(len(hits))
        return [1.0 if "Pro plan" in h.text else 0.0 for h in hits]


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
    assert rushed["hits"][0]["source_uri"] == "ops.md" and "budget" in rushed["trace"]["stages"][0]["detail"]["rerank"]["skipped"]
