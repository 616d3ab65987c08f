"""The query object /v1/search and /v1/answer share, through HTTP (the resolver the Lambda functions and
`sourcerer serve` run): planes, modalities, filters, rerank, budget, `answer: true`; CORS; deep links in
citations; groundedness; bounded LLM time."""

from __future__ import annotations

import json

import pytest
from fakes import chat_completion, reply
from sourcerer.http import api
from sourcerer.http.serve import LocalContext, to_event
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.core import Service
from sourcerer.settings import get_settings
from sourcerer.store.sqlite import SQLiteIndex

RUNBOOK = "# Failover\n\nDuring the March drill, the failover cutover completed in 42 seconds.\n"
TRANSCRIPT = (
    "WEBVTT\n\n00:12:40.000 --> 00:12:50.000\nWelcome to the review of the failover demo.\n\n"
    "00:12:47.000 --> 00:12:55.000\nThe failover demo went well: the cutover took 42 seconds.\n"
)
PRICING = "# Pricing\n\nThe Pro plan costs 49 dollars a month and includes failover support.\n"


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    from sourcerer.retrieval.embedders import local_embedder

    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=local_embedder()), ledger=SQLiteLedger(tmp_path / "l.db"))
    monkeypatch.setattr(api, "get_service", lambda: service)
    headers = {"Authorization": f"Bearer {issue_key(service.ledger, 'acme', ['acme'], ['read', 'write'], tier='pro').key}"}
    for uri, text, metadata in (
        ("handbook/runbook.md", RUNBOOK, {"lang": "en", "team": "ops"}),
        ("recordings/review.vtt", TRANSCRIPT, {"lang": "en", "team": "ops"}),
        ("sales/pricing.md", PRICING, {"lang": "en", "team": "sales"}),
    ):
        status, _ = call("POST", "/v1/documents", headers, {"source_uri": uri, "text": text, "metadata": metadata})
        assert status == 200
    return service, headers


def call(method, path, headers, body=None, app=None):
    event = to_event(method, path, headers, json.dumps(body) if body is not None else None)
    result = (app or api.build_app()).resolve(event, LocalContext())
    return result["statusCode"], json.loads(result["body"]) if result.get("body") else None


def sources(body):
    return sorted({h["source_uri"] for h in body["hits"]})


def test_the_seed_body_gets_a_cited_answer_with_rerank_reported(served):
    _, headers = served
    body = {
        "q": "How did the failover demo go?",
        "answer": True,
        "top_k": 8,
        "planes": ["text", "audio", "doc_visual"],
        "rerank": True,
    }
    status, answered = call("POST", "/v1/answer", headers, body)
    assert status == 200, answered
    assert answered["answer"]["refused"] is False and "42 seconds" in answered["answer"]["text"]
    assert "rerank" not in answered["trace"]["skipped"]
    reranked = next(s for s in answered["trace"]["stages"] if s["stage"] == "rerank")
    assert reranked["ms"] >= 0
    assert answered["answer"]["nli_faithfulness"] == 1.0
    status, rejected = call("POST", "/v1/answer", headers, {**body, "answer": False})
    assert status == 422 and rejected["error"]["detail"][0]["loc"][-1] == "answer"


def test_the_seed_body_over_the_bundled_handbook_is_answered_reranked_with_every_stage_traced(tmp_path, monkeypatch):
    from importlib import resources

    from sourcerer.retrieval.embedders import local_embedder

    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=local_embedder()), ledger=SQLiteLedger(tmp_path / "l.db"))
    monkeypatch.setattr(api, "get_service", lambda: service)
    headers = {"Authorization": f"Bearer {issue_key(service.ledger, 'acme', ['acme'], ['read', 'write'], tier='pro').key}"}
    for page in resources.files("sourcerer").joinpath("data", "handbook").iterdir():
        status, _ = call("POST", "/v1/documents", headers, {"source_uri": f"handbook/{page.name}", "text": page.read_text()})
        assert status == 200
    body = {"q": "How did the failover drill go?", "answer": True, "top_k": 8, "planes": ["text", "audio", "doc_visual"]}
    status, answered = call("POST", "/v1/answer", headers, {**body, "rerank": True, "verify": True})
    assert status == 200, answered
    answer = answered["answer"]
    assert answer["refused"] is False and "42 seconds" in answer["text"]
    assert answer["citations"][0]["source_uri"].startswith("handbook/operations.md#")  # a deep link
    stages = [s["stage"] for s in answered["trace"]["stages"]]
    for stage in ("embed", "keyword", "vector", "fuse", "rerank", "localize", "synthesize", "cite", "verify"):
        assert stage in stages, stages
    retrieve = next(s for s in answered["trace"]["stages"] if s["stage"] == "retrieve")
    assert retrieve["detail"]["rerank"]["by"] == "local"
    assert answered["trace"]["skipped"] == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"planes": ["audio"]}, ["recordings/review.vtt"]),
        ({"planes": ["text"]}, ["handbook/runbook.md", "sales/pricing.md"]),
        ({"modalities": ["text/vtt"]}, ["recordings/review.vtt"]),
        ({"filters": {"source_uri": "sales/"}}, ["sales/pricing.md"]),
        ({"filters": {"metadata": {"team": "ops"}}}, ["handbook/runbook.md", "recordings/review.vtt"]),
        ({"filters": {"metadata": {"team": "ops"}, "source_uri": "handbook/"}}, ["handbook/runbook.md"]),
        (
            {"filters": {"created_after": "2000-01-01T00:00:00Z"}},
            ["handbook/runbook.md", "recordings/review.vtt", "sales/pricing.md"],
        ),
        ({"filters": {"created_before": "2000-01-01T00:00:00Z"}}, []),
    ],
)
def test_search_filters_narrow_the_hits_and_the_trace_says_how(served, query, expected):
    _, headers = served
    status, body = call("POST", "/v1/search", headers, {"q": "failover", "mode": "hybrid", **query})
    assert status == 200, body
    assert sources(body) == expected
    assert "filter" in body["trace"]["stages"][0]["detail"] or query.get("planes") is None


def test_a_document_id_filter_and_the_same_filter_on_answers(served):
    _, headers = served
    _, listed = call("GET", "/v1/documents", headers)
    runbook = next(d["document_id"] for d in listed["documents"] if d["source_uri"] == "handbook/runbook.md")
    _, body = call("POST", "/v1/search", headers, {"q": "failover", "filters": {"document_id": [runbook]}})
    assert sources(body) == ["handbook/runbook.md"]
    _, answered = call("POST", "/v1/answer", headers, {"q": "How long did the failover take?", "planes": ["audio"]})
    (cited,) = [c["source_uri"] for c in answered["answer"]["citations"]]
    assert cited.startswith("recordings/review.vtt#t=") and 760 <= int(cited.rsplit("=", 1)[1]) <= 775  # a deep link


@pytest.mark.parametrize(
    "body",
    [
        {"q": "x", "filters": {"created_after": 0}},
        {"q": "x", "filters": {"unknown": 1}},
        {"q": "x", "planes": []},
        {"q": "x", "planes": ["video"]},
        {"q": "x", "modalities": ["image/png"]},
        {"q": "x", "budget": {"max_ms": 0}},
    ],
)
def test_both_routes_validate_the_query_object_alike(served, body):
    _, headers = served
    for path in ("/v1/search", "/v1/answer"):
        status, error = call("POST", path, headers, body)
        assert status == 422 and error["error"]["code"] == "validation_error", (path, body)


def test_a_tight_budget_skips_the_llm_and_says_so(served, openai):
    _, headers = served
    openai.script((200, chat_completion(reply("The cutover took 42 seconds [1].", [1]))))
    status, answered = call("POST", "/v1/answer", headers, {"q": "How did the failover demo go?", "budget": {"max_ms": 500}})
    assert status == 200 and answered["answer"]["provider"] == "extractive" and not answered["answer"]["refused"]
    assert "synthesize:llm" in answered["trace"]["skipped"] and openai.requests == []
    status, answered = call("POST", "/v1/answer", headers, {"q": "How did the failover demo go?", "budget": {"max_ms": 60_000}})
    assert answered["answer"]["provider"] == "openai:test-model" and len(openai.requests) == 1


def test_min_groundedness_refuses_an_answer_with_uncited_sentences(served, openai):
    _, headers = served
    openai.script((200, chat_completion(reply("The cutover took 42 seconds [1]. Everyone was delighted.", [1]))))
    query = {"q": "How long did the failover take?"}
    status, loose = call("POST", "/v1/answer", headers, query)
    assert status == 200 and loose["answer"]["nli_faithfulness"] == 0.5
    status, strict = call("POST", "/v1/answer", headers, {**query, "min_groundedness": 0.9})
    assert strict["answer"]["refused"] is True and strict["answer"]["reason"] == "no_citation"


def test_a_hung_model_falls_back_to_the_extractive_answer_within_the_deadline(served, openai, monkeypatch):
    import time

    _, headers = served
    monkeypatch.setenv("SOURCERER_LLM_TIMEOUT_S", "0.3")
    monkeypatch.setenv("SOURCERER_LLM_DEADLINE_S", "0.8")
    monkeypatch.setenv("SOURCERER_BACKOFF_S", "0.01")
    openai.delay_s = 2.0
    openai.script((200, chat_completion(reply("late [1].", [1]))))
    started = time.perf_counter()
    status, answered = call("POST", "/v1/answer", headers, {"q": "How did the failover demo go?"})
    assert time.perf_counter() - started < 2.0
    assert (
        status == 200 and answered["answer"]["provider"] == "extractive fallback" and "42 seconds" in answered["answer"]["text"]
    )
    assert any("test-model" in note for note in answered["trace"]["notes"])


def test_default_llm_deadlines_fit_inside_the_answer_function_timeout():
    from cfnlint.decode import decode
    from sourcerer.settings import Settings

    template, _ = decode(str(api.__file__).rsplit("/layers/", 1)[0] + "/template.yaml")
    timeout = template["Globals"]["Function"]["Timeout"]
    defaults = Settings()
    # synthesis and LLM verification at their deadlines, with 5 s left for the search and the extractive fallback
    assert defaults.llm_deadline_s + defaults.judge_deadline_s + 5 <= timeout


def test_cors_answers_preflight_for_allowed_origins_only(served):
    _, headers = served
    app = api.build_app(cors_origins="http://localhost:*")
    preflight = {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}
    result = app.resolve(to_event("OPTIONS", "/v1/answer", preflight, None), LocalContext())
    assert result["statusCode"] == 204
    assert result["multiValueHeaders"]["Access-Control-Allow-Origin"] == ["http://localhost:5173"]
    assert "Authorization" in result["multiValueHeaders"]["Access-Control-Allow-Headers"][0]
    foreign = app.resolve(to_event("GET", "/health", {"Origin": "https://elsewhere.example"}, None), LocalContext())
    assert "Access-Control-Allow-Origin" not in foreign["multiValueHeaders"]
    closed = api.build_app(cors_origins="").resolve(to_event("OPTIONS", "/v1/answer", preflight, None), LocalContext())
    assert closed["statusCode"] == 405  # no CORS configured: the default in AWS
    # a port pattern matches digits only: the old glob reflected both of these
    for crafted in ("http://localhost:80@evil.example", "http://localhost:3000 http://evil.example", "http://localhost:1x"):
        reply = app.resolve(to_event("OPTIONS", "/v1/answer", {**preflight, "Origin": crafted}, None), LocalContext())
        assert "Access-Control-Allow-Origin" not in reply.get("multiValueHeaders", {}), crafted
    subdomains = api.build_app(cors_origins="https://*.example.com")
    ok = subdomains.resolve(to_event("GET", "/health", {"Origin": "https://docs.example.com"}, None), LocalContext())
    assert ok["multiValueHeaders"]["Access-Control-Allow-Origin"] == ["https://docs.example.com"]
    bad = subdomains.resolve(to_event("GET", "/health", {"Origin": "https://evil.com/.example.com"}, None), LocalContext())
    assert "Access-Control-Allow-Origin" not in bad["multiValueHeaders"]


def test_the_trace_names_every_stage_that_ran_and_whether_the_cache_answered(served):
    _, headers = served
    _, answered = call("POST", "/v1/answer", headers, {"q": "How did the failover demo go?", "verify": True})
    names = [s["stage"] for s in answered["trace"]["stages"]]
    assert {"retrieve", "embed", "keyword", "vector", "fuse", "synthesize", "localize", "cite", "verify"} <= set(names)
    assert answered["trace"]["cache"] == "miss" and answered["trace"]["total_ms"] >= sum(
        s["ms"] for s in answered["trace"]["stages"] if s["stage"] in ("retrieve", "synthesize", "cite")
    )
    _, searched = call("POST", "/v1/search", headers, {"q": "failover"})
    assert {"search", "embed", "keyword", "vector", "fuse"} <= {s["stage"] for s in searched["trace"]["stages"]}


def test_the_answer_cache_serves_a_repeat_and_nothing_else(served, openai, monkeypatch):
    service, headers = served
    service.settings = get_settings()  # the LLM the `openai` fixture configured, as the composition root reads it
    openai.script((200, chat_completion(reply("The cutover took 42 seconds [1].", [1]))))
    question = {"q": "How did the failover demo go?"}
    _, first = call("POST", "/v1/answer", headers, question)
    _, again = call("POST", "/v1/answer", headers, {"q": "how did the FAILOVER demo go"})  # the same terms
    assert first["trace"]["cache"] == "miss" and again["trace"]["cache"] == "hit" and len(openai.requests) == 1
    assert again["answer"]["text"] == first["answer"]["text"] and again["answer_id"] != first["answer_id"]
    assert service.ledger.get_answer("acme", again["answer_id"]) is not None  # logged (and audited) like any other
    assert [s["stage"] for s in again["trace"]["stages"]] == ["cache"]
    # another caller's view: other groups, or another scope, is another context
    other = {"Authorization": f"Bearer {issue_key(service.ledger, 'acme', ['acme'], ['read'], ['finance']).key}"}
    _, theirs = call("POST", "/v1/answer", other, question)
    assert theirs["trace"]["cache"] == "miss" and len(openai.requests) == 2
    # any write in the tenant invalidates: the index's version changed
    call("POST", "/v1/documents", headers, {"source_uri": "new.md", "text": "Unrelated news."})
    _, after = call("POST", "/v1/answer", headers, question)
    assert after["trace"]["cache"] == "miss" and len(openai.requests) == 3
    # a near-duplicate by embedding, where the terms differ
    monkeypatch.setenv("SOURCERER_CACHE_SIMILARITY", "0.8")
    service.settings = get_settings()  # as the composition root would read them
    _, similar = call("POST", "/v1/answer", headers, {"q": "How did the failover demonstration go?"})
    assert similar["trace"]["cache"] == "hit" and similar["trace"]["stages"][0]["detail"]["match"] == "similar"
    # follow-ups are never cached
    _, follow = call("POST", "/v1/answer", headers, {**question, "history": [{"role": "user", "text": "hello"}]})
    assert follow["trace"]["cache"] == "off"


def test_a_cached_refusal_still_says_why(served):
    """Found trying the service as a user: a question refused with a reason ("the question names Japan, which no
    passage mentions ...") came back from the cache the second time with no note at all. The answer's notes are
    kept with it; the stages are the request's own."""
    _, headers = served
    text = "# Travel\n\nThe daily meal allowance is 60 EUR in Europe and 75 USD in the United States.\n"
    assert call("POST", "/v1/documents", headers, {"source_uri": "travel.md", "text": text})[0] == 200
    question = {"q": "What is the meal allowance in Japan?"}
    _, first = call("POST", "/v1/answer", headers, question)
    _, again = call("POST", "/v1/answer", headers, question)
    assert first["answer"]["refused"] and again["trace"]["cache"] == "hit" and again["answer"]["refused"]
    why = [n for n in first["trace"]["notes"] if "names Japan" in n]
    assert why and [n for n in again["trace"]["notes"] if "names Japan" in n] == why
    assert len(again["trace"]["notes"]) == len(set(again["trace"]["notes"]))  # the request's own notes, once


NEAR_MISSES = [  # (asked first, then asked: the same words but another question)
    ("How long did the failover cutover take during the March drill of project A?", "How long did the failover cutover take during the March drill of project B?"),
    ("Who confirmed recovery after the failover drill?", "Who did not confirm recovery after the failover drill?"),
    ("Was the failover drill before the pricing review?", "Was the pricing review before the failover drill?"),
    ("How long did the failover take in the March drill?", "How long did the failover take in the April drill?"),
    ("Does the Pro plan cost 49 dollars a month?", "Does the Pro plan cost 99 dollars a month?"),
]


@pytest.mark.parametrize("first,then", NEAR_MISSES)
def test_the_cache_never_serves_another_questions_answer(served, monkeypatch, first, then):
    service, headers = served
    monkeypatch.setenv("SOURCERER_CACHE_SIMILARITY", "0.5")  # even a loose threshold: the rest of the key decides
    service.settings = get_settings()
    for uri, text in (
        ("runbooks/project-a.md", "# Project A\n\nDuring the March drill of project A, the failover cutover took 35 seconds.\n"),
        ("runbooks/project-b.md", "# Project B\n\nDuring the March drill of project B, the failover cutover took 28 seconds.\n"),
    ):
        assert call("POST", "/v1/documents", headers, {"source_uri": uri, "text": text})[0] == 200
    _, asked = call("POST", "/v1/answer", headers, {"q": first})
    assert asked["trace"]["cache"] == "miss"
    _, other = call("POST", "/v1/answer", headers, {"q": then})
    assert other["trace"]["cache"] == "miss", other["answer"]["text"]
    _, repeat = call("POST", "/v1/answer", headers, {"q": f"  {first.upper()}  "})  # a true repeat still hits
    assert repeat["trace"]["cache"] == "hit"


def test_an_answer_made_while_the_llm_was_down_is_not_cached(served, openai):
    _, headers = served
    openai.script((500, {"error": {"message": "upstream down"}}), (500, {"error": {"message": "upstream down"}}))
    question = {"q": "How did the failover demo go?"}
    _, during = call("POST", "/v1/answer", headers, question)
    assert "fallback" in during["answer"]["provider"] and during["trace"]["cache"] == "miss"
    openai.script((200, chat_completion(reply("The cutover took 42 seconds [1].", [1]))))
    _, after = call("POST", "/v1/answer", headers, question)  # the LLM is back: asked again, not served the fallback
    assert after["trace"]["cache"] == "miss" and "fallback" not in after["answer"]["provider"]
    _, again = call("POST", "/v1/answer", headers, question)
    assert again["trace"]["cache"] == "hit" and again["answer"]["text"] == after["answer"]["text"]
