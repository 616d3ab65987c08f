"""Through `sourcerer serve` (gunicorn): `POST /v1/answer` with `Accept: text/event-stream` sends server-sent
events as the answer is made — an LLM's first cited sentence before the model has finished — and its last event
is the response the same request gets unstreamed; a refused request is a plain JSON error; a client that leaves
mid-stream is not billed."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest
from fakes import SSE, ScriptedServer, chat_completion, chat_completion_stream, serve_env, start_serve, streamed_reply
from sourcerer.http.events import parse_sse
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key

SHIPPING = "Standard shipping takes 3 to 5 business days within the continental United States."
RETURNS = "Returns are accepted within 30 days of delivery for a full refund on unused items."
REPLY = "Standard shipping takes 3 to 5 business days [{ship}]. Returns are accepted within 30 days of delivery [{back}]."
QUESTION = "How long does standard shipping take, and within how many days of delivery are returns accepted?"


@pytest.fixture
def served(tmp_path):
    """A server whose chat model is a fake OpenAI-compatible endpoint on 127.0.0.1, with two policies ingested."""
    model = ScriptedServer()
    home = tmp_path / "home"
    env = serve_env(
        home,
        SOURCERER_API_KEY="sk-test",
        SOURCERER_ENDPOINT=model.url + "/v1/chat/completions",
        SOURCERER_MODEL="test-model",
        SOURCERER_ANSWER_CACHE="false",
    )
    process, url = start_serve(env)
    try:
        ledger = SQLiteLedger(home / "ledger.db")
        key = issue_key(ledger, "acme", ["acme"], ["read", "write"], tier="pro").key
        with httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {key}"}) as client:
            for name, text in (("shipping.md", SHIPPING), ("returns.md", RETURNS)):
                assert client.post("/v1/documents", json={"source_uri": name, "text": text}).status_code == 200
            yield client, model, ledger
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
        model.close()


def model_answering(model: ScriptedServer) -> None:
    """The model cites the numbers its prompt gives the two policies, whatever order the search put them in."""

    def reply(body):
        prompt = body["messages"][-1]["content"]
        blocks = prompt.split("<source id=")[1:]
        ship = 1 + next(i for i, b in enumerate(blocks) if "Standard shipping" in b)
        back = 1 + next(i for i, b in enumerate(blocks) if "Returns are" in b)
        text = REPLY.format(ship=ship, back=back)
        content = streamed_reply(text, sorted({ship, back}))
        if body.get("stream"):
            return 200, chat_completion_stream(content, piece=6), SSE
        return 200, chat_completion(content), {}

    model.responder = reply


def test_events_arrive_as_the_answer_is_made_and_end_with_the_unstreamed_response(served):
    client, model, _ = served
    model_answering(model)
    model.chunk_delay_s = 0.02  # the first sentence well before the end even on a loaded machine (0.01 s left 0.09 s once)
    arrivals: list[tuple[float, str]] = []
    started = time.perf_counter()
    with client.stream("POST", "/v1/answer", json={"q": QUESTION}, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-content-type-options"] == "nosniff"
        for line in response.iter_lines():
            if line.startswith("event:"):
                arrivals.append((time.perf_counter() - started, line[6:].strip()))
    kinds = [k for _, k in arrivals]
    assert kinds == ["retrieve", "citation", "delta", "citation", "delta", "done"]
    first_delta = next(t for t, k in arrivals if k == "delta")
    assert first_delta < arrivals[-1][0] - 0.1  # the first sentence came while the model was still writing
    # the same request again, to read the events' data, and unstreamed: the same answer
    events = parse_sse(client.post("/v1/answer", json={"q": QUESTION}, headers={"Accept": "text/event-stream"}).text)
    done = events[-1]["response"]
    assert "".join(e["text"] for e in events if e["event"] == "delta") == done["answer"]["text"]
    assert set(events[1]["citation"]) == {"index", "unit_id", "source_uri", "original", "label", "locator", "quote", "quote_spans", "receipt", "answer_spans"}
    whole = client.post("/v1/answer", json={"q": QUESTION}).json()
    for part in ("answer", "hits", "context"):
        assert done[part] == whole[part]


def test_a_refused_request_is_a_plain_json_error(served):
    client, _, _ = served
    response = client.post(
        "/v1/answer", json={"q": QUESTION}, headers={"Accept": "text/event-stream", "Authorization": "Bearer sk_wrong"}
    )
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
    invalid = client.post("/v1/answer", json={"q": ""}, headers={"Accept": "text/event-stream"})
    assert invalid.status_code == 422 and invalid.headers["content-type"].startswith("application/json")


def test_a_client_that_leaves_mid_stream_is_not_billed(served):
    client, model, ledger = served
    model_answering(model)
    model.chunk_delay_s = 0.05  # ~40 chunks: two seconds of writing
    before = ledger.usage("acme", time.strftime("%Y-%m", time.gmtime())).get("queries", 0)
    with client.stream("POST", "/v1/answer", json={"q": QUESTION}, headers={"Accept": "text/event-stream"}) as response:
        for line in response.iter_lines():
            if line.startswith("event: delta"):
                break  # leave after the first sentence
    time.sleep(3)  # the model finishes writing; the server's next event finds nobody there
    after = ledger.usage("acme", time.strftime("%Y-%m", time.gmtime())).get("queries", 0)
    assert after == before
    assert [r.route for r in ledger.usage_records("acme")].count("POST /v1/answer") == 0
    assert json.loads(client.get("/v1/usage").text)["units"]["queries"]["used"] == before
