"""The ledger: tenants and tiers, API keys (hashed), monthly quota counters and per-request usage records.

`open_ledger()` picks the adapter: DynamoDB when `SOURCERER_TABLE` names a table, else SQLite under
`SOURCERER_HOME` (`ledger.db`).
"""

from __future__ import annotations

from sourcerer.ledger.base import Ledger, UsageRecord
from sourcerer.settings import get_settings


def open_ledger(table: str | None = None) -> Ledger:
    settings = get_settings()
    table = table or settings.table
    if table:
        from sourcerer.ledger.dynamodb import DynamoDBLedger

        return DynamoDBLedger(table)
    from sourcerer.ledger.sqlite import SQLiteLedger

    return SQLiteLedger(settings.home / "ledger.db")


__all__ = ["Ledger", "UsageRecord", "open_ledger"]
