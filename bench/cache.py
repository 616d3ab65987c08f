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

from bench.common import ROOT, table, use_bench_cache, write_result
from bench.datasets import read_jsonl

THRESHOLDS = (0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.99)

# Near-misses written to break a cache: the same words as a question asked before, but another question. Any hit
# here is a wrong answer served with another question's citations (target: 0 at every threshold).
NEAR_MISS_PAIRS: dict[str, list[tuple[str, str]]] = {
    "identifier": [
        ("How long did the failover cutover take during the March drill of project A?", "How long did the failover cutover take during the March drill of project B?"),
        ("What is the status of ticket INC-4411?", "What is the status of ticket INC-4412?"),
        ("Which team owns service S3-sync?", "Which team owns service S4-sync?"),
        ("What does error E42 mean?", "What does error E43 mean?"),
        ("Who approved the change for region eu-west-1?", "Who approved the change for region us-east-1?"),
        ("What is the meal allowance in Japan?", "What is the meal allowance in Germany?"),
    ],
    "number": [
        ("What is the fee for orders over 50 dollars?", "What is the fee for orders over 100 dollars?"),
        ("How many vacation days after 5 years of service?", "How many vacation days after 10 years of service?"),
        ("Is the 2025 travel policy still valid?", "Is the 2024 travel policy still valid?"),
        ("What happens after 3 failed login attempts?", "What happens after 5 failed login attempts?"),
        ("Wie hoch ist die Gebühr für 2 Koffer?", "Wie hoch ist die Gebühr für 3 Koffer?"),
        ("¿Cuánto cuesta el plan de 12 meses?", "¿Cuánto cuesta el plan de 24 meses?"),
    ],
    "month": [
        ("When is the March maintenance window?", "When is the April maintenance window?"),
        ("What were the sales figures for January?", "What were the sales figures for February?"),
        ("Who is on call in December?", "Who is on call in November?"),
        ("Quel est le planning de mars ?", "Quel est le planning de avril ?"),
        ("¿Qué pasó en la reunión de mayo?", "¿Qué pasó en la reunión de junio?"),
    ],
    "negation": [
        ("Who confirmed recovery?", "Who did not confirm recovery?"),
        ("Which laptops are covered by the warranty?", "Which laptops are not covered by the warranty?"),
        ("Can contractors access the VPN?", "Can't contractors access the VPN?"),
        ("Which expenses need a receipt?", "Which expenses never need a receipt?"),
        ("Welche Kosten werden erstattet?", "Welche Kosten werden nicht erstattet?"),
        ("Quels frais sont remboursés ?", "Quels frais ne sont pas remboursés ?"),
        ("¿Qué gastos se reembolsan?", "¿Qué gastos no se reembolsan?"),
    ],
    "order": [
        ("Was the audit before the migration?", "Was the migration before the audit?"),
        ("Does the primary region fail over to the standby region?", "Does the standby region fail over to the primary region?"),
        ("Is the deadline for reviews earlier than the deadline for payments?", "Is the deadline for payments earlier than the deadline for reviews?"),
        ("Do managers report to directors?", "Do directors report to managers?"),
        ("Is shipping cheaper than pickup?", "Is pickup cheaper than shipping?"),
    ],
}


def variants(question: str, lang: str) -> list[str]:
    """How people retype a question they asked before (deterministic, so the benchmark is repeatable)."""
    plain = question.strip().rstrip("?？؟").strip()
    out = [plain.lower(), f"{plain}??", f"  {plain.upper()} "]
    if lang == "en":
        out += [f"Quick question: {plain.lower()}?", f"{plain}? Thanks"]
    return out


def measure() -> dict[str, Any]:
    from sourcerer.retrieval.embedders import make_embedder
    from sourcerer.service.cache import question_key, same_question

    items = read_jsonl(ROOT / "bench" / "data" / "faq.jsonl")
    embedder = make_embedder("local")

    def unit(texts: list[str]) -> np.ndarray:
        vectors = np.asarray(embedder.embed(texts, "query"), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    # per pair: (same exact key, cosine, same distinguishing tokens and not reordered) — what the cache decides on
    repeats: list[tuple[bool, float, bool]] = []
    near_misses: list[tuple[bool, float, bool]] = []
    for item in items:
        asked = item["answerable"]["q"]
        retyped = variants(asked, item["lang"])
        other = item["unanswerable"]["q"]
        vectors = unit([asked, *retyped, other])
        for text, vector in zip(retyped, vectors[1:-1], strict=True):
            repeats.append((question_key(text) == question_key(asked), float(vector @ vectors[0]), same_question(asked, text)))
        near_misses.append((question_key(other) == question_key(asked), float(vectors[-1] @ vectors[0]), same_question(asked, other)))
    crafted: dict[str, list[tuple[bool, float, bool]]] = {}
    for kind, pairs in NEAR_MISS_PAIRS.items():
        vectors = unit([q for pair in pairs for q in pair])
        crafted[kind] = [
            (question_key(a) == question_key(b), float(vectors[2 * i] @ vectors[2 * i + 1]), same_question(a, b))
            for i, (a, b) in enumerate(pairs)
        ]

    def served(pairs: list[tuple[bool, float, bool]], threshold: float, guard: bool = True) -> float:
        return sum(same or (cos >= threshold and (ok or not guard)) for same, cos, ok in pairs) / len(pairs)

    curve = []
    for threshold in THRESHOLDS:
        row = {
            "threshold": threshold,
            "repeat_hit_rate": served(repeats, threshold),
            "false_hit_rate": served(near_misses, threshold),
            "crafted_wrong_hits": sum(round(served(p, threshold) * len(p)) for p in crafted.values()),
            "crafted_wrong_hits_embedding_only": sum(round(served(p, threshold, guard=False) * len(p)) for p in crafted.values()),
        }
        row.update({f"wrong_{kind}": round(served(p, threshold) * len(p)) for kind, p in crafted.items()})
        curve.append(row)
    exact = sum(same for same, _, _ in repeats) / len(repeats)
    return {
        "items": len(items),
        "repeats": len(repeats),
        "crafted": {kind: len(p) for kind, p in NEAR_MISS_PAIRS.items()},
        "exact_hit_rate": exact,
        "curve": curve,
        **hit_latency(items[:20]),
    }


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
    crafted = sum(result["crafted"].values())
    rows = [
        [
            c["threshold"],
            c["repeat_hit_rate"],
            c["false_hit_rate"],
            f"{c['crafted_wrong_hits']} / {crafted}",
            " ".join(f"{kind[:3]} {c['wrong_' + kind]}" for kind in result["crafted"]),
            f"{c['crafted_wrong_hits_embedding_only']} / {crafted}",
        ]
        for c in result["curve"]
    ]
    text = table(
        f"Answer cache — {result['repeats']} retyped repeats of {result['items']} FAQ questions, each item's near-miss "
        f"question (same topic, another fact), and {crafted} crafted near-misses (identifier, number, month, negation, "
        "word order; target: 0 wrong hits)",
        [
            "SOURCERER_CACHE_SIMILARITY",
            "repeats served from the cache",
            "FAQ near-misses served (wrong)",
            "crafted near-misses served (wrong)",
            "by kind",
            "crafted, embedding alone (the old rule)",
        ],
        rows,
    )
    text += (
        f"\nThe exact key alone (same words in order, no threshold): {result['exact_hit_rate']:.3f} of repeats.\n"
        f"Through the service ({result['latency_n']} questions): p50 {result['miss_p50_ms']:.1f} ms computed, "
        f"p50 {result['hit_p50_ms']:.1f} ms from the cache.\n"
    )
    write_result("cache", text, result)
    return result


if __name__ == "__main__":
    run()
