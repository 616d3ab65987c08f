"""Verification audits: re-check logged answers against their sources as they are now.

For each answer (refusals are skipped: they stand on no source) an audit records one finding:

* `source_deleted` — a cited document, or the cited chunk of it, no longer exists;
* `source_changed` — a cited chunk's current text no longer matches its receipt (the SHA-256 of the text the
  answer stood on);
* `unfaithful` — every receipt still matches, but the configured judge now rejects a claim;
* `ok` — every receipt matches and every claim is supported (or, for tenants that keep hashes only, every
  receipt matches: claims cannot be re-verified without their text);
* `error` — the answer could not be checked (a backend failed); the next run tries again.

A cited chunk whose exact text is still in the document at another position (text was added above it) is
`moved`, not changed. Findings are idempotent: the ledger writes one only when it differs from the answer's
latest, so re-running an audit over the same window records nothing twice. Tenants are processed one after
another, each on its own: a failure in one answer or one tenant is recorded and the run goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from sourcerer.errors import InvalidRequest, SourcererError
from sourcerer.ledger.base import (
    FINDING_STATUSES,
    AnswerLog,
    AnswerRecord,
    CitationCheck,
    ClaimCheck,
    Finding,
    LoggedCitation,
    Tenants,
)
from sourcerer.models import Passage
from sourcerer.settings import get_settings
from sourcerer.store.base import Index
from sourcerer.store.models import Hit

if TYPE_CHECKING:  # the judge's module loads when an audit runs, not when the API imports AGE_PATTERN
    from sourcerer.verify import Judge

log = logging.getLogger("sourcerer.service.audit")


def default_window_days() -> float:
    return get_settings().audit_window_days


AGE_PATTERN = r"^\s*\d{1,6}(?:\.\d{1,6})?\s*[dhm]\s*$"


def parse_since(value: str | float | datetime | None, now: float) -> float:
    """A point in time from `2026-11-01`, `2026-11-01T08:00:00Z`, epoch seconds, or an age such as `7d`, `12h`,
    `30m`. None means the default window (`SOURCERER_AUDIT_WINDOW_DAYS`, 30 days)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return now - default_window_days() * 86400
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, (int, float)):
        return float(value)
    text = value.strip()
    age = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([dhm])", text)
    if age:
        return now - float(age.group(1)) * {"d": 86400, "h": 3600, "m": 60}[age.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidRequest(f"since must be an ISO 8601 time, epoch seconds or an age like 7d / 12h, not {value!r}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


@dataclass
class AuditReport:
    """What one run did. `findings` holds one finding per answer checked (`recorded` says which were new)."""

    since: float
    until: float
    tenants: list[str] = field(default_factory=list)
    answers_checked: int = 0
    refusals_skipped: int = 0
    findings: list[Finding] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)  # answer ids whose finding was new
    errors: list[str] = field(default_factory=list)
    complete: bool = True

    def by_status(self, only_new: bool = False) -> dict[str, int]:
        new = set(self.recorded)
        counts = dict.fromkeys(FINDING_STATUSES, 0)
        for f in self.findings:
            if not only_new or f.answer_id in new:
                counts[f.status] += 1
        return counts

    def as_json(self) -> list[dict[str, Any]]:
        """The findings as `sourcerer audit --json` prints them."""
        new = set(self.recorded)
        return [
            {
                "answer_id": f.answer_id,
                "tenant": f.tenant,
                "status": f.status,
                "claims": [c.model_dump() for c in f.claims],
                "citations": [c.model_dump() for c in f.citations],
                "checked_at": datetime.fromtimestamp(f.checked_at, timezone.utc).isoformat(),
                "new": f.answer_id in new,
                "detail": f.detail,
            }
            for f in self.findings
        ]


BATCH = 100  # answers whose cited chunks are fetched in one index request


@dataclass
class Sources:
    """What an audit has read from the index for one batch: chunks by unit id (None: gone) and whole documents."""

    chunks: dict[str, Hit | None] = field(default_factory=dict)
    documents: dict[str, list[Hit]] = field(default_factory=dict)

    def remember(self, asked: list[str], found: list[Hit]) -> None:
        self.chunks.update(dict.fromkeys(asked))
        self.chunks.update({h.unit_id: h for h in found})


class AuditLedger(AnswerLog, Tenants, Protocol):
    """The roles of the ledger an audit reads and writes: the answer log and its findings, and the tenants."""


class Auditor:
    def __init__(
        self,
        index: Index,
        ledger: AuditLedger,
        judge: Judge | None = None,
        clock: Callable[[], float] = time.time,
        rejudge: bool = False,
    ) -> None:
        """`rejudge=True` asks the judge again even where the same judge already ruled on unchanged sources."""
        self.index = index
        self.ledger = ledger
        self._judge = judge
        self.clock = clock
        self.rejudge = rejudge

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            from sourcerer.verify import configured_judge

            self._judge = configured_judge()
        return self._judge

    def run(
        self,
        since: float,
        until: float | None = None,
        tenants: Iterable[str] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> AuditReport:
        """Audit every answer created in [since, until) of the given tenants (default: all)."""
        until = self.clock() if until is None else until
        report = AuditReport(since=since, until=until)
        try:
            names = list(tenants) if tenants is not None else self.ledger.list_tenants()
        except Exception as exc:  # noqa: BLE001 - the run reports it rather than dying silently
            report.errors.append(f"could not list tenants: {exc}")
            report.complete = False
            return report
        for tenant in names:
            report.tenants.append(tenant)
            try:
                self._audit_tenant(tenant, report, should_stop)
            except Exception as exc:  # noqa: BLE001 - one tenant's failure never stops the others
                log.exception("audit of tenant %s failed", tenant)
                report.errors.append(f"tenant {tenant}: {type(exc).__name__}: {exc}")
                report.complete = False
            if should_stop is not None and should_stop():
                report.complete = False
                break
        return report

    def _audit_tenant(self, tenant: str, report: AuditReport, should_stop: Callable[[], bool] | None) -> None:
        answers = self.ledger.answers(tenant, since=report.since, until=report.until)
        while batch := list(itertools.islice(answers, BATCH)):
            sources = self._prefetch(tenant, batch)
            for record in batch:
                if should_stop is not None and should_stop():
                    report.complete = False
                    return
                if record.refused or not record.citations:
                    report.refusals_skipped += 1
                    continue
                self._record(self.check(record, sources), record, report)

    def _prefetch(self, tenant: str, batch: list[AnswerRecord]) -> Sources:
        """One index request for every chunk a batch of answers cites (rather than one per answer)."""
        sources = Sources()
        ids = list(dict.fromkeys(c.unit_id for r in batch if not r.refused for c in r.citations if c.unit_id))
        try:
            sources.remember(ids, self.index.get_chunks(tenant, ids) if ids else [])
        except Exception:  # noqa: BLE001 - each answer then looks up its own chunks, and records its own error
            log.warning("prefetching %d chunks of tenant %s failed", len(ids), tenant, exc_info=True)
        return sources

    def _record(self, finding: Finding, record: AnswerRecord, report: AuditReport) -> None:
        report.answers_checked += 1
        try:
            if self.ledger.record_finding(finding):
                report.recorded.append(record.answer_id)
            elif record.audit is not None and record.audit.fingerprint == finding.fingerprint:
                finding = record.audit  # nothing new: report the finding as first recorded
        except Exception as exc:  # noqa: BLE001
            log.exception("finding for %s not recorded", record.answer_id)
            report.errors.append(f"answer {record.answer_id}: finding not recorded: {exc}")
        report.findings.append(finding)

    def check(self, record: AnswerRecord, sources: Sources | None = None) -> Finding:
        """The finding for one answer; any failure becomes an `error` finding instead of an exception."""
        now = self.clock()
        try:
            return self._check(record, sources or Sources(), now)
        except Exception as exc:  # noqa: BLE001 - recorded, and retried by the next run
            log.exception("audit of answer %s failed", record.answer_id)
            # tenant admins read findings: our own errors carry messages written for them, anything else only
            # its type (the operator's log has the rest)
            why = (
                f"{type(exc).__name__}: {exc}" if isinstance(exc, SourcererError) else f"{type(exc).__name__} (see the audit log)"
            )
            return self._finding(record, "error", now, detail=f"could not be checked: {why}")

    def _finding(self, record: AnswerRecord, status: str, now: float, **fields: Any) -> Finding:
        return Finding(
            answer_id=record.answer_id,
            tenant=record.tenant,
            scopes=record.scopes,
            status=status,  # type: ignore[arg-type]
            checked_at=now,
            expires_at=record.expires_at,
            **fields,
        )

    def _check(self, record: AnswerRecord, sources: Sources, now: float) -> Finding:
        checks, current = self.check_receipts(record, sources)
        from sourcerer.verify import split_claims

        claims = split_claims(record.answer) if record.answer is not None else []
        for status, broken in (("source_deleted", "deleted"), ("source_changed", "changed")):
            concerned = [c for c in checks if c.status == broken]
            if concerned:
                numbers = {c.index for c in concerned}
                why = f"cites a {broken} source"
                return self._finding(
                    record,
                    status,
                    now,
                    citations=concerned,
                    claims=[
                        ClaimCheck(claim=c.text, citations=c.citations, why=why) for c in claims if numbers & set(c.citations)
                    ],
                    detail="; ".join(c.detail for c in concerned),
                )
        if record.answer is None:
            return self._finding(
                record,
                "ok",
                now,
                citations=checks,
                detail="receipts match; claims not re-verified: this tenant keeps hashes only",
            )
        previous = record.audit
        if (
            not self.rejudge
            and previous is not None
            and previous.status in ("ok", "unfaithful")
            and previous.judge == self.judge.name
        ):
            # the same judge already ruled on exactly these texts (every receipt still matches): its verdict stands,
            # so a daily audit calls the judge (an LLM, perhaps) only for answers it has not ruled on yet
            rejected = previous.claims
            detail = previous.detail
        else:
            # the judge sees each claim's cited sources at the numbers the answer cites them by
            passages = [Passage(text=current.get(n, "")) for n in range(1, max(current) + 1)]
            verdicts = asyncio.run(self.judge.judge(claims, passages))
            rejected = [ClaimCheck(claim=v.claim, citations=v.citations, why=v.why) for v in verdicts if not v.supported]
            detail = f"{len(rejected)} of {len(verdicts)} claims are not supported by their cited sources" if rejected else ""
        if rejected:
            numbers = {n for c in rejected for n in c.citations}
            return self._finding(
                record,
                "unfaithful",
                now,
                judge=self.judge.name,
                claims=rejected,
                citations=[c for c in checks if c.index in numbers],
                detail=detail,
            )
        return self._finding(record, "ok", now, judge=self.judge.name, citations=checks)

    def check_receipts(self, record: AnswerRecord, sources: Sources) -> tuple[list[CitationCheck], dict[int, str]]:
        """Each citation's receipt against the index as it is now, and the current text of those whose receipt
        still matches (by citation number)."""
        unread = [c.unit_id for c in record.citations if c.unit_id and c.unit_id not in sources.chunks]
        if unread:
            sources.remember(unread, self.index.get_chunks(record.tenant, unread))
        checks: list[CitationCheck] = []
        texts: dict[int, str] = {}
        for c in record.citations:
            status, now, detail = self._locate(record.tenant, c, sources.chunks.get(c.unit_id or ""), sources.documents)
            current = {"current_receipt": now.receipt, "current_unit_id": now.unit_id} if now is not None else {}
            checks.append(
                CitationCheck(index=c.index, unit_id=c.unit_id, receipt=c.receipt, status=status, detail=detail, **current)  # type: ignore[arg-type]
            )
            if now is not None and now.receipt == c.receipt:
                texts[c.index] = now.text
        return checks, texts

    def _locate(
        self, tenant: str, c: LoggedCitation, hit: Hit | None, documents: dict[str, list[Hit]]
    ) -> tuple[str, Hit | None, str]:
        """(status, the chunk the citation now points at, why) for one citation."""
        where = (c.source_uri or "").split("#", 1)[0] or c.document_id or "the cited document"  # without the deep link
        if hit is not None and hit.receipt == c.receipt:
            return "intact", hit, ""
        if not c.document_id:
            return "deleted", None, f"the cited chunk of {where} is gone"
        if c.document_id not in documents:
            documents[c.document_id] = self.index.document_chunks(tenant, c.document_id)
        chunks = documents[c.document_id]
        if not chunks:
            return "deleted", None, f"{where} was deleted"
        same_text = next((h for h in chunks if h.receipt == c.receipt), None)
        if same_text is not None:
            return "moved", same_text, f"the cited text of {where} is unchanged, now chunk {same_text.position}"
        at_position = next((h for h in chunks if h.position == c.position), None)
        if at_position is None:
            return "deleted", None, f"{where} no longer has chunk {c.position}"
        return "changed", at_position, f"chunk {c.position} of {where} changed since the answer"


__all__ = ["AuditReport", "Auditor", "parse_since"]
