"""The keyword postings in memory (`store/postings.py`): the same BM25 ranking as FTS5 unpruned, exact under
the caller's filter, and kept current by the change log through ingest, rewrite, delete and move."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sourcerer.store import postings
from sourcerer.store import sqlite as sqlite_module
from sourcerer.store.models import Document
from sourcerer.store.postings import TermIndex
from sourcerer.store.sqlite import SQLiteIndex

TEXTS = [
    "Shipping is free above fifty euros and takes three days.",
    "Returns are accepted within thirty days of delivery for a refund.",
    "Express shipping takes one day and costs twelve euros.",
    "Refunds reach the card within five days of the return arriving.",
    "Our warehouse ships orders every weekday, and shipping to islands takes longer.",
    "Gift cards cannot be refunded, returned or exchanged.",
]
QUESTIONS = ["how long does shipping take", "refund for returns", "gift card exchange", "express days euros", "islands"]


@pytest.fixture
def index(tmp_path):
    index = SQLiteIndex(tmp_path / "i.db", embedder=None, graph=True)  # graph=True: a long-running process
    for i, text in enumerate(TEXTS):
        index.ingest_document(
            Document(tenant="acme", source_uri=f"faq/{i}.md", text=text, scope="acme/public" if i % 2 else None)
        )
    index.ingest_document(Document(tenant="other", source_uri="faq/x.md", text="Shipping refunds returns express gift islands"))
    yield index
    index.close()


def ready(index: SQLiteIndex) -> None:
    index.search("shipping", tenant="acme", mode="keyword")  # the first large search starts the build
    deadline = time.monotonic() + 10
    while index._terms_state != "ready" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert index._terms_state == "ready"


def ranked(index: SQLiteIndex, question: str, **kw) -> tuple[list[tuple[str, float]], str | None]:
    hits = index.search(question, tenant="acme", mode="keyword", k=10, **kw)
    return [(h.unit_id, round(h.score, 9)) for h in hits], hits.trace.get("keyword_path")


def through_fts(index: SQLiteIndex, question: str, monkeypatch, **kw) -> list[tuple[str, float]]:
    state = index._terms_state
    with monkeypatch.context() as m:
        m.setattr(sqlite_module, "COMMON_TERM_SHARE", 1.0)  # FTS5 with every term: the unpruned ranking
        index._terms_state = "off"
        try:
            result, path = ranked(index, question, **kw)
        finally:
            index._terms_state = state
    assert path is None
    return result


def assert_same_as_fts(index, monkeypatch, **kw):
    for question in QUESTIONS:
        served, path = ranked(index, question, **kw)
        assert path == "postings"
        assert served == through_fts(index, question, monkeypatch, **kw), question


def test_postings_rank_exactly_as_fts5_unpruned_within_the_callers_filter(index, monkeypatch):
    ready(index)
    assert_same_as_fts(index, monkeypatch)
    assert_same_as_fts(index, monkeypatch, scope="acme/public")
    served, _ = ranked(index, "shipping refunds returns express gift islands")
    other = {h.unit_id for h in index.search("shipping", tenant="other", mode="keyword")}
    assert served and not other & {unit for unit, _ in served}  # never another tenant's chunk


def test_the_chunks_a_vector_search_found_are_scored_as_fts5_scores_them(index, monkeypatch):
    """Hybrid search scores the keyword side of the chunks only the vector search found (`only`): the postings
    give each the BM25 that FTS5 gives it (chunks holding no query term left out), without ranking every chunk."""
    from sourcerer.store.sqlite import visibility_sql

    ready(index)
    chunks = [r[0] for r in index._db().execute("SELECT id FROM chunks")]  # every tenant's: the filter still holds
    for question, scope in ((q, scope) for q in QUESTIONS for scope in (None, "acme/public")):
        where, args = visibility_sql("acme", scope, None, None)
        trace: dict = {}
        served = index._keyword(question, where, args, len(chunks), trace, only=chunks)  # type: ignore[arg-type]
        assert trace["keyword_path"] == "postings" and (served or scope)
        index._terms_state = "off"
        try:
            stored = index._keyword(question, where, args, len(chunks), {}, only=chunks)  # type: ignore[arg-type]
        finally:
            index._terms_state = "ready"
        assert served == pytest.approx(stored, rel=1e-6), (question, scope)


def test_postings_follow_every_write_through_the_change_log(index, monkeypatch):
    ready(index)
    index.ingest_document(Document(tenant="acme", source_uri="faq/new.md", text="Islands get shipping in ten days."))
    index.ingest_document(Document(tenant="acme", source_uri="faq/0.md", text="Shipping is free above eighty euros."))
    gone = index.list_documents("acme")[1]["document_id"]
    assert index.delete_document("acme", gone)
    moved = next(d for d in index.list_documents("acme") if d["source_uri"] == "faq/2.md")
    index.move_document("acme", moved["document_id"], "acme/public")
    assert_same_as_fts(index, monkeypatch)
    assert_same_as_fts(index, monkeypatch, scope="acme/public")
    assert index._terms.retired >= 3  # rewritten, deleted and moved chunks were retired, not edited in place


def merged(index: TermIndex) -> None:
    deadline = time.monotonic() + 10
    while index.merging and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not index.merging


def test_merging_and_compacting_keep_the_ranking(monkeypatch):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(40)]
    docs = {i: " ".join(rng.choice(words, size=int(rng.integers(3, 12)))) for i in range(300)}
    fresh = TermIndex()
    fresh.reset(0, docs.items())
    changed = TermIndex()
    changed.reset(0, list(docs.items())[:100])
    monkeypatch.setattr(postings, "MERGE_DELTA", 50)
    base = len(changed.rows)
    changed.apply(1, [], list(docs.items())[100:])  # the delta is frozen and merged in the background
    searched_while_merging = changed.search(words[:6], 300, 7.0, np.ones(300, dtype=bool), 20)
    merged(changed)
    assert len(changed.rows) > base and not changed.delta
    assert searched_while_merging == changed.search(words[:6], 300, 7.0, np.ones(300, dtype=bool), 20)
    rewritten = {i: docs[i] for i in range(0, 300, 2)}
    changed.apply(2, list(rewritten), rewritten.items())  # every other row retired and appended again
    merged(changed)
    assert changed.retired == 150
    visible = np.ones(changed.size, dtype=bool)
    before = changed.search(words[:6], 300, 7.0, visible, 20)  # retired rows count in no term's frequency
    assert before == fresh.search(words[:6], 300, 7.0, np.ones(fresh.size, dtype=bool), 20)
    monkeypatch.setattr(postings, "MERGE_DELTA", 10**9)
    assert changed.compact() is False  # a quarter retired is the floor, at least 10,000
    changed.retired = 20_000
    assert changed.compact() is True and changed.size == 300 and changed.retired == 0
    assert changed.search(words[:6], 300, 7.0, np.ones(changed.size, dtype=bool), 20) == before


def test_the_vector_cache_compacts_its_retired_rows_like_the_postings():
    from sourcerer.store.vectors import VectorCache

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cache = VectorCache()
    cache.reset(0, [(i, vectors[i].tobytes()) for i in range(40)])
    cache.apply(1, list(range(0, 40, 2)), [(i, vectors[i].tobytes()) for i in range(0, 20, 2)])  # 10 rewritten, 10 deleted
    before, _ = cache.search(vectors[3], np.ones(cache.size, dtype=bool), 10, [])
    assert cache.compact() is False
    cache.retired = 20_000
    generation = cache.generation
    assert cache.compact() is True and cache.size == 30 and cache.retired == 0 and cache.generation == generation + 1
    assert sorted(cache.row_of) == sorted(set(range(1, 40, 2)) | set(range(0, 20, 2)))
    assert cache.search(vectors[3], np.ones(cache.size, dtype=bool), 10, [])[0] == before
