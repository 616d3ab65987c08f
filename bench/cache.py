"""The answer cache on a replayed query log: how often a rephrased repeat is served from the cache, how often a
different question on the same topic would wrongly be (the threshold trade-off), and what a hit costs in time.

The log is bench/data/faq.jsonl replayed as a support desk sees it: each answerable question, then its repeats as
people retype them (other case and punctuation, a polite prefix, a trailing "thanks"), then the item's
unanswerable question: same topic and words, a different fact. Serving the cached answer to that last one would be
a wrong answer, so its hit rate is the false-hit rate. Exact matches (same normalised terms) need no threshold;
the rest depend on `SOURCERER_CACHE_SIMILARITY`, whose curve is printed.

    python -m bench.cache
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT, read_jsonl, table, use_bench_cache, write_result

THRESHOLDS = (0.85, 0.9, 0.93, 0.95, 0.97, 0.99)


def variants(question: str, lang: str) -> list[str]:
    """How people retype a question they asked before (deterministic, so the benchmark is repeatable)."""
    plain = question.strip().rstrip("?？؟").strip()
    out = [plain.lower(), f"{plain}??", f"  {plain.upper()} "]
    if lang == "en":
        out += [f"Quick question: {plain.lower()}?", f"{plain}? Thanks"]
    return out


def measure() -> dict[str, Any]:
    from sourcerer.retrieval.embedders import make_embedder
    from sourcerer.service.cache import question_key

    items = read_jsonl(ROOT / "bench" / "data" / "faq.jsonl")
    embedder = make_embedder("local")

    def unit(texts: list[str]) -> np.ndarray:
        vectors = np.asarray(embedder.embed(texts, "query"), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    repeats: list[tuple[bool, float]] = []  # (same terms, cosine) per repeat
    near_misses: list[tuple[bool, float]] = []
    for item in items:
        asked = item["answerable"]["q"]
        retyped = variants(asked, item["lang"])
        other = item["unanswerable"]["q"]
        vectors = unit([asked, *retyped, other])
        for text, vector in zip(retyped, vectors[1:-1], strict=True):
            repeats.append((question_key(text) == question_key(asked), float(vector @ vectors[0])))
        near_misses.append((question_key(other) == question_key(asked), float(vectors[-1] @ vectors[0])))
    curve = []
    for threshold in THRESHOLDS:
        hits = sum(same or cos >= threshold for same, cos in repeats) / len(repeats)
        wrong = sum(same or cos >= threshold for same, cos in near_misses) / len(near_misses)
        curve.append({"threshold": threshold, "repeat_hit_rate": hits, "false_hit_rate": wrong})
    exact = sum(same for same, _ in repeats) / len(repeats)
    return {"items": len(items), "repeats": len(repeats), "exact_hit_rate": exact, "curve": curve, **hit_latency(items[:20])}


def hit_latency(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Miss and hit latency through the service (ledger lookup, question embedding, logging the answer)."""
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.service.admin import issue_key
    from sourcerer.service.core import Service
    from sourcerer.service.schemas import AnswerRequest, DocumentRequest
    from sourcerer.store.sqlite import SQLiteIndex

    work = Path(tempfile.mkdtemp(prefix="sourcerer-cache-bench-"))
    service = Service(index=SQLiteIndex(work / "index.db", embedder=local_embedder()), ledger=SQLiteLedger(work / "ledger.db"))
    key = issue_key(service.ledger, "bench", ["bench"], ["read", "write"], tier="enterprise").key
    ctx = service.authenticate(f"Bearer {key}")
    for item in items:
        for n, text in enumerate(item["passages"]):
            service.ingest(ctx, None, DocumentRequest(source_uri=f"{item['id']}/{n}.txt", text=text))
    misses, hits = [], []
    for item in items:
        for bucket, question in ((misses, item["answerable"]["q"]), (hits, item["answerable"]["q"].lower())):
            started = time.perf_counter()
            response = service.answer(ctx, None, AnswerRequest(q=question))
            bucket.append((time.perf_counter() - started) * 1000)
            assert (response.trace.cache == "hit") == (bucket is hits)
    return {"miss_p50_ms": statistics.median(misses), "hit_p50_ms": statistics.median(hits), "latency_n": len(items)}


def run() -> dict[str, Any]:
    use_bench_cache()
    result = measure()
    rows = [[c["threshold"], c["repeat_hit_rate"], c["false_hit_rate"]] for c in result["curve"]]
    text = table(
        f"Answer cache — {result['repeats']} retyped repeats of {result['items']} FAQ questions, and each item's "
        "near-miss question (same topic, another fact)",
        ["SOURCERER_CACHE_SIMILARITY", "repeats served from the cache", "near-misses wrongly served (false hits)"],
        rows,
    )
    text += (
        f"\nSame normalised terms alone (no threshold): {result['exact_hit_rate']:.3f} of repeats.\n"
        f"Through the service ({result['latency_n']} questions): p50 {result['miss_p50_ms']:.1f} ms computed, "
        f"p50 {result['hit_p50_ms']:.1f} ms from the cache.\n"
    )
    write_result("cache", text, result)
    return result


if __name__ == "__main__":
    run()
