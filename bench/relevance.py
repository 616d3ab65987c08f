"""Relevance benchmark: does strict verification refuse a true answer to another question?

Items come from the held-out articles of the reading model's QA sets (the `report` half, never trained or
calibrated on; see `bench/train/reader.py` and `bench/reader_eval.py`), in nine languages. For each question the
model's answer is a sentence of the paragraph quoted verbatim and cited: once the gold sentence (a right
answer, which must be kept) and once the paragraph sentence that shares most words with the question but does
not hold the answer (true, cited, and no answer: it must be refused). Both go through `ask(...,
verify="strict")` with a fixed model reply, so the whole verification path runs: claim split, local judge,
relevance.

Peers in the same run: the same judge without the relevance check (what `faithful` meant before), and a raw
e5 cosine between question and answer (the threshold that keeps 95% of the right answers on this set).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections import defaultdict

from bench.common import table, use_bench_cache, write_result
from bench.datasets import half, overlap, qa_questions


class FixedReply:
    """A chat provider whose answer is given: the benchmark decides what the model said."""

    name = "fixed"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, messages):
        from sourcerer.synthesis.providers import ChatReply

        return ChatReply(content=json.dumps({"answer": self.answer, "citations": [1], "refused": False}))


def items(per_lang: int, seed: int = 11) -> list[dict]:
    by_lang: dict[str, list[dict]] = defaultdict(list)
    for q in qa_questions("held_out"):
        if q["answer"] is None or half(q) != "report" or len(q["sentences"]) < 2:
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


def run(per_lang: int) -> dict:
    use_bench_cache()
    os.environ["SOURCERER_READER"] = "on"  # the relevance check is the reader's
    from sourcerer import ask
    from sourcerer.models import Passage
    from sourcerer.retrieval.embedders import local_embedder

    embedder = local_embedder()
    rows = items(per_lang)

    def verdict(item: dict, text: str) -> tuple[bool, bool]:
        passage = Passage(text=item["passage"], source="held-out paragraph", score=1.0)
        answer = ask(item["question"], retriever=lambda q, k: [passage], chat=FixedReply(f"{text} [1]"), verify="strict")
        f = answer.faithfulness
        judge_only = bool(f and f.score == 1.0 and not f.unsupported)  # the judge's verdict without relevance
        return not answer.refused, judge_only

    results = []
    for item in rows:
        kept_right, judge_right = verdict(item, item["right"])
        kept_wrong, judge_wrong = verdict(item, item["wrong"])
        q, (r, w) = embedder.embed([item["question"]], "query")[0], embedder.embed([item["right"], item["wrong"]], "passage")
        results.append(
            {"lang": item["lang"], "kept_right": kept_right, "refused_wrong": not kept_wrong, "judge_right": judge_right,
             "judge_refused_wrong": not judge_wrong, "cos_right": float(q @ r), "cos_wrong": float(q @ w)}
        )
    cos_right = sorted(r["cos_right"] for r in results)
    cut = cos_right[int(0.05 * len(cos_right))]

    def share(key: str, subset: list[dict]) -> float:
        return sum(1 for r in subset if r[key]) / max(1, len(subset))

    overall = [
        ["sourcerer strict (judge + reader relevance)", len(results), share("kept_right", results), share("refused_wrong", results)],
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
    data = {"overall": overall, "by_language": per_lang, "items": len(results)}
    write_result("relevance", text, data)
    os.environ.pop("SOURCERER_READER", None)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-lang", type=int, default=30)
    args = parser.parse_args()
    run(args.per_lang)



if __name__ == "__main__":
    main()
