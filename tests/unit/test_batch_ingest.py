"""The batch ingest (`Index.ingest_documents`) on SQLite: a group is one commit, a failing store undoes the
group and a retry stores each document once; many documents are parsed in worker processes, in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sourcerer.store import folders
from sourcerer.store.sqlite import SQLiteIndex


def _docs(n: int, scope: str = "acme") -> list[dict]:
    return [
        {"source_uri": f"note{i}.md", "text": f"Note {i}. The standby region took over in {i + 10} seconds.", "tenant": "acme", "scope": scope}
        for i in range(n)
    ]


def test_a_store_failing_mid_group_undoes_the_group_and_a_retry_stores_each_document_once(tmp_path, monkeypatch):
    index = SQLiteIndex(tmp_path / "index.db")
    real_write = SQLiteIndex.write_document
    calls = {"n": 0}

    def failing_third(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk I/O error")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(SQLiteIndex, "write_document", failing_third)
    with pytest.raises(OSError, match="disk I/O"):
        index.ingest_documents(_docs(5))
    assert index.list_documents("acme") == []  # the two written before the failure were undone with it
    assert list(index.search("standby region", tenant="acme", k=10, mode="keyword")) == []
    monkeypatch.setattr(SQLiteIndex, "write_document", real_write)
    outcomes = index.ingest_documents(_docs(5))
    assert [o["status"] for o in outcomes] == ["ingested"] * 5
    assert index.stats()["chunks"] == 5 and len(index.list_documents("acme")) == 5
    assert [o["status"] for o in index.ingest_documents(_docs(5))] == ["unchanged"] * 5


def test_groups_commit_one_at_a_time_so_a_long_batch_is_searchable_as_it_goes(tmp_path, monkeypatch):
    monkeypatch.setattr(folders, "WRITE_GROUP", 2)
    index = SQLiteIndex(tmp_path / "index.db")
    commits = []
    real_bump = SQLiteIndex._bump
    monkeypatch.setattr(SQLiteIndex, "_bump", staticmethod(lambda db: (commits.append(1), real_bump(db))))
    index.ingest_documents(_docs(5))
    assert len(commits) == 3  # groups of 2, 2 and 1: one mark (and commit) each, not one per document


PARALLEL_SCRIPT = """
import json, sys
from sourcerer.store import folders
from sourcerer.store.sqlite import SQLiteIndex

folders.PARALLEL_FROM_FILES = 4
pools = []

class Recorded(folders._Batches):
    def __init__(self, work, items, args, workers):
        pools.append(workers)
        super().__init__(work, items, args, workers)

folders._Batches = Recorded
docs = [
    {"source_uri": f"note{i}.md", "text": f"Note {i}. The standby region took over in {i + 10} seconds.", "tenant": "acme"}
    for i in range(40)
] + [{"source_uri": "blank.md", "text": " ", "tenant": "acme"}]
index = SQLiteIndex(sys.argv[1])
outcomes = index.ingest_documents(docs)
hit = index.search("took over in 37 seconds", tenant="acme", k=1, mode="keyword")[0]
print(json.dumps({
    "pools": pools,
    "statuses": [o["status"] if isinstance(o, dict) else str(o) for o in outcomes],
    "listed": sorted(d["source_uri"] for d in index.list_documents("acme")),
    "hit": hit.source_uri,
}))
"""


def test_many_documents_are_parsed_in_worker_processes_and_come_back_in_order(tmp_path):
    """In a fresh interpreter: a process with other threads (this test run's servers) parses in itself, since
    forking beside threads is unsafe."""
    if (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1) < 2:
        pytest.skip("one core: the batch parses in this process, not in forked workers")
    done = subprocess.run(
        [sys.executable, "-c", PARALLEL_SCRIPT, str(tmp_path / "index.db")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["pools"] and result["pools"][0] >= 1  # a pool of forked workers parsed them
    assert result["statuses"][:40] == ["ingested"] * 40 and "no text" in result["statuses"][40]  # reported, not lost
    assert result["listed"] == sorted(f"note{i}.md" for i in range(40))
    assert result["hit"] == "note27.md"  # each document's own chunks, in order


SHARING_SCRIPT = """
import json, os, sys, time
from sourcerer.store import folders

def tagged(item, ahead):
    if item == "boom":
        raise KeyError("a bug in the work")
    time.sleep(0.001)  # long enough that this process, waiting, takes batches too
    return (item, os.getpid(), ahead)

items = list(range(200))
with folders._Batches(tagged, items, (), 1) as batches:
    results = list(batches)
with folders._Batches(tagged, items, (), 1) as batches:
    stream = iter(batches)
    first = next(stream)
    workers = list(batches.processes)
stream.close()
left = [p.pid for p in workers if p.is_alive()]
try:
    with folders._Batches(tagged, [0] * 20 + ["boom"], (), 1) as batches:
        list(batches)
    failure = None
except Exception as exc:  # the bug itself where this process ran that batch, else the worker's report of it
    failure = f"{type(exc).__name__}: {exc}"

def dies(item, ahead):
    if item == "die":
        os.kill(os.getpid(), 9)  # as the out-of-memory killer would
    return item

folders._Batches._worth_taking = lambda self: False  # the workers take every batch: the dying one is theirs
started = time.monotonic()
try:
    # two workers: the other one fills the window past the dead batch and then waits for its turn to come
    with folders._Batches(dies, ["die"] + [0] * 400, (), 2) as batches:
        list(batches)
    death = None
except RuntimeError as exc:
    death = str(exc)
print(json.dumps({
    "results": results, "me": os.getpid(), "first": first, "left": left, "failure": failure,
    "death": death, "death_s": time.monotonic() - started,
}))
"""


def test_batches_come_back_in_order_from_workers_and_this_process_and_stop_cleanly(tmp_path):
    """In a fresh interpreter (forking beside this run's server threads is unsafe): every result in its item's
    order, whichever process ran it; a consumer that stops early leaves no worker behind; a bug in the work is
    an error here, and so is a worker killed mid-batch, not a hang."""
    done = subprocess.run([sys.executable, "-c", SHARING_SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert [item for item, _, _ in result["results"]] == list(range(200))
    assert all(ahead for _, _, ahead in result["results"])  # every item fully done, wherever it ran
    ran_in = {pid for _, pid, _ in result["results"]}
    assert len(ran_in - {result["me"]}) == 1  # one worker process took part
    assert result["first"][0] == 0
    assert result["left"] == []  # the early-closed stream stopped its worker
    assert "a bug in the work" in result["failure"]
    assert "died" in result["death"] and result["death_s"] < 30  # a killed worker is an error, not a hang
