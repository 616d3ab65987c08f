"""Partial answers on HaluEval: does `verify="partial"` keep the right sentences and remove the made-up ones?

Summaries: the 300 held-out items of the verification benchmark (the claim-support models never saw them). Each
mixed answer is the right summary's sentences with one sentence of the hallucinated summary that the right one
lacks inserted at a random place, every sentence citing the document [1]. QA: the right answer and the
hallucinated answer of an item as two claims (random order) citing the item's knowledge. The local judge rules
claim by claim as `ask(verify="partial")` does; a claim it rejects is removed. Peers in the same run: strict
verification (the whole answer kept or refused, so a right sentence survives only when nothing was rejected) and
keeping everything (no verification).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from bench.common import EVAL, answer_mode, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, sample


def mixed_summaries(n: int) -> list[tuple[str, list[str], list[bool]]]:
    """(document, sentences, which are right) for each held-out summary item that has a made-up sentence."""
    from sourcerer.sentences import sentence_spans
    from sourcerer.text import normalize

    rows = sample(read_jsonl(*sorted((EVAL / "halueval").glob("summarization_data.part-*.jsonl"))), n)
    rng = random.Random(29)
    out = []
    for row in rows:
        right = [row["right_summary"][a:b].strip() for a, b in sentence_spans(row["right_summary"])]
        known = {normalize(s) for s in right}
        made_up = [
            row["hallucinated_summary"][a:b].strip()
            for a, b in sentence_spans(row["hallucinated_summary"])
            if normalize(row["hallucinated_summary"][a:b].strip()) not in known
        ]
        if not right or not made_up:
            continue
        sentences, labels = list(right), [True] * len(right)
        at = rng.randint(0, len(sentences))
        sentences.insert(at, rng.choice(made_up))
        labels.insert(at, False)
        out.append((row["document"], sentences, labels))
    return out


def mixed_qa(n: int) -> list[tuple[str, list[str], list[bool]]]:
    rows = sample(read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl"))), n)
    rng = random.Random(31)
    out = []
    for row in rows:
        pair = [(row["right_answer"].strip(), True), (row["hallucinated_answer"].strip(), False)]
        rng.shuffle(pair)
        out.append((row["knowledge"], [p[0] for p in pair], [p[1] for p in pair]))
    return out


def verdicts(judge, source: str, sentences: list[str], each: bool) -> list:
    """The judge's verdict on each sentence of one answer: claim by claim as `verify="partial"` asks (`each`), or
    weighed as a whole as `verify=True` and `"strict"` do."""
    from sourcerer.models import Passage
    from sourcerer.verify import Claim

    claims = [Claim(text=s, citations=[1]) for s in sentences]
    return asyncio.run(judge.judge(claims, [Passage(text=source)], each=each))


def score(items, ruled: list[list[bool]], whole: bool) -> dict:
    """Right sentences kept, made-up ones removed, answers refused (nothing kept). `whole`: strict, where one
    rejected claim refuses the answer."""
    right_kept = right = made_up_removed = made_up = refused = 0
    for (_, _, labels), supported in zip(items, ruled, strict=True):
        kept = [all(supported)] * len(supported) if whole else supported
        refused += not any(kept)
        for label, keep in zip(labels, kept, strict=True):
            right += label
            made_up += not label
            right_kept += label and keep
            made_up_removed += (not label) and not keep
    return {
        "right_kept": right_kept / right,
        "made_up_removed": made_up_removed / made_up,
        "refused": refused / len(items),
    }


CURVE = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def run(n_summaries: int = 300, n_qa: int = 2000) -> dict:
    use_bench_cache()
    from sourcerer.verify import LocalJudge, local_judge

    with answer_mode("bundled model"):  # the reader is opt-in: this judge reads with it switched on
        judges = {"bundled models (with the reader)": local_judge(), "lexical only": LocalJudge(None)}
    sets = {"summaries": mixed_summaries(n_summaries), "QA": mixed_qa(n_qa)}
    rows, curve_rows, data = [], [], {"n": {k: len(v) for k, v in sets.items()}, "systems": {}, "curve": {}}
    for set_name, items in sets.items():
        for judge_name, judge in judges.items():
            for mode, whole in (("partial", False), ("partial, weighed as a whole", False), ("strict", True)):
                started = time.perf_counter()
                ruled = [verdicts(judge, source, sentences, each=mode == "partial") for source, sentences, _ in items]
                ms = (time.perf_counter() - started) * 1000 / len(items)
                figures = score(items, [[v.supported for v in r] for r in ruled], whole)
                rows.append([set_name, f"{mode}, local judge, {judge_name}", figures["right_kept"], figures["made_up_removed"], figures["refused"], ms])
                data["systems"].setdefault(f"{mode}, {judge_name}", {})[set_name] = {**figures, "ms_per_answer": ms}
                if mode == "partial" and judge_name.startswith("bundled"):
                    for t in CURVE:  # keep a claim whose probability alone reaches t (a veto is 0, a restatement 1)
                        point = score(items, [[(v.score or 0.0) >= t for v in r] for r in ruled], False)
                        curve_rows.append([set_name, t, point["right_kept"], point["made_up_removed"], point["refused"]])
                        data["curve"].setdefault(set_name, []).append({"threshold": t, **point})
        rows.append([set_name, "no verification (everything kept)", 1.0, 0.0, 0.0, ""])
    text = table(
        f"Partial answers — HaluEval summaries ({len(sets['summaries'])} held-out items, one made-up sentence among the "
        f"right ones) and QA ({len(sets['QA'])} items, the right and the hallucinated answer side by side)",
        ["set", "system", "right sentences kept", "made-up removed", "answers refused", "ms/answer"],
        rows,
    )
    text += (
        "\nms/answer with the embedding cache warm (bench/.cache). `partial` rules claim by claim (what ships); "
        "'weighed as a whole' is the judge of verify=True and strict, shown to say why partial does not use it.\n"
    )
    text += "\n" + table(
        "The curve: keep a claim whose claim-support probability alone reaches the threshold (bundled models)",
        ["set", "threshold", "right sentences kept", "made-up removed", "answers refused"],
        curve_rows,
    )
    write_result("partial", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--summaries", type=int, default=300, help="summary items (default 300, the held-out ones)")
    parser.add_argument("--qa", type=int, default=2000, help="QA items (default 2000)")
    args = parser.parse_args()
    run(args.summaries, args.qa)
