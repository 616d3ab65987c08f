"""One contract every Ledger adapter passes. Subclass `LedgerContract` and provide a `ledger` fixture."""

from __future__ import annotations

import time

import pytest
from sourcerer.errors import NotFound
from sourcerer.ledger.base import (
    AnswerRecord,
    CitationCheck,
    Finding,
    LoggedCitation,
    UsageRecord,
    new_answer_id,
    sha256_of,
)
from sourcerer.models import receipt_of
from sourcerer.service.tenancy import hash_key, new_key


def answer_record(tenant="acme", created_at=None, **fields):
    created_at = time.time() if created_at is None else created_at
    text = "Failover took 42 seconds [1]."
    return AnswerRecord(
        answer_id=new_answer_id(created_at),
        tenant=tenant,
        scopes=[f"{tenant}/alpha"],
        key_id="key_1",
        question="How long did failover take?",
        question_sha256=sha256_of("How long did failover take?"),
        answer=text,
        answer_sha256=sha256_of(text),
        citations=[
            LoggedCitation(
                index=1,
                unit_id="u_1",
                document_id="doc_1",
                position=0,
                source_uri="ops.md",
                label="ops.md",
                locator={"kind": "lines", "start": 3, "end": 4},
                receipt=receipt_of("The failover took 42 seconds."),
            )
        ],
        provider="extractive",
        extractive=True,
        created_at=created_at,
        expires_at=int(created_at + 90 * 86400),
        **fields,
    )


def finding_for(record, status="ok", checked_at=None, **fields):
    return Finding(
        answer_id=record.answer_id,
        tenant=record.tenant,
        scopes=record.scopes,
        status=status,
        citations=[CitationCheck(index=1, unit_id="u_1", receipt=record.citations[0].receipt, status="intact")],
        checked_at=time.time() if checked_at is None else checked_at,
        expires_at=record.expires_at,
        **fields,
    )


class LedgerContract:
    @pytest.fixture
    def ledger(self):  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    def test_tenants_have_a_tier_that_can_change(self, ledger):
        assert ledger.get_tenant("acme") is None
        assert ledger.create_tenant("acme", "free")["tier"] == "free"
        assert ledger.create_tenant("acme", "pro")["tier"] == "pro"

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

    def test_a_charge_takes_quota_and_writes_its_usage_record_together_and_release_undoes_both(self, ledger):
        ledger.create_tenant("acme", "free")
        first = UsageRecord(tenant="acme", route="POST /v1/search", request_id="r1", units={"queries": 1}, timestamp=1000.0)
        assert ledger.charge(first, "queries", 1, 2, "2026-11")
        assert ledger.usage("acme", "2026-11") == {"queries": 1}
        assert [r.request_id for r in ledger.usage_records("acme")] == ["r1"]
        ledger.record_usage(first.model_copy(update={"units": {"queries": 1, "embedding_tokens": 9}, "est_cost_usd": 0.5}))
        assert [(r.units, r.est_cost_usd) for r in ledger.usage_records("acme")] == [({"queries": 1, "embedding_tokens": 9}, 0.5)]
        refused = UsageRecord(tenant="acme", route="POST /v1/search", request_id="r2", units={"queries": 2}, timestamp=1001.0)
        assert not ledger.charge(refused, "queries", 2, 2, "2026-11")  # over the quota: neither counter nor record
        assert ledger.usage("acme", "2026-11") == {"queries": 1}
        assert [r.request_id for r in ledger.usage_records("acme")] == ["r1"]
        ledger.release(first, "queries", 1, "2026-11")
        assert ledger.usage("acme", "2026-11") == {"queries": 0} and ledger.usage_records("acme") == []

    def test_pending_charges_are_found_until_settled_and_a_release_gives_back_once(self, ledger):
        ledger.create_tenant("acme", "pro")
        pending = UsageRecord(
            tenant="acme", route="POST /v1/documents", request_id="p1", units={"chunks": 3}, timestamp=1000.0, settled=False,
            work={"document_id": "doc_1", "content_hash": "sha256:x"},
        )
        other = pending.model_copy(update={"request_id": "p2", "timestamp": 1005.0})
        assert ledger.charge(pending, "chunks", 3, None, "2026-11") and ledger.charge(other, "chunks", 3, None, "2026-11")
        assert [r.request_id for r in ledger.pending_usage(before=1001.0)] == ["p1"]
        assert [r.work["document_id"] for r in ledger.pending_usage(before=2000.0)] == ["doc_1", "doc_1"]
        ledger.settle(other.model_copy(update={"settled": True}))
        assert [r.request_id for r in ledger.pending_usage(before=2000.0)] == ["p1"]
        ledger.release(pending, "chunks", 3, "2026-11")
        ledger.release(pending, "chunks", 3, "2026-11")  # a second release (recovery racing the request) gives nothing
        assert ledger.usage("acme", "2026-11") == {"chunks": 3} and ledger.pending_usage(before=2000.0) == []

    def test_charges_racing_for_the_last_units_are_exact(self, ledger):
        import threading

        ledger.create_tenant("acme", "free")
        assert ledger.consume("acme", "queries", 95, 100, "2026-11")
        barrier = threading.Barrier(50)
        results: list[bool] = []

        def request(n: int) -> None:
            record = UsageRecord(
                tenant="acme", route="POST /v1/search", request_id=f"r{n}", units={"queries": 1}, timestamp=2000.0 + n
            )
            barrier.wait()
            results.append(ledger.charge(record, "queries", 1, 100, "2026-11"))

        threads = [threading.Thread(target=request, args=(n,)) for n in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count(True) == 5
        assert ledger.usage("acme", "2026-11") == {"queries": 100}
        assert len(ledger.usage_records("acme")) == 5

    def test_sequencers_only_move_forward_and_a_redelivery_claims_again(self, ledger):
        from sourcerer.ledger.base import sequencer_key

        source = "s3://docs/tenants/acme/a.md"
        assert ledger.sequencer(source) is None
        assert ledger.claim_sequencer(source, sequencer_key("0055A"))
        assert ledger.claim_sequencer(source, sequencer_key("0055A"))  # the same event again
        assert ledger.claim_sequencer(source, sequencer_key("5F01"))  # longer strings compare once padded
        assert not ledger.claim_sequencer(source, sequencer_key("0055B"))
        assert ledger.sequencer(source) == sequencer_key("5F01")
        assert ledger.sequencer("s3://docs/tenants/acme/b.md") is None

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

    # --- tenant settings ---------------------------------------------------------------------------

    def test_tenant_settings_default_then_change(self, ledger):
        ledger.create_tenant("acme", "pro")
        ledger.create_tenant("globex", "free")
        assert ledger.get_tenant("acme")["settings"] == {}  # storage only: the service fills in defaults
        assert ledger.update_tenant_settings("acme", {"store_text": False})["settings"] == {"store_text": False}
        assert ledger.create_tenant("acme", "enterprise")["settings"] == {"store_text": False}  # a tier change keeps them
        assert ledger.list_tenants() == ["acme", "globex"]
        with pytest.raises(NotFound):
            ledger.update_tenant_settings("initech", {"store_text": False})

    # --- answer log and findings ---------------------------------------------------------------------

    def test_answers_are_kept_per_tenant_and_read_by_time(self, ledger):
        now = time.time()
        old, new = answer_record(created_at=now - 3600), answer_record(created_at=now - 60)
        other = answer_record(tenant="globex", created_at=now - 60)
        for record in (new, old, other):
            ledger.put_answer(record)
        assert ledger.get_answer("acme", new.answer_id) == new
        assert ledger.get_answer("globex", new.answer_id) is None  # never across tenants
        assert [a.answer_id for a in ledger.answers("acme")] == [old.answer_id, new.answer_id]
        assert [a.answer_id for a in ledger.answers("acme", since=now - 600)] == [new.answer_id]
        assert [a.answer_id for a in ledger.answers("acme", since=0, until=now - 600)] == [old.answer_id]

    def test_settle_writes_the_final_usage_record_and_the_answer_log_together(self, ledger):
        now = time.time()
        charged = UsageRecord(tenant="acme", route="POST /v1/answer", request_id="r9", units={"queries": 1}, timestamp=now)
        assert ledger.charge(charged, "queries", 1, None, "2026-11")
        record = answer_record(created_at=now)
        ledger.settle(charged.model_copy(update={"units": {"queries": 1, "embedding_tokens": 7}, "est_cost_usd": 0.25}), record)
        assert ledger.get_answer("acme", record.answer_id) == record
        assert [(r.request_id, r.units, r.est_cost_usd) for r in ledger.usage_records("acme")] == [
            ("r9", {"queries": 1, "embedding_tokens": 7}, 0.25)
        ]
        ledger.settle(charged.model_copy(update={"est_cost_usd": 0.5}))  # a search: the usage record only
        assert [r.est_cost_usd for r in ledger.usage_records("acme")] == [0.5]

    def test_expired_answers_are_never_returned(self, ledger):
        record = answer_record(created_at=time.time() - 100)
        record.expires_at = int(time.time()) - 10
        ledger.put_answer(record)
        assert ledger.get_answer("acme", record.answer_id) is None
        assert list(ledger.answers("acme")) == []

    def test_a_finding_is_recorded_once_and_moves_the_answers_status(self, ledger):
        record = answer_record()
        ledger.put_answer(record)
        first = finding_for(record, "ok", checked_at=time.time() - 30)
        assert ledger.record_finding(first) is True
        assert ledger.record_finding(finding_for(record, "ok")) is False  # the same finding again: nothing new
        assert ledger.get_answer("acme", record.answer_id).audit == first

        changed = finding_for(record, "source_changed", checked_at=time.time() - 20)
        assert ledger.record_finding(changed) is True
        back = finding_for(record, "ok", checked_at=time.time() - 10)  # the document was restored
        assert ledger.record_finding(back) is True
        assert ledger.get_answer("acme", record.answer_id).audit == back

        assert [f.status for f in list(ledger.findings("acme"))] == ["ok", "source_changed", "ok"]
        assert [f.status for f in list(ledger.findings("acme", status="source_changed"))] == ["source_changed"]
        assert [f.checked_at for f in list(ledger.findings("acme", since=changed.checked_at))] == [
            changed.checked_at,
            back.checked_at,
        ]
        assert list(ledger.findings("acme"))[1] == changed
        assert list(ledger.findings("globex")) == []

    def test_a_finding_for_an_unknown_answer_is_not_recorded(self, ledger):
        record = answer_record()
        assert ledger.record_finding(finding_for(record)) is False
        assert list(ledger.findings("acme")) == []

    def test_findings_are_read_across_pages_in_order(self, ledger):
        now = time.time()
        records = [answer_record(created_at=now - 1000 + i) for i in range(210)]
        for i, record in enumerate(records):
            ledger.put_answer(record)
            ledger.record_finding(finding_for(record, "ok", checked_at=now - 500 + i))
        listed = list(ledger.findings("acme"))
        assert [f.answer_id for f in listed] == [r.answer_id for r in records]
        assert len(list(ledger.findings("acme", since=now - 500 + 200))) == 10

    def test_answers_are_read_across_pages(self, ledger):
        now = time.time()
        records = [answer_record(created_at=now - 1000 + i) for i in range(230)]
        for record in records:
            ledger.put_answer(record)
        assert [a.answer_id for a in ledger.answers("acme")] == [r.answer_id for r in records]

    # --- the answer cache ---------------------------------------------------------------------------------

    def test_cached_answers_are_kept_per_tenant_and_context_and_expire_and_their_questions_read_alone(self, ledger):
        from sourcerer.ledger.base import CachedAnswer

        now = time.time()

        def entry(tenant="acme", context="ctx1", key="failover take long", created=now, expires=now + 60):
            return CachedAnswer(
                tenant=tenant,
                context=context,
                key=key,
                question=f"{key.capitalize()}?",
                vector=[0.6, 0.8],
                answer={"answer": key},
                created_at=created,
                expires_at=expires,
            )

        ledger.put_cached_answer(entry())
        ledger.put_cached_answer(entry(key="pro plan cost", created=now + 1))
        ledger.put_cached_answer(entry(key="old", created=now - 100, expires=now - 1))
        ledger.put_cached_answer(entry(tenant="globex"))
        ledger.put_cached_answer(entry(context="ctx2"))
        found = ledger.cached_questions("acme", "ctx1", now)
        assert [e.key for e in found] == ["pro plan cost", "failover take long"]  # newest first, none expired
        assert list(found[1].vector) == pytest.approx([0.6, 0.8]) and found[1].question == "Failover take long?"
        ledger.put_cached_answer(entry(key="pro plan cost", created=now + 2).model_copy(update={"answer": {"answer": "new"}}))
        assert [e.key for e in ledger.cached_questions("acme", "ctx1", now)] == ["pro plan cost", "failover take long"]  # replaced
        assert ledger.cached_questions("acme", "ctx3", now) == [] and len(ledger.cached_questions("globex", "ctx1", now)) == 1
        # the exact question by its key: one read, never another tenant's or context's, never an expired one
        assert ledger.cached_answer("acme", "ctx1", "pro plan cost", now).answer == {"answer": "new"}
        assert ledger.cached_answer("acme", "ctx2", "pro plan cost", now) is None
        assert ledger.cached_answer("globex", "ctx1", "failover take long", now).tenant == "globex"
        assert ledger.cached_answer("acme", "ctx1", "old", now) is None

    # --- hand-offs ---------------------------------------------------------------------------------------

    def test_handoffs_are_kept_per_tenant_read_by_time_and_expire(self, ledger):
        from sourcerer.handoff import Handoff
        from sourcerer.ledger.base import HandoffRecord

        now = time.time()

        def handoff(tenant="acme", created_at=now, expires_at=None):
            bundle = Handoff(question="What does Enterprise cost?", reason="unsupported", message="no", needed="a price list")
            return HandoffRecord(
                answer_id=new_answer_id(created_at),
                tenant=tenant,
                scopes=["acme/alpha"],
                groups=["sales"],
                bundle=bundle,
                created_at=created_at,
                expires_at=expires_at or int(now + 3600),
                delivered=["webhook"],
            )

        old, new, other = handoff(created_at=now - 3600), handoff(created_at=now - 60), handoff(tenant="globex")
        gone = handoff(created_at=now - 30, expires_at=int(now) - 10)
        for record in (new, old, other, gone):
            ledger.put_handoff(record)
        assert ledger.get_handoff("acme", new.answer_id) == new
        assert ledger.get_handoff("globex", new.answer_id) is None  # never across tenants
        assert ledger.get_handoff("acme", gone.answer_id) is None
        assert [h.answer_id for h in ledger.handoffs("acme")] == [old.answer_id, new.answer_id]
        assert [h.answer_id for h in ledger.handoffs("acme", since=now - 600)] == [new.answer_id]
        many = [handoff(created_at=now - 1000 + i) for i in range(210)]  # read across pages
        for record in many:
            ledger.put_handoff(record)
        assert len(list(ledger.handoffs("acme", since=now - 1001))) == 210 + 1
