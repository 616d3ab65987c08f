"""The ledger on one local SQLite file (for `sourcerer serve` and tests)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sourcerer.errors import NotFound
from sourcerer.ledger.base import (
    CACHE_SCAN,
    AnswerRecord,
    CachedAnswer,
    CachedQuestion,
    Finding,
    HandoffRecord,
    KeyRecord,
    TenantRecord,
    UsageRecord,
)
from sourcerer.sqlitedb import connect, transaction

PAGE = 200  # answers read per query while iterating

SCHEMA = """
CREATE TABLE IF NOT EXISTS tenants (tenant TEXT PRIMARY KEY, tier TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS keys (key_hash TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_tenant ON keys (tenant);
CREATE TABLE IF NOT EXISTS counters (tenant TEXT NOT NULL, month TEXT NOT NULL, unit TEXT NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (tenant, month, unit));
CREATE TABLE IF NOT EXISTS usage (tenant TEXT NOT NULL, timestamp REAL NOT NULL, request_id TEXT NOT NULL, record TEXT NOT NULL,
    expires_at INTEGER NOT NULL, PRIMARY KEY (tenant, timestamp, request_id));
CREATE INDEX IF NOT EXISTS usage_by_expiry ON usage (expires_at);
CREATE TABLE IF NOT EXISTS tenant_settings (tenant TEXT PRIMARY KEY, settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (tenant TEXT NOT NULL, answer_id TEXT NOT NULL, created_at REAL NOT NULL, record TEXT NOT NULL,
    expires_at INTEGER NOT NULL, audit_fp TEXT, audit TEXT, PRIMARY KEY (tenant, answer_id));
CREATE INDEX IF NOT EXISTS answers_by_expiry ON answers (expires_at);
CREATE TABLE IF NOT EXISTS findings (tenant TEXT NOT NULL, checked_at REAL NOT NULL, answer_id TEXT NOT NULL, status TEXT NOT NULL,
    record TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (tenant, checked_at, answer_id));
CREATE INDEX IF NOT EXISTS findings_by_expiry ON findings (expires_at);
CREATE TABLE IF NOT EXISTS sequencers (source TEXT PRIMARY KEY, sequencer TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS handoffs (tenant TEXT NOT NULL, answer_id TEXT NOT NULL, created_at REAL NOT NULL,
    record TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (tenant, answer_id));
CREATE TABLE IF NOT EXISTS answer_cache (tenant TEXT NOT NULL, context TEXT NOT NULL, key TEXT NOT NULL,
    created_at REAL NOT NULL, expires_at REAL NOT NULL, record TEXT NOT NULL, question TEXT, vector BLOB, PRIMARY KEY (tenant, context, key));
"""


class SQLiteLedger:
    """Why it is wide: it implements every role Protocol of the ledger (`ledger/base.py`: tenants, keys, usage,
    sequencers, the answer log, the answer cache, hand-offs) on one file, in transactions that span roles (a
    usage record settled with its answer's log record)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        with self._lock:  # one opening: concurrent first requests of a new worker must not switch journal modes side by side
            if self._conn is None:
                conn = connect(self.path, SCHEMA)
                columns = {r[1] for r in conn.execute("PRAGMA table_info(answer_cache)")}
                for column, kind in (("question", "TEXT"), ("vector", "BLOB")):  # a ledger from before: its entries'
                    if column not in columns:  # questions and vectors stay in their records, read from there
                        conn.execute(f"ALTER TABLE answer_cache ADD COLUMN {column} {kind}")
                conn.execute(  # what a cache miss reads, newest first, never stepping over a record (answer, hits)
                    "CREATE INDEX IF NOT EXISTS answer_cache_questions ON answer_cache (tenant, context, created_at, expires_at, key, question, vector)"
                )
                self._conn = conn
        return self._conn

    def create_tenant(self, tenant: str, tier: str) -> TenantRecord:
        with self._lock:
            self._db().execute(
                "INSERT INTO tenants VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET tier = excluded.tier",
                (tenant, tier, time.time()),
            )
        return self.get_tenant(tenant) or {}

    def get_tenant(self, tenant: str) -> TenantRecord | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT t.tenant, t.tier, t.created_at, s.settings FROM tenants t LEFT JOIN tenant_settings s USING (tenant)"
                    " WHERE t.tenant=?",
                    (tenant,),
                )
                .fetchone()
            )
        if row is None:
            return None
        return {"tenant": row[0], "tier": row[1], "created_at": row[2], "settings": json.loads(row[3]) if row[3] else {}}

    def update_tenant_settings(self, tenant: str, settings: dict[str, Any]) -> TenantRecord:
        current = self.get_tenant(tenant)
        if current is None:
            raise NotFound(f"no tenant {tenant}")
        merged = {**current["settings"], **settings}
        with self._lock:
            self._db().execute("INSERT OR REPLACE INTO tenant_settings VALUES (?, ?)", (tenant, json.dumps(merged)))
        return self.get_tenant(tenant) or {}

    def list_tenants(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db().execute("SELECT tenant FROM tenants ORDER BY tenant").fetchall()]

    def put_key(self, record: KeyRecord) -> None:
        with self._lock:
            self._db().execute(
                "INSERT OR REPLACE INTO keys VALUES (?, ?, ?, ?)",
                (record.key_hash, record.key_id, record.tenant, record.model_dump_json()),
            )

    def find_key(self, key_hash: str) -> KeyRecord | None:
        with self._lock:
            row = self._db().execute("SELECT record FROM keys WHERE key_hash=?", (key_hash,)).fetchone()
        return KeyRecord.model_validate_json(row[0]) if row else None

    def list_keys(self, tenant: str) -> list[KeyRecord]:
        with self._lock:
            rows = self._db().execute("SELECT record FROM keys WHERE tenant=?", (tenant,)).fetchall()
        return sorted((KeyRecord.model_validate_json(r[0]) for r in rows), key=lambda k: (k.created_at, k.key_id))

    def revoke_key(self, key_id: str) -> bool:
        with self._lock:
            db = self._db()
            row = db.execute("SELECT key_hash, record FROM keys WHERE key_id=?", (key_id,)).fetchone()
            if row is None:
                return False
            record = KeyRecord.model_validate_json(row[1]).model_copy(update={"revoked": True})
            db.execute("UPDATE keys SET record=? WHERE key_hash=?", (record.model_dump_json(), row[0]))
        return True

    def consume(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> bool:
        return self._counted(tenant, unit, amount, limit, month, write=None, remove=None)

    def charge(self, record: UsageRecord, unit: str, amount: int, limit: int | None, month: str) -> bool:
        return self._counted(record.tenant, unit, amount, limit, month, write=record, remove=None)

    def release(self, record: UsageRecord, unit: str, amount: int, month: str) -> None:
        self._counted(record.tenant, unit, -amount, None, month, write=None, remove=record)

    def _counted(
        self,
        tenant: str,
        unit: str,
        amount: int,
        limit: int | None,
        month: str,
        write: UsageRecord | None,
        remove: UsageRecord | None,
    ) -> bool:
        """Move a counter (within `limit`) and write or delete a usage record, in one transaction."""
        with self._lock:
            db = self._db()
            with transaction(db):  # also exact across processes sharing the file
                row = db.execute(
                    "SELECT used FROM counters WHERE tenant=? AND month=? AND unit=?", (tenant, month, unit)
                ).fetchone()
                used = row[0] if row else 0
                if limit is not None and used + amount > limit:
                    return False
                if remove is not None:
                    gone = db.execute(
                        "DELETE FROM usage WHERE tenant=? AND timestamp=? AND request_id=?",
                        (remove.tenant, remove.timestamp, remove.request_id),
                    ).rowcount
                    if not gone:  # released already (a retried release, or recovery racing the request)
                        return False
                db.execute(
                    "INSERT INTO counters VALUES (?, ?, ?, ?) ON CONFLICT (tenant, month, unit) DO UPDATE SET used = used + excluded.used",
                    (tenant, month, unit, amount),
                )
                if write is not None:
                    self._write_usage(db, write)
                return True

    def claim_sequencer(self, source: str, sequencer: str) -> bool:
        with self._lock:
            claimed = (
                self._db()
                .execute(
                    "INSERT INTO sequencers VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET sequencer = excluded.sequencer"
                    " WHERE sequencers.sequencer <= excluded.sequencer",
                    (source, sequencer),
                )
                .rowcount
            )
        return claimed > 0

    def sequencer(self, source: str) -> str | None:
        with self._lock:
            row = self._db().execute("SELECT sequencer FROM sequencers WHERE source=?", (source,)).fetchone()
        return row[0] if row else None

    def usage(self, tenant: str, month: str) -> dict[str, int]:
        with self._lock:
            rows = self._db().execute("SELECT unit, used FROM counters WHERE tenant=? AND month=?", (tenant, month)).fetchall()
        return {unit: used for unit, used in rows}

    def record_usage(self, record: UsageRecord) -> None:
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM usage WHERE expires_at < ?", (int(time.time()),))
            self._write_usage(db, record)

    @staticmethod
    def _write_usage(db: sqlite3.Connection, record: UsageRecord) -> None:
        db.execute(
            "INSERT OR REPLACE INTO usage VALUES (?, ?, ?, ?, ?)",
            (record.tenant, record.timestamp, record.request_id, record.model_dump_json(), record.expires_at),
        )

    def pending_usage(self, before: float) -> list[UsageRecord]:
        with self._lock:
            rows = (
                self._db()
                .execute(
                    "SELECT record FROM usage WHERE timestamp < ? AND json_extract(record, '$.settled') = 0 ORDER BY timestamp",
                    (before,),
                )
                .fetchall()
            )
        return [UsageRecord.model_validate_json(r[0]) for r in rows]

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]:
        with self._lock:
            rows = (
                self._db()
                .execute("SELECT record FROM usage WHERE tenant=? AND timestamp >= ? ORDER BY timestamp", (tenant, since))
                .fetchall()
            )
        return [UsageRecord.model_validate_json(r[0]) for r in rows]

    # --- the answer log and audit findings -------------------------------------------------------------

    def put_answer(self, record: AnswerRecord) -> None:
        with self._lock:
            self._write_answer(self._db(), record)

    def settle(self, record: UsageRecord, answer: AnswerRecord | None = None) -> None:
        with self._lock:
            db = self._db()
            with transaction(db):
                if answer is not None:
                    self._write_answer(db, answer)
                self._write_usage(db, record)

    @staticmethod
    def _write_answer(db: sqlite3.Connection, record: AnswerRecord) -> None:
        now = int(time.time())
        db.execute("DELETE FROM answers WHERE expires_at < ?", (now,))
        db.execute("DELETE FROM findings WHERE expires_at < ?", (now,))
        db.execute(
            "INSERT OR REPLACE INTO answers (tenant, answer_id, created_at, record, expires_at) VALUES (?, ?, ?, ?, ?)",
            (
                record.tenant,
                record.answer_id,
                record.created_at,
                record.model_dump_json(exclude={"audit"}),
                record.expires_at,
            ),
        )

    @staticmethod
    def _answer(row: tuple[Any, ...]) -> AnswerRecord:
        record = AnswerRecord.model_validate_json(row[0])
        record.audit = Finding.model_validate_json(row[1]) if row[1] else None
        return record

    def cached_questions(self, tenant: str, context: str, now: float) -> list[CachedQuestion]:
        with self._lock:
            rows = self._db().execute(
                "SELECT key, CASE WHEN question IS NULL THEN json_extract(record, '$.question') ELSE question END, vector,"
                " CASE WHEN vector IS NULL THEN json_extract(record, '$.vector') END FROM answer_cache"
                " WHERE tenant=? AND context=? AND expires_at > ? ORDER BY created_at DESC LIMIT ?",
                (tenant, context, now, CACHE_SCAN),
            ).fetchall()
        return [CachedQuestion(key=r[0], question=r[1] or "", vector=_cached_vector(r[2], r[3])) for r in rows]

    def cached_answer(self, tenant: str, context: str, key: str, now: float) -> CachedAnswer | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT record FROM answer_cache WHERE tenant=? AND context=? AND key=? AND expires_at > ?",
                    (tenant, context, key, now),
                )
                .fetchone()
            )
        return CachedAnswer.model_validate_json(row[0]) if row else None

    def put_cached_answer(self, entry: CachedAnswer) -> None:
        vector = np.asarray(entry.vector, dtype=np.float32).tobytes() if entry.vector else None
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO answer_cache (tenant, context, key, created_at, expires_at, record, question, vector)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.tenant, entry.context, entry.key, entry.created_at, entry.expires_at, entry.model_dump_json(), entry.question, vector),
            )
            db.execute("DELETE FROM answer_cache WHERE tenant=? AND expires_at <= ?", (entry.tenant, entry.created_at))

    def get_answer(self, tenant: str, answer_id: str) -> AnswerRecord | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT record, audit FROM answers WHERE tenant=? AND answer_id=? AND expires_at >= ?",
                    (tenant, answer_id, int(time.time())),
                )
                .fetchone()
            )
        return self._answer(row) if row else None

    def _pages(self, sql: str, args: list[Any], key: str, start: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        """The rows of `sql` (a SELECT ... WHERE ...) in order of `key`, read PAGE rows at a time: each page starts
        after the key of the last row (the key's columns are selected last)."""
        cursor = start
        marks = ", ".join("?" * len(start))
        while True:
            with self._lock:
                rows = (
                    self._db().execute(f"{sql} AND ({key}) > ({marks}) ORDER BY {key} LIMIT ?", [*args, *cursor, PAGE]).fetchall()
                )
            yield from rows
            if len(rows) < PAGE:
                return
            cursor = rows[-1][-len(start) :]

    def put_handoff(self, record: HandoffRecord) -> None:
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM handoffs WHERE expires_at < ?", (int(time.time()),))
            db.execute(
                "INSERT OR REPLACE INTO handoffs VALUES (?, ?, ?, ?, ?)",
                (record.tenant, record.answer_id, record.created_at, record.model_dump_json(), record.expires_at),
            )

    def get_handoff(self, tenant: str, answer_id: str) -> HandoffRecord | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT record FROM handoffs WHERE tenant=? AND answer_id=? AND expires_at >= ?",
                    (tenant, answer_id, int(time.time())),
                )
                .fetchone()
            )
        return HandoffRecord.model_validate_json(row[0]) if row else None

    def handoffs(self, tenant: str, since: float = 0.0) -> Iterator[HandoffRecord]:
        rows = self._pages(
            "SELECT record, answer_id FROM handoffs WHERE tenant=? AND created_at >= ? AND expires_at >= ?",
            [tenant, since, int(time.time())],
            "answer_id",
            ("",),
        )
        for row in rows:
            yield HandoffRecord.model_validate_json(row[0])

    def answers(self, tenant: str, since: float = 0.0, until: float | None = None) -> Iterator[AnswerRecord]:
        rows = self._pages(
            "SELECT record, audit, answer_id FROM answers WHERE tenant=? AND created_at >= ? AND created_at < ? AND expires_at >= ?",
            [tenant, since, until if until is not None else float("inf"), int(time.time())],
            "answer_id",
            ("",),
        )
        for row in rows:
            yield self._answer(row)

    def record_finding(self, finding: Finding) -> bool:
        with self._lock:
            db = self._db()
            with transaction(db):
                moved = db.execute(
                    "UPDATE answers SET audit_fp=?, audit=? WHERE tenant=? AND answer_id=? AND audit_fp IS NOT ?",
                    (finding.fingerprint, finding.model_dump_json(), finding.tenant, finding.answer_id, finding.fingerprint),
                ).rowcount
                if moved:
                    db.execute(
                        "INSERT OR REPLACE INTO findings VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            finding.tenant,
                            finding.checked_at,
                            finding.answer_id,
                            finding.status,
                            finding.model_dump_json(),
                            finding.expires_at,
                        ),
                    )
        return bool(moved)

    def findings(self, tenant: str, since: float = 0.0, status: str | None = None) -> Iterator[Finding]:
        sql = "SELECT record, checked_at, answer_id FROM findings WHERE tenant=? AND expires_at >= ?"
        args: list[Any] = [tenant, int(time.time())]
        if status is not None:
            sql += " AND status=?"
            args.append(status)
        for row in self._pages(sql, args, "checked_at, answer_id", (since, "")):
            yield Finding.model_validate_json(row[0])


def _cached_vector(blob: bytes | None, written: str | None) -> np.ndarray | None:
    """A cached question's vector: its own column (float32), or the record of an entry from before that column."""
    if blob:
        return np.frombuffer(blob, dtype=np.float32)
    return np.asarray(json.loads(written), dtype=np.float32) if written else None
