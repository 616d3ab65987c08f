"""The Index port and what every adapter shares: preparing documents, walking folders, retriever wrapping."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from sourcerer.accounting import tally
from sourcerer.errors import DocumentConflict, DocumentNotFound, UnsupportedDocument
from sourcerer.models import Segment
from sourcerer.retrieval.embedders import pack_vectors
from sourcerer.scopes import Access
from sourcerer.store.chunking import ChunkSettings, chunk_pieces
from sourcerer.store.models import Chunk, Document, FileOutcome, Hit, IngestReport
from sourcerer.store.parsers import EXTENSIONS, parse
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
    """

    def ingest_document(
        self,
        doc: Document | Mapping[str, Any],
        *,
        admit: Admit | None = None,
        access: Access | None = None,
        prepared: Prepared | None = None,
    ) -> dict[str, Any]:
        """`prepared`: `prepare(doc)` computed beforehand (in another process, by `ingest_folder`)."""
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
    ) -> IngestReport: ...

    def delete_document(self, tenant: str, document_id: str, *, access: Access | None = None) -> bool: ...

    def move_document(self, tenant: str, document_id: str, scope: str, *, access: Access | None = None) -> dict[str, Any]:
        """Move a document to `scope` (its id changes with its scope; chunks and vectors are kept, not re-embedded).
        Needs the right to touch the document where it is and to write at the target; raises `DocumentConflict`
        when the target already holds a visible document from the same source."""
        ...

    def list_documents(self, tenant: str, scope: str | None = None) -> list[dict[str, Any]]: ...

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
        groups: Iterable[str] | None = None,
        k: int = 10,
        mode: Mode = "hybrid",
    ) -> SearchResult:
        """The best `k` hits the caller may see, with the search's trace and embedding tokens."""
        ...

    def retriever(
        self, *, tenant: str, scope: str | None = None, groups: Iterable[str] | None = None, k: int = 8, mode: Mode = "hybrid"
    ) -> Callable[[str, int], list[dict[str, Any]]]: ...

    def stats(self) -> dict[str, Any]: ...


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


def searched(run: Callable[[], list[Hit]]) -> SearchResult:
    """Run an adapter's search and keep its trace and embedding tokens with its hits (see `sourcerer.accounting`)."""
    with tally() as spent:
        hits = run()
    return SearchResult(hits=hits, trace=dict(spent.search), embedding_tokens=spent.embedding_tokens)


@dataclass
class Prepared:
    doc: Document
    chunks: list[Chunk]
    content_hash: str
    label: str
    title: str = ""  # a real title (metadata or the document's own), never just the file name
    terms: list[list[str]] = field(default_factory=list)  # per chunk, its BM25 terms (`index_terms`)


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


def synthesis_texts(text: str, segments: list[Any]) -> list[str]:
    """What the synthesiser and the local judge embed of a chunk: its text, then each sentence (in order)."""
    return [text] + [text[seg.start : seg.end] for seg in segments]


def synthesis_vectors(embedder: Any, chunks: list[Chunk]) -> list[bytes | None]:
    """Per chunk, the packed vectors of `synthesis_texts`, computed at ingest in one batch so that answering
    never runs the model on a passage (see `sourcerer.retrieval.embedders.KnownVectors`)."""
    if embedder is None or not chunks:
        return [None] * len(chunks)
    per_chunk = [synthesis_texts(c.text, c.sentences) for c in chunks]
    unique = list(dict.fromkeys(t for texts in per_chunk for t in texts))
    vectors = dict(zip(unique, embedder.embed(unique, "passage"), strict=True))
    return [pack_vectors(np.vstack([vectors[t] for t in texts])) for texts in per_chunk]


def deferred_vectors(embedder: Any, stored: list[tuple[str, list[Any], str]]) -> tuple[np.ndarray, list[bytes | None]]:
    """For chunks written without vectors, given as (text, sentence segments as stored, document title): the
    vectors ingest would have computed (`embedding_text`) and their packed `synthesis_vectors`."""
    chunks = [
        SimpleNamespace(text=text, sentences=[Segment.model_validate(seg) for seg in segments]) for text, segments, _ in stored
    ]
    vectors = embedder.embed([embedding_text(c, title) for c, (_, _, title) in zip(chunks, stored, strict=True)], "passage")  # type: ignore[arg-type]
    return vectors, synthesis_vectors(embedder, chunks)  # type: ignore[arg-type]


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
        doc=doc,
        chunks=chunks,
        content_hash=doc.content_hash(),
        label=label,
        title=title,
        terms=[index_terms(chunk, title) for chunk in chunks],
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


WriteStatus = Literal["ingested", "replaced", "unchanged"]


class IngestStorage(Protocol):
    """The storage primitives an adapter supplies to `ingest_with`, which holds the idempotent algorithm (so a
    new adapter cannot get idempotency, admission or the write rule wrong)."""

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


def ingest_with(
    storage: IngestStorage,
    doc: Document | Mapping[str, Any],
    *,
    admit: Admit | None = None,
    access: Access | None = None,
    prepared: Prepared | None = None,
) -> dict[str, Any]:
    """The one ingest algorithm: the same content is `unchanged` and admits nothing (a retry never duplicates
    or charges twice); new or changed content is admitted (`admit(chunks)` may raise to refuse it) before the
    model runs or anything is written; the write rule is checked before and, where the store has
    transactions, again inside the write."""
    document = as_document(doc)
    assert document.document_id is not None and document.scope is not None
    content_hash = document.content_hash()
    stored = storage.stored_document(document.tenant, document.document_id)
    check_write(access, document, stored and (stored.scope, stored.acl))
    if stored is not None and stored.content_hash == content_hash:
        return {"document_id": document.document_id, "chunks": storage.keep_unchanged(document), "status": "unchanged"}
    if prepared is None or prepared.content_hash != content_hash:
        prepared = prepare(document, storage.chunk_settings)
    if admit is not None:
        admit(len(prepared.chunks))
    embedder = None if storage.deferred else storage.embedder
    vectors = embedder.embed([embedding_text(c, prepared.title) for c in prepared.chunks], "passage") if embedder else None
    synthesis = synthesis_vectors(embedder, prepared.chunks)
    status, chunks = storage.write_document(document, prepared, vectors, synthesis, access, stored)
    return {"document_id": document.document_id, "chunks": chunks, "status": status}


def check_move(access: Access | None, target: str, occupant: tuple[str, list[str]] | None) -> None:
    """The write rule for the target of a move: `occupant` is the (scope, acl) already at the new identity."""
    if access is not None and (not access.may_write_to(target) or (occupant is not None and not access.may_touch(*occupant))):
        raise DocumentNotFound(f"no scope {target} this caller may write")
    if occupant is not None:
        raise DocumentConflict(f"{target} already holds a document from the same source; delete or move it first")


def plan_search(query: Any, k: Any, mode: str, has_embedder: bool) -> tuple[str | None, dict[str, Any]]:
    """Validate a search and decide how it runs: (mode to run, or None for an empty query; trace).

    A `semantic` or `hybrid` search on an index without embeddings runs as `keyword` and says so.
    """
    check_mode(mode)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError("k must be a positive integer")
    if not isinstance(query, str) or not query.strip():
        return None, {"mode": mode}
    if mode != "keyword" and not has_embedder:
        return "keyword", {"mode": "keyword", "fallback": f"{mode} search on a keyword-only index runs as keyword"}
    return mode, {"mode": mode}


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")


MAX_FILE_BYTES = 64 * 1024 * 1024  # a folder ingest skips bigger files without reading them


def files_under(path: str | Path) -> list[Path]:
    """The file itself, or every file below a folder (hidden files and folders left out), sorted."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"no such file or folder: {root}")
    if root.is_file():
        return [root]
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def why_skip(file: Path, root: Path) -> str | None:
    """Why a file found under `root` is not ingested, or None. A link that leads out of the folder is never
    followed: ingesting a folder must not make the rest of the disk searchable."""
    if root.is_dir() and not file.resolve().is_relative_to(root.resolve()):
        return "a link to a file outside the folder being ingested"
    if file.suffix.lower() not in EXTENSIONS:
        return f"unsupported file type {file.suffix or '(none)'!r}"
    if file.stat().st_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
    return None


def ingest_folder(
    index: Index,
    path: str | Path,
    *,
    tenant: str,
    scope: str | None,
    acl: Iterable[str],
    metadata: Mapping[str, Any] | None,
    progress: Callable[[str, int], None] | None = None,
) -> IngestReport:
    """Ingest a file or every file under a folder. Files that fail are reported with the reason; the rest go in.

    Large folders are parsed, chunked and tokenised (two thirds of a keyword-only ingest) in worker processes,
    one per core but this one, a window of files ahead of the writes made here (the index serialises them)."""
    report = IngestReport()
    root = Path(path)
    files = files_under(path)
    fields = {"tenant": tenant, "scope": scope, "acl": list(acl), "metadata": dict(metadata or {})}
    for file, item, prepared in _documents(files, root, fields, getattr(index, "chunk_settings", None)):
        shown = str(file)
        try:
            if isinstance(item, str):
                report.files.append(FileOutcome(path=shown, status="skipped", reason=item))
            else:
                if isinstance(prepared, str):
                    raise UnsupportedDocument(prepared)
                result = index.ingest_document(item, prepared=prepared)
                report.files.append(
                    FileOutcome(path=shown, status=result["status"], document_id=result["document_id"], chunks=result["chunks"])
                )
        except (UnsupportedDocument, OSError, ValueError) as exc:
            report.files.append(FileOutcome(path=shown, status="skipped", reason=str(exc)))
        if progress:
            progress(shown, report.files[-1].chunks)
    return report


PARALLEL_FROM_FILES = 64  # below this, starting worker processes costs more than it saves
WINDOW = 256  # files in flight: bounds memory on a huge folder


def _documents(
    files: list[Path], root: Path, fields: dict[str, Any], settings: ChunkSettings | None
) -> Iterator[tuple[Path, Document | str, Prepared | str | None]]:
    """Per file, in order: (file, its Document or why it is skipped, its `Prepared` or why it failed or None)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = cores - 1  # this process writes (a third of the work): one core stays its own
    # fork, not spawn: spawn re-runs the caller's main module, which breaks any script without a __main__
    # guard. Forking is safe only without other threads (a server's background embedder): then, serial.
    if len(files) < PARALLEL_FROM_FILES or workers < 1 or sys.platform != "linux" or threading.active_count() > 1:
        for file in files:
            yield (file, *_read(file, root, fields, settings, False))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        for start in range(0, len(files), WINDOW):
            window = files[start : start + WINDOW]
            n = len(window)
            results = pool.map(_read, window, [root] * n, [fields] * n, [settings] * n, [True] * n, chunksize=8)
            for file, (item, prepared) in zip(window, results, strict=True):
                yield file, item, prepared


def _read(
    file: Path, root: Path, fields: dict[str, Any], settings: ChunkSettings | None, prepare_too: bool
) -> tuple[Document | str, Prepared | str | None]:
    """A file's Document (or why it is skipped) and, with `prepare_too`, its `Prepared` (or why it failed)."""
    try:
        reason = why_skip(file, root)
        if reason is not None:
            return reason, None
        document = Document(source_uri=file.as_posix(), content=file.read_bytes(), **fields)
    except (OSError, ValueError) as exc:
        return str(exc), None
    if not prepare_too:
        return document, None
    try:
        return document, prepare(document, settings)
    except (UnsupportedDocument, ValueError) as exc:
        return document, str(exc)


def make_retriever(
    index: Index, *, tenant: str, scope: str | None, groups: Iterable[str] | None, k: int, mode: Mode
) -> Callable[[str, int], list[dict[str, Any]]]:
    """A retriever for `ask()` bound to one tenant, scope and set of groups."""
    check_mode(mode)
    groups = list(groups or [])

    def retrieve(question: str, limit: int | None = None) -> list[dict[str, Any]]:
        hits = index.search(question, tenant=tenant, scope=scope, groups=groups, k=limit or k, mode=mode)
        return [hit.as_passage() for hit in hits]

    retrieve.index = index  # type: ignore[attr-defined]
    return retrieve
