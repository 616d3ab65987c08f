"""Through `sourcerer serve`: the answer cache never serves project A's answer to project B, nor to the negated
question, and still serves a true repeat. (A keyword-only index: no background embedding changes the index's
version, and with it the cache context, while the test runs.)"""

from __future__ import annotations

import os
import signal

import httpx
from fakes import serve_env, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key

ASKED = "How long did the failover cutover take during the March drill of project {}?"


def test_through_the_server_the_cache_never_serves_another_projects_answer(tmp_path):
    home = tmp_path / "home"
    process, url = start_serve(serve_env(home))
    try:
        key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, timeout=30) as client:
            for project, seconds in (("A", 35), ("B", 28)):
                text = f"# Project {project}\n\nDuring the March drill of project {project}, the failover cutover took {seconds} seconds.\n"
                reply = client.post("/v1/documents", json={"source_uri": f"runbooks/{project}.md", "text": text}, headers=headers)
                assert reply.status_code == 200
            first = client.post("/v1/answer", json={"q": ASKED.format("A")}, headers=headers).json()
            second = client.post("/v1/answer", json={"q": ASKED.format("B")}, headers=headers).json()
            assert first["trace"]["cache"] == "miss" and second["trace"]["cache"] == "miss"
            assert "35" not in second["answer"]["text"]
            negated = client.post("/v1/answer", json={"q": ASKED.format("A").replace("did", "did not")}, headers=headers).json()
            assert negated["trace"]["cache"] == "miss"
            again = client.post("/v1/answer", json={"q": ASKED.format("A").upper()}, headers=headers).json()
            assert again["trace"]["cache"] == "hit" and again["answer"]["text"] == first["answer"]["text"]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
