"""The Index port and what every adapter shares: preparing documents, the one ingest algorithm, search
planning and results, retriever wrapping. Walking folders is `store.folders`, keeping originals
`store.originals`. Why it is long: the port and the algorithm every adapter runs belong together."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, ParamSpec, Protocol, TypedDict, runtime_checkable

import numpy as np

from sourcerer.accounting import tally
from sourcerer.errors import DocumentConflict, DocumentNotFound, InvalidRequest, RetryLater, UnsupportedDocument
from sourcerer.retrieval.base import TracedRetriever
from sourcerer.retrieval.embedders import PACKED
from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR
from sourcerer.scopes import Access, Groups
from sourcerer.store.chunking import ChunkSettings, chunk_pieces
from sourcerer.store.models import Chunk, Document, Hit, IngestReport, SearchFilter, check_source_uri
from sourcerer.store.originals import KeepsOriginals, Originals, keep_original, release_original
from sourcerer.store.parsers import content_type_for, parse
from sourcerer.text import terms

Mode = Literal["hybrid", "keyword", "semantic"]
# Called with the chunk count of a new or changed document after parsing and before anything is written; it
# may raise to stop the write (a quota check). Unchanged documents never reach it.
Admit = Callable[[int], None]
MODES = ("hybrid", "keyword", "semantic")
MAX_QUERY_CHARS = 4000  # longer queries are cut: no retriever gains from more, and FTS/kNN costs grow


@runtime_checkable
class Index(Protocol):
    """A searchable store of chunks, isolated by tenant, filtered by scope path and ACL groups.

    Semantics every adapter guarantees (the contract suite in tests/contract checks them):

    * Identity is (tenant, scope, source_uri): the same source in another scope is another document.
    * Writes given an `access` follow the write rule (see `Access`): replacing, moving or deleting a document
      the caller could not read, or writing outside its scopes, raises `DocumentNotFound` (a delete returns
      False) and changes nothing; the check is atomic with the write. `access=None` is the trusted operator.
    * `ingest_document` is idempotent: the same content again is `unchanged`; changed content replaces all
      of the document's old chunks (`replaced`) and search never sees a mix of old and new. `admit`, when
      given, sees the chunk count of new content before the write and may refuse it by raising.
    * `search(..., scope="acme/alpha")` sees chunks whose scope is `acme/alpha` or below it, never
      `acme/alphabet`, and never another tenant's. A chunk with ACL groups is visible only to callers
      holding one of them (`groups`); a chunk without ACL is visible to all callers of its scope.
    * scores are in [0, 1]; keyword scores mean the same as the in-memory BM25 retriever's.
    * With `originals`, ingest keeps each document's bytes (by tenant and content hash) before its write, and
      they go once no document of the tenant holds that content (after a delete or a replacement).
    """

    originals: Originals | None
    embedder: Any  # the index's embedding model (None: keyword only); the local reranker reuses its question vectors
    chunk_settings: ChunkSettings | None  # how its documents are chunked (None: the defaults)

    def ingest_document(
        self,
        doc: Document | Mapping[str, Any],
        *,
        admit: Admit | None = None,
        access: Access | None = None,
        prepared: Prepared | None = None,
    ) -> IngestResult:
        """`prepared`: `prepare(doc)` computed beforehand (in another process, by `ingest_folder`)."""
        ...

    def ingest_documents(
        self,
        docs: Sequence[Document | Mapping[str, Any]],
        *,
        admit: Admit | None = None,
        access: Access | None = None,
        prepared: Sequence[Prepared | None] | None = None,
    ) -> list[IngestResult | DocumentProblem]:
        """`ingest_document` for each of many documents, as fast as the store allows (parsed in worker processes,
        the model run once per group, a commit per group), with the same guarantees for each. Per document, in
        order: its result, or its own problem (`DocumentProblem`: unsupported content, the write rule, a quota),
        which leaves the others written; a failing store or model raises."""
        ...

    def ingest_path(
        self,
        path: str | Path,
        *,
        tenant: str = "local",
        scope: str | None = None,
        acl: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        progress: Callable[[str, int], None] | None = None,
        placed: Mapping[str, str] | None = None,
        refused: Mapping[str, str] | None = None,
    ) -> IngestReport:
        """`placed`: source_uri -> the scope a file keeps (where it is stored already); `refused`: source_uri ->
        why the file is skipped (the CLI's rule: moving a document needs --move)."""
        ...

    def delete_document(self, tenant: str, document_id: str, *, access: Access | None = None) -> bool: ...

    def move_document(self, tenant: str, document_id: str, scope: str, *, access: Access | None = None) -> MoveResult:
        """Move a document to `scope` (its id changes with its scope; chunks and vectors are kept, not re-embedded).
        Needs the right to touch the document where it is and to write at the target; raises `DocumentConflict`
        when the target already holds a visible document from the same source."""
        ...

    def list_documents(self, tenant: str, scope: str | None = None) -> list[DocumentListing]: ...

    def tenants(self) -> list[str]: ...  # every tenant that holds at least one document, sorted

    def stored_document(self, tenant: str, document_id: str) -> Stored | None: ...

    def get_chunks(self, tenant: str, ids: Iterable[str]) -> list[Hit]: ...

    def document_chunks(self, tenant: str, document_id: str) -> list[Hit]:
        """The document's current chunks in order of position; [] when the document is gone."""
        ...

    def search(
        self,
        query: str,
        *,
        tenant: str,
        scope: str | None = None,
        groups: Groups = None,
        k: int = 10,
        mode: Mode = "hybrid",
        only: SearchFilter | None = None,
        semantic_floor: float = SEMANTIC_FLOOR,
    ) -> SearchResult:
        """The best `k` hits the caller may see and `only` allows, with the search's trace and embedding tokens. A
        hybrid search returns a chunk sharing no word with the query only at a calibrated similarity of at least
        `semantic_floor` (0: the best semantic matches whatever their similarity)."""
        ...

    def retriever(
        self,
        *,
        tenant: str,
        scope: str | None = None,
        groups: Groups = None,
        k: int = 8,
        mode: Mode = "hybrid",
        only: SearchFilter | None = None,
        rerank: bool = False,
    ) -> TracedRetriever:
        """`store.retriever.IndexRetriever`: what the library, the CLI and the service all retrieve through."""
        ...

    def stats(self) -> dict[str, Any]: ...

    def version(self, tenant: str) -> str:
        """Changes whenever anything the tenant's searches could see changes: a document written, replaced, moved
        or deleted, or vectors filled in. Equal versions mean equal search results (what an answer cache keys on)."""
        ...


@runtime_checkable
class EmbeddedIndex(Protocol):
    """What an index inside this process adds (the SQLite index): chunks written before their vectors, filled in
    later by `embed_pending` (the CLI's second progress bar, the server's background thread), and a search graph
    worth building in a long-running process."""

    embedder: Any
    defer_embedding: bool

    def pending_embeddings(self, tenant: str | None = None) -> int: ...

    def embed_rate(self) -> float | None: ...  # chunks/s deferred embedding last managed (None before it ran)

    def embed_pending(self, batch: int = 32, limit: int | None = None, progress: Callable[[int], None] | None = None) -> int: ...

    def serve_long_running(self) -> None:
        """This process will serve many queries: building an approximate-search graph for large indexes pays."""
        ...


@runtime_checkable
class QueuedEmbedding(Protocol):
    """What an index whose vectors are computed by a queue's consumer adds (OpenSearch on AWS: ingest hands the
    unit ids of chunks written without vectors to SQS, and the embed function fills them in)."""

    def embed_units(self, tenant: str, unit_ids: list[str]) -> int:
        """Compute and store the vectors of these chunks that still lack them; returns how many were filled."""
        ...


@dataclass
class SearchResult(Sequence[Hit]):
    """What one search found, and what it did and spent: its own, never read back from a shared object. It is a
    sequence of its hits, best first."""

    hits: list[Hit]
    trace: dict[str, Any] = field(default_factory=dict)
    embedding_tokens: int = 0

    def __getitem__(self, i: Any) -> Any:
        return self.hits[i]

    def __len__(self) -> int:
        return len(self.hits)


class SearchTrace(dict[str, Any]):
    """What one search did, noted by the adapter as it runs (the plan, the filter, pending vectors, the time of
    each step): made by `plan_search` for that search alone and handed along to the helpers that add to it."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a step (`embed`, `keyword`, `vector`, `fuse`): its milliseconds go under `stages`, summed when a
        step runs twice."""
        started = time.perf_counter()
        try:
            yield
        finally:
            stages = self.setdefault("stages", {})
            stages[name] = round(stages.get(name, 0.0) + (time.perf_counter() - started) * 1000, 3)


P = ParamSpec("P")


def search_result(search: Callable[P, tuple[list[Hit], SearchTrace]]) -> Callable[P, SearchResult]:
    """Make an adapter's search, which returns its hits and its trace, return a `SearchResult` with the embedding
    tokens it spent (counted in a tally of its own: see `sourcerer.accounting`)."""

    @functools.wraps(search)
    def run(*args: P.args, **kwargs: P.kwargs) -> SearchResult:
        with tally() as spent:
            hits, trace = search(*args, **kwargs)
        return SearchResult(hits=hits, trace=dict(trace), embedding_tokens=spent.embedding_tokens)

    return run


@dataclass
class Prepared:
    chunks: list[Chunk]
    content_hash: str
    label: str
    title: str = ""  # a real title (metadata or the document's own), never just the file name
    terms: list[list[str]] = field(default_factory=list)  # per chunk, its BM25 terms (`index_terms`)
    content_type: str = "text/plain"  # as parsed: declared, else from the extension (what `modalities` filter)


def tie_order(unit_id: str, score: float | None) -> tuple[float, str]:
    """The sort key of a ranking: best score first (at a hit's 6 decimals), ties broken by unit id. The same in
    every index, so the same query ranks the same chunks alike on SQLite and on OpenSearch."""
    return (-round(min(1.0, max(0.0, score or 0.0)), 6), unit_id)


def index_terms(chunk: Chunk, title: str) -> list[str]:
    """The BM25 terms of a chunk: its own text, plus the document title when the chunk does not contain it
    (a later chunk of a long document is still about what its title says)."""
    own = terms(chunk.text)
    if title and title not in chunk.text:
        own += terms(title)
    return own


def embedding_text(chunk: Chunk, title: str) -> str:
    """What is embedded for a chunk: its text, headed by the document title when the chunk lacks it, so a
    later chunk of a long document still carries what the document is about."""
    return f"{title}\n{chunk.text}" if title and title not in chunk.text else chunk.text


def synthesis_texts(text: str, spans: Iterable[tuple[int, int]]) -> list[str]:
    """What the synthesiser and the local judge embed of a chunk: its text, then each sentence (its `[start,
    end)` in the text, in order)."""
    return [text] + [text[start:end] for start, end in spans]


def synthesis_vectors(embedder: Any, chunks: list[Chunk], own: Any) -> list[bytes | None]:
    """Per chunk, the packed vectors of `synthesis_texts`, computed at ingest in one batch so that answering
    never runs the model on a passage (see `sourcerer.retrieval.embedders.KnownVectors`). The chunk's own vector
    is the one retrieval stored (`own`, its `embedding_text`: the text, headed by the title where it lacks it):
    embedding the text a second time without the title cost a third of ingest's model time for the same
    meaning (`bench/results/ingest.md`). Only the sentences are embedded here."""
    if embedder is None or not chunks:
        return [None] * len(chunks)
    per_chunk = [synthesis_texts(c.text, c.spans)[1:] for c in chunks]
    row = {t: i for i, t in enumerate(dict.fromkeys(t for texts in per_chunk for t in texts))}
    chunk_rows = np.asarray(own, dtype=PACKED)
    packed = np.asarray(embedder.embed(list(row), "passage"), dtype=PACKED) if row else chunk_rows[:0]  # converted once
    return [
        np.vstack([chunk_rows[i : i + 1], packed[[row[t] for t in texts]]]).tobytes() for i, texts in enumerate(per_chunk)
    ]


def deferred_vectors(embedder: Any, stored: list[tuple[str, list[Any], str]]) -> tuple[np.ndarray, list[bytes | None]]:
    """For chunks written without vectors, given as (text, sentence segments as stored, document title): the
    vectors ingest would have computed (`embedding_text`) and their packed `synthesis_vectors`."""
    chunks = [
        SimpleNamespace(text=text, spans=[(int(seg["start"]), int(seg["end"])) for seg in segments]) for text, segments, _ in stored
    ]
    vectors = embedder.embed([embedding_text(c, title) for c, (_, _, title) in zip(chunks, stored, strict=True)], "passage")  # type: ignore[arg-type]
    return vectors, synthesis_vectors(embedder, chunks, vectors)  # type: ignore[arg-type]


def as_document(doc: Document | Mapping[str, Any]) -> Document:
    if isinstance(doc, Document):
        return doc
    data = dict(doc)
    if isinstance(data.get("content"), str):
        data["content"] = data["content"].encode("utf-8")
    return Document.model_validate(data)


def prepare(doc: Document, settings: ChunkSettings | None = None) -> Prepared:
    """Parse and chunk a document (raises `UnsupportedDocument` with the reason)."""
    assert doc.document_id is not None
    parsed = parse(doc.raw_bytes(), doc.source_uri, doc.content_type)
    chunks = chunk_pieces(parsed.pieces, tenant=doc.tenant, document_id=doc.document_id, settings=settings)
    if not chunks:
        raise UnsupportedDocument("no text found")
    label = str(doc.metadata.get("title") or parsed.title)
    title = title_of(label, doc.source_uri)
    return Prepared(
        chunks=chunks,
        content_hash=doc.content_hash(),
        label=label,
        title=title,
        terms=[index_terms(chunk, title) for chunk in chunks],
        content_type=content_type_for(doc.source_uri, doc.content_type),
    )


def title_of(label: str, source_uri: str) -> str:
    """The title embedded with a document's chunks: its label, unless that is only the file name."""
    return label if label != source_uri.rstrip("/").rsplit("/", 1)[-1] else ""


def check_write(access: Access | None, document: Document, existing: tuple[str, list[str]] | None) -> None:
    """The write rule for an ingest: `existing` is the (scope, acl) stored under the document's identity."""
    if access is None:
        return
    assert document.scope is not None
    if not access.may_write_to(document.scope) or (existing is not None and not access.may_touch(*existing)):
        raise DocumentNotFound(f"no document {document.document_id} this caller may write")


@dataclass(frozen=True)
class Stored:
    """What an index holds under a document's identity: enough to decide an ingest."""

    content_hash: str
    scope: str
    acl: list[str]
    created_at: float | None = None  # when the document was first written (kept when it is replaced)
    source_uri: str | None = None
    content_type: str | None = None


WriteStatus = Literal["ingested", "replaced", "unchanged"]


class IngestResult(TypedDict):
    """What an ingest did: the document's id, its chunk count, and whether it was new, replaced or unchanged."""

    document_id: str
    chunks: int
    status: WriteStatus


class MoveResult(TypedDict):
    document_id: str  # its identity in the new scope
    previous_document_id: str
    scope: str
    status: Literal["moved"]


class DocumentListing(TypedDict):
    """One document as `list_documents` gives it."""

    document_id: str
    source_uri: str
    label: str
    scope: str
    acl: list[str]
    metadata: dict[str, Any]
    chunks: int
    content_type: str | None
    content_hash: str
    created_at: float
    updated_at: float


class IngestStorage(KeepsOriginals, Protocol):
    """The storage primitives an adapter supplies to `ingest_with`, which holds the idempotent algorithm (so a
    new adapter cannot get idempotency, admission, the write rule or the originals wrong)."""

    embedder: Any
    chunk_settings: ChunkSettings

    @property
    def deferred(self) -> bool:
        """Whether vectors are left for later (`defer_embedding`), so a write carries text and terms only."""
        ...

    def stored_document(self, tenant: str, document_id: str) -> Stored | None: ...

    def keep_unchanged(self, document: Document) -> int:
        """The stored chunk count of a document re-ingested with the same content (and anything an unchanged
        retry must redo, such as re-queueing chunks still waiting for vectors)."""
        ...

    def write_document(
        self,
        document: Document,
        prepared: Prepared,
        vectors: np.ndarray | None,
        synthesis: list[bytes | None],
        access: Access | None,
        stored: Stored | None,
    ) -> tuple[WriteStatus, int]:
        """Replace whatever is stored under the document's identity with `prepared`, atomically where the store
        can (re-checking the write rule and the content hash inside its transaction, so that a concurrent
        writer of the same content makes this one `unchanged`). Returns (status, chunks stored)."""
        ...

    def write_batch(self) -> AbstractContextManager[None]:
        """The `write_document` calls made inside go in one commit where the store can (each document still all
        or nothing); a store without transactions writes each as it comes."""
        ...


# What a batch ingest reports for a document it could not take: that document's own problem (unreadable or
# unsupported content, the write rule, a quota). Anything else (the store or the model failing) stops the batch.
DocumentProblem = InvalidRequest | DocumentNotFound | RetryLater | ValueError


def ingest_with(
    storage: IngestStorage,
    doc: Document | Mapping[str, Any],
    *,
    admit: Admit | None = None,
    access: Access | None = None,
    prepared: Prepared | None = None,
) -> IngestResult:
    """`ingest_many` for one document, raising its problem."""
    (outcome,) = ingest_many(storage, [doc], admit=admit, access=access, prepared=[prepared])
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def ingest_many(
    storage: IngestStorage,
    docs: Sequence[Document | Mapping[str, Any]],
    *,
    admit: Admit | None = None,
    access: Access | None = None,
    prepared: Sequence[Prepared | None] | None = None,
) -> list[IngestResult | DocumentProblem]:
    """The one ingest algorithm, per document: the same content is `unchanged` and admits nothing (a retry never
    duplicates or charges twice); new or changed content is admitted (`admit(chunks)` may raise to refuse it)
    before the model runs or anything is written (each document's `admit` call comes before any write of the
    group: a caller counting a quota over several counts inside `admit`); the write rule is checked before and,
    where the store has transactions, again inside the write. Over many documents, the model runs once for all of them and the
    writes go in one commit (`storage.write_batch`), each document still all or nothing: that is what makes a
    bulk ingest as fast as the embedded engines'. A document's own problem is its outcome (`DocumentProblem`);
    the others are written."""
    given = list(prepared) if prepared is not None else [None] * len(docs)
    outcomes: list[IngestResult | DocumentProblem | None] = [None] * len(docs)
    todo: list[tuple[int, Document, Prepared, Stored | None]] = []
    for i, (doc, ready) in enumerate(zip(docs, given, strict=True)):
        try:
            document = as_document(doc)
            assert document.document_id is not None and document.scope is not None
            check_source_uri(document.source_uri)  # before anything is read or written: a link must not run a script
            content_hash = document.content_hash()
            stored = storage.stored_document(document.tenant, document.document_id)
            check_write(access, document, (stored.scope, stored.acl) if stored is not None else None)
            if stored is not None and stored.content_hash == content_hash:
                kind = content_type_for(document.source_uri, document.content_type)  # as `prepare` parses it
                keep_original(storage, document.tenant, content_hash, document.raw_bytes(), kind)
                outcomes[i] = {"document_id": document.document_id, "chunks": storage.keep_unchanged(document), "status": "unchanged"}
                continue
            if ready is None or ready.content_hash != content_hash:
                ready = prepare(document, storage.chunk_settings)
            if admit is not None:
                admit(len(ready.chunks))
        except (InvalidRequest, DocumentNotFound, RetryLater, ValueError) as problem:
            outcomes[i] = problem
            continue
        todo.append((i, document, ready, stored))
    vectors, synthesis = _batch_vectors(None if storage.deferred else storage.embedder, [ready for _, _, ready, _ in todo])
    for _, document, ready, _ in todo:
        keep_original(storage, document.tenant, ready.content_hash, document.raw_bytes(), ready.content_type)
    replaced: list[tuple[str, str]] = []  # (tenant, content hash) each replacement let go of
    with storage.write_batch():
        for (i, document, ready, stored), chunk_vectors, chunk_synthesis in zip(todo, vectors, synthesis, strict=True):
            assert document.document_id is not None
            try:
                status, chunks = storage.write_document(document, ready, chunk_vectors, chunk_synthesis, access, stored)
            except DocumentNotFound as problem:  # the write rule, re-checked inside the write
                outcomes[i] = problem
                continue
            outcomes[i] = {"document_id": document.document_id, "chunks": chunks, "status": status}
            if stored is not None and status == "replaced":
                replaced.append((document.tenant, stored.content_hash))
    for tenant, content_hash in replaced:  # once the writes are committed
        release_original(storage, tenant, content_hash)
    done = [outcome for outcome in outcomes if outcome is not None]
    assert len(done) == len(docs), "every document has its outcome"
    return done


def _batch_vectors(embedder: Any, documents: list[Prepared]) -> tuple[list[np.ndarray | None], list[list[bytes | None]]]:
    """Per document, its chunks' vectors (`embedding_text`) and packed `synthesis_vectors`, from one model call
    for all of them (None and Nones without an embedder)."""
    counts = [len(p.chunks) for p in documents]
    if embedder is None or not documents:
        return [None] * len(documents), [[None] * n for n in counts]
    flat = embedder.embed([embedding_text(c, p.title) for p in documents for c in p.chunks], "passage")
    synthesis = synthesis_vectors(embedder, [c for p in documents for c in p.chunks], flat)
    bounds = np.cumsum([0, *counts])
    return (
        [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)],
        [synthesis[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)],
    )


def check_move(access: Access | None, target: str, occupant: tuple[str, list[str]] | None) -> None:
    """The write rule for the target of a move: `occupant` is the (scope, acl) already at the new identity."""
    if access is not None and (not access.may_write_to(target) or (occupant is not None and not access.may_touch(*occupant))):
        raise DocumentNotFound(f"no scope {target} this caller may write")
    if occupant is not None:
        raise DocumentConflict(f"{target} already holds a document from the same source; delete or move it first")


def plan_search(
    query: Any, k: Any, mode: str, has_embedder: bool, only: SearchFilter | None = None
) -> tuple[str | None, SearchTrace]:
    """Validate a search and decide how it runs: (mode to run, or None for an empty query; trace).

    A `semantic` or `hybrid` search on an index without embeddings runs as `keyword` and says so. The trace
    shows the filter a search applied.
    """
    planned, plan = _plan(query, k, mode, has_embedder)
    trace = SearchTrace(plan)
    if only is not None and not only.empty:
        trace["filter"] = only.model_dump(exclude_none=True, mode="json")
    return planned, trace


def _plan(query: Any, k: Any, mode: str, has_embedder: bool) -> tuple[str | None, dict[str, Any]]:
    check_mode(mode)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidRequest("k must be a positive integer")
    if not isinstance(query, str) or not query.strip():
        return None, {"mode": mode}
    if mode != "keyword" and not has_embedder:
        return "keyword", {"mode": "keyword", "fallback": f"{mode} search on a keyword-only index runs as keyword"}
    return mode, {"mode": mode}


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InvalidRequest(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
