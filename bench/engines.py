"""Hybrid search and ingest beside an embedded engine, in one process, on the same chunks and vectors (issue 26).

Corpus: 600 SciFact abstracts, every abstract a test claim cites and the rest drawn at random (fixed seed);
questions: the 300 test claims. The chunks are the SQLite index's own (its chunker, the bundled e5 model's
vectors, cached in bench/.cache), and LanceDB is given exactly those chunks, texts and vectors, with a full-text
index on the text: both fuse BM25 and vector search with Reciprocal Rank Fusion (LanceDB's default hybrid
reranker), and both are handed the same precomputed question vector, so no model runs in the timed part.

Ours is the SQLite index as `sourcerer serve` runs it (a long-running process: postings and vectors in
memory), through `Index.search` with its tenant filter, trace and hit objects. Figures: p50 and CPU per query,
nDCG@10 (abstract level), and ingest in documents per second with every vector already computed (ours: a fresh
index whose embedder answers from the cache, sentence vectors included, given the whole list at once by
`Index.ingest_documents` and one document at a time by `ingest_document`, and without an embedder (keyword
only, `SOURCERER_EMBEDDER=none`); LanceDB: one `add` of the same rows
and its full-text index; Qdrant in local mode: one `upsert` of the same vectors and texts, no keyword index).
Targets: hybrid search p50 at or below LanceDB's at equal nDCG@10; ingest ≥ 1,500 documents per second.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from bench.common import EVAL, table, use_bench_cache, write_result
from bench.datasets import corpus_documents, doc_ranking, ingest_corpus, qrels, read_jsonl, scifact_corpus
from bench.metrics import ndcg_at, per_query

SIZE = 600
SEED = 26


class KnownQuestions:
    """The cached bundled model, answering the benchmark's questions from vectors computed before the clock."""

    def __init__(self, inner, questions: list[str]) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.known = dict(zip(questions, inner.embed(questions, "query"), strict=True))

    def calibrate(self, cosine: float) -> float:
        return self.inner.calibrate(cosine)

    def embed(self, texts, role):
        import numpy as np

        if role == "query" and all(t in self.known for t in texts):
            return np.stack([self.known[t] for t in texts])
        return self.inner.embed(texts, role)


def run(size: int = SIZE) -> dict:
    use_bench_cache()
    import numpy as np
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    corpus = scifact_corpus()
    queries = {q["_id"]: q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")}
    relevant = qrels(EVAL / "scifact" / "qrels" / "test.tsv")
    cited = {doc for docs in relevant.values() for doc in docs}
    rest = [r for r in corpus if r["_id"] not in cited]
    chosen = [r for r in corpus if r["_id"] in cited] + random.Random(SEED).sample(rest, max(0, size - len(cited)))
    test_ids = sorted(relevant)
    questions = [queries[q] for q in test_ids]
    embedder = KnownQuestions(local_embedder(), questions)
    tmp = Path(tempfile.mkdtemp(prefix="sourcerer-engines-"))

    ingest_corpus(SQLiteIndex(tmp / "warm.db", embedder=embedder), chosen, "scifact")  # fills the cache: vectors precomputed
    documents = corpus_documents(chosen, "scifact")
    index = SQLiteIndex(tmp / "served.db", embedder=embedder, graph=True)
    started = time.perf_counter()
    chunks = sum(outcome["chunks"] for outcome in index.ingest_documents(documents))
    ours_ingest_s = time.perf_counter() - started
    one_by_one_s, _ = ingest_corpus(SQLiteIndex(tmp / "one-by-one.db", embedder=embedder), chosen, "scifact")
    started = time.perf_counter()
    SQLiteIndex(tmp / "keyword.db", embedder=None).ingest_documents(documents)
    keyword_only_s = time.perf_counter() - started
    index.search(questions[0], tenant="scifact", k=10, mode="hybrid")  # starts the postings build, as serve's warm-up
    while index._terms_state == "building":
        time.sleep(0.05)

    rows = [
        {"id": unit, "corpus_id": corpus_id, "text": text, "vector": np.frombuffer(vector, dtype=np.float32).tolist()}
        for unit, corpus_id, text, vector in index._db().execute(
            "SELECT unit_id, json_extract(d.metadata, '$.corpus_id'), c.text, c.vector FROM chunks c"
            " JOIN documents d ON d.tenant = c.tenant AND d.document_id = c.document_id"
        )
    ]
    import lancedb  # only now: it starts a thread, and a process with threads parses in itself (no forked workers)

    db = lancedb.connect(str(tmp / "lance"))
    started = time.perf_counter()
    lance = db.create_table("scifact", data=rows)
    with warnings.catch_warnings():  # its successor, create_index(config=FTS()), does not take a text column in 0.40
        warnings.simplefilter("ignore", DeprecationWarning)
        lance.create_fts_index("text", use_tantivy=False)
    lance_ingest_s = time.perf_counter() - started
    qdrant_ingest_s = _qdrant_ingest(tmp / "qdrant", rows)
    vectors = embedder.known

    def ours(q: str):
        return index.search(q, tenant="scifact", k=10, mode="hybrid")

    def theirs(q: str):
        return lance.search(query_type="hybrid").vector(vectors[q]).text(q).limit(10).to_list()

    results = {}
    for name, search, ranking in (
        ("sourcerer hybrid, served (SQLite)", ours, lambda hits: doc_ranking(hits, 10)),
        (f"LanceDB {lancedb.__version__} hybrid (RRF)", theirs, lambda hits: list(dict.fromkeys(h["corpus_id"] for h in hits))),
    ):
        ndcg = statistics.mean(ndcg_at(ranking(search(queries[q])), relevant[q]) for q in test_ids)
        wall, cpu = per_query(search, questions)
        results[name] = {"ndcg@10": ndcg, "p50_ms": wall, "cpu_ms": cpu}
    ours_row, theirs_row = results.values()
    data = {
        "abstracts": len(chosen),
        "chunks": chunks,
        "search": results,
        "p50_ratio": ours_row["p50_ms"] / theirs_row["p50_ms"],
        "ndcg_ratio": ours_row["ndcg@10"] / theirs_row["ndcg@10"],
        "ingest_docs_per_s": {
            "sourcerer (SQLite, vectors precomputed), ingest_documents": len(chosen) / ours_ingest_s,
            "sourcerer, one ingest_document call per document": len(chosen) / one_by_one_s,
            "sourcerer keyword only (SOURCERER_EMBEDDER=none), ingest_documents": len(chosen) / keyword_only_s,
            "LanceDB (add + FTS index)": len(chosen) / lance_ingest_s,
            "Qdrant local (upsert, vectors only)": len(chosen) / qdrant_ingest_s,
        },
    }
    text = table(
        f"Hybrid search — {len(chosen)} SciFact abstracts ({chunks} chunks), 300 test claims, k=10, same process, same vectors, question embedding excluded (target: p50 ≤ LanceDB's at equal nDCG@10)",
        ["system", "nDCG@10", "p50 ms", "CPU ms / query"],
        [[name, r["ndcg@10"], r["p50_ms"], r["cpu_ms"]] for name, r in results.items()],
    )
    text += "\n" + table(
        f"Ingest with every vector already computed ({len(chosen)} SciFact abstracts, documents per second; target ≥ 1,500)",
        ["system", "docs/s"],
        [[name, rate] for name, rate in data["ingest_docs_per_s"].items()],
    )
    write_result("engines", text, data)
    return data


def _qdrant_ingest(path: Path, rows: list[dict]) -> float:
    """Seconds for Qdrant's local mode (on disk) to create a collection and upsert the rows' vectors and texts."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(path))
    started = time.perf_counter()
    client.create_collection("scifact", vectors_config=models.VectorParams(size=len(rows[0]["vector"]), distance=models.Distance.COSINE))
    client.upsert(
        "scifact",
        points=models.Batch(
            ids=list(range(len(rows))),
            vectors=[row["vector"] for row in rows],
            payloads=[{"corpus_id": row["corpus_id"], "text": row["text"]} for row in rows],
        ),
    )
    seconds = time.perf_counter() - started
    client.close()
    return seconds


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=SIZE, help=f"abstracts (default {SIZE}; the test claims' own first)")
    run(parser.parse_args().size)
