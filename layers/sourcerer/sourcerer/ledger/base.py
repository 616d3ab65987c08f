"""The Ledger port: storage for tenants, keys, quota counters, usage records, the answer log and audit findings.

Storage only: which tiers exist, what a tenant's settings mean and who may see what are the service's
(`sourcerer.service.tenancy`); the ledger stores what it is given, with the conditional writes that keep
quota and findings right under concurrency.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

from pydantic import BaseModel, Field

from sourcerer.handoff import Handoff
from sourcerer.models import Faithfulness, Locator, receipt_of
from sourcerer.scopes import Permission

if TYPE_CHECKING:
    import numpy as np

USAGE_TTL_S = 400 * 24 * 3600  # request records are kept a little over a year, then expire


class KeyRecord(BaseModel):
    """What is stored for an API key: never the key itself, only its SHA-256 hash."""

    key_id: str
    key_hash: str
    tenant: str
    scopes: list[str]
    perms: list[Permission]
    groups: list[str] = Field(default_factory=list)
    created_at: float = Field(default_factory=time.time)
    revoked: bool = False

    def public(self) -> dict[str, Any]:
        return self.model_dump(exclude={"key_hash"})


class UsageRecord(BaseModel):
    """One billable request."""

    tenant: str
    route: str
    request_id: str
    units: dict[str, float] = Field(default_factory=dict, description="queries, chunks, embedding_tokens, llm_tokens_in/out")
    est_cost_usd: float = 0.0
    timestamp: float = Field(default_factory=time.time)
    # False from the charge until the work is done and its answer leaves (`settle`): a record still pending after
    # its process died is a charge for something never delivered, which `reconcile` settles or gives back
    settled: bool = True
    work: dict[str, str] = Field(default_factory=dict, description="what to check on recovery: document_id, content_hash")

    @property
    def expires_at(self) -> int:
        return int(self.timestamp + USAGE_TTL_S)


def sequencer_key(sequencer: str) -> str:
    """S3 sequencers are hex strings of varying length, ordered once left-padded to the same length."""
    return sequencer.strip().upper().rjust(32, "0")


# the same `sha256:` + hex digest as a receipt; for question and answer texts it is just their hash
sha256_of = receipt_of


def new_answer_id(created_at: float) -> str:
    """`ans_` + milliseconds (12 hex digits) + 10 random hex digits: unique, and sorted by creation time, so
    "answers since T" is a key range in both ledgers."""
    return f"ans_{int(created_at * 1000):012x}{secrets.token_hex(5)}"


def answer_id_floor(timestamp: float) -> str:
    """The smallest answer id created at or after `timestamp`."""
    return f"ans_{max(0, int(timestamp * 1000)):012x}"


# --- the answer log ---------------------------------------------------------------------------------


class LoggedCitation(BaseModel):
    """A citation as the log keeps it: enough to find the cited chunk again and prove whether it changed."""

    index: int
    unit_id: str | None = None
    document_id: str | None = None
    position: int | None = None
    source_uri: str | None = None
    label: str = ""
    locator: Locator
    receipt: str = Field(description="sha256: of the exact cited chunk text at answer time")


FindingStatus = Literal["ok", "source_changed", "source_deleted", "unfaithful", "error"]
FINDING_STATUSES: tuple[str, ...] = ("ok", "source_changed", "source_deleted", "unfaithful", "error")


class CitationCheck(BaseModel):
    """What an audit found for one citation."""

    index: int
    unit_id: str | None = None
    receipt: str
    status: Literal["intact", "moved", "changed", "deleted"]
    current_receipt: str | None = None
    current_unit_id: str | None = None
    detail: str = ""


class ClaimCheck(BaseModel):
    """A claim an audit is concerned about (None as the text when the tenant keeps hashes only)."""

    claim: str | None
    citations: list[int] = Field(default_factory=list)
    why: str = ""


class Finding(BaseModel):
    """One audit verdict on one answer. `fingerprint` covers everything but the time, so an audit that finds
    the same thing again records nothing new."""

    answer_id: str
    tenant: str
    scopes: list[str] = Field(default_factory=list)
    status: FindingStatus
    claims: list[ClaimCheck] = Field(default_factory=list)
    citations: list[CitationCheck] = Field(default_factory=list)
    checked_at: float
    judge: str | None = None
    detail: str = ""
    expires_at: int
    fingerprint: str = ""

    def model_post_init(self, _: Any) -> None:
        if not self.fingerprint:
            evidence = self.model_dump(mode="json", include={"answer_id", "status", "claims", "citations", "judge", "detail"})
            self.fingerprint = hashlib.sha256(json.dumps(evidence, sort_keys=True).encode()).hexdigest()[:32]


class AnswerRecord(BaseModel):
    """One served answer (or refusal). With the tenant's `store_text: false`, `question` and `answer` are None
    and only their hashes are kept; claim texts are then dropped from `faithfulness` too."""

    answer_id: str
    tenant: str
    scopes: list[str]
    key_id: str | None = None
    groups: list[str] = Field(default_factory=list, description="ACL groups of the key that asked")
    question: str | None = None
    question_sha256: str
    answer: str | None = None
    answer_sha256: str
    text_stored: bool = True
    refused: bool = False
    reason: str | None = None
    citations: list[LoggedCitation] = Field(default_factory=list)
    faithfulness: Faithfulness | None = None
    provider: str = "none"
    extractive: bool = False
    created_at: float
    expires_at: int
    audit: Finding | None = Field(default=None, description="the latest audit finding, kept on the answer itself")


class HandoffRecord(BaseModel):
    """A hand-off of one answer (a refusal, or a partial answer's removed claims) for a person to act on. It is
    keyed by its answer's id and seen by whoever may read that answer (tenant, scopes, ACL groups of the asker)."""

    answer_id: str
    tenant: str
    scopes: list[str]
    key_id: str | None = None
    groups: list[str] = Field(default_factory=list, description="ACL groups of the key that asked")
    bundle: Handoff
    created_at: float
    expires_at: int
    delivered: list[str] = Field(default_factory=list, description="where it was posted: webhook, queue")


class CachedAnswer(BaseModel):
    """An answer the cache may serve again: to callers with the same `context` (tenant, effective scopes and
    groups, query options, and the index's version for the tenant, so any write invalidates it) asking the same
    normalised question (`key`) or one whose embedding is within the cache's threshold (`vector`)."""

    tenant: str
    context: str
    key: str
    question: str = ""  # as asked: a similar match compares what distinguishes it (entries without it never match)
    vector: list[float] | None = None
    answer: dict[str, Any]
    hits: list[dict[str, Any]] = Field(default_factory=list)
    created_at: float
    expires_at: float


@dataclass(frozen=True)
class CachedQuestion:
    """What a near-duplicate lookup compares of a cached answer: its key, the question as asked and its
    embedding. The answer itself is read by key once one matches (`AnswerCacheStore.cached_answer`). Plain
    data: read from entries the ledger validated when they were stored, on every cache miss."""

    key: str
    question: str = ""
    vector: np.ndarray | None = None  # float32


CACHE_SCAN = 200  # cached answers read per (tenant, context) when looking for a near-duplicate question


class TenantRecord(TypedDict):
    tenant: str
    tier: str
    created_at: float
    settings: dict[str, Any]  # the stored overrides of the tier's defaults (`service.tenancy.TenantSettings`)


@runtime_checkable
class Tenants(Protocol):
    """Tenants and their tier and settings."""

    def create_tenant(self, tenant: str, tier: str) -> TenantRecord: ...

    def get_tenant(self, tenant: str) -> TenantRecord | None: ...

    def update_tenant_settings(self, tenant: str, settings: dict[str, Any]) -> TenantRecord: ...

    def list_tenants(self) -> list[str]: ...


@runtime_checkable
class Keys(Protocol):
    """API keys, found by the hash of the key, never stored in clear."""

    def put_key(self, record: KeyRecord) -> None: ...

    def find_key(self, key_hash: str) -> KeyRecord | None: ...

    def list_keys(self, tenant: str) -> list[KeyRecord]: ...

    def revoke_key(self, key_id: str) -> bool: ...


@runtime_checkable
class Usage(Protocol):
    """Quotas and usage records: what `Meter` charges, settles and gives back.

    * `charge` is `consume` plus its usage record, atomically; `release` undoes one, atomically; `record_usage`
      of a record with the same timestamp and request id replaces it (the final units once the work is done).
    * `consume` is exact under concurrency: it adds `amount` to this month's counter only if the result stays
      within `limit` (None: unlimited) and says whether it did.
    """

    def consume(self, tenant: str, unit: str, amount: int, limit: int | None, month: str) -> bool: ...

    def charge(self, record: UsageRecord, unit: str, amount: int, limit: int | None, month: str) -> bool:
        """`consume` and `record_usage(record)` in one transaction: quota is never taken without its usage record
        (a crash in between cannot lose a billed unit), and a refused charge writes neither."""
        ...

    def release(self, record: UsageRecord, unit: str, amount: int, month: str) -> None:
        """Undo a `charge` in one transaction: give the units back and delete its usage record (a request that
        failed, or found its content already written). Once only: a record already gone gives nothing back."""
        ...

    def pending_usage(self, before: float) -> list[UsageRecord]:
        """Usage records charged before `before` and never settled (their process died mid-request)."""
        ...

    def usage(self, tenant: str, month: str) -> dict[str, int]: ...

    def record_usage(self, record: UsageRecord) -> None: ...

    def settle(self, record: UsageRecord, answer: AnswerRecord | None = None) -> None:
        """A request's final usage record (over the one `charge` wrote) and, for an answer, its log record: one
        write per request after the work, in one transaction where the store has them (SQLite)."""
        ...

    def usage_records(self, tenant: str, since: float = 0.0) -> list[UsageRecord]: ...


@runtime_checkable
class Sequencers(Protocol):
    """The latest S3 event applied per object key (S3 ingestion's ordering)."""

    def claim_sequencer(self, source: str, sequencer: str) -> bool:
        """Record `sequencer` (S3's per-key event order, normalised by `sequencer_key`) as the latest applied to
        `source` if no later one is recorded; an equal one is claimed again (a redelivery re-applies). Atomic."""
        ...

    def sequencer(self, source: str) -> str | None:
        """The latest sequencer claimed for `source`, or None."""
        ...


@runtime_checkable
class AnswerLog(Protocol):
    """The answer log and its audit findings.

    * `record_finding` is idempotent: it writes the finding and moves the answer's latest audit status only when
      the finding differs from the answer's latest one (by fingerprint), atomically, and says whether it did.
    * answers and findings past their `expires_at` are never returned.
    """

    def put_answer(self, record: AnswerRecord) -> None: ...

    def get_answer(self, tenant: str, answer_id: str) -> AnswerRecord | None: ...

    def answers(self, tenant: str, since: float = 0.0, until: float | None = None) -> Iterator[AnswerRecord]:
        """The tenant's answers created in [since, until), oldest first, read page by page."""
        ...

    def record_finding(self, finding: Finding) -> bool: ...

    def findings(self, tenant: str, since: float = 0.0, status: str | None = None) -> Iterator[Finding]:
        """The tenant's findings checked at or after `since`, oldest first, optionally of one status, read page by page."""
        ...


@runtime_checkable
class AnswerCacheStore(Protocol):
    """Cached answers per tenant and search context."""

    def cached_questions(self, tenant: str, context: str, now: float) -> list[CachedQuestion]:
        """The questions of the tenant's unexpired cached answers for `context`, newest first, at most
        `CACHE_SCAN`: a lookup reads these on every miss, so the answers stay unread."""
        ...

    def cached_answer(self, tenant: str, context: str, key: str, now: float) -> CachedAnswer | None:
        """The unexpired cached answer for exactly this question key, read by its key (no scan)."""
        ...

    def put_cached_answer(self, entry: CachedAnswer) -> None:
        """Store (or replace, for the same tenant, context and key) a cached answer."""
        ...


@runtime_checkable
class Handoffs(Protocol):
    """Hand-offs of refused or partial answers."""

    def put_handoff(self, record: HandoffRecord) -> None:
        """Store (or replace, for the same tenant and answer id) a hand-off."""
        ...

    def get_handoff(self, tenant: str, answer_id: str) -> HandoffRecord | None: ...

    def handoffs(self, tenant: str, since: float = 0.0) -> Iterator[HandoffRecord]:
        """The tenant's unexpired hand-offs created at or after `since`, oldest first, read page by page."""
        ...


@runtime_checkable
class Ledger(Tenants, Keys, Usage, Sequencers, AnswerLog, AnswerCacheStore, Handoffs, Protocol):
    """Every role at once: what one store (one DynamoDB table, one SQLite file) implements, and what the composition
    root hands the service. A part of the service that needs one role takes that role's Protocol. Every adapter
    passes tests/contract/ledger_contract.py."""
