"""OpenSearch against the SQLite index on a SciFact subset: the same documents, the same embeddings, the same RRF.

Targets (issue: the contract suite against a real engine): nDCG@10 within 0.01 of the SQLite index in every mode,
and the same top-10 documents in keyword mode on at least 95% of queries. The two engines score BM25 alike
(Lucene's k1 = 1.2, b = 0.75 and IDF, which the SQLite index reproduces); k-NN is HNSW there and exact here, so
hybrid rankings may differ in the tail.

    OPENSEARCH_URL=opensearch://localhost:9200 python -m bench.opensearch_parity --docs 1000 --queries 150

Without OPENSEARCH_URL it says how to run and exits 0 (so `make bench` runs it only where a cluster is up). The
exit status is 1 when a target is missed, so CI fails on drift. `--against sqlite:///...` compares two SQLite
indexes (how the tests exercise this script without a cluster).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.common import EVAL, read_jsonl, table, use_bench_cache, write_result
from bench.retrieval import _doc_ranking, _ingest, _qrels, ndcg_at

MODES = ("keyword", "hybrid")
NDCG_TOLERANCE = 0.01
KEYWORD_AGREEMENT = 0.95


def subset(docs: int, queries: int) -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    """The first `queries` test queries, every document they cite, and other documents up to `docs`."""
    corpus = read_jsonl(*sorted((EVAL / "scifact").glob("corpus.part-*.jsonl")))
    texts = {q["_id"]: q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")}
    qrels = _qrels(EVAL / "scifact" / "qrels" / "test.tsv")
    chosen = sorted(qrels)[:queries]
    cited = {d for q in chosen for d in qrels[q]}
    picked = [row for row in corpus if row["_id"] in cited]
    picked += [row for row in corpus if row["_id"] not in cited][: max(0, docs - len(picked))]
    return picked, {q: texts[q] for q in chosen}, {q: qrels[q] for q in chosen}


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


def run(url: str, docs: int, queries: int, write: bool = True) -> dict[str, Any]:
    from sourcerer.retrieval.embedders import make_embedder
    from sourcerer.store import open_index

    corpus, texts, qrels = subset(docs, queries)
    embedder = make_embedder("local")  # one embedder for both: the same vectors go into both engines
    tmp = Path(tempfile.mkdtemp(prefix="sourcerer-parity-"))
    name = f"sourcerer-parity-{uuid.uuid4().hex[:8]}"
    engines = {"sqlite": open_index(f"sqlite:///{tmp}/parity.db", embedder=embedder), "other": open_other(url, name, embedder)}
    try:
        for index in engines.values():
            _ingest(index, corpus, "parity")
        rankings = {
            engine: {
                mode: {q: _doc_ranking(index.search(texts[q], tenant="parity", k=30, mode=mode), 10) for q in qrels}
                for mode in MODES
            }
            for engine, index in engines.items()
        }
    finally:
        other = engines["other"]
        if hasattr(other, "client"):  # an OpenSearch index made for this run
            other.client.indices.delete(index=other.index, ignore_unavailable=True)
    result = {**compare(rankings, qrels), "docs": len(corpus), "queries": len(qrels), "against": url.split("?")[0]}
    rows = [
        [mode, result[mode]["ndcg_sqlite"], result[mode]["ndcg_other"], result[mode]["ndcg_gap"], result[mode]["same_top10"]]
        for mode in MODES
    ]
    text = (
        table(
            f"OpenSearch parity — SciFact subset ({len(corpus)} abstracts, {len(qrels)} queries) against "
            f"{result['against']} (targets: nDCG@10 gap ≤ {NDCG_TOLERANCE}, same keyword top-10 on ≥ {KEYWORD_AGREEMENT:.0%})",
            ["mode", "nDCG@10 SQLite", "nDCG@10 other", "gap", "same top-10"],
            rows,
        )
        + f"\n{'PASSED' if result['passed'] else 'FAILED'}\n"
    )
    if write:
        write_result("opensearch_parity", text, result)
    else:
        print(text)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default=os.environ.get("OPENSEARCH_URL"), help="index URL (default OPENSEARCH_URL)")
    parser.add_argument("--docs", type=int, default=1000, help="abstracts ingested (default 1000)")
    parser.add_argument("--queries", type=int, default=150, help="test queries (default 150)")
    args = parser.parse_args(argv)
    if not args.against:
        print("opensearch parity skipped: set OPENSEARCH_URL=opensearch://host:9200 (see README, Running the contract suite)")
        return 0
    use_bench_cache()
    result = run(args.against, args.docs, args.queries, write=not args.against.startswith("sqlite"))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
