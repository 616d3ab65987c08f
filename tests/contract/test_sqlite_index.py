"""The SQLite adapter against the Index contract, plus what only a file-backed index can show."""

import pytest
from fakes import HashedEmbedder
from index_contract import FAILOVER, IndexContract
from sourcerer.errors import ConfigurationError
from sourcerer.retrieval.embedders import local_embedder
from sourcerer.store import open_index
from sourcerer.store.sqlite import SQLiteIndex
from sourcerer.store.sqlite_filters import visibility_sql


class TestSQLiteIndex(IndexContract):
    @pytest.fixture
    def index(self, tmp_path):
        index = SQLiteIndex(tmp_path / "index.db", embedder=local_embedder())
        yield index
        index.close()


def test_opening_with_another_embedding_model_is_a_configuration_error(tmp_path):
    SQLiteIndex(tmp_path / "i.db", embedder=local_embedder()).ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    with pytest.raises(ConfigurationError, match="built with embedding model"):
        SQLiteIndex(tmp_path / "i.db", embedder=None).search("failover", tenant="local")


def test_keyword_only_index_runs_semantic_as_keyword_and_says_so(tmp_path):
    index = SQLiteIndex(tmp_path / "k.db", embedder=None)
    index.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    hits = index.search("failover cutover", tenant="local", mode="hybrid")
    assert hits and hits.trace["mode"] == "keyword" and "keyword-only" in hits.trace["fallback"]


def test_a_failed_ingest_leaves_the_previous_version_whole(tmp_path):
    class Exploding:
        model_id = "test:exploding"
        calls = 0

        def embed(self, texts, role):
            import numpy as np

            Exploding.calls += 1
            if Exploding.calls > 2:  # the first ingest embeds twice (chunks, then their sentences)
                raise RuntimeError("embedder died mid-ingest")
            return np.ones((len(texts), 4), dtype=np.float32) / 2

        def calibrate(self, cosine):
            return cosine

    index = SQLiteIndex(tmp_path / "x.db", embedder=Exploding())
    index.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    with pytest.raises(RuntimeError):
        index.ingest_document({"source_uri": "a.txt", "text": FAILOVER.replace("42", "97")})
    texts = [h.text for h in index.search("failover", tenant="local", mode="keyword")]
    assert any("42 seconds" in t for t in texts) and not any("97" in t for t in texts)


def test_open_index_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert open_index("sqlite:///rel/index.db", embedder="none").path.as_posix() == "rel/index.db"
    assert open_index(f"sqlite:///{tmp_path}/abs.db", embedder="none").path == tmp_path / "abs.db"
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path / "home"))
    assert open_index(embedder="none").path == tmp_path / "home" / "index.db"
    with pytest.raises(ConfigurationError):
        open_index("mysql://x/y")
    os_index = open_index("opensearch+https://user:p%40ss@search.example.com/docs?aws=aoss&region=eu-west-1", embedder="none")
    assert (os_index.host, os_index.port, os_index.index, os_index.serverless, os_index.region) == (
        "search.example.com",
        443,
        "docs",
        True,
        "eu-west-1",
    )
    assert os_index.http_auth == ("user", "p@ss")


def test_an_index_from_before_scoped_identity_is_renamed_once_and_re_ingests_unchanged(tmp_path):
    import hashlib

    index = SQLiteIndex(tmp_path / "old.db", embedder=None)
    first = index.ingest_document({"source_uri": "ops.md", "text": FAILOVER, "tenant": "acme", "scope": "acme/alpha"})
    legacy = "doc_" + hashlib.sha256(b"acme\x00ops.md").hexdigest()[:20]  # the id before the scope was part of it
    db = index._db()
    db.execute("UPDATE documents SET document_id=?", (legacy,))
    db.execute("UPDATE chunks SET document_id=?", (legacy,))
    db.execute("DELETE FROM meta WHERE key='identity'")
    index.close()

    reopened = SQLiteIndex(tmp_path / "old.db", embedder=None)
    again = reopened.ingest_document({"source_uri": "ops.md", "text": FAILOVER, "tenant": "acme", "scope": "acme/alpha"})
    assert again == {"document_id": first["document_id"], "chunks": first["chunks"], "status": "unchanged"}
    assert [h.document_id for h in reopened.search("failover", tenant="acme", k=5, mode="keyword")] == [
        first["document_id"]
    ] * len(reopened.search("failover", tenant="acme", k=5, mode="keyword"))


def test_a_write_between_masking_and_searching_never_pairs_a_mask_with_other_rows(tmp_path):
    """The race seen at 64 clients with ingest running: a mask made before a write is used after it. Rows the
    mask does not cover are not searched (they are newer than the caller's view), never misread."""
    index = SQLiteIndex(tmp_path / "race.db", embedder=HashedEmbedder())
    index.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    where, args = visibility_sql("local", None, None)
    old_mask = index._visible(index._catch_up(), where, args)
    index.ingest_document({"source_uri": "b.txt", "text": "The cafeteria opens at noon."})
    cache = index._catch_up()
    assert cache.size > len(old_mask)
    found, _ = cache.search(HashedEmbedder().embed(["x"], "query")[0], old_mask, 10, [])
    assert set(found) <= set(cache.ids[: len(old_mask)].tolist())
    assert index.search("cafeteria", tenant="local", mode="hybrid")


def test_readers_catch_up_on_another_process_writes_without_reloading(tmp_path):
    writer, reader = (
        SQLiteIndex(tmp_path / "shared.db", embedder=HashedEmbedder()),
        SQLiteIndex(tmp_path / "shared.db", embedder=HashedEmbedder()),
    )
    writer.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    assert reader.search("failover", tenant="local", mode="semantic")
    generation = reader._vectors.generation
    writer.ingest_document({"source_uri": "b.txt", "text": "The cafeteria opens at noon."})
    assert "b.txt" in {h.source_uri for h in reader.search("cafeteria", tenant="local", mode="semantic", k=20)}
    assert reader._vectors.generation == generation  # applied from the change log, not reloaded
    writer.delete_document("local", writer.list_documents("local")[0]["document_id"])
    assert {h.source_uri for h in reader.search("failover", tenant="local", mode="semantic", k=20)} == {"b.txt"}
    moved = writer.list_documents("local")[0]["document_id"]
    writer.move_document("local", moved, "local/elsewhere")
    assert list(reader.search("cafeteria", tenant="local", scope="local/other", mode="semantic")) == []
    assert reader.search("cafeteria", tenant="local", scope="local/elsewhere", mode="semantic")


def test_a_reader_behind_a_pruned_change_log_reloads(tmp_path, monkeypatch):
    from sourcerer.store import sqlite as module

    monkeypatch.setattr(module, "CHANGE_LOG_ROWS", 2)
    writer, reader = (
        SQLiteIndex(tmp_path / "pruned.db", embedder=HashedEmbedder()),
        SQLiteIndex(tmp_path / "pruned.db", embedder=HashedEmbedder()),
    )
    writer.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    reader.search("failover", tenant="local", mode="semantic")
    generation = reader._vectors.generation
    for i in range(6):
        writer.ingest_document({"source_uri": f"n{i}.txt", "text": f"Note {i}: the cafeteria opens at {i} pm. Bring a badge."})
    hits = reader.search("cafeteria", tenant="local", mode="semantic", k=20)
    assert len({h.source_uri for h in hits}) == 7 and reader._vectors.generation > generation


def test_the_hnsw_path_returns_what_exact_search_returns_and_only_visible_rows(tmp_path, monkeypatch):
    pytest.importorskip("faiss")
    import time

    from sourcerer.store import vectors

    index = SQLiteIndex(tmp_path / "graph.db", embedder=HashedEmbedder(), graph=True)
    for i in range(60):
        tenant = "acme" if i % 3 else "globex"
        index.ingest_document(
            {"tenant": tenant, "source_uri": f"d{i}.txt", "text": f"Document {i} talks about topic {i * 7 % 11}."}
        )
    exact = {q: [h.unit_id for h in index.search(q, tenant="acme", mode="semantic", k=5)] for q in ("topic 3", "document 42")}
    exact_globex = [h.unit_id for h in index.search("topic 3", tenant="globex", mode="semantic", k=5)]
    monkeypatch.setattr(vectors, "ANN_MIN_ROWS", 10)
    monkeypatch.setattr(vectors, "EXACT_VISIBLE_ROWS", 0)
    index.ingest_document({"tenant": "acme", "source_uri": "late.txt", "text": "A late document about nothing in particular."})
    index._catch_up()
    for _ in range(100):  # the graph is built in a background thread
        if index._vectors.ann is not None:
            break
        time.sleep(0.05)
    assert index._vectors.ann is not None
    one_shot = SQLiteIndex(tmp_path / "graph.db", embedder=HashedEmbedder())
    one_shot._catch_up()
    assert one_shot._vectors.ann is None and not one_shot._vectors._building  # a CLI command never starts one
    reopened = SQLiteIndex(tmp_path / "graph.db", embedder=HashedEmbedder(), graph=True)
    reopened._catch_up()  # a large index opened fresh builds its graph without waiting for a write
    for _ in range(100):
        if reopened._vectors.ann is not None:
            break
        time.sleep(0.05)
    assert reopened._vectors.ann is not None
    for q, expected in exact.items():
        hits = index.search(q, tenant="acme", mode="semantic", k=5)
        assert hits.trace["vector_search"]["path"] == "hnsw"
        assert [h.unit_id for h in hits] == expected  # a tiny graph is exact
        assert {d["document_id"] for d in index.list_documents("globex")}.isdisjoint({h.document_id for h in hits})
    # a tenant with a small share of the graph's rows is scanned exactly (faiss, filtered by the same bitmap)
    monkeypatch.setattr(vectors, "FLAT_VISIBLE_SHARE", 0.4)  # globex holds a third of the rows
    hits = index.search("topic 3", tenant="globex", mode="semantic", k=5)
    assert hits.trace["vector_search"]["path"] == "exact-filtered"
    assert [h.unit_id for h in hits] == exact_globex


def test_an_index_from_an_older_tokenizer_is_retokenised_once_where_the_terms_changed(tmp_path):
    """Arabic light stemming (tokenizer 2) changed Arabic terms: an index written before it gets the new terms of
    its Arabic chunks when opened, so a question with other clitics finds them; other chunks are not rewritten."""
    import sqlite3

    from sourcerer.store.sqlite_schema import fts_token
    from sourcerer.text import TOKENIZER_VERSION, normalize, terms

    arabic = "تفتح المكتبات العامة أبوابها في الساعة التاسعة صباحا."
    path = tmp_path / "old.db"
    index = SQLiteIndex(path, embedder=None)
    index.ingest_document({"source_uri": "ar.txt", "text": arabic})
    index.ingest_document({"source_uri": "en.txt", "text": FAILOVER})
    index.close()
    with sqlite3.connect(path) as db:  # as tokenizer 1 wrote it: Arabic words unstemmed
        (rowid,) = db.execute("SELECT id FROM chunks WHERE text LIKE 'تفتح%'").fetchone()
        old = [fts_token(w) for w in normalize(arabic).rstrip(".").split()]
        db.execute("UPDATE chunks_fts SET terms = ? WHERE rowid = ?", (" ".join(old), rowid))
        db.execute(
            "UPDATE meta SET value = value + ? - (SELECT n_terms FROM chunks WHERE id = ?) WHERE key = 'term_count'",
            (len(old), rowid),
        )
        db.execute("UPDATE chunks SET n_terms = ? WHERE id = ?", (len(old), rowid))
        db.execute("DELETE FROM meta WHERE key = 'tokenizer'")
        english_before = db.execute("SELECT terms FROM chunks_fts WHERE rowid != ?", (rowid,)).fetchall()
    question = "متى تفتح مكتبة المدينة؟"  # "library" without the article and with another suffix
    index = SQLiteIndex(path, embedder=None)
    hits = index.search(question, tenant="local", mode="keyword")
    assert [h.source_uri for h in hits] == ["ar.txt"]
    index.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (str(TOKENIZER_VERSION),)
        (stored,) = db.execute("SELECT terms FROM chunks_fts WHERE rowid = ?", (rowid,)).fetchone()
        assert stored.split() == [fts_token(t) for t in terms(arabic)] and fts_token("مكتب") in stored.split()
        assert db.execute("SELECT terms FROM chunks_fts WHERE rowid != ?", (rowid,)).fetchall() == english_before
        chunk_terms, term_count = db.execute(
            "SELECT (SELECT sum(n_terms) FROM chunks), (SELECT value FROM meta WHERE key = 'term_count')"
        ).fetchone()
        assert int(term_count) == chunk_terms


def test_keyword_scores_are_the_one_bm25_of_the_in_memory_retriever(tmp_path):
    """One BM25 (retrieval/keyword.py): the index's keyword scores (FTS5 candidates, rescored) equal the in-memory
    retriever's over the same texts; the postings that serve long-running processes agree in test_postings."""
    from sourcerer import keyword_retriever

    texts = [
        "Failover: the cutover to the standby region took 42 seconds during the drill.",
        "Billing: invoices go out on the first business day of each month.",
        "Failover drills: twice a year the standby region takes over for a full day, and the drill is announced.",
        "Onboarding: every engineer gets a laptop and a failover runbook on the first day.",
    ]
    index = SQLiteIndex(tmp_path / "bm25.db", embedder=None)
    for n, text in enumerate(texts):  # titles inside their text: the chunk's terms are the text's own
        index.ingest_document({"source_uri": f"d{n}.txt", "text": text, "metadata": {"title": text.split(":")[0]}})
    for query in ("failover drill standby", "first day laptop", "invoices month"):
        indexed = {h.text: h.score for h in index.search(query, tenant="local", k=4, mode="keyword")}
        in_memory = {p.text: p.score for p in keyword_retriever([{"text": t} for t in texts])(query, 4)}
        assert indexed.keys() == in_memory.keys() and indexed
        assert all(abs(indexed[t] - in_memory[t]) < 1e-5 for t in indexed), (query, indexed, in_memory)
