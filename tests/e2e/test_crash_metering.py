"""Charge only what was delivered, across crashes: `sourcerer serve` is killed with SIGKILL (server and workers)
in the middle of ingests and searches, ten times; after the restart that recovers the charges, the chunks
charged equal the chunks stored, and no query is charged whose response never left (but for one per searcher a
round that the kill may catch between its settlement and its last byte)."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable

import httpx
from fakes import free_port, serve_env, server_log, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.tenancy import month_of
from sourcerer.store.sqlite import SQLiteIndex

ROUNDS = 10
SEARCHERS = 2


def ingester(url: str, headers: dict[str, str], stop: threading.Event, numbers: Callable[[], int]) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        while not stop.is_set():
            n = numbers()
            text = f"# Drill {n}\n\n" + " ".join(f"Step {i} of drill {n} took {i + n} seconds." for i in range(60))
            try:
                client.post("/v1/documents", json={"source_uri": f"drills/{n}.md", "text": text}, headers=headers)
            except httpx.HTTPError:
                return


def searcher(url: str, headers: dict[str, str], stop: threading.Event, delivered: list[int]) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        while not stop.is_set():
            try:
                reply = client.post("/v1/search", json={"q": "drill step seconds"}, headers=headers)
            except httpx.HTTPError:
                return
            if reply.status_code == 200:
                reply.json()  # the whole body arrived: delivered
                delivered.append(1)


def test_kill_9_under_load_never_charges_what_was_not_stored_or_sent(tmp_path):
    home = tmp_path / "home"
    env = serve_env(home)
    port = free_port()
    rng = random.Random(24)
    delivered: list[int] = []  # one item per search response that arrived whole
    counter = iter(range(10**6))
    key = None
    for round_ in range(ROUNDS + 1):
        process, url = start_serve(env, port=port)  # each start recovers what the crash before it left
        if key is None:
            key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
        if round_ == ROUNDS:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
            break
        stop = threading.Event()
        headers = {"Authorization": f"Bearer {key}"}
        threads = [threading.Thread(target=ingester, args=(url, headers, stop, counter.__next__)) for _ in range(2)]
        threads += [threading.Thread(target=searcher, args=(url, headers, stop, delivered)) for _ in range(SEARCHERS)]
        for thread in threads:
            thread.start()
        time.sleep(0.4 + rng.random())
        os.killpg(process.pid, signal.SIGKILL)  # the server and its workers, mid-request
        process.wait(timeout=10)
        stop.set()
        for thread in threads:
            thread.join(timeout=15)

    ledger = SQLiteLedger(home / "ledger.db")
    used = ledger.usage("acme", month_of())
    stored = sum(d["chunks"] for d in SQLiteIndex(home / "index.db", embedder=None).list_documents("acme"))
    assert stored > 0 and used.get("chunks", 0) == stored, (used, stored, server_log(process))
    assert ledger.pending_usage(before=time.time()) == []  # every crash's charges were settled or given back
    # a kill between a search's settlement and its last byte charges that one response: at most one per searcher
    assert len(delivered) <= used.get("queries", 0) <= len(delivered) + SEARCHERS * ROUNDS, (used, len(delivered))
