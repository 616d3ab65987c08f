"""The service's use cases, shared by the Lambda handlers, `sourcerer serve` and the CLI: authenticate,
authorise, meter, act, answer with response models. Nothing here knows about HTTP or Lambda events: failures
are the typed exceptions of `sourcerer.errors`, which each transport maps in one place. Why it is long:
every use case is a method of the one `Service`, so each is found, metered and authorised the same way.

Every metered use case runs inside `Meter.metered`, so a request that fails for any reason the client did not
cause gives its quota back and leaves no usage record.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import logging
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sourcerer.accounting import tally
from sourcerer.errors import (
    DocumentNotFound,
    EmbeddingBacklog,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    UpgradeRequired,
)
from sourcerer.handoff import handoff
from sourcerer.ledger.base import FINDING_STATUSES, AnswerRecord, HandoffRecord, Ledger
from sourcerer.models import Answer, Trace, TraceEntry
from sourcerer.retrieval.rerank import Reranker, make_reranker
from sourcerer.scopes import Access
from sourcerer.service.audit import Auditor, AuditReport
from sourcerer.service.billing import AnswerPlan, Charge, Meter, Prices, plan_answer, rerank_skipped
from sourcerer.service.cache import AnswerCache, Lookup, degraded
from sourcerer.service.events import AnswerEvents, Send
from sourcerer.service.handoffs import deliver
from sourcerer.service.schemas import (
    AnswerLookup,
    AnswerRequest,
    AnswerResponse,
    AuditPage,
    CallerContext,
    DeleteResponse,
    DocumentInfo,
    DocumentList,
    DocumentRequest,
    HandoffLookup,
    HandoffPage,
    IngestResponse,
    MoveRequest,
    MoveResponse,
    Query,
    SearchRequest,
    SearchResponse,
    SearchStage,
    SearchTrace,
    UnitUsage,
    UsageResponse,
)
from sourcerer.service.tenancy import Context, hash_key, month_of
from sourcerer.service.views import answer_body, answer_record, finding_view, handoff_view, hit_views, logged_answer
from sourcerer.settings import Settings, get_settings
from sourcerer.store.base import DocumentListing, EmbeddedIndex, Index, IngestResult
from sourcerer.store.models import Document, Hit
from sourcerer.store.parsers import content_type_for, sniff_content_type
from sourcerer.store.retriever import IndexRetriever

T = TypeVar("T")
log = logging.getLogger("sourcerer.service")
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Original:
    """A document's original bytes, with what a response needs to label them."""

    content: bytes
    content_type: str
    source_uri: str


DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE = 100, 1000  # findings per GET /v1/audits (a response must stay far under 6 MB)


def _page(items: Iterator[T], limit: int) -> tuple[list[T], T | None]:
    """The first `limit` items (between 1 and MAX_AUDIT_PAGE) and the one after them, whose time continues the list."""
    if not 1 <= limit <= MAX_AUDIT_PAGE:
        raise InvalidRequest(f"limit must be between 1 and {MAX_AUDIT_PAGE}")
    page = list(itertools.islice(items, limit + 1))
    return page[:limit], page[limit] if len(page) > limit else None


def _echo(ctx: Context, scopes: list[str]) -> CallerContext:
    return CallerContext.model_validate(ctx.echo(scopes))


@dataclass
class Service:
    index: Index
    ledger: Ledger
    clock: Callable[[], float] = field(default=time.time)
    prices: Prices = field(default_factory=Prices.from_settings)
    reranker: Reranker | None | Literal["configured"] = "configured"  # the one SOURCERER_RERANKER names
    settings: Settings = field(default_factory=get_settings)  # the composition root's (`service/wiring.py`)

    def __post_init__(self) -> None:
        if self.reranker == "configured":
            self.reranker = make_reranker(embedder=self.index.embedder)
        self.meter = Meter(self.ledger, self.prices, self.clock)

    @property
    def cache(self) -> AnswerCache:
        return AnswerCache(self.ledger, self.index, self.settings)  # it keeps nothing of its own: the ledger does

    @property
    def active_reranker(self) -> Reranker | None:
        return None if isinstance(self.reranker, str) else self.reranker

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
        return Context.of(record, tenant)

    # --- documents ------------------------------------------------------------------------------

    def ingest(self, ctx: Context, scope: str | None, request: DocumentRequest, request_id: str | None = None) -> IngestResponse:
        ctx.require("write")
        target = ctx.narrow(scope)
        if len(target) != 1:
            raise InvalidRequest("this key grants several scopes: say which one with X-Sourcerer-Scope or ?scope=")
        document = self._document(ctx, target[0], request)
        self._admit_writes()
        try:
            result = self.ingest_document(ctx, document, ctx.access(target), "POST /v1/documents", request_id)
        except DocumentNotFound as exc:  # a document there this key could not read: say nothing of it
            raise NotFound(f"no document for {request.source_uri!r} this key may write in {target[0]}") from exc
        return IngestResponse(**result, context=_echo(ctx, target))

    def ingest_document(self, ctx: Context, document: Document, access: Access, route: str, request_id: str | None) -> IngestResult:
        """The one metered ingest, whatever brought the document (the API, an S3 upload): new or changed content
        takes its chunks from the quota before anything is written and is settled with the embedding spend; the
        same content again is `unchanged` and charges nothing; a failed write gives the quota back."""
        charge: Charge | None = None

        def admit(chunks: int) -> None:  # new or changed content only; unsupported files fail before this
            nonlocal charge
            work = {"document_id": document.document_id or "", "content_hash": document.content_hash()}
            charge = self.meter.charge(ctx, route, request_id, "chunks", chunks, work)

        try:
            with tally() as spent:
                result = self.index.ingest_document(document, admit=admit, access=access)
            if charge is not None and result["status"] == "unchanged":
                self.meter.release(charge)  # a concurrent request wrote the same content first: charged once, there
            elif charge is not None:
                self.meter.settle(charge, {"chunks": result["chunks"], "embedding_tokens": spent.embedding_tokens})
        except Exception:
            if charge is not None:  # the write failed after the quota was taken: give it back
                self.meter.release(charge)
            raise
        return result

    def embedding_backlog(self, tenant: str | None = None) -> int | None:
        """Chunks waiting for their vectors (of `tenant`, or all), where this index embeds them later; else None."""
        if isinstance(self.index, EmbeddedIndex) and self.index.defer_embedding:
            return self.index.pending_embeddings(tenant)
        return None

    def _admit_writes(self) -> None:
        """Backpressure: past the backlog bound, an ingest is refused (429 with Retry-After at the measured pace)
        before anything is parsed, written or charged; searches keep their speed meanwhile."""
        backlog, bound = self.embedding_backlog(), self.settings.embed_backlog
        if backlog is None or backlog <= bound:
            return
        rate = self.index.embed_rate() if isinstance(self.index, EmbeddedIndex) else None
        wait = math.ceil((backlog - bound) / rate) if rate else 60
        raise EmbeddingBacklog(
            f"{backlog} chunks are waiting for their vectors (the bound is {bound}); retry in about {wait} s",
            retry_after_s=max(1, min(wait, 3600)),
        )

    @staticmethod
    def _document(ctx: Context, scope: str, request: DocumentRequest) -> Document:
        if request.content_base64 is not None:
            try:
                content = base64.b64decode(request.content_base64, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise InvalidRequest("content_base64 is not valid base64") from exc
        else:
            content = (request.text or "").encode("utf-8", "replace")  # a lone surrogate from JSON becomes "?"
        if len(content) > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(f"documents are limited to {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
        acl = sorted(set(request.acl))
        if acl and not set(acl) <= set(ctx.groups) and "admin" not in ctx.perms:
            raise Forbidden("a key can only restrict documents to ACL groups it holds")
        return Document(
            source_uri=request.source_uri,
            content=content,
            content_type=request.content_type or sniff_content_type(request.source_uri, content),
            tenant=ctx.tenant,
            scope=scope,
            acl=acl,
            metadata=request.metadata,
        )

    def list_documents(self, ctx: Context, scope: str | None) -> DocumentList:
        ctx.require("read")
        scopes = ctx.narrow(scope)
        docs: dict[str, DocumentListing] = {}
        for s in scopes:
            for d in self.index.list_documents(ctx.tenant, s):
                if ctx.may_see(d["acl"]):
                    docs[d["document_id"]] = d
        listed = sorted(docs.values(), key=lambda d: d["source_uri"])
        return DocumentList(
            documents=[DocumentInfo.model_validate(d) for d in listed],
            embedding_backlog=self.embedding_backlog(ctx.tenant),
            context=_echo(ctx, scopes),
        )

    def delete_document(self, ctx: Context, scope: str | None, document_id: str) -> DeleteResponse:
        """Delete a document the key could read (scope and ACL groups); anything else is a 404."""
        ctx.require("write")
        scopes = ctx.narrow(scope)
        if not self.index.delete_document(ctx.tenant, document_id, access=ctx.access(scopes)):
            raise NotFound(f"no document {document_id} in this key's scopes")
        return DeleteResponse(document_id=document_id, deleted=True, context=_echo(ctx, scopes))

    def original(self, ctx: Context, scope: str | None, document_id: str) -> Original:
        """The bytes a document the key can read (scope and ACL groups) was ingested from; anything else is a 404."""
        ctx.require("read")
        scopes = ctx.narrow(scope)
        stored = self.index.stored_document(ctx.tenant, document_id)
        if stored is None or not ctx.access(scopes).may_touch(stored.scope, stored.acl):
            raise NotFound(f"no document {document_id} in this key's scopes")
        if self.index.originals is None:
            raise NotFound("this deployment keeps no originals (set SOURCERER_ORIGINALS to keep them)")
        content = self.index.originals.get(ctx.tenant, stored.content_hash)
        if content is None:
            raise NotFound(f"the original of {document_id} is not kept (ingested before originals were kept: ingest it again)")
        uri = stored.source_uri or ""
        content_type = stored.content_type or content_type_for(uri, sniff_content_type(uri, content))
        return Original(content=content, content_type=content_type, source_uri=stored.source_uri or document_id)

    def move_document(self, ctx: Context, scope: str | None, document_id: str, request: MoveRequest) -> MoveResponse:
        """Move a document the key could read to another scope it is granted (both needed; else a 404)."""
        ctx.require("write")
        scopes = ctx.narrow(scope)
        target = ctx.narrow(request.to_scope)[0]
        try:
            moved = self.index.move_document(ctx.tenant, document_id, target, access=ctx.access(scopes))
        except DocumentNotFound as exc:
            raise NotFound(f"no document {document_id} in this key's scopes") from exc
        return MoveResponse(**moved, context=_echo(ctx, scopes))

    # --- search and answer ------------------------------------------------------------------------

    def _retriever(self, ctx: Context, scopes: list[str], request: Query) -> IndexRetriever:
        """What a search or an answer retrieves through: the caller's tenant, scopes and groups, the request's
        mode and filter, its top_k within the tier's, reranked when asked and possible (else the trace says why)."""
        reranker = self.active_reranker
        skip = rerank_skipped(request, reranker)
        return IndexRetriever(
            self.index,
            tenant=ctx.tenant,
            scopes=scopes,
            groups=ctx.reads_with(),
            k=self._top_k(ctx, request),
            mode=request.mode,
            only=request.search_filter(),
            reranker=reranker if request.rerank and skip is None else None,
            rerank_skipped=skip,
        )

    @staticmethod
    def _top_k(ctx: Context, request: Query) -> int:
        """What a request gets: its top_k, capped at the tier's maximum (the trace says which applied)."""
        return min(request.top_k, ctx.tier.max_top_k)

    def search(self, ctx: Context, scope: str | None, request: SearchRequest, request_id: str | None = None) -> SearchResponse:
        started = time.perf_counter()
        ctx.require("read")
        scopes = ctx.narrow(scope)
        with self.meter.metered(ctx, "POST /v1/search", request_id, "queries", 1) as charge, tally() as spent:
            hits, trace = self._retriever(ctx, scopes, request).search(request.q)
            ms = round((time.perf_counter() - started) * 1000, 3)
            cost = self.meter.settle(charge, {"queries": 1, "embedding_tokens": spent.embedding_tokens})
        breakdown = [
            SearchStage(stage=name, ms=ms, detail={"within": "search"}) for name, ms in (trace.get("stages") or {}).items()
        ]
        stage = SearchStage(stage="search", ms=ms, units={"hits": len(hits), "top_k": self._top_k(ctx, request)}, detail=trace)
        return SearchResponse(
            hits=hit_views(hits),
            trace=SearchTrace(stages=[stage, *breakdown], total_ms=ms, est_cost_usd=cost),
            context=_echo(ctx, scopes),
        )

    def answer(
        self,
        ctx: Context,
        scope: str | None,
        request: AnswerRequest,
        request_id: str | None = None,
        on_event: Send | None = None,
    ) -> AnswerResponse:
        """A cited answer or a refusal, logged and billed; with `on_event`, streamed as it is made
        (`sourcerer.service.events`), its last event the response itself."""
        ctx.require("read")
        if not ctx.tier.answer_access:
            raise UpgradeRequired(f"answers need the pro tier; this tenant is on {ctx.tier.name}", required_tier="pro")
        if on_event is not None and request.response_schema is not None:
            raise InvalidRequest("a structured answer (response_schema) is not streamed: ask without Accept: text/event-stream")
        if request.handoff and not ctx.settings.store_text:
            raise InvalidRequest("this tenant keeps no text (store_text: false), and a hand-off is text for a person: ask without handoff")
        scopes = ctx.narrow(scope)
        retriever = self._retriever(ctx, scopes, request)
        events = AnswerEvents(on_event, lambda: retriever.hits) if on_event is not None else None
        plan = plan_answer(request, self.prices, reranker=self.active_reranker)
        with self.meter.metered(ctx, "POST /v1/answer", request_id, "queries", 1) as charge, tally() as spent:
            started = time.perf_counter()
            cached, context, lookup = self._cached(ctx, scopes, request, plan)
            if cached is not None:
                assert lookup is not None  # a cached answer was found by a lookup
                answer, hits = cached
                answer.trace.stages.append(
                    TraceEntry(stage="cache", ms=round((time.perf_counter() - started) * 1000, 3), detail={"match": lookup.match})
                )
                answer.trace.total_ms = answer.trace.stages[-1].ms
                if events is not None:
                    events.replay(answer, hits)
            else:
                from sourcerer.pipeline import ask  # here, not at import: the ingest and search functions never load it

                # ask() searches through the retriever, so a follow-up is searched as its standalone rewrite
                answer = ask(
                    request.q,
                    retriever=retriever,
                    k=retriever.k,
                    min_score=request.min_score,
                    verify=plan.verify,
                    history=[turn.model_dump() for turn in request.history] or None,
                    chat=plan.chat,
                    judge=plan.judge,
                    min_groundedness=request.min_groundedness,
                    on_event=events.library if events is not None else None,
                    schema=request.response_schema.model_dump(exclude_none=True) if request.response_schema else None,
                )
                hits = retriever.hits
                answer.trace.cache = "miss" if context is not None else "off"
            answer.trace.skipped = plan.skipped
            answer.trace.notes.extend(plan.notes)
            synth = answer.trace.stage("synthesize") if cached is None else None
            units: dict[str, float] = {"queries": 1, "embedding_tokens": spent.embedding_tokens}
            if synth is not None:
                units["llm_tokens_in"] = synth.units.get("input_tokens", 0.0)
                units["llm_tokens_out"] = synth.units.get("output_tokens", 0.0)
            # logged and billed in one ledger write: an answer that cannot be logged cannot be audited later, so
            # it is not served (and its quota is given back); a cached answer is logged like any other
            record = answer_record(ctx, scopes, request.q, answer, hits, self.clock())
            answer.trace.est_cost_usd = self.meter.settle(charge, units, answer=record)
            if cached is None and context is not None and lookup is not None and not degraded(answer):
                self.cache.store(
                    ctx,
                    context,
                    request.q,
                    lookup,
                    # the trace is this request's, but its notes say why the answer is what it is (a refusal's reason)
                    answer.model_dump(mode="json", exclude={"trace"}) | {"trace": {"notes": answer.trace.notes}},
                    [h.model_dump(mode="json") for h in hits],
                    self.clock(),
                )
        handed = self._hand_off(ctx, scopes, request, answer, hits, record) if request.handoff else None
        response = AnswerResponse(
            answer_id=record.answer_id,
            answer=answer_body(answer),
            hits=hit_views(hits),
            trace=answer.trace,
            context=_echo(ctx, scopes),
            handoff=handed.bundle if handed is not None else None,
        )
        if events is not None:
            events.done(response)
        return response

    def _hand_off(
        self, ctx: Context, scopes: list[str], request: AnswerRequest, answer: Answer, hits: list[Hit], record: AnswerRecord
    ) -> HandoffRecord | None:
        """Store the hand-off of a refusal or a partial answer (with the answer's id, visible as the answer is),
        then post it where people will see it; a failed post is a note in the trace, never a failed answer."""
        bundle = handoff(answer, request.q, [t.model_dump() for t in request.history], [h.as_passage() for h in hits])
        if bundle is None:
            return None
        handed = HandoffRecord(
            answer_id=record.answer_id,
            tenant=ctx.tenant,
            scopes=scopes,
            key_id=ctx.key_id,
            groups=ctx.groups,
            bundle=bundle,
            created_at=record.created_at,
            expires_at=record.expires_at,
        )
        try:  # the answer is logged and billed already: a hand-off that cannot be kept never fails it
            self.ledger.put_handoff(handed)
        except Exception as exc:  # noqa: BLE001 - said in the trace; the operator's log has the rest
            log.exception("hand-off of %s not stored", record.answer_id)
            answer.trace.notes.append(f"hand-off not stored: {type(exc).__name__}")
            return None
        handed.delivered, failed = deliver(handed, self.settings)
        if handed.delivered:
            self.ledger.put_handoff(handed)
        answer.trace.notes.extend(f"hand-off not delivered to the {f}" for f in failed)
        return handed

    def get_handoff(self, ctx: Context, scope: str | None, answer_id: str) -> HandoffLookup:
        """A hand-off, to whoever may read its answer (`get_answer`'s rule); else 404."""
        record, scopes = self._logged(ctx, scope, self.ledger.get_handoff, f"no hand-off {answer_id}", answer_id)
        return HandoffLookup(handoff=handoff_view(record), context=_echo(ctx, scopes))

    def handoffs(self, ctx: Context, scope: str | None, since: float, limit: int = DEFAULT_AUDIT_PAGE) -> HandoffPage:
        """Hand-offs created at or after `since` in the key's scopes, oldest first, at most `limit` (admin)."""
        ctx.require("admin")
        scopes = ctx.narrow(scope)
        visible = (h for h in self.ledger.handoffs(ctx.tenant, since=since) if ctx.may_read(h.scopes, scopes))
        page, more = _page(visible, limit)
        return HandoffPage(
            handoffs=[handoff_view(h) for h in page],
            next_since=more.created_at if more is not None else None,
            context=_echo(ctx, scopes),
        )

    @staticmethod
    def _logged(ctx: Context, scope: str | None, fetch: Callable[[str, str], Any], missing: str, answer_id: str) -> tuple[Any, list[str]]:
        """A logged answer or its hand-off (`fetch` reads it), to whoever may read it: a key of the same tenant that
        may read its scopes and holds the ACL groups of the key that asked (the answer may quote chunks only those
        groups see), or an admin; anyone else gets a 404 that says nothing more. Returns (record, scopes)."""
        ctx.require("read")
        scopes = ctx.narrow(scope)
        record = fetch(ctx.tenant, answer_id)
        visible = record is not None and ctx.may_read(record.scopes, scopes)
        if not visible or not ("admin" in ctx.perms or set(record.groups) <= set(ctx.groups)):
            raise NotFound(f"{missing} in this key's scopes")
        return record, scopes

    def _cached(
        self, ctx: Context, scopes: list[str], request: AnswerRequest, plan: AnswerPlan
    ) -> tuple[tuple[Answer, list[Hit]] | None, str | None, Lookup | None]:
        """(the cached answer and its hits, or None; the cache context, or None when the cache is off for this
        request; the lookup, whose question vector a miss stores)."""
        if not self.settings.answer_cache or request.history or request.response_schema or not ctx.settings.store_text:  # noqa: E501
            return None, None, None  # follow-ups depend on their turns; hash-only tenants keep no answer text anywhere
        context = self.cache.context(ctx, scopes, request, plan, self._top_k(ctx, request))
        lookup = self.cache.lookup(ctx, context, request.q, self.clock())
        if lookup.entry is None:
            return None, context, lookup
        answer = Answer.model_validate(lookup.entry.answer)
        answer.trace = Trace(cache="hit", notes=[n for n in answer.trace.notes if n not in plan.notes])  # the plan's come back
        return (answer, [Hit.model_validate(h) for h in lookup.entry.hits]), context, lookup

    # --- the answer log and audits -------------------------------------------------------------------

    def get_answer(self, ctx: Context, scope: str | None, answer_id: str) -> AnswerLookup:
        """A logged answer, to a key of the same tenant that may read its scopes and holds the ACL groups of the
        key that asked (the answer may quote chunks only those groups see); else 404, saying nothing more."""
        record, scopes = self._logged(ctx, scope, self.ledger.get_answer, f"no answer {answer_id}", answer_id)
        return AnswerLookup(answer=logged_answer(record), context=_echo(ctx, scopes))

    def run_audit(
        self,
        since: float,
        tenants: list[str] | None = None,
        rejudge: bool = False,
        should_stop: Callable[[], bool] | None = None,
    ) -> AuditReport:
        """The verification audit (the schedule's, or `sourcerer audit`): every answer logged since `since`, of
        `tenants` (default: all), re-checked against the index as it is now; one finding per answer in the ledger."""
        return Auditor(self.index, self.ledger, clock=self.clock, rejudge=rejudge).run(since, tenants=tenants, should_stop=should_stop)

    def recover_charges(self) -> dict[str, int]:
        """Settle or give back the charges of requests whose process died mid-request (see `Meter.reconcile`)."""
        return self.meter.reconcile(self.index)

    def audits(
        self, ctx: Context, scope: str | None, since: float, status: str | None, limit: int = DEFAULT_AUDIT_PAGE
    ) -> AuditPage:
        """Findings checked at or after `since`, oldest first, at most `limit`; `next_since` continues the list."""
        ctx.require("admin")
        if status is not None and status not in FINDING_STATUSES:
            raise InvalidRequest(f"status must be one of {', '.join(FINDING_STATUSES)}")
        scopes = ctx.narrow(scope)
        visible = (f for f in self.ledger.findings(ctx.tenant, since=since, status=status) if ctx.may_read(f.scopes, scopes))
        page, more = _page(visible, limit)
        return AuditPage(
            findings=[finding_view(f) for f in page],
            next_since=more.checked_at if more is not None else None,
            context=_echo(ctx, scopes),
        )

    def usage(self, ctx: Context) -> UsageResponse:
        ctx.require("read")
        month = month_of(self.clock())
        used = self.ledger.usage(ctx.tenant, month)
        return UsageResponse(
            month=month,
            tier=ctx.tier.name,
            units={u: UnitUsage(used=used.get(u, 0), quota=ctx.tier.limit(u)) for u in ("queries", "chunks")},
        )
