"""The Ledger port."""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from sourcerer.tenancy import KeyRecord

USAGE_TTL_S = 400 * 24 * 3600  # request records are kept a little over a year, then expire


class UsageRecord(BaseModel):
    """One billable request."""

    tenant: str
    route: str
    request_id: str
    units: dict[str, float] = Field(default_factory=dict, description="queries, chunks, embedding_tokens, llm_tokens_in/out")
    est_cost_usd: float = 0.0
    timestamp: float = Field(default_factory=time.time)

    @property
    def expires_at(self) -> int:
        return int(self.timestamp + USAGE_TTL_S)


@runtime_checkable
class Ledger(Protocol):
    """Tenants, keys, quotas and usage. Every adapter passes tests/contract/ledger_contract.py.

    * `consume` is exact under concurrency: it adds `amount` to this month's counter only if the result stays
      within `limit` (None: unlimited) and says whether it did.
    * keys are found by the hash of the key, never stored in clear.
    """

    def create_tenant(self, tenant: str, tier: str) -> dict[str, Any]: ...

    def get_tenant(self, tenant: str) -> dict[str, Any] | None: ...

    def put_key(self, record: KeyRecord) -> None: ...

    def find_key(self, key_hash: str) -> KeyRecord | None: ...

    def list_keys(self, tenant: str) -> list[KeyRecord]: ...

    def revoke_key(self, key_id: str) -> bool: ...

    def consume(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> bool: ...

    def usage(self, tenant: str, month: str) -> dict[str, int]: ...

    def record_usage(self, record: UsageRecord) -> None: ...

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]: ...
