"""Verification benchmark on HaluEval: does the local judge tell right answers from hallucinated ones?

QA (2,000 pairs): `knowledge` is the only passage; `right_answer` must verify faithful and
`hallucinated_answer` unfaithful. Summaries (300 pairs, new): the document is the only passage; the right
summary (several sentences, paraphrased) must verify faithful, the hallucinated one unfaithful. An answer is
faithful when every one of its claims is supported; an answer of several claims is weighed as a whole by the
judge's answer model (`sourcerer.support`). The claim-support models never saw these items
(`bench/train/claim_support.py` samples around them). Peers in the same run: grounded-check (exact tier) and
the "every content word appears" baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import EVAL, answer_mode, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, sample


def balanced_accuracy(right_ok: list[bool], halluc_ok: list[bool]) -> float:
    tpr = sum(right_ok) / len(right_ok)
    tnr = sum(not ok for ok in halluc_ok) / len(halluc_ok)
    return (tpr + tnr) / 2


def halueval_pairs(n: int, n_summaries: int) -> dict[str, list[tuple[str, str, str]]]:
    """(source, right answer, hallucinated answer) of the HaluEval items this benchmark reports on: `n` QA items and
    `n_summaries` summaries (the claim-support models train on the others)."""
    return {
        "QA": [
            (r["knowledge"], r["right_answer"], r["hallucinated_answer"])
            for r in sample(read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl"))), n)
        ],
        "summaries": [
            (r["document"], r["right_summary"], r["hallucinated_summary"])
            for r in sample(read_jsonl(*sorted((EVAL / "halueval").glob("summarization_data.part-*.jsonl"))), n_summaries)
        ],
    }


def run(n: int, n_summaries: int = 300) -> dict:
    use_bench_cache()
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.text import terms
    from sourcerer.verify import LocalJudge, local_judge

    sets = halueval_pairs(n, n_summaries)
    with answer_mode("bundled model"):  # the reader is opt-in: this row reads with it switched on
        judge = local_judge()
    without_reader, lexical = LocalJudge(local_embedder()), LocalJudge(None)

    def every_word(claim, source):
        have = set(terms(source))
        return all(t in have for t in terms(claim))

    systems = [
        ("sourcerer local judge, bundled models (with the reader)", lambda claim, source: _all_claims(judge, claim, source)),
        ("sourcerer local judge, e5 features, no reader", lambda claim, source: _all_claims(without_reader, claim, source)),
        ("sourcerer local judge, lexical only", lambda claim, source: _all_claims(lexical, claim, source)),
        ("baseline: every content word in passage", every_word),
    ]
    try:
        systems.append(("grounded-check 0.1.2 (exact tier)", _grounded_check()))
    except ImportError:
        print("grounded-check not installed: pip install grounded-check (make bench does)")

    result_rows = []
    data: dict = {"n_pairs": {k: len(v) for k, v in sets.items()}, "systems": {}}
    for set_name, pairs in sets.items():
        for name, fn in systems:
            started = time.perf_counter()
            right = [fn(good, source) for source, good, _ in pairs]
            halluc = [fn(bad, source) for source, _, bad in pairs]
            ms = (time.perf_counter() - started) * 1000 / (2 * len(pairs))
            ba = balanced_accuracy(right, halluc)
            tpr = sum(right) / len(right)
            tnr = sum(not h for h in halluc) / len(halluc)
            result_rows.append([set_name, name, ba, tpr, tnr, ms])
            data["systems"].setdefault(name, {})[set_name] = {
                "balanced_accuracy": ba,
                "right_verified": tpr,
                "hallucination_caught": tnr,
                "ms_per_answer": ms,
            }
    result_rows.append(["QA", "ChatGPT (HaluEval paper, accuracy)", 0.626, "", "", ""])
    result_rows.append(["summaries", "HHEM-2.1-Open on AggreFact-SOTA (model card, reference)", 0.766, "", "", ""])
    text = table(
        f"Verification — HaluEval QA ({len(sets['QA'])} pairs) and summaries ({len(sets['summaries'])} pairs) "
        "(targets: QA ≥ 0.96, summaries ≥ 0.75 balanced accuracy, ≤ 30 ms per answer)",
        ["set", "system", "balanced acc.", "right → faithful", "hallucinated → unfaithful", "ms/answer"],
        result_rows,
    )
    text += "\nms/answer with the embedding cache warm (bench/.cache); the first run embeds every source sentence.\n"
    write_result("verification", text, data)
    return data


def _all_claims(judge, answer: str, source: str) -> bool:
    """The judge's verdict on the whole answer, as `ask(verify=True)` gets it: faithful when every claim is
    supported (an answer of several claims is weighed as a whole)."""
    from sourcerer.models import Passage
    from sourcerer.verify import Claim, faithfulness_of, split_claims

    claims = [Claim(text=c.text, citations=[1]) for c in split_claims(answer)] or [Claim(text=answer, citations=[1])]
    verdicts = asyncio.run(judge.judge(claims, [Passage(text=source)]))
    return faithfulness_of(verdicts, judge.name).faithful


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
    parser.add_argument("--n", type=int, default=2000, help="QA pairs to sample (default 2000)")
    parser.add_argument("--summaries", type=int, default=300, help="summary pairs to sample (default 300)")
    args = parser.parse_args()
    run(args.n, args.summaries)
