"""Relevance benchmark: does strict verification refuse a true answer to another question?

Items come from the held-out articles of the reading model's QA sets (the `report` half, never trained or
calibrated on; see `bench/train/reader.py` and `bench/reader_eval.py`), in nine languages. For each question the
model's answer is a sentence of the paragraph quoted verbatim and cited: once the gold sentence (a right
answer, which must be kept) and once the paragraph sentence that shares most words with the question but does
not hold the answer (true, cited, and no answer: it must be refused). Both go through `ask(...,
verify="strict")` with a fixed model reply, so the whole verification path runs: claim split, local judge,
relevance.

The check has two operating points, fitted on the `calibrate` half (`--write-operating-points`, run by `make
train`): the least reader probability for the answer's best claim (keeping 95% of the right answers on its
own), and how far a *rival* — a sentence of the sources the answer does not quote, of those the reader would
read first — may read above it (the smallest margin that refuses at most 3% more of the right answers). The
table of the calibration half shows the curve over that margin.

Peers in the same run: the same judge without the relevance check (what `faithful` meant before), and a raw
e5 cosine between question and answer (the threshold that keeps 95% of the right answers on this set).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections import defaultdict

from sourcerer.verify import off_topic

from bench.common import table, use_bench_cache, write_result
from bench.datasets import half, overlap, qa_questions
from bench.train.reader import DATA


class FixedReply:
    """A chat provider whose answer is given: the benchmark decides what the model said."""

    name = "fixed"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, messages):
        from sourcerer.synthesis.providers import ChatReply

        return ChatReply(content=json.dumps({"answer": self.answer, "citations": [1], "refused": False}))


def items(per_lang: int, part: str = "report", seed: int = 11) -> list[dict]:
    by_lang: dict[str, list[dict]] = defaultdict(list)
    for q in qa_questions("held_out"):
        if q["answer"] is None or half(q) != part or len(q["sentences"]) < 2:
            continue
        others = [s for i, s in enumerate(q["sentences"]) if i != q["answer"] and not any(a in s for a in q["answers"])]
        if not others:
            continue
        wrong = max(others, key=lambda s: overlap(q["question"], s))
        by_lang[q["lang"]].append(
            {"lang": q["lang"], "question": q["question"], "passage": " ".join(q["sentences"]), "right": q["sentences"][q["answer"]], "wrong": wrong}
        )
    out = []
    for lang in sorted(by_lang):
        out += random.Random(seed).sample(by_lang[lang], min(per_lang, len(by_lang[lang])))
    return out


def observe(item: dict, text: str) -> dict:
    """`ask(..., verify="strict")` with `text` as the model's cited answer over the item's paragraph."""
    from sourcerer import ask
    from sourcerer.models import Passage

    passage = Passage(text=item["passage"], source="held-out paragraph", score=1.0)
    answer = ask(item["question"], retriever=lambda q, k: [passage], chat=FixedReply(f"{text} [1]"), verify="strict")
    f = answer.faithfulness
    return {
        "kept": not answer.refused,
        "judge_only": bool(f and f.score == 1.0 and not f.unsupported),  # the judge's verdict without relevance
        "relevance": f.relevance if f else None,
        "rival": f.rival if f else None,
    }


RIVAL_BUDGET = 0.03  # the share of right answers the rival check may refuse on top of the reader's bar


def fit_operating_point(per_lang: int) -> tuple[float, float, list[list]]:
    """The relevance check's two operating points, on the `calibrate` half (the relevance figures come from the
    other). First the reader's least probability for the best claim, alone: the bar that keeps 95% of the right
    answers, as before the rival check (so nothing refused for reading as no answer is answered now). Then how
    far (in logits) a sentence the answer does not quote may read above its best claim: the smallest margin
    that refuses at most `RIVAL_BUDGET` more of the right answers. Fitted jointly instead, the bar fell from
    0.049 to 0.035 to pay for the margin, which let plainly off-topic English answers through (the reader gives
    the meal rule 0.036-0.041 for a hotfix or a company-car question); the README shows the curve."""
    from sourcerer.reading import load_reader

    reader = load_reader()
    assert reader is not None, "the relevance check needs the reader (the `local` extra)"
    shipped = dict(reader.operating_points)
    reader.operating_points.update({"relevance": 0.0, "relevance_margin": 1e9})  # observe, never refuse
    try:
        seen = [(observe(item, item["right"]), observe(item, item["wrong"])) for item in items(per_lang, "calibrate")]
    finally:
        reader.operating_points.clear()
        reader.operating_points.update(shipped)
    right = [(r["relevance"], r["rival"]) for r, _ in seen if r["relevance"] is not None]
    wrong = [(w["relevance"], w["rival"]) for _, w in seen if w["relevance"] is not None]
    threshold = sorted(p for p, _ in right)[int(0.05 * len(right))]

    def rates(m: float) -> tuple[float, float]:
        kept = sum(1 for p, r in right if not off_topic(p, r, threshold, m)) / len(right)
        return kept, sum(1 for p, r in wrong if off_topic(p, r, threshold, m)) / len(wrong)

    alone = rates(1e9)[0]
    curve, margin = [], 1e9
    for m in [1e9, *[x / 4 for x in range(24, 3, -1)]]:
        kept, refused = rates(m)
        curve.append(["no rival" if m == 1e9 else f"{m:.2f}", f"{kept:.3f}", f"{refused:.3f}"])
        if kept >= alone - RIVAL_BUDGET:
            margin = m
    return threshold, margin, curve


def run(per_lang: int, write_operating_points: bool = False, calibrate_per_lang: int = 40) -> dict:
    use_bench_cache()
    os.environ["SOURCERER_READER"] = "on"  # the relevance check is the reader's
    from sourcerer.reading import load_reader
    from sourcerer.retrieval.embedders import local_embedder

    calibration = []
    if write_operating_points:
        threshold, margin, calibration = fit_operating_point(calibrate_per_lang)
        points = {"relevance": round(threshold, 4), **({"relevance_margin": margin} if margin < 1e9 else {})}
        config = json.loads((DATA / "reader.json").read_text())
        config["operating_points"] = {k: v for k, v in config.get("operating_points", {}).items() if k != "relevance_margin"} | points
        (DATA / "reader.json").write_text(json.dumps(config, indent=1) + "\n")
        reader = load_reader()
        assert reader is not None
        reader.operating_points.pop("relevance_margin", None)
        reader.operating_points.update(points)

    embedder = local_embedder()
    rows = items(per_lang)
    results = []
    for item in rows:
        right, wrong = observe(item, item["right"]), observe(item, item["wrong"])
        q, (r, w) = embedder.embed([item["question"]], "query")[0], embedder.embed([item["right"], item["wrong"]], "passage")
        results.append(
            {"lang": item["lang"], "kept_right": right["kept"], "refused_wrong": not wrong["kept"], "judge_right": right["judge_only"],
             "judge_refused_wrong": not wrong["judge_only"], "cos_right": float(q @ r), "cos_wrong": float(q @ w)}
        )
    cos_right = sorted(r["cos_right"] for r in results)
    cut = cos_right[int(0.05 * len(cos_right))]

    def share(key: str, subset: list[dict]) -> float:
        return sum(1 for r in subset if r[key]) / max(1, len(subset))

    overall = [
        ["sourcerer strict (judge + reader relevance, rival sentences)", len(results), share("kept_right", results), share("refused_wrong", results)],
        ["judge alone (no relevance check)", len(results), share("judge_right", results), share("judge_refused_wrong", results)],
        [f"e5 cosine ≥ {cut:.3f} (keeps 95% right)", len(results), sum(1 for r in results if r["cos_right"] >= cut) / len(results),
         sum(1 for r in results if r["cos_wrong"] < cut) / len(results)],
    ]
    per_lang = []
    for lang in sorted({r["lang"] for r in results}):
        subset = [r for r in results if r["lang"] == lang]
        per_lang.append([lang, len(subset), share("kept_right", subset), share("refused_wrong", subset)])
    text = table(
        f"Relevance — {len(results)} questions × (right answer, true but irrelevant sentence), {len(per_lang)} languages "
        "(targets: keep ≥ 0.95 of the right, refuse ≥ 0.90 of the irrelevant)",
        ["system", "items", "right kept", "irrelevant refused"],
        overall,
    ) + "\n" + table("Relevance by language, sourcerer strict", ["lang", "items", "right kept", "irrelevant refused"], per_lang)
    if calibration:
        text += "\n" + table(
            "The calibration half: how far a sentence the answer does not quote may read above its best claim (the reader's "
            f"bar fixed at {threshold:.4f}; shipped margin {margin if margin < 1e9 else 'none'})",
            ["margin (logits)", "right kept", "irrelevant refused"],
            calibration,
        )
    data = {
        "overall": overall,
        "strict": {"right_kept": share("kept_right", results), "irrelevant_refused": share("refused_wrong", results)},
        "by_language": per_lang,
        "items": len(results),
        "calibration": calibration,
    }
    write_result("relevance", text, data)
    os.environ.pop("SOURCERER_READER", None)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-lang", type=int, default=30, help="report-half items per language (default 30)")
    parser.add_argument(
        "--write-operating-points", action="store_true", help="fit the relevance check on the calibration half and store it in data/reader.json"
    )
    parser.add_argument("--calibrate-per-lang", type=int, default=40, help="calibration-half items per language (default 40)")
    args = parser.parse_args()
    run(args.per_lang, args.write_operating_points, args.calibrate_per_lang)


if __name__ == "__main__":
    main()
