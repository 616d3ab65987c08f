"""The embedded index: one SQLite file with FTS5 for BM25 and exact vector search in numpy.

* Terms come from the library's tokenizer (`sourcerer.text.terms`), hex-encoded so FTS5's own tokenizer
  cannot split or fold them differently: lexical matching is the same as the in-memory keyword retriever.
* Vectors are stored with their chunks and searched exactly; the matrix is loaded lazily and reloaded when
  the index's write version changes (also after writes from another process).
* Every ingest is one transaction (`BEGIN IMMEDIATE`), WAL mode: readers never see half a document, and a
  replaced document's old chunks disappear in the same commit its new ones appear.

The file's schema and migrations are `store/sqlite_schema.py`; the SQL of the visibility rule and of search
filters, `store/sqlite_filters.py`; the BM25 arithmetic, `retrieval/keyword.py` (shared with the in-memory
retriever, the postings and OpenSearch's normalisation).

Why it is long: what is left is one adapter whose parts share the connection's lock and private state: the
write transaction, the FTS5 keyword search and its pruning, the change log that keeps the vector matrix and the
in-memory keyword postings (`store/postings.py`, long-running processes) current, deferred embedding, and moves.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from sourcerer.errors import DocumentNotFound
from sourcerer.models import Segment
from sourcerer.retrieval.embedders import CachedEmbedder, Embedder, unpack_vectors
from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR, fuse
from sourcerer.retrieval.keyword import idf as bm25_idf
from sourcerer.retrieval.keyword import length_norm, stored_length, term_weight
from sourcerer.scopes import Access, Groups, normalize_scope, scope_ancestors, validate_tenant
from sourcerer.sqlitedb import connect, snapshot, transaction
from sourcerer.store.base import (
    MAX_QUERY_CHARS,
    DocumentListing,
    Mode,
    MoveResult,
    Prepared,
    SearchTrace,
    Stored,
    WriteStatus,
    check_move,
    check_write,
    deferred_vectors,
    ingest_with,
    plan_search,
    search_result,
    synthesis_texts,
    tie_order,
    title_of,
)
from sourcerer.store.chunking import ChunkSettings
from sourcerer.store.folders import ingest_folder, ingest_in_groups
from sourcerer.store.models import Document, Hit, IngestReport, SearchFilter, document_id_for, unit_id_for
from sourcerer.store.originals import Originals, release_original
from sourcerer.store.postings import TermIndex
from sourcerer.store.retriever import index_retriever
from sourcerer.store.sqlite_filters import visibility_sql
from sourcerer.store.sqlite_schema import SCHEMA, fts_token, open_index_file
from sourcerer.store.vectors import VectorCache
from sourcerer.text import terms

SEGMENTS = TypeAdapter(list[Segment])  # a chunk's stored sentences, parsed and checked in one call
log = logging.getLogger(__name__)

MAX_QUERY_TERMS = 64
CHANGE_LOG_ROWS = 1_000_000


PRUNE_ABOVE_CHUNKS = 20_000
COMMON_TERM_SHARE = 0.05
MAX_CANDIDATE_TERMS = 6
PRUNED_DEPTH_FACTOR = 4
# FTS5 pre-ranks with its own IDF; this many more candidates than asked are rescored with ours
EXTRA_CANDIDATES = 10


def candidate_terms(tokens: list[str], counts: dict[str, int], total: int) -> list[str]:
    """The query terms FTS5 ranks candidates by. FTS5 scores every chunk that holds any query term, so a term
    in many chunks ("in", "of", "patients") makes ranking cost grow with the index (525 ms at 500k chunks).
    Above `PRUNE_ABOVE_CHUNKS` chunks, terms in more than `COMMON_TERM_SHARE` of them find no candidates
    (at most the `MAX_CANDIDATE_TERMS` rarest; when every term is common, the rarest alone); every query term
    still counts in the BM25 score of the candidates.
    Fewer terms rank candidates more coarsely, so the pool the full BM25 chooses from is `PRUNED_DEPTH_FACTOR`
    times deeper. The trade-off is measured, not assumed: at ~100k chunks of shuffled SciFact sentences (a flat,
    hard case), the top 10 overlapped the unpruned ranking 0.26 / 0.78 / 0.85 at 1% / 5% / 10% (pool ×1 / ×4 /
    ×4) for 25 / 68 / 111 ms, against 330 ms unpruned; bench/scale.py reports it per size.
    """
    if total < PRUNE_ABOVE_CHUNKS:
        return tokens
    by_rarity = sorted(tokens, key=lambda t: counts.get(t, 0))
    rare = [t for t in by_rarity if counts.get(t, 0) <= COMMON_TERM_SHARE * total]
    return rare[:MAX_CANDIDATE_TERMS] or by_rarity[:1]


@dataclass
class _Batch:
    """The writes of one `write_batch` so far: the counts, the next chunk id and whether the vectors' dimension
    is stored are written once at its end (or first), not once per document."""

    documents: int = 0
    chunks: int = 0
    terms: int = 0
    next_id: int | None = None
    dimension_kept: bool = False


class SQLiteIndex:
    """The `Index` port on one SQLite file (see the module docstring).

    Why it is wide: it implements two ports on one connection and lock, `Index` (ingest, delete, move, list,
    search) and `EmbeddedIndex` (deferred embedding, the caches of a long-running server), and the primitives
    `ingest_with` runs on; the steps that need none of its state live in the modules named above."""

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | CachedEmbedder | None = None,
        chunk_settings: ChunkSettings | None = None,
        defer_embedding: bool = False,
        graph: bool = False,
        originals: Originals | None = None,
    ) -> None:
        self.path = Path(path)
        self.embedder = embedder
        # True: ingest writes text and keyword terms only, and `embed_pending` (a background worker under
        # `sourcerer serve`, the second phase of `sourcerer ingest`, or `sourcerer embed`) fills the vectors
        self.defer_embedding = defer_embedding
        self.chunk_settings = chunk_settings
        self.originals = originals  # the bytes each document came from (store/originals.py), or None
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._vectors = VectorCache(graph=graph)  # an HNSW graph above 50k vectors (see store/vectors.py)
        self._loaded = False
        # keyword postings in memory, at any size, in long-running processes (see store/postings.py)
        self._terms = TermIndex()
        self._terms_state = "off" if not graph else "wanted"  # off / wanted / building / ready
        # visible vector rows per caller filter: (cache generation, rows covered, mask)
        self._masks: dict[tuple[Any, ...], tuple[int, int, np.ndarray]] = {}
        self._batch: _Batch | None = None  # inside `write_batch`: what its writes leave for its end

    # --- connection and schema ---------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self.embedder.model_id if self.embedder is not None else "none"

    def _db(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        with self._lock:  # one opening: concurrent first requests must not switch journal modes side by side
            if self._conn is None:
                self._conn = open_index_file(self.path, self.model_id)
        return self._conn

    def _version(self, db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])

    # --- writing -----------------------------------------------------------------------------------

    def _existing(self, db: sqlite3.Connection, tenant: str, document_id: str) -> tuple[str, int, str, list[str]] | None:
        """(content hash, chunks, scope, acl) of a stored document, or None."""
        row = db.execute(
            "SELECT content_hash, chunks, scope, acl FROM documents WHERE tenant=? AND document_id=?", (tenant, document_id)
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], json.loads(row[3]))

    def _touchable(
        self, db: sqlite3.Connection, tenant: str, document_id: str, access: Access | None
    ) -> tuple[str, int, str, list[str]] | None:
        """The stored document if `access` may replace, move or delete it, else None (absent or not readable)."""
        current = self._existing(db, tenant, document_id)
        if current is None or (access is not None and not access.may_touch(current[2], current[3])):
            return None
        return current

    ingest_document = ingest_with  # the one algorithm (store/base.py) over the primitives below
    ingest_documents = ingest_in_groups

    # --- the storage primitives `ingest_with` runs on ----------------------------------------------------------

    @property
    def deferred(self) -> bool:
        return self.defer_embedding

    def stored_document(self, tenant: str, document_id: str) -> Stored | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT content_hash, scope, acl, source_uri, content_type FROM documents WHERE tenant=? AND document_id=?",
                    (tenant, document_id),
                )
                .fetchone()
            )
        if row is None:
            return None
        return Stored(content_hash=row[0], scope=row[1], acl=json.loads(row[2]), source_uri=row[3], content_type=row[4])

    def holds_content(self, tenant: str, content_hash: str) -> bool:
        with self._lock:
            row = self._db().execute(
                "SELECT 1 FROM documents WHERE tenant=? AND content_hash=? LIMIT 1", (tenant, content_hash)
            ).fetchone()
        return row is not None

    def keep_unchanged(self, document: Document) -> int:
        assert document.document_id is not None
        with self._lock:
            current = self._existing(self._db(), document.tenant, document.document_id)
        return current[1] if current is not None else 0

    def write_document(
        self,
        document: Document,
        prepared: Prepared,
        vectors: np.ndarray | None,
        synthesis: list[bytes | None],
        access: Access | None,
        stored: Stored | None,
    ) -> tuple[WriteStatus, int]:
        assert document.document_id is not None and document.scope is not None
        db = self._db()
        content_hash = prepared.content_hash
        now = time.time()
        with self._lock:
            # in a batch, its transaction: a document that is not written (the write rule, unchanged content) is
            # decided before its first write, and a failure after that undoes the batch (a retry is `unchanged`)
            batch = self._batch
            with contextlib.nullcontext() if batch is not None else transaction(db):
                # checked again inside the write transaction: another writer may have changed the ACL meanwhile
                current = self._existing(db, document.tenant, document.document_id)
                check_write(access, document, current and (current[2], current[3]))
                if current is not None and current[0] == content_hash:  # a concurrent writer stored this content first
                    return "unchanged", current[1]
                status = "replaced" if current is not None else "ingested"
                if current is not None:
                    self._delete_chunks(db, document.tenant, document.document_id)
                if vectors is not None and len(vectors) and not (batch and batch.dimension_kept):
                    db.execute("INSERT OR IGNORE INTO meta VALUES ('embed_dim', ?)", (str(vectors.shape[1]),))
                    if batch:
                        batch.dimension_kept = True
                acl_json = json.dumps(document.acl)
                if batch is None or batch.next_id is None:  # in a batch, its write lock keeps the ids its own
                    first = (db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]) + 1
                else:
                    first = batch.next_id
                written = list(range(first, first + len(prepared.chunks)))  # the rowids given: one statement per table
                db.executemany(
                    "INSERT INTO chunks (id, unit_id, tenant, document_id, position, text, label, scope, acl, locator, receipt, n_terms,"
                    " vector, sentences, synthesis_vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            rowid,
                            chunk.unit_id,
                            document.tenant,
                            document.document_id,
                            chunk.position,
                            chunk.text,
                            chunk.label,
                            document.scope,
                            acl_json,
                            json.dumps(chunk.locator),
                            chunk.receipt,
                            len(own),
                            vectors[i].astype(np.float32).tobytes() if vectors is not None else None,
                            json.dumps(chunk.sentences),
                            synthesis[i],
                        )
                        for i, (rowid, chunk, own) in enumerate(zip(written, prepared.chunks, prepared.terms, strict=True))
                    ],
                )
                db.executemany(
                    "INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)",
                    [(rowid, " ".join(map(fts_token, own))) for rowid, own in zip(written, prepared.terms, strict=True)],
                )
                ancestors = scope_ancestors(document.scope)
                db.executemany("INSERT INTO chunk_scopes VALUES (?, ?)", [(scope, rowid) for rowid in written for scope in ancestors])
                if document.acl:
                    db.executemany("INSERT INTO chunk_groups VALUES (?, ?)", [(g, rowid) for rowid in written for g in document.acl])
                db.executemany("INSERT INTO chunk_changes (chunk) VALUES (?)", [(r,) for r in written])
                if batch is None:
                    self._count(db, len(written), sum(map(len, prepared.terms)))
                else:
                    batch.next_id = first + len(written)
                    batch.documents += 1
                    batch.chunks += len(written)
                    batch.terms += sum(map(len, prepared.terms))
                db.execute(
                    "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (tenant, document_id) DO UPDATE SET source_uri=excluded.source_uri, label=excluded.label,"
                    " scope=excluded.scope, acl=excluded.acl, metadata=excluded.metadata, content_type=excluded.content_type,"
                    " content_hash=excluded.content_hash, chunks=excluded.chunks, updated_at=excluded.updated_at",
                    (
                        document.tenant,
                        document.document_id,
                        document.source_uri,
                        prepared.label,
                        document.scope,
                        acl_json,
                        json.dumps(document.metadata, ensure_ascii=False),
                        prepared.content_type,
                        content_hash,
                        len(prepared.chunks),
                        now,
                        now,
                    ),
                )
                if batch is None:
                    self._bump(db)
        return status, len(prepared.chunks)

    @contextmanager
    def write_batch(self) -> Iterator[None]:
        """One transaction for the writes inside: a commit, and the marks of a write (`_bump`), per document cost
        as much as the document's own rows."""
        with self._lock:  # reentrant: a batch of this thread's may already be open; another thread's is waited for
            if self._batch is not None:
                yield
                return
            db = self._db()
            try:
                with transaction(db):
                    batch = self._batch = _Batch()
                    yield
                    if batch.documents:
                        self._count(db, batch.chunks, batch.terms)
                        self._bump(db)
            finally:
                self._batch = None

    @staticmethod
    def _bump(db: sqlite3.Connection) -> None:
        """Mark a write: statistics reload on the next read; readers catch up on vectors from `chunk_changes`,
        which keeps its last `CHANGE_LOG_ROWS` entries (a reader further behind reloads everything)."""
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
        last = SQLiteIndex._log_position(db)
        if (
            last % 10_000 == 0
            or last - (db.execute("SELECT min(seq) FROM chunk_changes").fetchone()[0] or last) > 2 * CHANGE_LOG_ROWS
        ):
            floor = last - CHANGE_LOG_ROWS
            if floor > 0:
                db.execute("DELETE FROM chunk_changes WHERE seq <= ?", (floor,))
                db.execute("INSERT OR REPLACE INTO meta VALUES ('changes_pruned_to', ?)", (str(floor),))

    @staticmethod
    def _delete_chunks(db: sqlite3.Connection, tenant: str, document_id: str) -> None:
        of_document = "SELECT id FROM chunks WHERE tenant=? AND document_id=?"
        db.execute(f"INSERT INTO chunk_changes (chunk) {of_document}", (tenant, document_id))
        gone, gone_terms = db.execute(
            "SELECT count(*), coalesce(sum(n_terms), 0) FROM chunks WHERE tenant=? AND document_id=?", (tenant, document_id)
        ).fetchone()
        SQLiteIndex._count(db, -gone, -gone_terms)
        for table, column in (("chunks_fts", "rowid"), ("chunk_scopes", "chunk"), ("chunk_groups", "chunk")):
            db.execute(f"DELETE FROM {table} WHERE {column} IN ({of_document})", (tenant, document_id))
        db.execute("DELETE FROM chunks WHERE tenant=? AND document_id=?", (tenant, document_id))

    def delete_document(self, tenant: str, document_id: str, *, access: Access | None = None) -> bool:
        db = self._db()
        with self._lock:
            with transaction(db):
                current = self._touchable(db, tenant, document_id, access)
                if current is None:
                    return False
                self._delete_chunks(db, tenant, document_id)
                db.execute("DELETE FROM documents WHERE tenant=? AND document_id=?", (tenant, document_id))
                self._bump(db)
        release_original(self, tenant, current[0])
        return True

    def move_document(self, tenant: str, document_id: str, scope: str, *, access: Access | None = None) -> MoveResult:
        target = normalize_scope(scope, tenant)
        db = self._db()
        with self._lock:
            with transaction(db):
                if self._touchable(db, tenant, document_id, access) is None:
                    raise DocumentNotFound(f"no document {document_id} in this caller's scopes")
                source_uri = db.execute(
                    "SELECT source_uri FROM documents WHERE tenant=? AND document_id=?", (tenant, document_id)
                ).fetchone()[0]
                moved_id = document_id_for(tenant, target, source_uri)
                if moved_id != document_id:
                    occupant = self._existing(db, tenant, moved_id)
                    check_move(access, target, occupant and (occupant[2], occupant[3]))
                    chunks = db.execute(
                        "SELECT id, position, text FROM chunks WHERE tenant=? AND document_id=?", (tenant, document_id)
                    ).fetchall()
                    rows = [r[0] for r in chunks]
                    db.execute(
                        "UPDATE documents SET document_id=?, scope=?, updated_at=? WHERE tenant=? AND document_id=?",
                        (moved_id, target, time.time(), tenant, document_id),
                    )
                    # chunk ids derive from the document's identity: a moved chunk gets the id it would have had if
                    # ingested there, so a new document at the old place can never collide with it
                    db.executemany(
                        "UPDATE chunks SET document_id=?, scope=?, unit_id=? WHERE id=?",
                        [(moved_id, target, unit_id_for(tenant, moved_id, pos, text), rowid) for rowid, pos, text in chunks],
                    )
                    db.executemany("DELETE FROM chunk_scopes WHERE chunk=?", [(r,) for r in rows])
                    db.executemany(
                        "INSERT INTO chunk_scopes VALUES (?, ?)", [(s, r) for r in rows for s in scope_ancestors(target)]
                    )
                    db.executemany("INSERT INTO chunk_changes (chunk) VALUES (?)", [(r,) for r in rows])
                    self._bump(db)
        return {"document_id": moved_id, "previous_document_id": document_id, "scope": target, "status": "moved"}

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
        return ingest_folder(
            self, path, tenant=tenant, scope=scope, acl=acl, metadata=metadata, progress=progress, placed=placed, refused=refused
        )

    # --- vectors filled after ingest (deferred embedding) ---------------------------------------------

    def version(self, tenant: str) -> str:
        with self._lock:
            count, latest, chunks = (
                self._db()
                .execute(
                    "SELECT count(*), coalesce(max(updated_at), 0), coalesce(sum(chunks), 0) FROM documents WHERE tenant=?",
                    (validate_tenant(tenant),),
                )
                .fetchone()
            )
        return f"{count}:{latest!r}:{chunks}:{self.pending_embeddings(tenant)}"

    def serve_long_running(self) -> None:
        """The keyword postings (any size) and, for large indexes, the HNSW graph are kept in memory, built in the
        background, and the vectors load now (at worker start), not in the first request."""
        self._vectors.graph = True
        if self._terms_state == "off":
            self._terms_state = "wanted"
        threading.Thread(target=self._warm, name="sourcerer-index-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            if self.embedder is not None:
                self._catch_up()
            with self._lock:
                self._term_index()
        except Exception:  # noqa: BLE001 - warming is an optimisation: the first request loads what is missing
            log.exception("warming the index failed; the first request loads it")

    def pending_embeddings(self, tenant: str | None = None) -> int:
        """Chunks (of `tenant`, or all) written without their vectors yet: keyword-searchable, not yet semantically."""
        if self.embedder is None:
            return 0
        sql, args = "SELECT count(*) FROM chunks INDEXED BY chunks_pending WHERE vector IS NULL", []
        if tenant is not None:
            sql, args = sql + " AND tenant=?", [tenant]
        with self._lock:
            return int(self._db().execute(sql, args).fetchone()[0])

    def embed_rate(self) -> float | None:
        """Chunks embedded per second by deferred embedding, as last measured (None before any)."""
        with self._lock:
            row = self._db().execute("SELECT value FROM meta WHERE key='embed_rate'").fetchone()
        return float(row[0]) if row else None

    def embed_pending(self, batch: int = 32, limit: int | None = None, progress: Callable[[int], None] | None = None) -> int:
        """Embed chunks that have no vectors yet, `batch` at a time, oldest first; returns how many were embedded.

        Each batch is one transaction that writes only rows still pending (a chunk replaced or deleted
        meanwhile is skipped), and logs the rows in `chunk_changes` so every reader picks the vectors up."""
        if self.embedder is None:
            return 0
        db, done = self._db(), 0
        while limit is None or done < limit:
            with self._lock:
                rows = db.execute(
                    "SELECT c.id, c.text, c.sentences, d.label, d.source_uri FROM chunks c INDEXED BY chunks_pending JOIN documents d"
                    " ON d.tenant = c.tenant AND d.document_id = c.document_id WHERE c.vector IS NULL ORDER BY c.id LIMIT ?",
                    (batch if limit is None else min(batch, limit - done),),
                ).fetchall()
            if not rows:
                break
            started = time.perf_counter()
            vectors, synthesis = deferred_vectors(
                self.embedder, [(r[1], json.loads(r[2] or "[]"), title_of(r[3], r[4])) for r in rows]
            )
            rate = len(rows) / max(time.perf_counter() - started, 1e-6)
            with self._lock:
                with transaction(db):
                    db.execute("INSERT OR IGNORE INTO meta VALUES ('embed_dim', ?)", (str(vectors.shape[1]),))
                    # the measured pace, smoothed, for the backlog's Retry-After (shared by every worker)
                    was = db.execute("SELECT value FROM meta WHERE key='embed_rate'").fetchone()
                    smoothed = rate if was is None else 0.7 * float(was[0]) + 0.3 * rate
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('embed_rate', ?)", (f"{smoothed:.3f}",))
                    for r, vector, packed in zip(rows, vectors, synthesis, strict=True):
                        updated = db.execute(
                            "UPDATE chunks SET vector=?, synthesis_vectors=coalesce(synthesis_vectors, ?) WHERE id=? AND vector IS NULL",
                            (vector.astype(np.float32).tobytes(), packed, r[0]),
                        ).rowcount
                        if updated:
                            db.execute("INSERT INTO chunk_changes (chunk) VALUES (?)", (r[0],))
                    self._bump(db)
            done += len(rows)
            if progress is not None:
                progress(len(rows))
        return done

    # --- reading -----------------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db().execute("SELECT DISTINCT tenant FROM documents ORDER BY tenant")]

    def list_documents(self, tenant: str, scope: str | None = None) -> list[DocumentListing]:
        db = self._db()
        sql = (
            "SELECT document_id, source_uri, label, scope, acl, metadata, chunks, content_type, content_hash, created_at,"
            " updated_at FROM documents WHERE tenant=?"
        )
        args: list[Any] = [tenant]
        if scope is not None:
            scope = normalize_scope(scope, tenant)
            sql += " AND (scope = ? OR substr(scope, 1, length(?) + 1) = ? || '/')"
            args += [scope, scope, scope]
        with self._lock:
            rows = db.execute(sql + " ORDER BY source_uri", args).fetchall()
        keys = (
            "document_id",
            "source_uri",
            "label",
            "scope",
            "acl",
            "metadata",
            "chunks",
            "content_type",
            "content_hash",
            "created_at",
            "updated_at",
        )
        out = []
        for row in rows:
            item = dict(zip(keys, row, strict=True))
            item["acl"] = json.loads(item["acl"])
            item["metadata"] = json.loads(item["metadata"])
            out.append(item)
        return out

    def get_chunks(self, tenant: str, ids: Iterable[str]) -> list[Hit]:
        ids = list(ids)
        if not ids:
            return []
        db = self._db()
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = db.execute(f"SELECT id FROM chunks WHERE tenant=? AND unit_id IN ({marks})", [tenant, *ids]).fetchall()
        hits = self._hits({r[0]: 0.0 for r in rows})
        order = {u: i for i, u in enumerate(ids)}
        return sorted(hits, key=lambda h: order[h.unit_id])

    def document_chunks(self, tenant: str, document_id: str) -> list[Hit]:
        with self._lock:
            rows = (
                self._db()
                .execute("SELECT id FROM chunks WHERE tenant=? AND document_id=? ORDER BY position", (tenant, document_id))
                .fetchall()
            )
        return self._hits({r[0]: 0.0 for r in rows})

    def _unit_ids(self, rows: Iterable[int]) -> dict[int, str]:
        """Row id -> unit id of some chunks (a narrow read: no text, no vectors)."""
        rows = list(rows)
        if not rows:
            return {}
        with self._lock:
            found = self._db().execute(f"SELECT id, unit_id FROM chunks WHERE id IN ({','.join('?' * len(rows))})", rows).fetchall()
        return dict(found)

    def _hits(self, scores: Mapping[int, float]) -> list[Hit]:
        if not scores:
            return []
        db = self._db()
        marks = ",".join("?" * len(scores))
        with self._lock:
            rows = db.execute(
                "SELECT c.id, c.unit_id, c.document_id, d.source_uri, c.label, c.text, c.locator, c.receipt, c.scope, d.metadata, c.position,"
                f" c.sentences, c.synthesis_vectors, c.vector IS NULL FROM chunks c JOIN documents d ON d.tenant = c.tenant AND d.document_id = c.document_id"
                f" WHERE c.id IN ({marks})",
                list(scores),
            ).fetchall()
        by_id = {}
        for r in rows:
            segments = SEGMENTS.validate_json(r[11]) if r[11] else []
            by_id[r[0]] = Hit(
                unit_id=r[1],
                document_id=r[2],
                source_uri=r[3],
                label=r[4],
                text=r[5],
                score=round(min(1.0, max(0.0, scores[r[0]])), 6),
                locator=json.loads(r[6]),
                receipt=r[7],
                scope=r[8],
                metadata=json.loads(r[9]),
                position=r[10],
                sentences=segments,
                vectors=unpack_vectors(r[12], synthesis_texts(r[5], [(seg.start, seg.end) for seg in segments])) if r[12] else None,
                pending=bool(r[13]) and self.embedder is not None,  # without a model nothing is coming
            )
        return [by_id[i] for i in scores if i in by_id]

    def _keyword(
        self, query: str, where: str, args: list[Any], limit: int, trace: SearchTrace, only: Iterable[int] | None = None
    ) -> dict[int, float]:
        """BM25 scores normalised like the in-memory retriever's (see `sourcerer.retrieval.keyword.BM25`).

        FTS5 finds and pre-ranks the candidates; they are then scored with the library's BM25 formula
        (IDF `log(1 + (N - n + .5) / (n + .5))`) because FTS5's own IDF collapses to ~0 for any term in more
        than half of a small corpus, which would make normalised scores meaningless on small indexes.
        """
        query_terms = list(dict.fromkeys(terms(query[:MAX_QUERY_CHARS])))[:MAX_QUERY_TERMS]
        if not query_terms:
            return {}
        db = self._db()
        tokens = [fts_token(t) for t in query_terms]
        with self._lock:
            total, total_terms = self._corpus_stats(db)
            avg_len = (total_terms / total) if total else 1.0
            in_memory = self._term_index()
            if in_memory is not None:  # exact BM25 over every term, no FTS5 ranking (see store/postings.py)
                trace["keyword_path"] = "postings"
                visible = self._visible(in_memory, where, args)
                if only is not None:  # the chunks the vector search found: their scores alone
                    return in_memory.score(tokens, total, avg_len, visible, only)
                return in_memory.search(tokens, total, avg_len, visible, limit)
            counts = dict(
                db.execute(f"SELECT term, doc FROM chunks_vocab WHERE term IN ({','.join('?' * len(tokens))})", tokens).fetchall()
            )
            idf = {t: bm25_idf(total, counts.get(t, 0)) for t in tokens}
            # rescoring given chunks (`only`) matches on every term; finding candidates, on the informative ones
            finding = tokens if only is not None else candidate_terms(tokens, counts, total)
            match = " OR ".join(f'"{t}"' for t in finding)
            # fewer terms rank candidates more coarsely: take a deeper pool for the full BM25 to choose from
            wanted = (limit + EXTRA_CANDIDATES) * (PRUNED_DEPTH_FACTOR if len(finding) < len(tokens) else 1)
            ids = self._candidates(db, match, where, args, wanted, None if only is None else list(only))
            if not ids:
                return {}
            rows = db.execute(f"SELECT rowid, terms FROM chunks_fts WHERE rowid IN ({','.join('?' * len(ids))})", ids).fetchall()
        ceiling = sum(idf.values())
        scores: dict[int, float] = {}
        for rowid, text in rows:
            doc = text.split()
            tf = Counter(doc)
            norm = length_norm(stored_length(len(doc)), avg_len)
            raw = sum(term_weight(idf[t], tf[t], norm) for t in tokens if tf.get(t))
            if raw > 0:
                scores[rowid] = min(1.0, raw / ceiling)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        kth = ranked[limit - 1][1] if len(ranked) > limit else None
        return dict(ranked if kth is None else [kv for kv in ranked if kv[1] >= kth])  # ties at the limit stay

    def _candidates(
        self, db: sqlite3.Connection, match: str, where: str, args: list[Any], wanted: int, only: list[int] | None
    ) -> list[int]:
        """Up to `wanted` visible chunks matching `match`, best BM25 first.

        FTS5 ranks fastest on its own, so the top rows are taken from it first and then filtered by what the
        caller may see; only when too few survive (a small tenant in a big index) does the join query run.
        """
        if only is not None:  # rescoring given chunks: no ranking needed, only which of them this caller sees
            if not only:
                return []
            marks = ",".join("?" * len(only))
            return [
                r[0]
                for r in db.execute(f"SELECT c.id FROM chunks c NOT INDEXED WHERE c.id IN ({marks}) AND {where}", [*only, *args])
            ]
        for depth in (wanted, 8 * wanted):
            top = [
                r[0]
                for r in db.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (match, depth)
                )
            ]
            marks = ",".join("?" * len(top)) or "NULL"
            # NOT INDEXED: look the few rows up by id; otherwise SQLite walks the whole tenant through its index
            visible = {
                r[0]
                for r in db.execute(f"SELECT c.id FROM chunks c NOT INDEXED WHERE c.id IN ({marks}) AND {where}", [*top, *args])
            }
            kept = [i for i in top if i in visible]
            if len(kept) >= wanted or len(top) < depth:
                return kept[:wanted]
        sql = f"SELECT c.id FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? AND {where} ORDER BY bm25(chunks_fts) LIMIT ?"
        return [r[0] for r in db.execute(sql, [match, *args, wanted])]

    def _term_index(self) -> TermIndex | None:
        """The in-memory postings, caught up to the last write, when this process keeps them (long-running) and
        they are built; else None (FTS5 serves). Starts the background build the first time it is wanted. Called
        under `self._lock`. At every size: a small index gains as well (0.9 against FTS5's 2.3 ms at 300 SciFact
        chunks; 0.65 against 5.8 ms of CPU at 8,920, `python -m bench.keyword_speed`), for memory in proportion to
        the terms."""
        if self._terms_state == "off":
            return None
        if self._terms_state == "wanted":
            self._terms_state = "building"
            threading.Thread(target=self._build_terms, name="sourcerer-postings", daemon=True).start()
            return None
        if self._terms_state != "ready":
            return None
        db, index = self._db(), self._terms
        if index.seq == self._log_position(db):
            return index
        with snapshot(db):  # the log position and the rows it describes
            last = self._log_position(db)
            behind = index.seq < self._log_pruned_to(db)
            if not behind:
                touched, rows = self._changed(db, index.seq, last, "SELECT rowid, terms FROM chunks_fts WHERE rowid IN ({})")
        if behind:  # too far behind the log: build again, FTS5 meanwhile
            self._terms_state = "wanted"
            return None
        index.apply(last, touched, rows)
        if index.compact():
            self._masks.clear()
        return index

    def _build_terms(self) -> None:
        """Load every chunk's terms into `self._terms`, on a connection of this thread's own (readers meanwhile
        are served by FTS5; WAL lets this read run beside writers)."""
        try:
            conn = connect(self.path, SCHEMA)  # a connection of this thread's own
            try:
                with snapshot(conn):
                    seq = self._log_position(conn)
                    self._terms.reset(seq, conn.execute("SELECT rowid, terms FROM chunks_fts ORDER BY rowid"))
            finally:
                conn.close()
            with self._lock:
                self._masks.clear()
                self._terms_state = "ready"
        except Exception:  # noqa: BLE001 - an accelerator: FTS5 keeps serving
            log.exception("loading the keyword postings failed; FTS5 serves keyword search")
            self._terms_state = "off"

    def _corpus_stats(self, db: sqlite3.Connection) -> tuple[int, int]:
        """(chunks, total terms), kept in `meta` by every write: counting 500k rows after each write would make
        the next query wait."""
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('chunk_count', 'term_count')").fetchall())
        return int(meta.get("chunk_count", 0)), int(meta.get("term_count", 0))

    @staticmethod
    def _count(db: sqlite3.Connection, chunks: int, terms_: int) -> None:
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='chunk_count'", (chunks,))
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='term_count'", (terms_,))

    @staticmethod
    def _log_position(db: sqlite3.Connection) -> int:
        """The last entry of the change log (`chunk_changes`): what an in-memory cache has caught up to."""
        return db.execute("SELECT max(seq) FROM chunk_changes").fetchone()[0] or 0

    @staticmethod
    def _log_pruned_to(db: sqlite3.Connection) -> int:
        """Entries up to this one were pruned from the log: a cache further behind must load everything again."""
        row = db.execute("SELECT value FROM meta WHERE key='changes_pruned_to'").fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _changed(db: sqlite3.Connection, since: int, last: int, select: str) -> tuple[list[int], list[tuple[Any, ...]]]:
        """The chunks the log touched after entry `since` up to `last`, and `select` (a query whose `{}` takes
        their ids) over those that still exist. Run inside the caller's read snapshot."""
        touched = [r[0] for r in db.execute("SELECT DISTINCT chunk FROM chunk_changes WHERE seq > ? AND seq <= ?", (since, last))]
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(touched), 900):  # SQLite's bound-parameter limit
            part = touched[start : start + 900]
            rows += db.execute(select.format(",".join("?" * len(part))), part).fetchall()
        return touched, rows

    def _catch_up(self) -> VectorCache:
        """The vector cache, brought up to the last write (any process's) by applying only the changes since."""
        db = self._db()
        cache = self._vectors
        with self._lock:
            if self._loaded and cache.seq == self._log_position(db):
                return cache
            with snapshot(db):  # the log position and the rows it describes
                last = self._log_position(db)
                if not self._loaded or cache.seq < self._log_pruned_to(db):
                    rows = db.execute("SELECT id, vector FROM chunks WHERE vector IS NOT NULL ORDER BY id").fetchall()
                    cache.reset(last, rows)
                    self._masks.clear()
                    self._loaded = True
                else:
                    touched, rows = self._changed(
                        db, cache.seq, last, "SELECT id, vector FROM chunks WHERE id IN ({}) AND vector IS NOT NULL"
                    )
                    cache.apply(last, touched, rows)
            if cache.compact():  # rows renumbered: visibility is looked up again
                self._masks.clear()
            return cache

    def _visible(self, cache: VectorCache | TermIndex, where: str, args: list[Any]) -> np.ndarray:
        """Boolean mask over the cache's rows of those this caller may see (tenant, scope, ACL), kept per filter
        and extended to rows appended since (only those are looked up), so a write costs the next query little."""
        db = self._db()
        with self._lock:
            key = (type(cache).__name__, where, *args)
            generation, covered, mask = self._masks.get(key, (-1, 0, np.zeros(0, dtype=bool)))
            size = cache.size
            if generation != cache.generation or covered > size:
                generation, covered, mask = cache.generation, 0, np.zeros(0, dtype=bool)
            if covered < size:
                new_ids = cache.ids[covered:size]
                if covered == 0 or len(new_ids) > 5_000:
                    allowed = np.array(
                        [r[0] for r in db.execute(f"SELECT c.id FROM chunks c WHERE {where}", args)], dtype=np.int64
                    )
                    fresh = np.isin(new_ids, allowed)
                else:
                    marks = ",".join("?" * len(new_ids))
                    allowed = {
                        r[0]
                        for r in db.execute(
                            f"SELECT c.id FROM chunks c NOT INDEXED WHERE c.id IN ({marks}) AND {where}",
                            [*new_ids.tolist(), *args],
                        )
                    }
                    fresh = np.fromiter((int(i) in allowed for i in new_ids), dtype=bool, count=len(new_ids))
                mask = np.concatenate([mask[:covered], fresh])
                if len(self._masks) > 256:
                    self._masks.clear()
                self._masks[key] = (generation, size, mask)
            return mask

    def _semantic(
        self, query: str, where: str, args: list[Any], depth: int, trace: SearchTrace, also: Iterable[int] = ()
    ) -> dict[int, float]:
        """Calibrated similarity of the `depth` nearest visible chunks, plus of the chunks in `also` (keyword
        hits, best first). The model runs for the question alone: a chunk whose vector is still pending
        (deferred embedding) is found by keyword until the background embedder has written it, so a reader never
        waits for a writer's model work (the trace lists such hits as `keyword_only`)."""
        assert self.embedder is not None
        cache = self._catch_up()
        visible = self._visible(cache, where, args) if cache.size else np.zeros(0, dtype=bool)
        if not visible.any():
            return {}
        started = time.perf_counter()
        with trace.stage("embed"):
            vector = self.embedder.embed([query[:MAX_QUERY_CHARS]], "query")[0]
        trace["query_embedding_ms"] = round((time.perf_counter() - started) * 1000, 3)
        started = time.perf_counter()
        with trace.stage("vector"):
            found, path = cache.search(vector, visible, depth, list(also))
        trace["vector_search"] = {"path": path, "ms": round((time.perf_counter() - started) * 1000, 3)}
        return {rowid: self.embedder.calibrate(c) for rowid, c in found.items()}

    def _keyword_only(self, rowids: Iterable[int]) -> list[int]:
        """Which of these chunks have no vector yet (found by keyword alone)."""
        ids = list(rowids)
        if not ids:
            return []
        with self._lock:
            rows = self._db().execute(
                f"SELECT id FROM chunks INDEXED BY chunks_pending WHERE vector IS NULL AND id IN ({','.join('?' * len(ids))})", ids
            )
            return [r[0] for r in rows]

    @search_result
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
    ) -> tuple[list[Hit], SearchTrace]:
        where, args = visibility_sql(tenant, scope, groups, only)
        planned, trace = plan_search(query, k, mode, self.embedder is not None, only)
        pending = self.embedder is not None and mode != "keyword" and self.pending_embeddings(tenant)
        if pending:  # vectors still being computed (deferred embedding): those chunks are found by keyword only
            trace["pending_embeddings"] = pending
        elif self.embedder is not None and mode != "keyword":
            trace["pending_embeddings"] = 0
        if planned is None:
            return [], trace
        mode = planned  # type: ignore[assignment]
        if mode == "keyword":
            with trace.stage("keyword"):
                scores = self._keyword(query, where, args, k, trace)
            return sorted(self._hits(scores), key=lambda h: tie_order(h.unit_id, h.score))[:k], trace
        if mode == "semantic":
            semantic = self._semantic(query, where, args, k, trace)
            ranked = sorted(((i, s) for i, s in semantic.items() if s > 0), key=lambda kv: (-kv[1], kv[0]))[:k]
            return self._hits(dict(ranked)), trace
        depth = max(50, 4 * k)
        with trace.stage("keyword"):
            keyword = self._keyword(query, where, args, depth, trace)
        semantic = self._semantic(query, where, args, depth, trace, also=keyword)
        missing = [i for i in semantic if i not in keyword]
        with trace.stage("keyword"):
            keyword.update(self._keyword(query, where, args, len(missing) or 1, trace, only=missing))
        with trace.stage("fuse"):
            # fused on unit ids, not row ids: RRF ties then break as they do on OpenSearch
            units = self._unit_ids({*keyword, *semantic})
            rows = {unit: row for row, unit in units.items()}
            fused = fuse(
                {units[r]: s for r, s in keyword.items() if r in units},
                {units[r]: s for r, s in semantic.items() if r in units},
                k,
                semantic_floor=semantic_floor,
            )
        scored = {rows[unit]: score for unit, score in fused}
        if pending:
            # a chunk without its vector yet has no semantic rank to fuse (unknown, not last): it is scored as a
            # keyword search scores it, so a fresh upload is not ranked under the floor for what it cannot show yet
            candidates = set(keyword) | set(scored)
            unembedded = self._keyword_only(candidates)
            if unembedded:
                scored.update({r: keyword[r] for r in unembedded if r in keyword})
                ranked = sorted(scored.items(), key=lambda kv: tie_order(units[kv[0]], kv[1]))[:k]
                scored = dict(ranked)
                shown = sorted(units[r] for r in unembedded if r in scored)
                if shown:
                    trace["keyword_only"] = shown
        return self._hits(scored), trace

    retriever = index_retriever  # a retriever for `ask()` bound to a tenant, scope, groups and filter

    def stats(self) -> dict[str, Any]:
        db = self._db()
        with self._lock:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            documents = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            tenants = db.execute("SELECT count(DISTINCT tenant) FROM documents").fetchone()[0]
        return {
            "backend": "sqlite",
            "path": str(self.path),
            "documents": documents,
            "chunks": chunks,
            "tenants": tenants,
            "embed_model": meta.get("embed_model"),
            "embed_dim": int(meta["embed_dim"]) if "embed_dim" in meta else None,
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
        }

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
