"""The figures the benchmarks report: ranking quality (nDCG, recall), separability (ROC AUC, refusals at a false
refusal rate) and latency percentiles."""

from __future__ import annotations

import math
import statistics


def roc_auc(positives: list[float], negatives: list[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    ranked = sorted([(s, 1) for s in positives] + [(s, 0) for s in negatives])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        average_rank = (i + j + 1) / 2  # 1-based average rank of the tie group
        rank_sum += average_rank * sum(1 for k in range(i, j) if ranked[k][1] == 1)
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg) if n_pos and n_neg else float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


def doc_ndcg(ranked_docs: list[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k of a chunk-level ranking given as each chunk's abstract id (an abstract counts at its first chunk)."""
    return ndcg_at(list(dict.fromkeys(ranked_docs)), relevant, k)


def refusal_at(pos: list[float], neg: list[float], max_false: float = 0.10) -> tuple[float, float]:
    """(threshold, share of negatives refused) at the highest threshold refusing at most `max_false` positives."""
    ordered = sorted(pos)
    cut = ordered[int(max_false * len(ordered))] if ordered else 0.5
    return cut, sum(1 for s in neg if s < cut) / max(1, len(neg))


def per_query(search, questions: list[str], repeats: int = 1) -> tuple[float, float]:
    """(median wall ms, mean CPU ms of this process) per query over `repeats` passes, after one warm-up pass:
    CPU as well as wall, so that a peer in the same process is compared on the work it does, not on the noise."""
    import statistics
    import time

    for q in questions:
        search(q)
    wall: list[float] = []
    cpu_started = time.process_time()
    for _ in range(repeats):
        for q in questions:
            started = time.perf_counter()
            search(q)
            wall.append((time.perf_counter() - started) * 1000)
    return statistics.median(wall), (time.process_time() - cpu_started) * 1000 / (repeats * len(questions))
