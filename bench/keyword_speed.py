"""Keyword search at the engines' speed (issue 26): SciFact's 5,183 abstracts, its 300 test claims, k = 10, our
keyword search beside bm25s in the same process and the same run.

Ours is measured as it serves: in a long-running process (`sourcerer serve`, a Lambda container) the SQLite index
keeps every term's postings in memory and scores exact BM25 over them (`store/postings.py`); a one-shot process
(`sourcerer ask`, a script) ranks with FTS5, shown beside it. Both go through `Index.search` with its tenant,
scope and ACL filter, its trace and its hit objects; bm25s is a bare ranking over an in-memory matrix. CPU is the
process's CPU time per query (`time.process_time`), wall the median latency. The index needs no embedding model
(`SOURCERER_EMBEDDER=none`), so the run takes about a minute. Target: ours ≤ 3× bm25s's CPU per query, at an
nDCG@10 no lower than bm25s's.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import EVAL, table, write_result
from bench.datasets import doc_ranking, ingest_corpus, qrels, read_jsonl, scifact_corpus
from bench.metrics import ndcg_at, per_query

TARGET_CPU_RATIO = 3.0


def run(repeats: int = 3) -> dict:
    import bm25s
    import Stemmer
    from sourcerer.store.sqlite import SQLiteIndex

    corpus = scifact_corpus()
    queries = {q["_id"]: q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")}
    relevant = qrels(EVAL / "scifact" / "qrels" / "test.tsv")
    test_ids = sorted(relevant)
    questions = [queries[q] for q in test_ids]
    tmp = Path(tempfile.mkdtemp(prefix="sourcerer-keyword-"))

    rows, data = [], {}
    built = SQLiteIndex(tmp / "scifact.db", embedder=None)
    ingest_corpus(built, corpus, "scifact")
    built.close()
    for name, long_running in (("sourcerer keyword, served (postings)", True), ("sourcerer keyword, one-shot (FTS5)", False)):
        index = SQLiteIndex(tmp / "scifact.db", embedder=None, graph=long_running)  # one file, opened as each process would
        if long_running:
            index.search(questions[0], tenant="scifact", k=10, mode="keyword")  # starts the postings build
            while index._terms_state == "building":  # as `sourcerer serve` warms at worker start
                time.sleep(0.05)
        paths = {index.search(q, tenant="scifact", k=10, mode="keyword").trace.get("keyword_path", "fts5") for q in questions}

        def search(q: str, index=index):
            return index.search(q, tenant="scifact", k=10, mode="keyword")

        # an abstract may be several chunks: ranked as abstracts from a deeper list, as bench/retrieval.py does
        deep = [index.search(queries[q], tenant="scifact", k=150, mode="keyword") for q in test_ids]
        ndcg = statistics.mean(ndcg_at(doc_ranking(hits, 100), relevant[q]) for hits, q in zip(deep, test_ids, strict=True))
        wall, cpu = per_query(search, questions, repeats)
        data[name] = {"ndcg@10": ndcg, "p50_ms": wall, "cpu_ms": cpu, "paths": sorted(paths)}
        index.close()

    ids = [r["_id"] for r in corpus]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([f"{r.get('title', '')} {r['text']}" for r in corpus], stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )

    def peer(q: str):
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        return retriever.retrieve(tokens, k=10, show_progress=False)[0][0]

    ndcg = statistics.mean(ndcg_at([ids[i] for i in peer(queries[q])], relevant[q]) for q in test_ids)
    wall, cpu = per_query(peer, questions, repeats)
    peer_name = f"bm25s {bm25s.__version__} + PyStemmer (peer)"
    data[peer_name] = {"ndcg@10": ndcg, "p50_ms": wall, "cpu_ms": cpu}

    for name, r in data.items():
        rows.append([name, r["ndcg@10"], r["p50_ms"], r["cpu_ms"], r["cpu_ms"] / data[peer_name]["cpu_ms"]])
    served = data["sourcerer keyword, served (postings)"]
    data["cpu_ratio_served"] = served["cpu_ms"] / data[peer_name]["cpu_ms"]
    data["ndcg_ratio_served"] = served["ndcg@10"] / data[peer_name]["ndcg@10"]
    text = table(
        f"Keyword search — SciFact, {len(test_ids)} test claims, 5,183 abstracts, k=10, same process (target: CPU ≤ {TARGET_CPU_RATIO:.0f}× bm25s at nDCG@10 ≥ bm25s)",
        ["system", "nDCG@10", "p50 ms", "CPU ms / query", "CPU × bm25s"],
        rows,
    )
    write_result("keyword_speed", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over the 300 claims (default 3)")
    run(parser.parse_args().repeats)
