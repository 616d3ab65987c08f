"""The service's logic, shared by the Lambda handlers and `sourcerer serve`: authenticate, authorise,
meter, act, record usage. Nothing here knows about HTTP or Lambda events; errors are typed
(`sourcerer.tenancy.TenancyError` subclasses carry their HTTP status) so the transport maps them in one place.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import itertools
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from sourcerer import config
from sourcerer.accounting import current, tally
from sourcerer.errors import ConfigurationError, DocumentConflict, DocumentNotFound
from sourcerer.ledger.base import (
    FINDING_STATUSES,
    AnswerRecord,
    Finding,
    Ledger,
    LoggedCitation,
    UsageRecord,
    new_answer_id,
    sha256_of,
)
from sourcerer.models import Answer
from sourcerer.pipeline import ask
from sourcerer.store.base import Index
from sourcerer.store.models import SCOPE_PATTERN, Document
from sourcerer.store.parsers import EXTENSIONS, sniff_content_type
from sourcerer.tenancy import (
    TIERS,
    Context,
    Forbidden,
    NotFound,
    QuotaExceeded,
    TenancyError,
    TenantSettings,
    Unauthorized,
    UpgradeRequired,
    hash_key,
    month_of,
    seconds_to_next_month,
)

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE = 100, 1000  # findings per GET /v1/audits (a response must stay far under 6 MB)


class PayloadTooLarge(TenancyError):
    status, code = 413, "payload_too_large"


class Conflict(TenancyError):
    status, code = 409, "conflict"


# --- request models (the API's own shapes; the domain models live in the library) ------------------


def _whole(value: Any) -> Any:
    """JSON has one number type: 8.0 is the integer 8. Strings and booleans stay errors (the models are strict)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole)]
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
ContentType = Literal[tuple(sorted(set(EXTENSIONS.values())))]  # type: ignore[valid-type]


class DocumentRequest(BaseModel):
    # strict: "5", true or "yes" are not numbers or booleans; exactly one of `text` and `content_base64`
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"oneOf": [{"required": ["text"]}, {"required": ["content_base64"]}]},
    )

    source_uri: str = Field(min_length=1, max_length=2048, pattern=r"\S", description="the document's identity in its scope")
    text: str = Field(default=None, min_length=1, pattern=r"\S", description="the content as text")  # type: ignore[assignment]
    content_base64: str = Field(default=None, min_length=4, pattern=BASE64, description="the content as base64 bytes (PDF)")  # type: ignore[assignment]
    content_type: ContentType | None = Field(
        default=None, description="the parser to use; default from the source_uri's extension, else PDF or plain text"
    )
    acl: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_content(self) -> DocumentRequest:
        if (self.text is None) == (self.content_base64 is None):
            raise ValueError("give exactly one of text or content_base64")
        return self


class MoveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    to_scope: str = Field(
        min_length=1, max_length=512, pattern=SCOPE_PATTERN, description="the scope to move the document to, e.g. acme/beta"
    )


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    q: str = Field(min_length=1, max_length=4000)
    top_k: WholeNumber = Field(default=8, ge=1, le=100, description="hits wanted; capped at the tier's maximum")
    mode: Literal["hybrid", "keyword", "semantic"] = "hybrid"
    filters: dict[str, Any] | None = Field(default=None, max_length=0, description="reserved; only {} is accepted today")


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["user", "assistant"]
    text: str = Field(max_length=20_000)


class AnswerRequest(SearchRequest):
    verify: bool | Literal["strict"] = False
    history: list[Turn] = Field(default_factory=list, max_length=50, description="earlier turns, oldest first")
    min_score: float = Field(default=0.2, ge=0.0, le=1.0)


class _ScopedRetriever:
    """What `ask()` searches through in the service: the index, within the caller's tenant, scopes and groups.
    It keeps the hits of its last search for the response and the answer log."""

    def __init__(self, service: Service, ctx: Context, scopes: list[str], request: SearchRequest) -> None:
        self.service, self.ctx, self.scopes, self.request = service, ctx, scopes, request
        self.hits: list[Any] = []
        self.last_trace: dict[str, Any] = {}

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        self.hits = self.service._hits(self.ctx, self.scopes, self.request.model_copy(update={"q": query, "top_k": k}))
        self.last_trace = dict(current().search)  # this request's search, whatever other threads are doing
        return [h.as_passage() for h in self.hits]


# --- prices ---------------------------------------------------------------------------------------


class Prices(BaseModel):
    """The price table behind `est_cost_usd`: defaults, overridden by `SOURCERER_PRICES` (a JSON object)."""

    model_config = ConfigDict(extra="forbid")

    query: float = Field(default=0.0, ge=0)
    chunk: float = Field(default=0.0, ge=0)
    llm_input_per_1k: float = Field(default=0.0005, ge=0)
    llm_output_per_1k: float = Field(default=0.0015, ge=0)

    @classmethod
    def from_env(cls) -> Prices:
        """Read once when the service starts: a malformed table is the operator's fault (a 503 that charges
        nothing), never the client's (a 400 after its quota was taken)."""
        raw = config.env("SOURCERER_PRICES")
        try:
            return cls.model_validate_json(raw) if raw else cls()
        except ValueError as exc:
            raise ConfigurationError(f"SOURCERER_PRICES is not a valid price table: {exc}") from exc

    def estimate(self, units: dict[str, float]) -> float:
        return round(
            units.get("queries", 0) * self.query
            + units.get("chunks", 0) * self.chunk
            + units.get("llm_tokens_in", 0) / 1000 * self.llm_input_per_1k
            + units.get("llm_tokens_out", 0) / 1000 * self.llm_output_per_1k,
            8,
        )


@dataclass(frozen=True)
class Charge:
    """Quota a request holds and the usage record written with it (see `Ledger.charge`)."""

    record: UsageRecord
    unit: str
    amount: int
    month: str


@dataclass
class Service:
    index: Index
    ledger: Ledger
    clock: Any = field(default=time.time)
    prices: Prices = field(default_factory=Prices.from_env)

    # --- who is calling ---------------------------------------------------------------------------

    def authenticate(self, authorization: str | None) -> Context:
        if not authorization or not authorization.startswith("Bearer ") or not authorization[7:].strip():
            raise Unauthorized("missing API key: send Authorization: Bearer <key>")
        record = self.ledger.find_key(hash_key(authorization[7:].strip()))
        if record is None:
            raise Unauthorized("unknown API key")
        if record.revoked:
            raise Unauthorized("this API key was revoked")
        tenant = self.ledger.get_tenant(record.tenant)
        if tenant is None:
            raise Unauthorized("this API key's tenant no longer exists")
        return Context(
            tenant=record.tenant,
            tier=TIERS[tenant["tier"]],
            key_id=record.key_id,
            scopes=record.scopes,
            perms=list(record.perms),
            groups=record.groups,
            settings=TenantSettings.model_validate(tenant.get("settings") or {}),
        )

    def _charge(self, ctx: Context, route: str, request_id: str | None, unit: str, amount: int) -> Charge:
        """Take quota and write the usage record in one ledger transaction (429 when the quota is used up)."""
        now = self.clock()
        record = UsageRecord(
            tenant=ctx.tenant, route=route, request_id=request_id or uuid.uuid4().hex, units={unit: amount}, timestamp=now
        )
        charge = Charge(record=record, unit=unit, amount=amount, month=month_of(now))
        if not self.ledger.charge(record, unit, amount, ctx.tier.limit(unit), charge.month):
            raise QuotaExceeded(
                f"monthly {unit} quota of the {ctx.tier.name} tier is used up", retry_after_s=seconds_to_next_month(now)
            )
        return charge

    def _release(self, charge: Charge) -> None:
        self.ledger.release(charge.record, charge.unit, charge.amount, charge.month)

    @contextlib.contextmanager
    def _released_on_failure(self, charge: Charge) -> Iterator[None]:
        """A request that fails on our side (a backend down) gives its quota back and leaves no usage record."""
        try:
            yield
        except Exception:
            self._release(charge)
            raise

    def _settle(self, charge: Charge, units: dict[str, float], answer: AnswerRecord | None = None) -> float:
        """The final units and cost of a charged request, written over its usage record (with the answer's log
        record, for an answer, in the same ledger write)."""
        cost = self.prices.estimate(units)
        self.ledger.settle(charge.record.model_copy(update={"units": units, "est_cost_usd": cost}), answer)
        return cost

    # --- documents ------------------------------------------------------------------------------

    def ingest(self, ctx: Context, scope: str | None, request: DocumentRequest, request_id: str | None = None) -> dict[str, Any]:
        ctx.require("write")
        target = ctx.narrow(scope)
        if len(target) != 1:
            raise TenancyError("this key grants several scopes: say which one with X-Sourcerer-Scope or ?scope=")
        if request.content_base64 is not None:
            try:
                content = base64.b64decode(request.content_base64, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise TenancyError("content_base64 is not valid base64") from exc
        else:
            content = (request.text or "").encode("utf-8", "replace")  # a lone surrogate from JSON becomes "?"
        if len(content) > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(f"documents are limited to {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
        acl = sorted(set(request.acl))
        if acl and not set(acl) <= set(ctx.groups) and "admin" not in ctx.perms:
            raise Forbidden("a key can only restrict documents to ACL groups it holds")
        document = Document(
            source_uri=request.source_uri,
            content=content,
            content_type=request.content_type or sniff_content_type(request.source_uri, content),
            tenant=ctx.tenant,
            scope=target[0],
            acl=acl,
            metadata=request.metadata,
        )
        charge: Charge | None = None

        def admit(chunks: int) -> None:  # new or changed content only; unsupported files fail before this
            nonlocal charge
            charge = self._charge(ctx, "POST /v1/documents", request_id, "chunks", chunks)

        try:
            with tally() as spent:
                result = self.index.ingest_document(document, admit=admit, access=ctx.access(target))
        except Exception as exc:
            if charge is not None:  # the write failed after the quota was taken: give it back
                self._release(charge)
            if isinstance(exc, DocumentNotFound):  # a document there this key could not read: say nothing of it
                raise NotFound(f"no document for {request.source_uri!r} this key may write in {target[0]}") from exc
            raise
        if charge is not None and result["status"] == "unchanged":
            self._release(charge)  # a concurrent request wrote the same content first: it is charged once, there
        elif charge is not None:
            self._settle(charge, {"chunks": result["chunks"], "embedding_tokens": spent.embedding_tokens})
        return {**result, "context": ctx.echo(target)}

    def list_documents(self, ctx: Context, scope: str | None) -> dict[str, Any]:
        ctx.require("read")
        scopes = ctx.narrow(scope)
        docs: dict[str, dict[str, Any]] = {}
        for s in scopes:
            for d in self.index.list_documents(ctx.tenant, s):
                if not d.get("acl") or set(d["acl"]) & set(ctx.groups) or "admin" in ctx.perms:
                    docs[d["document_id"]] = d
        return {"documents": sorted(docs.values(), key=lambda d: d["source_uri"]), "context": ctx.echo(scopes)}

    def delete_document(self, ctx: Context, scope: str | None, document_id: str) -> dict[str, Any]:
        """Delete a document the key could read (scope and ACL groups); anything else is a 404."""
        ctx.require("write")
        scopes = ctx.narrow(scope)
        if not self.index.delete_document(ctx.tenant, document_id, access=ctx.access(scopes)):
            raise NotFound(f"no document {document_id} in this key's scopes")
        return {"document_id": document_id, "deleted": True, "context": ctx.echo(scopes)}

    def move_document(self, ctx: Context, scope: str | None, document_id: str, request: MoveRequest) -> dict[str, Any]:
        """Move a document the key could read to another scope it is granted (both needed; else a 404)."""
        ctx.require("write")
        scopes = ctx.narrow(scope)
        target = ctx.narrow(request.to_scope)[0]
        try:
            moved = self.index.move_document(ctx.tenant, document_id, target, access=ctx.access(scopes))
        except DocumentNotFound as exc:
            raise NotFound(f"no document {document_id} in this key's scopes") from exc
        except DocumentConflict as exc:
            raise Conflict(str(exc)) from exc
        return {**moved, "context": ctx.echo(scopes)}

    # --- search and answer ------------------------------------------------------------------------

    def _hits(self, ctx: Context, scopes: list[str], request: SearchRequest) -> list[Any]:
        merged: dict[str, Any] = {}
        for s in scopes:
            for hit in self.index.search(
                request.q, tenant=ctx.tenant, scope=s, groups=ctx.groups, k=self._top_k(ctx, request), mode=request.mode
            ):
                if hit.unit_id not in merged or hit.score > merged[hit.unit_id].score:
                    merged[hit.unit_id] = hit
        return sorted(merged.values(), key=lambda h: (-h.score, h.unit_id))[: self._top_k(ctx, request)]

    @staticmethod
    def _top_k(ctx: Context, request: SearchRequest) -> int:
        """What a request gets: its top_k, capped at the tier's maximum (the trace says which applied)."""
        return min(request.top_k, ctx.tier.max_top_k)

    def search(self, ctx: Context, scope: str | None, request: SearchRequest, request_id: str | None = None) -> dict[str, Any]:
        started = time.perf_counter()
        ctx.require("read")
        scopes = ctx.narrow(scope)
        charge = self._charge(ctx, "POST /v1/search", request_id, "queries", 1)
        with self._released_on_failure(charge), tally() as spent:
            hits = self._hits(ctx, scopes, request)
        ms = round((time.perf_counter() - started) * 1000, 3)
        cost = self._settle(charge, {"queries": 1, "embedding_tokens": spent.embedding_tokens})
        trace = {
            "stages": [
                {
                    "stage": "search",
                    "ms": ms,
                    "units": {"hits": len(hits), "top_k": self._top_k(ctx, request)},
                    "detail": spent.search,
                }
            ],
            "total_ms": ms,
            "est_cost_usd": cost,
            "cache": {},
        }
        return {"hits": [h.model_dump(mode="json") for h in hits], "trace": trace, "context": ctx.echo(scopes)}

    def answer(self, ctx: Context, scope: str | None, request: AnswerRequest, request_id: str | None = None) -> dict[str, Any]:
        ctx.require("read")
        if not ctx.tier.answer_access:
            raise UpgradeRequired(f"answers need the pro tier; this tenant is on {ctx.tier.name}", required_tier="pro")
        scopes = ctx.narrow(scope)
        charge = self._charge(ctx, "POST /v1/answer", request_id, "queries", 1)
        retriever = _ScopedRetriever(self, ctx, scopes, request)
        with self._released_on_failure(charge), tally() as spent:
            # ask() searches through the retriever, so a follow-up is searched as its standalone rewrite
            answer = ask(
                request.q,
                retriever=retriever,
                k=request.top_k,
                min_score=request.min_score,
                verify=request.verify,
                history=[turn.model_dump() for turn in request.history] or None,
            )
            hits = retriever.hits
            synth = answer.trace.stage("synthesize")
            units: dict[str, float] = {"queries": 1, "embedding_tokens": spent.embedding_tokens}
            if synth is not None:
                units["llm_tokens_in"] = synth.units.get("input_tokens", 0.0)
                units["llm_tokens_out"] = synth.units.get("output_tokens", 0.0)
            # logged and billed in one ledger write: an answer that cannot be logged cannot be audited later, so
            # it is not served (and its quota is given back)
            record = self._answer_record(ctx, scopes, request.q, answer, hits)
            answer.trace.est_cost_usd = self._settle(charge, units, answer=record)
        body = {
            "text": answer.answer,
            "refused": answer.refused,
            "reason": answer.reason,
            "citations": [
                {
                    "index": c.index,
                    "unit_id": c.unit_id,
                    "source_uri": c.source_uri,
                    "label": c.label,
                    "locator": c.locator.model_dump(),
                    "quote": c.quote,
                    "quote_spans": c.quote_spans,
                    "receipt": c.receipt,
                    "answer_spans": c.answer_spans,
                }
                for c in answer.citations
            ],
            "faithfulness": answer.faithfulness.model_dump(mode="json") if answer.faithfulness else None,
            "extractive": answer.extractive,
            "provider": answer.provider,
        }
        return {
            "answer_id": record.answer_id,
            "answer": body,
            "hits": [h.model_dump(mode="json") for h in hits],
            "trace": answer.trace.model_dump(mode="json"),
            "context": ctx.echo(scopes),
        }

    # --- the answer log and audits -------------------------------------------------------------------

    def _answer_record(self, ctx: Context, scopes: list[str], question: str, answer: Answer, hits: list[Any]) -> AnswerRecord:
        now = self.clock()
        by_unit = {h.unit_id: h for h in hits}
        keep_text = ctx.settings.store_text
        faithfulness = answer.faithfulness
        if faithfulness is not None and not keep_text:  # claim texts are answer text: keep only the verdict
            faithfulness = faithfulness.model_copy(update={"unsupported": [], "claims": []})
        record = AnswerRecord(
            answer_id=new_answer_id(now),
            tenant=ctx.tenant,
            scopes=scopes,
            key_id=ctx.key_id,
            groups=ctx.groups,
            question=question if keep_text else None,
            question_sha256=sha256_of(question),
            answer=answer.answer if keep_text else None,
            answer_sha256=sha256_of(answer.answer),
            text_stored=keep_text,
            refused=answer.refused,
            reason=answer.reason,
            citations=[
                LoggedCitation(
                    index=c.index,
                    unit_id=c.unit_id,
                    document_id=by_unit[c.unit_id].document_id if c.unit_id in by_unit else None,
                    position=by_unit[c.unit_id].position if c.unit_id in by_unit else None,
                    source_uri=c.source_uri,
                    label=c.label,
                    locator=c.locator,
                    receipt=c.receipt,
                )
                for c in answer.citations
            ],
            faithfulness=faithfulness,
            provider=answer.provider,
            extractive=answer.extractive,
            created_at=now,
            expires_at=int(now + ctx.tier.answer_retention_days * 86400),
        )
        return record

    def get_answer(self, ctx: Context, scope: str | None, answer_id: str) -> dict[str, Any]:
        """A logged answer, to a key of the same tenant that may read its scopes and holds the ACL groups of the
        key that asked (the answer may quote chunks only those groups see); else 404, saying nothing more."""
        ctx.require("read")
        scopes = ctx.narrow(scope)
        record = self.ledger.get_answer(ctx.tenant, answer_id)
        if (
            record is None
            or not ctx.may_read(record.scopes, scopes)
            or not ("admin" in ctx.perms or set(record.groups) <= set(ctx.groups))
        ):
            raise NotFound(f"no answer {answer_id} in this key's scopes")
        body = record.model_dump(mode="json", exclude={"groups", "audit"})
        body["audit"] = _audit_view(record.audit)
        return {"answer": body, "context": ctx.echo(scopes)}

    def audits(
        self, ctx: Context, scope: str | None, since: float, status: str | None, limit: int = DEFAULT_AUDIT_PAGE
    ) -> dict[str, Any]:
        """Findings checked at or after `since`, oldest first, at most `limit`; `next_since` continues the list."""
        ctx.require("admin")
        if status is not None and status not in FINDING_STATUSES:
            raise TenancyError(f"status must be one of {', '.join(FINDING_STATUSES)}")
        if not 1 <= limit <= MAX_AUDIT_PAGE:
            raise TenancyError(f"limit must be between 1 and {MAX_AUDIT_PAGE}")
        scopes = ctx.narrow(scope)
        visible = (f for f in self.ledger.findings(ctx.tenant, since=since, status=status) if ctx.may_read(f.scopes, scopes))
        page = list(itertools.islice(visible, limit + 1))
        more = page[limit] if len(page) > limit else None
        return {
            "findings": [_audit_view(f) for f in page[:limit]],
            "next_since": more.checked_at if more is not None else None,
            "context": ctx.echo(scopes),
        }

    def usage(self, ctx: Context) -> dict[str, Any]:
        ctx.require("read")
        month = month_of(self.clock())
        used = self.ledger.usage(ctx.tenant, month)
        return {
            "month": month,
            "tier": ctx.tier.name,
            "units": {u: {"used": used.get(u, 0), "quota": ctx.tier.limit(u)} for u in ("queries", "chunks")},
        }


def _audit_view(finding: Finding | None) -> dict[str, Any]:
    """A finding as the API shows it; an answer never audited shows `not_audited`."""
    if finding is None:
        return {"status": "not_audited"}
    return finding.model_dump(mode="json", exclude={"fingerprint", "expires_at"})
