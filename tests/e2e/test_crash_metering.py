"""Charge only what was delivered, across crashes: `sourcerer serve` is killed with SIGKILL (server and workers)
in the middle of ingests and searches, ten times; after the restart that recovers the charges, the chunks
charged equal the chunks stored, and no query is charged whose response never left (but for one a round that
the kill may catch between its settlement and its last byte)."""

from __future__ import annotations

import os
import random
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
from fakes import server_log, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.tenancy import month_of
from sourcerer.store.sqlite import SQLiteIndex

ROUNDS = 10


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_kill_9_under_load_never_charges_what_was_not_stored_or_sent(tmp_path):
    home = tmp_path / "home"
    env = {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "SOURCERER_EMBEDDER": "none",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    port = free_port()
    rng = random.Random(24)
    delivered_queries = 0
    counter = iter(range(10**6))
    lock = threading.Lock()
    key = None
    for round_ in range(ROUNDS + 1):
        process, url = start_serve(env, port=port)
        if key is None:
            key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
        if round_ == ROUNDS:  # the last start only recovers what the last crash left
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
            break
        stop = threading.Event()
        headers = {"Authorization": f"Bearer {key}"}

        def ingest() -> None:
            with httpx.Client(base_url=url, timeout=10) as client:
                while not stop.is_set():
                    n = next(counter)
                    text = f"# Drill {n}\n\n" + " ".join(f"Step {i} of drill {n} took {i + n} seconds." for i in range(60))
                    try:
                        client.post("/v1/documents", json={"source_uri": f"drills/{n}.md", "text": text}, headers=headers)
                    except httpx.HTTPError:
                        return

        def search() -> None:
            nonlocal delivered_queries
            with httpx.Client(base_url=url, timeout=10) as client:
                while not stop.is_set():
                    try:
                        reply = client.post("/v1/search", json={"q": "drill step seconds"}, headers=headers)
                    except httpx.HTTPError:
                        return
                    if reply.status_code == 200:
                        reply.json()  # the whole body arrived: delivered
                        with lock:
                            delivered_queries += 1

        threads = [threading.Thread(target=f) for f in (ingest, ingest, search, search)]
        for thread in threads:
            thread.start()
        time.sleep(0.4 + rng.random())
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        stop.set()
        for thread in threads:
            thread.join(timeout=15)

    ledger = SQLiteLedger(home / "ledger.db")
    used = ledger.usage("acme", month_of())
    stored = sum(d["chunks"] for d in SQLiteIndex(home / "index.db", embedder=None).list_documents("acme"))
    assert stored > 0 and used.get("chunks", 0) == stored, (used, stored, server_log(process))
    assert ledger.pending_usage(before=time.time()) == []  # every crash's charges were settled or given back
    charged_queries = used.get("queries", 0)
    assert delivered_queries <= charged_queries <= delivered_queries + ROUNDS, (charged_queries, delivered_queries)
