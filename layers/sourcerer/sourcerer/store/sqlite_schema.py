"""The SQLite index's file: its schema, and the migrations that bring a file written by an older release up to
date when it is opened (each once, in one transaction, safe when several processes open it at once). Terms are
stored hex-encoded (`fts_token`), so FTS5's own tokenizer cannot split or fold them differently from the
library's."""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

from sourcerer.errors import ConfigurationError
from sourcerer.sqlitedb import connect, transaction
from sourcerer.store.base import index_terms, title_of
from sourcerer.store.models import document_id_for
from sourcerer.text import RETOKENIZE, TOKENIZER_VERSION

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    tenant TEXT NOT NULL, document_id TEXT NOT NULL, source_uri TEXT NOT NULL, label TEXT NOT NULL,
    scope TEXT NOT NULL, acl TEXT NOT NULL, metadata TEXT NOT NULL, content_type TEXT,
    content_hash TEXT NOT NULL, chunks INTEGER NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (tenant, document_id)
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, unit_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL, document_id TEXT NOT NULL,
    position INTEGER NOT NULL, text TEXT NOT NULL, label TEXT NOT NULL, scope TEXT NOT NULL, acl TEXT NOT NULL,
    locator TEXT NOT NULL, receipt TEXT NOT NULL, n_terms INTEGER NOT NULL, vector BLOB, sentences TEXT,
    synthesis_vectors BLOB
);
CREATE INDEX IF NOT EXISTS documents_by_content ON documents (tenant, content_hash);  -- is an original still held?
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (tenant, document_id);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks (id) WHERE vector IS NULL;
CREATE TABLE IF NOT EXISTS chunk_scopes (scope TEXT NOT NULL, chunk INTEGER NOT NULL, PRIMARY KEY (scope, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_groups (grp TEXT NOT NULL, chunk INTEGER NOT NULL, PRIMARY KEY (grp, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(terms, tokenize = 'ascii');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
"""


@lru_cache(maxsize=200_000)
@lru_cache(maxsize=200_000)
def fts_token(term: str) -> str:
    """Hex-encode a term: FTS5 then sees one opaque ASCII token, whatever the script (remembered: terms repeat,
    and this ran once per term of every chunk ingested)."""
    return "t" + term.encode("utf-8").hex()


def open_index_file(path: Path, model_id: str) -> sqlite3.Connection:
    """A connection to the index at `path`, created or migrated; an index built with another embedding model
    is a `ConfigurationError` (its vectors would not compare with the questions')."""
    conn = connect(path, SCHEMA)
    columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
    if "sentences" not in columns:  # an index from before sentence offsets: its chunks cite whole
        conn.execute("ALTER TABLE chunks ADD COLUMN sentences TEXT")
    if "synthesis_vectors" not in columns:  # from before sentence vectors: answering embeds them (cached)
        conn.execute("ALTER TABLE chunks ADD COLUMN synthesis_vectors BLOB")
    row = conn.execute("SELECT value FROM meta WHERE key='embed_model'").fetchone()
    if row is None:
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('embed_model', ?), ('version', '0')", (model_id,))
    elif row[0] != model_id:
        conn.close()
        raise ConfigurationError(
            f"index {path} was built with embedding model {row[0]!r}, not {model_id!r}: "
            f"set SOURCERER_EMBEDDER to match, or ingest into a new index"
        )
    _scope_identity(conn)
    if conn.execute("SELECT 1 FROM meta WHERE key='chunk_count'").fetchone() is None:  # an older index
        conn.execute(
            "INSERT OR IGNORE INTO meta SELECT 'chunk_count', count(*) FROM chunks"
            " UNION ALL SELECT 'term_count', coalesce(sum(n_terms), 0) FROM chunks"
        )
    _retokenize(conn)
    return conn


def _scope_identity(conn: sqlite3.Connection) -> None:
    """Rename documents ingested before the scope was part of a document's identity, once, in one transaction,
    so that their next re-ingest finds them (`unchanged`) instead of adding a second copy."""
    if conn.execute("SELECT 1 FROM meta WHERE key='identity'").fetchone():
        return
    with transaction(conn):
        if not conn.execute("SELECT 1 FROM meta WHERE key='identity'").fetchone():  # another process may have won
            for tenant, old, scope, uri in conn.execute(
                "SELECT tenant, document_id, scope, source_uri FROM documents"
            ).fetchall():
                new = document_id_for(tenant, scope, uri)
                if new != old:
                    conn.execute("UPDATE documents SET document_id=? WHERE tenant=? AND document_id=?", (new, tenant, old))
                    conn.execute("UPDATE chunks SET document_id=? WHERE tenant=? AND document_id=?", (new, tenant, old))
            conn.execute("INSERT INTO meta VALUES ('identity', 'tenant-scope-source')")


def _retokenize(conn: sqlite3.Connection) -> None:
    """Give the chunks whose terms a newer tokenizer changed (`sourcerer.text.RETOKENIZE`) their new BM25
    terms, once, in one transaction, so that questions (tokenised the new way) find them again."""
    row = conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
    since = int(row[0]) if row else 1  # indexes from before the version was recorded used version 1
    if since >= TOKENIZER_VERSION:
        return
    changed = [RETOKENIZE[v] for v in range(since + 1, TOKENIZER_VERSION + 1) if v in RETOKENIZE]
    with transaction(conn):
        row = conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        if not row or int(row[0]) < TOKENIZER_VERSION:  # another process may have done it meanwhile
            delta = 0
            for rowid, text, n_terms, label, uri in conn.execute(
                "SELECT c.id, c.text, c.n_terms, d.label, d.source_uri FROM chunks c"
                " JOIN documents d ON d.tenant = c.tenant AND d.document_id = c.document_id"
            ).fetchall():
                title = title_of(label, uri)
                if not any(p.search(text) or p.search(title) for p in changed):
                    continue
                new = [fts_token(t) for t in index_terms(SimpleNamespace(text=text), title)]  # type: ignore[arg-type]
                conn.execute("UPDATE chunks_fts SET terms = ? WHERE rowid = ?", (" ".join(new), rowid))
                conn.execute("UPDATE chunks SET n_terms = ? WHERE id = ?", (len(new), rowid))
                delta += len(new) - n_terms
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='term_count'", (delta,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('tokenizer', ?)", (str(TOKENIZER_VERSION),))
