"""The ledger on one local SQLite file (for `sourcerer serve` and tests)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from sourcerer.ledger.base import UsageRecord
from sourcerer.tenancy import TIERS, KeyRecord, TenancyError

SCHEMA = """
CREATE TABLE IF NOT EXISTS tenants (tenant TEXT PRIMARY KEY, tier TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS keys (key_hash TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_tenant ON keys (tenant);
CREATE TABLE IF NOT EXISTS counters (tenant TEXT NOT NULL, month TEXT NOT NULL, unit TEXT NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (tenant, month, unit));
CREATE TABLE IF NOT EXISTS usage (tenant TEXT NOT NULL, timestamp REAL NOT NULL, request_id TEXT NOT NULL, record TEXT NOT NULL,
    expires_at INTEGER NOT NULL, PRIMARY KEY (tenant, timestamp, request_id));
CREATE INDEX IF NOT EXISTS usage_by_expiry ON usage (expires_at);
"""


class SQLiteLedger:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            self._conn = conn
        return self._conn

    def create_tenant(self, tenant: str, tier: str) -> dict[str, Any]:
        if tier not in TIERS:
            raise TenancyError(f"tier must be one of {', '.join(TIERS)}")
        with self._lock:
            self._db().execute(
                "INSERT INTO tenants VALUES (?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET tier = excluded.tier",
                (tenant, tier, time.time()),
            )
        return self.get_tenant(tenant) or {}

    def get_tenant(self, tenant: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db().execute("SELECT tenant, tier, created_at FROM tenants WHERE tenant=?", (tenant,)).fetchone()
        return {"tenant": row[0], "tier": row[1], "created_at": row[2]} if row else None

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
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")  # also exact across processes sharing the file
            try:
                row = db.execute(
                    "SELECT used FROM counters WHERE tenant=? AND month=? AND unit=?", (tenant, month, unit)
                ).fetchone()
                used = row[0] if row else 0
                if limit is not None and used + amount > limit:
                    db.execute("ROLLBACK")
                    return False
                db.execute(
                    "INSERT INTO counters VALUES (?, ?, ?, ?) ON CONFLICT (tenant, month, unit) DO UPDATE SET used = used + excluded.used",
                    (tenant, month, unit, amount),
                )
                db.execute("COMMIT")
                return True
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def usage(self, tenant: str, month: str) -> dict[str, int]:
        with self._lock:
            rows = self._db().execute("SELECT unit, used FROM counters WHERE tenant=? AND month=?", (tenant, month)).fetchall()
        return {unit: used for unit, used in rows}

    def record_usage(self, record: UsageRecord) -> None:
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM usage WHERE expires_at < ?", (int(time.time()),))
            db.execute(
                "INSERT OR REPLACE INTO usage VALUES (?, ?, ?, ?, ?)",
                (record.tenant, record.timestamp, record.request_id, record.model_dump_json(), record.expires_at),
            )

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]:
        with self._lock:
            rows = (
                self._db()
                .execute("SELECT record FROM usage WHERE tenant=? AND timestamp >= ? ORDER BY timestamp", (tenant, since))
                .fetchall()
            )
        return [UsageRecord.model_validate_json(r[0]) for r in rows]
