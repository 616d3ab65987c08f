"""The SQLite adapter against the Index contract, plus what only a file-backed index can show."""

import pytest
from index_contract import FAILOVER, IndexContract
from sourcerer.accounting import tally
from sourcerer.errors import ConfigurationError
from sourcerer.retrieval.embedders import local_embedder
from sourcerer.store import open_index
from sourcerer.store.sqlite import SQLiteIndex


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
    with tally() as spent:
        hits = index.search("failover cutover", tenant="local", mode="hybrid")
    assert hits and spent.search["mode"] == "keyword" and "keyword-only" in spent.search["fallback"]


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


def test_a_write_between_reading_vectors_and_masking_them_never_mismatches_the_snapshot(tmp_path):
    """The race seen at 64 clients with ingest running: one search read the vectors, a write landed, another
    search cached a mask for the newer vectors, and the first paired that mask with its older ids."""
    import numpy as np

    class Flat:
        model_id = "test:flat"

        def embed(self, texts, role):
            return np.ones((len(texts), 4), dtype=np.float32) / 2

        def calibrate(self, cosine):
            return cosine

    index = SQLiteIndex(tmp_path / "race.db", embedder=Flat())
    index.ingest_document({"source_uri": "a.txt", "text": FAILOVER})
    old_version, old_ids, _ = index._matrix()
    where, args = index._filter("local", None, None)
    index.ingest_document({"source_uri": "b.txt", "text": "The cafeteria opens at noon."})
    index.search("failover", tenant="local", mode="semantic")  # caches a mask for the newer snapshot
    assert len(index._visible(old_version, old_ids, where, args)) == len(old_ids)
    assert index.search("cafeteria", tenant="local", mode="hybrid")
