"""`sourcerer demo`: the answer pipeline on bundled sample passages, no key, no network."""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

from sourcerer.cli.ask import render
from sourcerer.pipeline import ask
from sourcerer.synthesis.providers import ChatReply


def sample_passages() -> list[dict]:
    text = resources.files("sourcerer").joinpath("data/sample_passages.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class CarelessModel:
    """A stand-in chat model that cites correctly but gets a number wrong, to show strict verification
    catching it. Clearly labelled in the output; never used outside the demo."""

    name = "demo:careless-model"

    async def complete(self, messages: list[dict]) -> ChatReply:
        answer = {"answer": "Standard shipping takes 3 to 7 business days [1].", "citations": [1], "refused": False}
        return ChatReply(content=json.dumps(answer))


class EmbellishingModel:
    """A stand-in chat model that states its source's rule and adds one it made up, to show verify='partial'
    keeping the first and removing the second. Clearly labelled in the output; never used outside the demo."""

    name = "demo:embellishing-model"

    async def complete(self, messages: list[dict]) -> ChatReply:
        text = "Standard shipping takes 3 to 5 business days [1]. Express shipping is free on every order [1]."
        return ChatReply(content=json.dumps({"answer": text, "citations": [1], "refused": False}))


SEED_PASSAGES = [
    {"text": "Standard shipping takes 3 to 5 business days within the continental United States.", "source": "Shipping Policy"},
    {"text": "Returns are accepted within 30 days of delivery for a full refund on unused items.", "source": "Returns Policy"},
]


def _show(question: str, passages: list[dict], **kwargs) -> None:
    label = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    print(f"── ask({question!r}{', ' + label if label else ''})")
    print(render(ask(question, passages=passages, **kwargs), question=question))
    print()


def run_demo() -> None:
    print("Sourcerer demo — cited answers or honest refusals (extractive synthesiser and local judge:")
    print("no key, no network)\n")
    print("━━ The quickstart: two passages ━━\n")
    _show("How long does standard shipping take?", SEED_PASSAGES)
    _show("Do you offer a lifetime warranty?", SEED_PASSAGES)
    _show("How long does standard shipping take?", SEED_PASSAGES, verify=True)

    passages = sample_passages()
    print(f"━━ More questions over {len(passages)} bundled sample passages ━━\n")
    for question, kwargs in [
        ("When is chat support available?", {"verify": "strict"}),
        ("How long do refunds take?", {}),
        ("标准配送需要多长时间？", {}),
        ("Is there a lifetime warranty on appliances?", {}),
        ("What is the capital of France?", {}),
        ("   ", {}),
    ]:
        _show(question, passages, **kwargs)

    print("━━ A model that misquotes its source, caught by verify='strict' ━━\n")
    question = "How long does standard shipping take?"
    answer = ask(question, passages=passages, chat=CarelessModel(), verify="strict", judge="local")
    print(render(answer, question=question))
    print()

    print("━━ A model that adds a rule its source lacks, trimmed by verify='partial' ━━\n")
    answer = ask(question, passages=passages, chat=EmbellishingModel(), verify="partial", judge="local")
    print(render(answer, question=question))


def run_http_demo() -> None:
    """The service on loopback: ingest the bundled handbook, then ask over HTTP, then stop the server."""
    from importlib import resources

    import httpx

    from sourcerer.http.serve import serve_in_thread
    from sourcerer.ledger import open_ledger
    from sourcerer.service.admin import issue_key

    ledger = open_ledger()
    key = issue_key(ledger, "acme", ["acme/alpha"], ["read", "write"], tier="pro").key
    admin_key = issue_key(ledger, "acme", ["acme"], ["admin"]).key
    server, base = serve_in_thread()
    headers = {"Authorization": f"Bearer {key}", "X-Sourcerer-Scope": "acme/alpha/backend"}
    print(f"━━ The HTTP API on {base} (tenant acme, pro tier, scope acme/alpha) ━━\n")
    handbook = {
        doc.name: doc.read_text(encoding="utf-8")
        for doc in sorted(resources.files("sourcerer").joinpath("data/handbook").iterdir(), key=lambda p: p.name)
    }
    started = time.time()
    answered: list[str] = []
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            for name, text in handbook.items():
                result = client.post(
                    "/v1/documents", headers=headers, json={"source_uri": f"handbook/{name}", "text": text}
                ).json()
                print(f"POST /v1/documents handbook/{name} -> {result.get('status')}, {result.get('chunks')} chunks")
            print()
            for question, verify in [
                ("How long did the failover cutover take?", "strict"),
                ("What is our parental leave policy?", False),
            ]:
                request = {"q": question, "top_k": 8, "verify": verify, "handoff": True}  # a refusal is handed to people
                response = client.post("/v1/answer", headers=headers, json=request)
                body = response.json()
                answer = body["answer"]
                print(
                    f"POST /v1/answer {{q: {question!r}, verify: {verify!r}}} -> HTTP {response.status_code}, {body['answer_id']}"
                )
                answered.append(body["answer_id"])
                if answer["refused"]:
                    print(f"   REFUSED ({answer['reason']}): {answer['text']}")
                    if body.get("handoff"):
                        print(f"   hand-off stored for a person (GET /v1/handoffs): {body['handoff']['needed']}")
                else:
                    print(f"   A: {answer['text']}")
                    for c in answer["citations"]:
                        print(
                            f"   [{c['index']}] {c['label']} ({c['source_uri']}, {c['locator']['kind']} {c['locator'].get('start')}-{c['locator'].get('end')}, {c['receipt'][:19]}…)"
                        )
                    if answer["faithfulness"]:
                        print(
                            f"   strict verification: faithful={answer['faithfulness']['faithful']} score={answer['faithfulness']['score']}"
                        )
                print(f"   ({body['trace']['total_ms']:.0f} ms, context {body['context']})\n")
            _stream_demo(client, headers)
            outside = client.post("/v1/search", headers={**headers, "X-Sourcerer-Scope": "acme/alphabet"}, json={"q": "failover"})
            print(f"POST /v1/search with scope acme/alphabet -> HTTP {outside.status_code} {outside.json()['error']['code']}")
            usage = client.get("/v1/usage", headers=headers).json()
            print(f"GET /v1/usage -> {usage['units']}\n")
            _audit_demo(client, headers, {"Authorization": f"Bearer {admin_key}"}, handbook, answered[0], started)
    finally:
        server.shutdown()
        server.server_close()
        print("\nserver stopped")


def _stream_demo(client: Any, headers: dict) -> None:
    """A question as server-sent events: the hits first, then each citation and sentence, then the response."""
    from sourcerer.http.events import parse_sse

    question = "How fast does the on-call engineer acknowledge a page?"
    stream_headers = {**headers, "Accept": "text/event-stream"}
    print(f"POST /v1/answer {{q: {question!r}}} with Accept: text/event-stream ->")
    with client.stream("POST", "/v1/answer", headers=stream_headers, json={"q": question, "top_k": 8}) as response:
        events = parse_sse(response.read().decode("utf-8"))
    for event in events:
        shown = {
            "retrieve": f"{len(event.get('hits', []))} hits",
            "citation": event.get("citation", {}).get("label", ""),
            "delta": repr(event.get("text", "")),
            "done": event.get("response", {}).get("answer_id", ""),
        }
        print(f"   event {event['event']}: {shown.get(event['event'], '')}")
    print()


def _audit_demo(client: Any, headers: dict, admin: dict, handbook: dict[str, str], answer_id: str, since: float) -> None:
    """Days later, the failover runbook is edited: the audit notices the answer that cited it."""
    from sourcerer.service.audit import Auditor
    from sourcerer.service.wiring import get_service

    edited = handbook["operations.md"].replace("42 seconds", "97 seconds")
    result = client.post("/v1/documents", headers=headers, json={"source_uri": "handbook/operations.md", "text": edited}).json()
    print(f"(the runbook is edited: 42 -> 97 seconds) POST /v1/documents handbook/operations.md -> {result.get('status')}")
    service = get_service()  # the scheduled audit function does this in AWS; `sourcerer audit` does it locally
    report = Auditor(service.index, service.ledger).run(since, tenants=["acme"])
    print(f"audit: {report.answers_checked} answers checked, {report.refusals_skipped} refusals skipped -> {report.by_status()}")
    stored = client.get(f"/v1/answers/{answer_id}", headers=headers).json()["answer"]
    print(f"GET /v1/answers/{answer_id} -> audit status {stored['audit']['status']}: {stored['audit'].get('detail', '')}")
    findings = client.get("/v1/audits", headers=admin, params={"status": "source_changed", "since": "1h"}).json()["findings"]
    print(f"GET /v1/audits?status=source_changed (admin) -> {[f['answer_id'] for f in findings]}")
    client.post(
        "/v1/documents", headers=headers, json={"source_uri": "handbook/operations.md", "text": handbook["operations.md"]}
    )
