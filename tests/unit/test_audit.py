"""The answer log and verification audits: answer, change the sources, audit, read the findings."""

import json

import pytest
from sourcerer.cli import main
from sourcerer.errors import Forbidden, InvalidRequest, NotFound, ProviderError
from sourcerer.ledger.base import sha256_of
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.models import ClaimVerdict, receipt_of
from sourcerer.service.audit import Auditor, parse_since
from sourcerer.service.core import Service
from sourcerer.service.schemas import AnswerRequest, DocumentRequest
from sourcerer.service.tenancy import new_key
from sourcerer.store.sqlite import SQLiteIndex

RUNBOOK = (
    "# Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby region completed "
    "in 42 seconds.\nThe database replica lag stayed under two seconds throughout.\n"
)
BILLING = "# Billing\n\nInvoices are sent on the first business day of each month.\nPayment is due within 30 days.\n"
LEAVE = "# Leave\n\nEmployees accrue two days of paid leave per month.\nUnused leave carries over for one year.\n"


class RejectingJudge:
    """A stricter judge than the one that answered: it rejects every claim mentioning `word`."""

    name = "strict-test"

    def __init__(self, word):
        self.word = word

    async def judge(self, claims, passages):
        return [
            ClaimVerdict(
                claim=c.text,
                supported=self.word not in c.text,
                citations=c.citations,
                why=f"the judge doubts {self.word!r}" if self.word in c.text else "",
            )
            for c in claims
        ]


@pytest.fixture
def service(tmp_path):
    from sourcerer.retrieval.embedders import local_embedder

    return Service(
        index=SQLiteIndex(tmp_path / "index.db", embedder=local_embedder()), ledger=SQLiteLedger(tmp_path / "ledger.db")
    )


def _key(service, tenant="acme", scopes=("acme/alpha",), perms=("read", "write"), groups=()):
    if service.ledger.get_tenant(tenant) is None:
        service.ledger.create_tenant(tenant, "pro")
    key, record = new_key(tenant, list(scopes), list(perms), list(groups))
    service.ledger.put_key(record)
    return service.authenticate(f"Bearer {key}")


def _answer(service, ctx, question):
    answered = service.answer(ctx, None, AnswerRequest(q=question)).model_dump(mode="json")
    assert answered["answer"]["refused"] is False, answered["answer"]
    return answered


@pytest.fixture
def three_answers(service):
    """Three answers, each citing its own document."""
    ctx = _key(service)
    for uri, text in (("runbook.md", RUNBOOK), ("billing.md", BILLING), ("leave.md", LEAVE)):
        service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri=uri, text=text)).model_dump(mode="json")
    ids = {
        "runbook": _answer(service, ctx, "How long did the failover cutover take?")["answer_id"],
        "billing": _answer(service, ctx, "When are invoices sent?")["answer_id"],
        "leave": _answer(service, ctx, "How many days of paid leave do employees accrue per month?")["answer_id"],
    }
    return ctx, ids


def _statuses(report):
    return {f.answer_id: f.status for f in report.findings}


def test_every_answer_is_logged_with_its_receipts(service, three_answers):
    ctx, ids = three_answers
    stored = service.get_answer(ctx, None, ids["runbook"]).model_dump(mode="json")["answer"]
    assert stored["question"] == "How long did the failover cutover take?"
    assert "42 seconds" in stored["answer"] and stored["answer_sha256"].startswith("sha256:")
    citation = stored["citations"][0]
    chunk = service.index.get_chunks("acme", [citation["unit_id"]])[0]
    assert citation["receipt"] == receipt_of(chunk.text) and citation["document_id"] == chunk.document_id
    assert stored["audit"] == {"status": "not_audited"}
    assert stored["expires_at"] - stored["created_at"] == pytest.approx(90 * 86400, abs=1)  # the pro tier keeps 90 days


def test_untouched_answers_are_ok_and_a_rerun_records_nothing_new(service, three_answers):
    _, ids = three_answers
    auditor = Auditor(service.index, service.ledger)
    first = auditor.run(since=0)
    assert set(_statuses(first).values()) == {"ok"} and first.answers_checked == 3
    assert sorted(first.recorded) == sorted(ids.values())
    findings_before = list(service.ledger.findings("acme"))

    again = auditor.run(since=0)
    assert again.recorded == [] and again.by_status(only_new=True)["ok"] == 0
    assert list(service.ledger.findings("acme")) == findings_before  # nothing double-counted
    assert again.as_json() == [{**f, "new": False} for f in first.as_json()]


def test_an_edited_document_flags_only_the_answers_that_cite_it(service, three_answers):
    ctx, ids = three_answers
    auditor = Auditor(service.index, service.ledger)
    auditor.run(since=0)
    service.ingest(
        ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK.replace("42 seconds", "97 seconds"))
    ).model_dump(mode="json")

    report = auditor.run(since=0)

    assert _statuses(report) == {ids["runbook"]: "source_changed", ids["billing"]: "ok", ids["leave"]: "ok"}
    assert report.recorded == [ids["runbook"]]
    finding = next(f for f in report.findings if f.answer_id == ids["runbook"])
    assert finding.citations[0].status == "changed"
    assert finding.citations[0].current_receipt != finding.citations[0].receipt
    assert finding.claims and "42 seconds" in finding.claims[0].claim
    stored = service.get_answer(ctx, None, ids["runbook"]).model_dump(mode="json")["answer"]
    assert stored["audit"]["status"] == "source_changed"


def test_an_unchanged_reingest_keeps_receipts_and_answers_ok(service, three_answers):
    ctx, ids = three_answers
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")
    assert set(_statuses(Auditor(service.index, service.ledger).run(since=0)).values()) == {"ok"}


def test_text_added_above_the_cited_chunk_is_a_move_not_a_change(service):
    ctx = _key(service)
    long_intro = "# Preface\n\n" + " ".join(f"Section {i} covers routine operational matters of the team." for i in range(40))
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")
    answer_id = _answer(service, ctx, "How long did the failover cutover take?")["answer_id"]
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=long_intro + "\n\n" + RUNBOOK)).model_dump(
        mode="json"
    )

    finding = Auditor(service.index, service.ledger).run(since=0).findings[0]

    assert finding.answer_id == answer_id and finding.status == "ok"
    assert finding.citations[0].status == "moved" and finding.citations[0].current_unit_id != finding.citations[0].unit_id


def test_a_deleted_document_is_source_deleted(service, three_answers):
    ctx, ids = three_answers
    billing = next(
        d for d in service.list_documents(ctx, None).model_dump(mode="json")["documents"] if d["source_uri"] == "billing.md"
    )
    service.delete_document(ctx, None, billing["document_id"]).model_dump(mode="json")

    report = Auditor(service.index, service.ledger).run(since=0)

    assert _statuses(report)[ids["billing"]] == "source_deleted"
    assert _statuses(report)[ids["runbook"]] == "ok"
    finding = next(f for f in report.findings if f.status == "source_deleted")
    assert "billing.md was deleted" in finding.detail and finding.citations[0].status == "deleted"


def test_a_stricter_judge_now_rejecting_a_claim_is_unfaithful(service, three_answers):
    _, ids = three_answers
    report = Auditor(service.index, service.ledger, judge=RejectingJudge("Invoices")).run(since=0)
    assert _statuses(report) == {ids["runbook"]: "ok", ids["billing"]: "unfaithful", ids["leave"]: "ok"}
    finding = next(f for f in report.findings if f.status == "unfaithful")
    assert finding.judge == "strict-test" and "Invoices" in finding.claims[0].claim
    assert finding.claims[0].why == "the judge doubts 'Invoices'" and [c.index for c in finding.citations] == [1]


def test_a_failure_in_one_answer_is_recorded_and_the_run_goes_on(service, three_answers):
    _, ids = three_answers

    class FlakyJudge(RejectingJudge):
        async def judge(self, claims, passages):
            if any("Invoices" in c.text for c in claims):
                raise ProviderError("judge endpoint down")
            return await super().judge(claims, passages)

    report = Auditor(service.index, service.ledger, judge=FlakyJudge("nothing")).run(since=0)
    assert _statuses(report) == {ids["runbook"]: "ok", ids["billing"]: "error", ids["leave"]: "ok"}
    assert "judge endpoint down" in next(f.detail for f in report.findings if f.status == "error")
    # the next run, with the judge back, moves the answer on from `error`
    assert _statuses(Auditor(service.index, service.ledger, judge=RejectingJudge("nothing")).run(since=0))[ids["billing"]] == "ok"


def test_tenants_are_audited_independently(service, three_answers):
    globex = _key(service, tenant="globex", scopes=("globex",))
    service.ingest(globex, None, DocumentRequest(source_uri="leave.md", text=LEAVE)).model_dump(mode="json")
    other = _answer(service, globex, "How many days of paid leave do employees accrue per month?")["answer_id"]

    class BrokenForAcme:
        def __init__(self, index):
            self.index = index

        def __getattr__(self, name):
            return getattr(self.index, name)

        def get_chunks(self, tenant, ids):
            if tenant == "acme":
                raise RuntimeError("acme's shard is down")
            return self.index.get_chunks(tenant, ids)

    report = Auditor(BrokenForAcme(service.index), service.ledger).run(since=0)
    assert report.tenants == ["acme", "globex"]
    assert {f.status for f in report.findings if f.tenant == "acme"} == {"error"}
    assert {f.detail for f in report.findings if f.tenant == "acme"} == {"could not be checked: RuntimeError (see the audit log)"}
    assert _statuses(report)[other] == "ok"
    assert Auditor(service.index, service.ledger).run(since=0, tenants=["globex"]).findings[0].answer_id == other


def test_the_window_limits_which_answers_are_checked(service, three_answers):
    _, ids = three_answers
    created = service.ledger.get_answer("acme", ids["leave"]).created_at
    report = Auditor(service.index, service.ledger).run(since=created)
    assert [f.answer_id for f in report.findings] == [ids["leave"]]
    assert Auditor(service.index, service.ledger).run(since=0, until=created).answers_checked == 2


def test_a_deadline_stops_the_run_between_answers_and_the_next_run_finishes(service, three_answers):
    calls = iter([False, True])
    partial = Auditor(service.index, service.ledger).run(since=0, should_stop=lambda: next(calls, True))
    assert partial.complete is False and partial.answers_checked == 1
    rest = Auditor(service.index, service.ledger).run(since=0)
    assert rest.complete and len(rest.recorded) == 2  # the first one was already recorded


def test_refusals_are_logged_but_not_audited(service, three_answers):
    ctx, _ = three_answers
    refused = service.answer(ctx, None, AnswerRequest(q="What is the capital of Mongolia?")).model_dump(mode="json")
    assert refused["answer"]["refused"] is True and refused["answer_id"]
    assert (
        service.get_answer(ctx, None, refused["answer_id"]).model_dump(mode="json")["answer"]["reason"]
        == refused["answer"]["reason"]
    )
    report = Auditor(service.index, service.ledger).run(since=0)
    assert report.refusals_skipped == 1 and refused["answer_id"] not in _statuses(report)


def test_store_text_false_keeps_hashes_and_the_audit_still_checks_receipts(service):
    ctx = _key(service)
    service.ledger.update_tenant_settings("acme", {"store_text": False})
    ctx = _key(service)  # the setting is read when the key authenticates
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")
    question = "How long did the failover cutover take?"
    answered = service.answer(ctx, None, AnswerRequest(q=question, verify=True)).model_dump(mode="json")

    stored = service.ledger.get_answer("acme", answered["answer_id"])
    assert stored.question is None and stored.answer is None and stored.text_stored is False
    assert stored.question_sha256 == sha256_of(question) and stored.answer_sha256 == sha256_of(answered["answer"]["text"])
    assert stored.faithfulness.claims == [] and stored.faithfulness.faithful is True
    files = [service.ledger.path, service.ledger.path.with_name("ledger.db-wal")]
    raw = b"".join(f.read_bytes() for f in files if f.exists())
    assert b"How long did" not in raw and b"42 seconds" not in raw  # neither text is anywhere in the ledger

    auditor = Auditor(service.index, service.ledger, judge=RejectingJudge("42"))
    ok = auditor.run(since=0).findings[0]
    assert ok.status == "ok" and "hashes only" in ok.detail and ok.judge is None  # receipts only, no judge
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK.replace("42", "97"))).model_dump(
        mode="json"
    )
    changed = auditor.run(since=0).findings[0]
    assert changed.status == "source_changed" and changed.claims == []


def test_answers_are_read_only_within_scope_tenant_and_acl_groups(service, three_answers):
    ctx, ids = three_answers
    service.ingest(
        _key(service, groups=("legal",)), "acme/alpha", DocumentRequest(source_uri="nda.md", text=LEAVE, acl=["legal"])
    ).model_dump(mode="json")
    legal = _key(service, groups=("legal",))
    secret = _answer(service, legal, "How many days of paid leave do employees accrue per month?")["answer_id"]

    assert service.get_answer(legal, None, ids["runbook"]).model_dump(mode="json")["answer"]["answer_id"] == ids["runbook"]
    with pytest.raises(NotFound):
        service.get_answer(ctx, None, secret).model_dump(mode="json")  # asked by a key holding a group this one lacks
    with pytest.raises(NotFound):
        service.get_answer(_key(service, scopes=("acme/beta",)), None, ids["runbook"]).model_dump(mode="json")
    with pytest.raises(NotFound):
        service.get_answer(_key(service, tenant="globex", scopes=("globex",)), None, ids["runbook"]).model_dump(mode="json")
    with pytest.raises(NotFound):
        service.get_answer(ctx, None, "ans_000000000000deadbeef").model_dump(mode="json")


def test_audit_findings_are_listed_for_admins_by_time_and_status(service, three_answers):
    ctx, ids = three_answers
    Auditor(service.index, service.ledger, judge=RejectingJudge("Invoices")).run(since=0)
    admin = _key(service, scopes=("acme",), perms=("admin",))
    with pytest.raises(Forbidden):
        service.audits(ctx, None, 0, None).model_dump(mode="json")
    listed = service.audits(admin, None, 0, "unfaithful").model_dump(mode="json")["findings"]
    assert [f["answer_id"] for f in listed] == [ids["billing"]]
    everything = service.audits(admin, None, 0, None).model_dump(mode="json")
    assert len(everything["findings"]) == 3 and everything["next_since"] is None
    first = service.audits(admin, None, 0, None, limit=2).model_dump(mode="json")
    rest = service.audits(admin, None, parse_since(str(first["next_since"]), 0), None, limit=2).model_dump(
        mode="json"
    )  # as the API parses it
    assert [f["answer_id"] for f in first["findings"] + rest["findings"]] == [f["answer_id"] for f in everything["findings"]]
    assert rest["next_since"] is None
    with pytest.raises(InvalidRequest):
        service.audits(admin, None, 0, None, limit=0).model_dump(mode="json")
    assert service.audits(admin, "acme/beta", 0, None).model_dump(mode="json")["findings"] == []
    with pytest.raises(InvalidRequest):
        service.audits(admin, None, 0, "fine").model_dump(mode="json")


def test_parse_since_understands_dates_epochs_and_ages():
    now = 1_764_500_000.0
    assert parse_since("2026-11-01", now) == 1_793_491_200.0
    assert parse_since("2026-11-01T08:00:00Z", now) == 1_793_520_000.0
    assert parse_since("1700000000", now) == 1_700_000_000.0
    assert parse_since("7d", now) == now - 7 * 86400 and parse_since("12h", now) == now - 12 * 3600
    assert parse_since(None, now) == now - 30 * 86400
    with pytest.raises(ValueError, match="since must be"):
        parse_since("last tuesday", now)


def test_cli_audit_prints_findings_as_json_and_a_rerun_changes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    from sourcerer.ledger import open_ledger
    from sourcerer.store import open_index

    service = Service(index=open_index(), ledger=open_ledger())  # what the CLI opens under SOURCERER_HOME
    ctx = _key(service)
    service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")
    answer_id = _answer(service, ctx, "How long did the failover cutover take?")["answer_id"]

    assert main(["audit", "--json", "--since", "1d"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert [(f["answer_id"], f["tenant"], f["status"], f["new"]) for f in first] == [(answer_id, "acme", "ok", True)]
    assert set(first[0]) >= {"answer_id", "tenant", "status", "claims", "citations", "checked_at"}

    assert main(["audit", "--json", "--tenant", "acme"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [{**f, "new": True} for f in again] == first

    assert main(["audit"]) == 0
    assert "1 answers checked" in capsys.readouterr().out
    assert main(["audit", "--since", "yesterday-ish"]) == 2
    assert "since must be" in capsys.readouterr().err

    monkeypatch.setenv("SOURCERER_INDEX", "opensearch://127.0.0.1:9/docs")  # the index is down: nothing listens on 9
    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    assert main(["audit", "--rejudge"]) == 1
    out = capsys.readouterr().out
    assert "error" in out and "could not be checked: ProviderError" in out


def test_the_same_judge_is_not_asked_again_about_unchanged_sources(service, three_answers):
    class CountingJudge(RejectingJudge):
        calls = 0

        async def judge(self, claims, passages):
            CountingJudge.calls += 1
            return await super().judge(claims, passages)

    _, ids = three_answers
    first = Auditor(service.index, service.ledger, judge=CountingJudge("Invoices")).run(since=0)
    assert CountingJudge.calls == 3 and _statuses(first)[ids["billing"]] == "unfaithful"
    again = Auditor(service.index, service.ledger, judge=CountingJudge("Invoices")).run(since=0)
    assert CountingJudge.calls == 3  # the verdicts on unchanged texts stand: an LLM judge is not paid twice
    assert [f.model_dump() for f in again.findings] == [f.model_dump() for f in first.findings] and again.recorded == []
    Auditor(service.index, service.ledger, judge=CountingJudge("Invoices"), rejudge=True).run(since=0)
    assert CountingJudge.calls == 6
    stricter = RejectingJudge("paid leave")
    stricter.name = "stricter-test"  # another judge (by name) rules afresh
    assert _statuses(Auditor(service.index, service.ledger, judge=stricter).run(since=0))[ids["leave"]] == "unfaithful"


def test_cited_chunks_are_fetched_once_per_batch_not_once_per_answer(service, three_answers):
    calls = []

    class Counting:
        def __getattr__(self, name):
            return getattr(service.index, name)

        def get_chunks(self, tenant, ids):
            calls.append(list(ids))
            return service.index.get_chunks(tenant, ids)

    report = Auditor(Counting(), service.ledger).run(since=0)
    assert report.answers_checked == 3 and set(_statuses(report).values()) == {"ok"}
    assert len(calls) == 1 and len(calls[0]) == 3  # one request for the three answers' citations
