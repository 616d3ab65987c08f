"""OpenSearch against the SQLite index on a SciFact subset: the same documents, the same embeddings, the same RRF.

Targets (issue: the contract suite against a real engine): nDCG@10 within 0.01 of the SQLite index in every mode,
and the same top-10 documents in keyword mode on at least 95% of queries. The two engines score BM25 alike
(the library's k1 and b, set as the index's similarity, and Lucene's IDF; Lucene keeps each document's
length in one byte, so scores agree to about 1%); k-NN is HNSW there and exact here, so
hybrid rankings may differ in the tail.

    python -m bench.opensearch_parity                       # against an embedded node (tools/opensearch)
    OPENSEARCH_URL=opensearch://localhost:9200 python -m bench.opensearch_parity --docs 1000 --queries 150

Without OPENSEARCH_URL it starts the embedded OpenSearch 2.19 + k-NN node (lucene engine) for the run, and
without Java it says so and exits 0. Beside ranking parity it prints search latency p50/p95 for both engines
at 1 and 8 clients and bulk ingest throughput (vectors from the cache, so the engines are timed, not the model).
The exit status is 1 when a target is missed, so CI fails on drift (a reduced run is a test:
tests/contract/test_opensearch_parity.py). `--against sqlite:///...` compares two SQLite indexes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import EVAL, ROOT, table, use_bench_cache, write_result
from bench.datasets import doc_ranking, ingest_corpus, qrels, read_jsonl, scifact_corpus
from bench.metrics import ndcg_at

MODES = ("keyword", "hybrid")
NDCG_TOLERANCE = 0.01
KEYWORD_AGREEMENT = 0.95


def faq_subset() -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    """The committed FAQ set (bench/data/faq.jsonl, 79 items in several languages) as a corpus: each passage a
    document, each answerable question a query whose relevant document is the passage holding its cited sentence.
    What the reduced gate runs where SciFact is not at hand."""
    corpus, texts, qrels = [], {}, {}
    for item in read_jsonl(ROOT / "bench" / "data" / "faq.jsonl"):
        for n, passage in enumerate(item["passages"]):
            corpus.append({"_id": f"{item['id']}-{n}", "title": "", "text": passage})
            if item["answerable"]["cite"] in passage:
                qrels[item["id"]] = {f"{item['id']}-{n}": 1}
        texts[item["id"]] = item["answerable"]["q"]
    return corpus, {q: texts[q] for q in qrels}, qrels


def subset(docs: int, queries: int) -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    """The first `queries` test queries, every document they cite, and other documents up to `docs`."""
    corpus = scifact_corpus()
    texts = {q["_id"]: q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")}
    relevant_docs = qrels(EVAL / "scifact" / "qrels" / "test.tsv")
    chosen = sorted(relevant_docs)[:queries]
    cited = {d for q in chosen for d in relevant_docs[q]}
    picked = [row for row in corpus if row["_id"] in cited]
    picked += [row for row in corpus if row["_id"] not in cited][: max(0, docs - len(picked))]
    return picked, {q: texts[q] for q in chosen}, {q: relevant_docs[q] for q in chosen}


def open_other(url: str, name: str, embedder: Any) -> Any:
    from sourcerer.store import open_index

    if url.startswith("sqlite"):
        return open_index(url, embedder=embedder)
    base, _, query = url.partition("?")
    index = open_index(f"{base.rstrip('/')}/{name}" + (f"?{query}" if query else ""), embedder=embedder)
    index.init()
    return index


def compare(rankings: dict[str, dict[str, dict[str, list[str]]]], qrels: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Per mode: each engine's nDCG@10, their difference, and the share of queries with the same top-10 documents."""
    out: dict[str, Any] = {}
    for mode in MODES:
        ndcg = {engine: sum(ndcg_at(rankings[engine][mode][q], qrels[q]) for q in qrels) / len(qrels) for engine in rankings}
        same = sum(rankings["sqlite"][mode][q][:10] == rankings["other"][mode][q][:10] for q in qrels) / len(qrels)
        out[mode] = {"ndcg_sqlite": ndcg["sqlite"], "ndcg_other": ndcg["other"], "same_top10": same}
        out[mode]["ndcg_gap"] = abs(ndcg["sqlite"] - ndcg["other"])
    out["passed"] = all(out[m]["ndcg_gap"] <= NDCG_TOLERANCE for m in MODES) and out["keyword"]["same_top10"] >= KEYWORD_AGREEMENT
    return out


def _ingest_rate(index: Any, corpus: list[dict]) -> dict[str, float]:
    """Documents one at a time, as a folder ingest writes them (OpenSearch: one refresh at the end, see
    `OpenSearchIndex.one_refresh`)."""
    started = time.perf_counter()
    with getattr(index, "one_refresh", contextlib.nullcontext)():
        _, chunks = ingest_corpus(index, corpus, "parity")
    elapsed = time.perf_counter() - started
    return {"docs_per_s": len(corpus) / elapsed, "chunks_per_s": chunks / elapsed, "seconds": elapsed}


def _latency(index: Any, queries: list[str], mode: str, clients: int) -> dict[str, float]:
    """p50/p95 of one search (ms) and queries per second, with `clients` threads asking at once. Query vectors
    come from the embedder's cache (the ranking pass computed them), so this is the engine's time, not the model's."""

    def timed(query: str) -> float:
        started = time.perf_counter()
        index.search(query, tenant="parity", k=10, mode=mode)
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        times = sorted(pool.map(timed, queries * max(1, 2 * clients * 10 // max(1, len(queries)))))
    wall = time.perf_counter() - started
    return {
        "p50_ms": statistics.median(times),
        "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))],
        "qps": len(times) / wall,
    }


def run(
    url: str,
    docs: int,
    queries: int,
    write: bool = True,
    *,
    embedder: Any = None,
    clients: tuple[int, ...] = (1, 8),
    data: str = "scifact",
) -> dict[str, Any]:
    """Ingest the subset into a fresh SQLite index and into `url`; compare rankings, search latency and ingest
    throughput. `embedder` defaults to the bundled model; `data` is `scifact` (../shared/eval) or `faq` (the
    committed FAQ set: what the test gate runs, so it never depends on the eval folder)."""
    from sourcerer.retrieval.embedders import make_embedder
    from sourcerer.store import open_index

    corpus, texts, qrels = subset(docs, queries) if data == "scifact" else faq_subset()
    embedder = embedder or make_embedder("local")  # one embedder for both: the same vectors go into both engines
    tmp = Path(tempfile.mkdtemp(prefix="sourcerer-parity-"))
    name = f"sourcerer-parity-{uuid.uuid4().hex[:8]}"
    ingest_corpus(open_index(f"sqlite:///{tmp}/warm.db", embedder=embedder), corpus, "parity")  # fills the vector cache
    engines = {"sqlite": open_index(f"sqlite:///{tmp}/parity.db", embedder=embedder), "other": open_other(url, name, embedder)}
    try:
        ingest = {engine: _ingest_rate(index, corpus) for engine, index in engines.items()}
        rankings = {
            engine: {
                mode: {q: doc_ranking(index.search(texts[q], tenant="parity", k=30, mode=mode), 10) for q in qrels}
                for mode in MODES
            }
            for engine, index in engines.items()
        }
        latency = {
            engine: {f"{mode}@{n}": _latency(index, list(texts.values()), mode, n) for mode in MODES for n in clients}
            for engine, index in engines.items()
        }
    finally:
        other = engines["other"]
        if hasattr(other, "client"):  # an OpenSearch index made for this run
            other.client.indices.delete(index=other.index, ignore_unavailable=True)
    result = {
        **compare(rankings, qrels),
        "docs": len(corpus),
        "queries": len(qrels),
        "against": url.split("?")[0],
        "latency": latency,
        "ingest": ingest,
    }
    rows = [
        [mode, result[mode]["ndcg_sqlite"], result[mode]["ndcg_other"], result[mode]["ndcg_gap"], result[mode]["same_top10"]]
        for mode in MODES
    ]
    speed = [
        [f"{mode}, {n} client{'s' if n > 1 else ''}"]
        + [f"{latency[e][f'{mode}@{n}']['p50_ms']:.1f} / {latency[e][f'{mode}@{n}']['p95_ms']:.1f}" for e in engines]
        + [f"{latency[e][f'{mode}@{n}']['qps']:.0f}" for e in engines]
        for mode in MODES
        for n in clients
    ]
    speed.append(["bulk ingest (vectors cached), docs/s"] + [f"{ingest[e]['docs_per_s']:.0f}" for e in engines] + ["", ""])
    text = (
        table(
            f"OpenSearch parity — {'SciFact subset' if data == 'scifact' else 'FAQ set'} ({len(corpus)} documents, {len(qrels)} queries) against "
            f"{result['against']} (targets: nDCG@10 gap ≤ {NDCG_TOLERANCE}, same keyword top-10 on ≥ {KEYWORD_AGREEMENT:.0%})",
            ["mode", "nDCG@10 SQLite", "nDCG@10 OpenSearch", "gap", "same top-10"],
            rows,
        )
        + f"\n{'PASSED' if result['passed'] else 'FAILED'}\n\n"
        + table(
            "Search latency p50 / p95 (ms, query vector cached) and throughput, same run",
            ["workload", "SQLite", "OpenSearch", "SQLite q/s", "OpenSearch q/s"],
            speed,
        )
    )
    if write:
        write_result("opensearch_parity", text, result)
    else:
        print(text)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--against", default=os.environ.get("OPENSEARCH_URL"), help="index URL (default OPENSEARCH_URL, else an embedded node)"
    )
    parser.add_argument("--docs", type=int, default=1000, help="abstracts ingested (default 1000)")
    parser.add_argument("--queries", type=int, default=150, help="test queries (default 150)")
    args = parser.parse_args(argv)
    use_bench_cache()
    node = None
    if not args.against:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "opensearch"))
        import embedded

        if embedded.java() is None or not (embedded.built() or embedded.maven()):
            print("opensearch parity skipped: no Java 17 + Maven for the embedded node, and OPENSEARCH_URL is not set")
            return 0
        node = embedded.start(heap="1g")
        args.against = f"opensearch://{node.url.removeprefix('http://')}?engine={embedded.ENGINE}"
    try:
        result = run(args.against, args.docs, args.queries, write=not args.against.startswith("sqlite"))
    finally:
        if node is not None:
            node.stop()
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
