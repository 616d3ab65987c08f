"""Deferred embedding: ingest makes a document keyword-searchable at once; vectors follow (background worker,
`sourcerer ingest`'s second phase, `sourcerer embed`), and search meanwhile says how many are pending."""

import hashlib
import threading
import time

import numpy as np
import pytest
from sourcerer.accounting import tally
from sourcerer.cli import main
from sourcerer.store.background import BackgroundEmbedder
from sourcerer.store.sqlite import SQLiteIndex

DOCS = {
    "ops.md": "# Operations\n\nThe failover cutover from the primary region to the standby region completed in 42 seconds.\n",
    "people.md": "# People\n\nEngineers get a laptop on their first day. Badges are collected at the front desk.\n",
    "travel.md": "# Travel\n\nFlights over six hours may be booked in premium economy with a manager's approval.\n",
}


class Counting:
    """Deterministic vectors per text, counting the texts it embeds (thread-safe)."""

    model_id = "test:counting"

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def embed(self, texts, role):
        with self._lock:
            self.calls += len(texts)
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(16) for t in texts]
        matrix = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
        return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)

    def calibrate(self, cosine):
        return (cosine + 1) / 2


def _ingest(index):
    for uri, text in DOCS.items():
        index.ingest_document({"source_uri": uri, "text": text})


def test_a_deferred_ingest_is_keyword_searchable_at_once_and_ranks_as_if_embedded(tmp_path):
    eager, deferred = (
        SQLiteIndex(tmp_path / "eager.db", embedder=Counting()),
        SQLiteIndex(tmp_path / "deferred.db", embedder=Counting(), defer_embedding=True),
    )
    _ingest(eager)
    _ingest(deferred)
    assert deferred.embedder.calls == 0 and deferred.pending_embeddings() == 3
    assert deferred.search("failover cutover", tenant="local", mode="keyword")[0].source_uri == "ops.md"
    with tally() as spent:
        while_pending = deferred.search("failover region", tenant="local", k=3)
    assert spent.search["pending_embeddings"] == 3 and spent.search["embedded_on_demand"] == 3
    expected = [(h.source_uri, h.score) for h in eager.search("failover region", tenant="local", k=3)]
    assert [(h.source_uri, h.score) for h in while_pending] == expected  # a fresh upload ranks as if embedded
    assert deferred.embed_pending(batch=2) == 3 and deferred.pending_embeddings() == 0
    with tally() as spent:
        embedded = deferred.search("failover region", tenant="local", k=3)
    assert [(h.source_uri, h.score) for h in embedded] == expected
    assert spent.search["pending_embeddings"] == 0 and "embedded_on_demand" not in spent.search
    assert all(h.vectors is not None for h in embedded)  # sentence vectors stored too: the answer path embeds nothing


def test_a_document_replaced_or_deleted_while_pending_is_never_given_stale_vectors(tmp_path):
    index = SQLiteIndex(tmp_path / "index.db", embedder=Counting(), defer_embedding=True)
    _ingest(index)
    index.ingest_document({"source_uri": "ops.md", "text": "# Operations\n\nThe cutover now takes 30 seconds.\n"})
    index.delete_document(
        "local", next(d["document_id"] for d in index.list_documents("local") if d["source_uri"] == "people.md")
    )
    assert index.embed_pending() == 2
    rows = (
        index._db()
        .execute(
            "SELECT d.source_uri, c.text FROM chunks c JOIN documents d USING (tenant, document_id) WHERE c.vector IS NOT NULL"
        )
        .fetchall()
    )
    assert sorted(uri for uri, _ in rows) == ["ops.md", "travel.md"]
    assert "30 seconds" in dict(rows)["ops.md"]  # the replacement's text, not the replaced chunk's
    assert index.search("cutover seconds", tenant="local", mode="semantic", k=5)


def test_one_background_embedder_per_index_file_fills_the_vectors(tmp_path):
    first = SQLiteIndex(tmp_path / "shared.db", embedder=Counting(), defer_embedding=True)
    second = SQLiteIndex(tmp_path / "shared.db", embedder=Counting(), defer_embedding=True)
    workers = [BackgroundEmbedder(first, idle_s=0.05).start()]
    time.sleep(0.2)  # the first takes the file lock
    workers.append(BackgroundEmbedder(second, idle_s=0.05).start())
    _ingest(second)
    deadline = time.time() + 10
    while first.pending_embeddings() and time.time() < deadline:
        time.sleep(0.05)
    for worker in workers:
        worker.stop()
    assert first.pending_embeddings() == 0
    assert first.embedder.calls > 0 and second.embedder.calls == 0  # the second process waited on the lock
    assert second.search("laptop badges", tenant="local", mode="semantic")


@pytest.mark.local_model
def test_cli_ingest_then_embed_later(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path / "home"))
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert main(["ingest", str(folder), "--no-embed"]) == 0
    out = capsys.readouterr().out
    assert "keyword-searchable now" in out and "3 chunks wait for their vectors" in out
    assert main(["embed"]) == 0
    captured = capsys.readouterr()
    assert "3 chunks embedded" in captured.out and "3/3 chunks embedded" in captured.err
    assert main(["embed"]) == 0 and "0 chunks embedded" in capsys.readouterr().out
    assert main(["search", "failover cutover", "--mode", "semantic"]) == 0
    assert "ops.md" in capsys.readouterr().out
