"""FAQ benchmark (`bench/data/faq.jsonl`): short realistic passages in six languages, asked as a person would.

79 items in English, French, German, Spanish, Arabic and Chinese (support, HR, engineering, policy,
medicine), 1–3 passages each. Every item gives two cases:

* **answerable**: the question is worded differently from the passage; it counts when the answer is given
  and a citation's `quote` holds the expected sentence;
* **unanswerable**: same topic, the fact is absent (a near-miss number or entity is often present); it counts
  when refused.

Written for this benchmark and never used in training. Peers in the same run: the previous release's decision
(one calibrated e5 cosine against 0.71) and "always answer" (the best sentence, never refusing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

from bench.common import MODES, ROOT, answer_mode, table, use_bench_cache, write_result
from bench.metrics import mean

DATA = ROOT / "bench" / "data" / "faq.jsonl"


def load() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


@contextlib.contextmanager
def always_answer():
    os.environ["SOURCERER_MIN_ANSWERABILITY"] = "0"
    try:
        yield
    finally:
        os.environ.pop("SOURCERER_MIN_ANSWERABILITY", None)


def answerability(answer) -> float:
    """The score the threshold curve moves along: the answerability, or 0 where a check that no threshold moves
    refused (a question naming what no passage mentions, or a kind of it, or asking for a phone number no sentence
    holds: `synthesis.scope`; an answer the reader vetoes, at its own bar)."""
    stage = answer.trace.stage("synthesize")
    if not stage or stage.detail.get("decided_by") in ("named scope", "asked kind", "asked value", "reader veto"):
        return 0.0
    return float(stage.detail.get("answerability", 0.0))


def cited_right(answer, expected: str) -> bool:
    squash = lambda s: " ".join(s.split())  # noqa: E731
    return any(c.quote and squash(expected) in squash(c.quote) for c in answer.citations)


def legacy_score(question: str, passages: list[dict]) -> float:
    """The previous release's answerability: mean calibrated e5 cosine of the question to its best sentence and
    best passage."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.retrieval.hybrid import hybrid_retriever
    from sourcerer.synthesis.extractive import ExtractiveSynthesizer

    embedder = local_embedder()
    hits = hybrid_retriever(passages, embedder=embedder)(question, 5)
    if not hits:
        return 0.0
    features = ExtractiveSynthesizer(embedder).analyse(question, hits).answer
    return (features["max_similarity"] + features["max_passage_similarity"]) / 2


def run() -> dict:
    use_bench_cache()
    from sourcerer import ask

    items = load()
    data: dict = {"n_items": len(items), "languages": sorted({i["lang"] for i in items}), "modes": {}}
    rows, curve_rows = [], []
    for mode in MODES:
        with answer_mode(mode):
            answered_right, refused_absent, legacy_yes, legacy_no, always_right, ms = [], [], [], [], [], []
            by_lang: dict[str, list[bool]] = {}
            curve_points: list[tuple[float, float, bool]] = []
            failures = []
            for item in items:
                passages = [{"text": t, "source": f"{item['id']}#{n + 1}"} for n, t in enumerate(item["passages"])]
                started = time.perf_counter()
                yes = ask(item["answerable"]["q"], passages=passages, chat="extractive")
                no = ask(item["unanswerable"]["q"], passages=passages, chat="extractive")
                ms.append((time.perf_counter() - started) * 500)
                ok_yes = not yes.refused and cited_right(yes, item["answerable"]["cite"])
                ok_no = no.refused
                answered_right.append(ok_yes)
                refused_absent.append(ok_no)
                by_lang.setdefault(item["lang"], []).extend([ok_yes, ok_no])
                if not ok_yes:
                    failures.append({"id": item["id"], "case": "answerable", "reason": yes.reason, "answer": yes.answer})
                if not ok_no:
                    failures.append({"id": item["id"], "case": "unanswerable", "answer": no.answer})
                with always_answer():
                    always = ask(item["answerable"]["q"], passages=passages, chat="extractive", min_score=0.0)
                right_sentence = not always.refused and cited_right(always, item["answerable"]["cite"])
                curve_points.append((answerability(yes), answerability(no), right_sentence))
                if mode == MODES[0]:
                    for question, bucket, want_answer in (
                        (item["answerable"]["q"], legacy_yes, True),
                        (item["unanswerable"]["q"], legacy_no, False),
                    ):
                        bucket.append((legacy_score(question, passages) >= 0.71) == want_answer)
                    always_right.append(right_sentence)
            data["modes"][mode] = {
                "answerable_answered_right_sentence": mean(answered_right),
                "unanswerable_refused": mean(refused_absent),
                "by_language_accuracy": {k: mean(v) for k, v in sorted(by_lang.items())},
                "ms_per_question": mean(ms),
                "answerable_refused_at_retrieval": sum(
                    1 for f in failures if f["case"] == "answerable" and f.get("reason") in ("not_in_sources", "below_threshold")
                ),
                "answerable_refused": sum(1 for f in failures if f["case"] == "answerable" and f.get("reason")),
                "failures": failures,
            }
            rows.append([f"sourcerer, {mode}", mean(answered_right), mean(refused_absent), mean(ms)])
            for t in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
                curve_rows.append(
                    [mode, t, mean([p >= t and ok for p, _, ok in curve_points]), mean([q < t for _, q, _ in curve_points])]
                )
            if legacy_yes:
                rows.append([f"previous release (e5 cosine ≥ 0.71), {mode}", mean(legacy_yes), mean(legacy_no), ""])
            if mode == MODES[0]:
                rows.append(["always answer (best sentence, never refuse)", mean(always_right), 0.0, ""])
    text = table(
        f"FAQ — {len(items)} items × (answerable + unanswerable), {len(data['languages'])} languages "
        "(targets: ≥ 0.90 answered with the right sentence and ≥ 0.90 of unanswerable refused; lexical: ≥ 0.90 refused)",
        ["system", "answerable: answered, right sentence cited", "unanswerable: refused", "ms/question"],
        rows,
    )
    text += "\n" + table(
        "Trade-off on this set: answerability threshold (SOURCERER_MIN_ANSWERABILITY) vs. the two targets",
        ["features", "threshold", "answerable: answered, right sentence", "unanswerable: refused"],
        curve_rows,
    )
    for mode in MODES:
        langs = data["modes"][mode]["by_language_accuracy"]
        text += f"\nAccuracy by language, {mode}: " + ", ".join(f"{k} {v:.2f}" for k, v in langs.items())
        m = data["modes"][mode]
        text += f"\nAnswerable questions refused, {mode}: {m['answerable_refused']}, of which at retrieval (before synthesis): {m['answerable_refused_at_retrieval']}"
    text += "\n"
    write_result("faq", text, data)
    return data


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()
    run()
