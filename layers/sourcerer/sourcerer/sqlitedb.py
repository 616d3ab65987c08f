"""How Sourcerer opens its SQLite files (the index and the ledger): one way, for every process and thread."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 30  # a writer in another process (a gunicorn worker, the CLI) is waited for, not an error


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """A connection shared by the caller's threads (it serialises them with its own lock), in autocommit mode
    (transactions are explicit `BEGIN IMMEDIATE` ... `COMMIT`), WAL so readers never wait on the writer, and
    `synchronous=NORMAL`: a commit survives a killed process (the kill -9 runs in bench/load.py); only an OS
    crash can lose the last commits, and no fsync per request holds the write lock. Then `schema` is applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    _switch_to_wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(schema)
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """`PRAGMA journal_mode=WAL`, retried: while another process opens the same new file (two server workers'
    first requests), SQLite answers "database is locked" at once rather than through the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction: `BEGIN IMMEDIATE` takes the write lock at once (so a read inside it cannot go stale
    before the write, across processes too), committed when the block ends, however it returns, and rolled back
    when it raises. A block that decides to write nothing simply returns before its first write."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A read transaction: every read inside sees one state of the file (a log position and the rows it
    describes), while writers in other connections go on (WAL)."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")
