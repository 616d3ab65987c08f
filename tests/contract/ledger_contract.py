"""One contract every Ledger adapter passes. Subclass `LedgerContract` and provide a `ledger` fixture."""

from __future__ import annotations

import time

import pytest
from sourcerer.ledger.base import UsageRecord
from sourcerer.tenancy import TenancyError, hash_key, new_key


class LedgerContract:
    @pytest.fixture
    def ledger(self):  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    def test_tenants_have_a_tier_that_can_change(self, ledger):
        assert ledger.get_tenant("acme") is None
        assert ledger.create_tenant("acme", "free")["tier"] == "free"
        assert ledger.create_tenant("acme", "pro")["tier"] == "pro"
        with pytest.raises(TenancyError):
            ledger.create_tenant("acme", "platinum")

    def test_keys_are_found_by_hash_and_never_stored_in_clear(self, ledger):
        key, record = new_key("acme", ["acme/alpha"], ["read", "write"], ["engineering"])
        ledger.put_key(record)
        found = ledger.find_key(hash_key(key))
        assert found == record
        assert key not in found.model_dump_json()
        assert ledger.find_key(hash_key(key + "x")) is None
        assert [k.key_id for k in ledger.list_keys("acme")] == [record.key_id]
        assert ledger.list_keys("globex") == []

    def test_revoked_keys_stay_revoked(self, ledger):
        key, record = new_key("acme", [], ["read"])
        ledger.put_key(record)
        assert ledger.revoke_key(record.key_id) is True
        assert ledger.find_key(hash_key(key)).revoked is True
        assert ledger.list_keys("acme")[0].revoked is True
        assert ledger.revoke_key("key_missing") is False

    def test_quota_is_never_exceeded(self, ledger):
        assert ledger.consume("acme", "queries", 3, 5, "2026-11") is True
        assert ledger.consume("acme", "queries", 2, 5, "2026-11") is True
        assert ledger.consume("acme", "queries", 1, 5, "2026-11") is False
        assert ledger.consume("acme", "queries", 1, 5, "2026-12") is True  # a new month starts at zero
        assert ledger.consume("acme", "chunks", 10**9, None, "2026-11") is True  # unlimited
        assert ledger.usage("acme", "2026-11") == {"queries": 5, "chunks": 10**9}
        assert ledger.usage("globex", "2026-11") == {}

    def test_usage_records_are_kept_per_tenant(self, ledger):
        now = time.time()
        ledger.record_usage(
            UsageRecord(tenant="acme", route="/v1/search", request_id="r1", units={"queries": 1}, timestamp=now - 20)
        )
        ledger.record_usage(
            UsageRecord(
                tenant="acme",
                route="/v1/answer",
                request_id="r2",
                units={"queries": 1, "llm_tokens_in": 120},
                est_cost_usd=0.002,
                timestamp=now - 10,
            )
        )
        ledger.record_usage(UsageRecord(tenant="globex", route="/v1/search", request_id="r3", timestamp=now - 15))
        records = ledger.usage_records("acme")
        assert [r.request_id for r in records] == ["r1", "r2"]
        assert records[1].units["llm_tokens_in"] == 120 and records[1].est_cost_usd == 0.002
        assert records[0].expires_at > now + 365 * 24 * 3600  # kept about a year, then the TTL removes it
        assert [r.request_id for r in ledger.usage_records("acme", since=now - 15)] == ["r2"]
