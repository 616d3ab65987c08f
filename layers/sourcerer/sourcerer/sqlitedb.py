"""How Sourcerer opens its SQLite files (the index and the ledger): one way, for every process and thread."""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_S = 30  # a writer in another process (a gunicorn worker, the CLI) is waited for, not an error


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """A connection shared by the caller's threads (it serialises them with its own lock), in autocommit mode
    (transactions are explicit `BEGIN IMMEDIATE` ... `COMMIT`), WAL so readers never wait on the writer, and
    `synchronous=NORMAL`: a commit survives a killed process (the kill -9 runs in bench/load.py); only an OS
    crash can lose the last commits, and no fsync per request holds the write lock. Then `schema` is applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(schema)
    return conn
