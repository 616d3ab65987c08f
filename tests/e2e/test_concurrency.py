"""Concurrent requests from two tenants at a real `sourcerer serve` (worker processes, each with threads): every
response carries its own request's trace, and every usage record belongs to its own tenant and request."""

from __future__ import annotations

import concurrent.futures
import os

import httpx
from fakes import server_log, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.tenancy import month_of

ROUNDS = 40  # per tenant


def test_two_tenants_at_once_never_see_each_others_trace_or_usage(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "SOURCERER_HOME": str(home), "SOURCERER_EMBEDDER": "none", "POWERTOOLS_TRACE_DISABLED": "true"}
    process, url = start_serve(env)
    ledger = SQLiteLedger(home / "ledger.db")
    # acme searches in keyword mode; globex asks for semantic search, which an index without embeddings runs as
    # keyword and says so in the trace: a crossed trace shows up as a note where there should be none, or none
    acme = {"Authorization": f"Bearer {issue_key(ledger, 'acme', ['acme'], ['read', 'write'], tier='pro').key}"}
    globex = {"Authorization": f"Bearer {issue_key(ledger, 'globex', ['globex'], ['read', 'write'], tier='pro').key}"}
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            for headers, text in ((acme, "Failover takes 42 seconds at acme."), (globex, "Globex ships on Tuesdays.")):
                assert client.post("/v1/documents", headers=headers, json={"source_uri": "a.md", "text": text}).status_code == 200

            def search(who: str, i: int) -> tuple[str, int, dict]:
                headers, mode = (acme, "keyword") if who == "acme" else (globex, "semantic")
                response = client.post(
                    "/v1/search", headers=headers, json={"q": f"failover ships {i}", "mode": mode, "top_k": 1 + i % 7}
                )
                return who, i, response.json()

            jobs = [(who, i) for i in range(ROUNDS) for who in ("acme", "globex")]
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                results = list(pool.map(lambda job: search(*job), jobs))
    finally:
        process.terminate()
        process.wait(timeout=10)
    for who, i, body in results:
        assert "trace" in body, f"{who} request {i} failed: {body} {server_log(process)}"
        stage = body["trace"]["stages"][0]
        assert body["context"]["tenant"] == who
        assert stage["units"]["top_k"] == 1 + i % 7
        if who == "acme":
            assert stage["detail"]["mode"] == "keyword" and "fallback" not in stage["detail"], (
                f"acme request {i} carries another's trace: {stage['detail']}"
            )
        else:
            assert stage["detail"]["mode"] == "keyword" and "semantic search" in stage["detail"]["fallback"]
        assert all(("acme" in hit["text"]) == (who == "acme") for hit in body["hits"])
    for tenant in ("acme", "globex"):
        records = [r for r in ledger.usage_records(tenant) if r.route == "POST /v1/search"]
        assert len(records) == ROUNDS and len({r.request_id for r in records}) == ROUNDS
        assert all(r.tenant == tenant and r.units["queries"] == 1 for r in records)
        assert ledger.usage(tenant, month_of())["queries"] == ROUNDS
