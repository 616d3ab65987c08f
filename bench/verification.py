"""Verification benchmark on HaluEval QA: does the local judge tell right answers from hallucinated ones?

`knowledge` is the only passage; `right_answer` must verify faithful and `hallucinated_answer` unfaithful.
Peers in the same run: grounded-check (exact tier) and the "every content word appears" baseline.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.common import EVAL, read_jsonl, sample, table, use_bench_cache, write_result


def balanced_accuracy(right_ok: list[bool], halluc_ok: list[bool]) -> float:
    tpr = sum(right_ok) / len(right_ok)
    tnr = sum(not ok for ok in halluc_ok) / len(halluc_ok)
    return (tpr + tnr) / 2


def run(n: int) -> dict:
    use_bench_cache()
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.text import terms
    from sourcerer.verify import LocalJudge

    rows = sample(read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl"))), n)
    systems: dict[str, tuple[list[bool], list[bool]]] = {}

    def measure(name, fn):
        started = time.perf_counter()
        right = [fn(r["right_answer"], r["knowledge"]) for r in rows]
        halluc = [fn(r["hallucinated_answer"], r["knowledge"]) for r in rows]
        systems[name] = (right, halluc, (time.perf_counter() - started) * 1000 / (2 * len(rows)))

    judge = LocalJudge(local_embedder())
    measure("sourcerer local judge", lambda claim, source: _all_claims(judge, claim, source))
    lexical = LocalJudge(None)
    measure("sourcerer local judge, no embeddings", lambda claim, source: _all_claims(lexical, claim, source))

    def every_word(claim, source):
        have = set(terms(source))
        return all(t in have for t in terms(claim))

    measure("baseline: every content word in passage", every_word)
    try:
        measure("grounded-check 0.1.2 (exact tier)", _grounded_check())
    except ImportError:
        print("grounded-check not installed: pip install grounded-check (make bench does)")

    result_rows = []
    data = {"n_pairs": len(rows), "systems": {}}
    for name, (right, halluc, ms) in systems.items():
        ba = balanced_accuracy(right, halluc)
        tpr = sum(right) / len(right)
        tnr = sum(not h for h in halluc) / len(halluc)
        result_rows.append([name, ba, tpr, tnr, ms])
        data["systems"][name] = {"balanced_accuracy": ba, "right_verified": tpr, "hallucination_caught": tnr, "ms_per_claim": ms}
    result_rows.append(["ChatGPT (HaluEval paper, accuracy)", 0.626, "", "", ""])
    text = table(
        f"Verification — HaluEval QA, {len(rows)} pairs (target: local judge ≥ 0.96 balanced accuracy)",
        ["system", "balanced acc.", "right → faithful", "hallucinated → unfaithful", "ms/answer"],
        result_rows,
    )
    write_result("verification", text, data)
    return data


def _all_claims(judge, answer: str, source: str) -> bool:
    from sourcerer.models import Passage
    from sourcerer.verify import Claim, split_claims

    claims = split_claims(answer) or [Claim(text=answer, citations=[1])]
    passage = [Passage(text=source)]
    return all(judge.check(Claim(text=c.text, citations=[1]), passage).supported for c in claims)


def _grounded_check():
    from grounded import Kind, Source, extract, verify

    kinds = {Kind.QUOTE, Kind.NUMBER, Kind.CITATION, Kind.ENTITY}

    def check(claim: str, source: str) -> bool:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write(source)
        src = Source(path=Path(handle.name), raw=source)
        Path(handle.name).unlink()
        return verify(extract(claim, kinds=kinds), [src]).passed

    return check


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="pairs to sample (default 2000)")
    run(parser.parse_args().n)
