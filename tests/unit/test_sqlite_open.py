"""Opening one new SQLite file from several processes at once (a server's workers on their first requests)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from sourcerer.store.sqlite_schema import open_index_file

PROCESSES = 6


def _open_and_read(path: str, barrier, failures) -> None:
    barrier.wait()  # all at once, as two workers' first requests
    try:
        open_index_file(Path(path), "test-model").execute("SELECT count(*) FROM chunks").fetchone()
    except Exception as exc:  # noqa: BLE001 - reported to the test, which names it
        failures.put(repr(exc))


def test_processes_opening_a_new_index_at_once_all_succeed(tmp_path):
    """Before the journal-mode switch was retried, about 1 trial in 5 failed here with "database is locked"
    (SQLite answers it at once, not through the busy timeout), and the server answered a first ingest with 500."""
    context = multiprocessing.get_context("fork")
    failures = context.Queue()
    for trial in range(20):
        barrier = context.Barrier(PROCESSES)
        path = str(tmp_path / f"index{trial}.db")
        processes = [context.Process(target=_open_and_read, args=(path, barrier, failures)) for _ in range(PROCESSES)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
    found = []
    while not failures.empty():
        found.append(failures.get())
    assert found == []
