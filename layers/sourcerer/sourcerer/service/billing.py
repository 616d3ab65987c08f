"""Metering and prices: quota is taken before the work, given back if the work fails, and the request's final
units and cost are written once after it.

`Meter.metered(...)` wraps a whole use case, so nothing a client did not cause is charged: a backend that
fails, a misconfiguration found halfway, or our own bug gives the quota back and leaves no usage record.

A crash (`kill -9`, a lost machine) cannot run that: the charge's usage record is written *pending* and only
`settle` (after the work, just before the response leaves) marks it done. `Meter.reconcile` finds the pending
records of dead processes and, for an ingest, settles those whose document was stored and gives the rest back;
a query whose response never left is given back. `sourcerer serve` reconciles when it starts.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sourcerer.errors import ConfigurationError, QuotaExceeded
from sourcerer.ledger.base import AnswerRecord, Usage, UsageRecord
from sourcerer.retrieval.rerank import RERANK_UNAVAILABLE, Reranker
from sourcerer.service.schemas import AnswerRequest, Query
from sourcerer.service.tenancy import Context, month_of, seconds_to_next_month
from sourcerer.settings import get_settings


class Prices(BaseModel):
    """The price table behind `est_cost_usd`: defaults, overridden by the `SOURCERER_PRICES` setting."""

    model_config = ConfigDict(extra="forbid")

    query: float = Field(default=0.0, ge=0)
    chunk: float = Field(default=0.0, ge=0)
    llm_input_per_1k: float = Field(default=0.0005, ge=0)
    llm_output_per_1k: float = Field(default=0.0015, ge=0)

    @classmethod
    def from_settings(cls) -> Prices:
        """Read once when the service starts: a malformed table is the operator's fault (a 503 that charges
        nothing), never the client's (a 400 after its quota was taken)."""
        try:
            return cls.model_validate(get_settings().prices or {})
        except ValidationError as exc:
            raise ConfigurationError(f"SOURCERER_PRICES is not a valid price table: {exc.errors()[0]['msg']}") from exc

    def estimate(self, units: dict[str, float]) -> float:
        return round(
            units.get("queries", 0) * self.query
            + units.get("chunks", 0) * self.chunk
            + units.get("llm_tokens_in", 0) / 1000 * self.llm_input_per_1k
            + units.get("llm_tokens_out", 0) / 1000 * self.llm_output_per_1k,
            8,
        )


# a charge pending longer than this was cut short, whoever wrote it: no request runs longer (Lambda's limit)
RECOVERY_GRACE_S = 900.0


@dataclass(frozen=True)
class Charge:
    """Quota a request holds and the usage record written with it (see `Ledger.charge`)."""

    record: UsageRecord
    unit: str
    amount: int
    month: str


@dataclass
class Meter:
    ledger: Usage
    prices: Prices
    clock: Callable[[], float]

    def charge(
        self, ctx: Context, route: str, request_id: str | None, unit: str, amount: int, work: dict[str, str] | None = None
    ) -> Charge:
        """Take quota and write the usage record, pending, in one ledger transaction (`QuotaExceeded` when used
        up). `work` says what recovery checks to know whether the work was done (an ingest's document)."""
        now = self.clock()
        record = UsageRecord(
            tenant=ctx.tenant,
            route=route,
            request_id=request_id or uuid.uuid4().hex,
            units={unit: amount},
            timestamp=now,
            settled=False,
            work={**(work or {}), "owner": owner()},
        )
        charge = Charge(record=record, unit=unit, amount=amount, month=month_of(now))
        if not self.ledger.charge(record, unit, amount, ctx.tier.limit(unit), charge.month):
            raise QuotaExceeded(
                f"monthly {unit} quota of the {ctx.tier.name} tier is used up", retry_after_s=seconds_to_next_month(now)
            )
        return charge

    def release(self, charge: Charge) -> None:
        """Give the quota back and delete the usage record (the request failed, or did nothing new)."""
        self.ledger.release(charge.record, charge.unit, charge.amount, charge.month)

    @contextmanager
    def metered(self, ctx: Context, route: str, request_id: str | None, unit: str, amount: int) -> Iterator[Charge]:
        """Charge for the work inside; any exception from it gives the charge back before it propagates."""
        charge = self.charge(ctx, route, request_id, unit, amount)
        try:
            yield charge
        except Exception:  # not a KeyboardInterrupt or a killed worker: like a crash, that keeps the charge and its record
            self.release(charge)
            raise

    def settle(self, charge: Charge, units: dict[str, float], answer: AnswerRecord | None = None) -> float:
        """The final units and cost of a charged request, written over its usage record (with the answer's log
        record, for an answer, in the same ledger write). Returns the cost."""
        cost = self.prices.estimate(units)
        self.ledger.settle(charge.record.model_copy(update={"units": units, "est_cost_usd": cost, "settled": True}), answer)
        return cost

    def reconcile(self, index: Any, grace_s: float = RECOVERY_GRACE_S) -> dict[str, int]:
        """Settle or give back the pending charges of dead processes: those of a process of this host that is
        gone, and any older than `grace_s` (another host's, or one that never finished). An ingest whose document
        was stored with the charged content is settled; everything else is given back. Returns the counts."""
        done = {"settled": 0, "released": 0}
        now = self.clock()
        for record in self.ledger.pending_usage(before=now):
            if alive(record.work.get("owner", "")) and now - record.timestamp < grace_s:
                continue
            unit, amount = next(iter(record.units.items()))
            charge = Charge(record=record, unit=unit, amount=int(amount), month=month_of(record.timestamp))
            stored = _stored(index, record)
            if stored:
                self.settle(charge, dict(record.units))
                done["settled"] += 1
            else:
                self.release(charge)
                done["released"] += 1
        return done


def _process_start(pid: int) -> str | None:
    """The start time of a process of this host (Linux /proc), so a reused pid is not mistaken for the same one."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if len(fields) < 20 or fields[0] in ("Z", "X"):  # a zombie (killed, never reaped) or dead: not running
        return None
    return fields[19]


def owner() -> str:
    """Who charges: this host, process and its start time. A record pending under an owner that no longer runs
    is a charge its process never settled (looked up by pid: a server's workers are forked after import)."""
    return _owner_of(os.getpid())


@lru_cache(maxsize=4)
def _owner_of(pid: int) -> str:
    """`owner()` of a process, read once: /proc and the host name cost 4% of a loaded server's CPU per charge."""
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def alive(owner: str) -> bool:
    """Whether the process that wrote a pending charge may still settle it. Unknown (another host): assume so."""
    host, _, rest = owner.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit() or started == "None":
        return True
    return _process_start(int(pid)) == started


def _stored(index: Any, record: UsageRecord) -> bool:
    """Whether a pending ingest's document is in the index with the content it was charged for."""
    document_id, content_hash = record.work.get("document_id"), record.work.get("content_hash")
    if not document_id or not content_hash or not hasattr(index, "stored_document"):
        return False
    stored = index.stored_document(record.tenant, document_id)
    return stored is not None and stored.content_hash == content_hash


# --- budgets: which optional stages an answer can afford -------------------------------------------------------

LLM_ANSWER_MS = 2_500  # a chat model's answer, typical (Bedrock Claude 3.5 Haiku, ~160 output tokens)
LLM_JUDGE_MS = 1_500  # its verdict on an answer's claims
LLM_ANSWER_TOKENS = (1_900, 160)  # (input, output) of one answer: five passages and the prompt


def rerank_skipped(request: Query, reranker: Reranker | None) -> str | None:
    """Why a requested rerank is skipped (no reranker, or a budget too small for it), or None to run it."""
    if not request.rerank:
        return None
    if reranker is None:
        return RERANK_UNAVAILABLE
    if request.budget is not None and request.budget.max_ms is not None and request.budget.max_ms < reranker.typical_ms + 100:
        return "skipped: the budget's max_ms leaves no time for it"
    return None


@dataclass
class AnswerPlan:
    """What `ask()` runs for a request: the stages its budget allows, and the ones it skipped (in the trace)."""

    chat: Any = None  # None: the configured chain
    judge: Any = None
    verify: Any = False
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_answer(request: AnswerRequest, prices: Prices, reranker: Reranker | None = None) -> AnswerPlan:
    """Skip optional stages (rerank, LLM synthesis, LLM verification) that would not fit `request.budget`; the
    extractive synthesiser and the local judge take their place, so an answer still comes back, cited."""
    from sourcerer.synthesis.providers import chat_chain_from_env

    plan = AnswerPlan(verify=request.verify)
    why = rerank_skipped(request, reranker)
    if why:
        plan.skipped.append("rerank")
        plan.notes.append(f"rerank {why}")
    budget = request.budget
    if budget is None:
        return plan
    providers, _ = chat_chain_from_env()
    if not providers:
        return plan  # nothing optional costs time or money beyond the search
    llm_cost = prices.estimate({"llm_tokens_in": LLM_ANSWER_TOKENS[0], "llm_tokens_out": LLM_ANSWER_TOKENS[1]})
    over_time = budget.max_ms is not None and budget.max_ms < LLM_ANSWER_MS
    over_cost = budget.max_cost_usd is not None and budget.max_cost_usd < llm_cost
    if over_time or over_cost:
        plan.chat = "extractive"
        plan.skipped.append("synthesize:llm")
        plan.notes.append(f"budget: the LLM was skipped ({'max_ms' if over_time else 'max_cost_usd'}); extractive answer")
    judge_too_slow = budget.max_ms is not None and budget.max_ms < LLM_ANSWER_MS + LLM_JUDGE_MS
    if request.verify and (over_time or over_cost or judge_too_slow):
        plan.judge = "local"
        plan.skipped.append("verify:llm")
        plan.notes.append("budget: verified with the local judge instead of the LLM")
    return plan
