"""Fit the answer decision that combines the reading model with the cheaper models (`make train`, after the reader).

The reader alone is sure of a sentence that says the question's fact in other words, and unsure of some that say
it plainly in the question's own words; the cheaper sentence and answerability models (`data/answer_models.json`)
are the other way round. The decision is a small logistic model over both — the reader's best probability, its
margin over the runner-up, and the answerability model's probability — and the sentence is the one with the
highest sum of the two models' logits (weighted by `sentence_mix`, chosen for the right sentence).

Fitted on the `calibrate` half of the reader's held-out articles (never trained on by the reader; the
answerability model never saw these sets), one threshold for every language (the best mean of answered and
refused over the languages); figures on the `report` half. Each question runs as `ask()` runs it: the hybrid
retriever over the paragraph (or the paragraph without its answer sentence, or an adversarial question's own
paragraph), the sentence model's ranking, the reader on its best five.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

from sourcerer.synthesis.answerability import logit

from bench.common import table, use_bench_cache, write_result
from bench.datasets import half, qa_questions
from bench.train.logistic import fit_logistic
from bench.train.reader import DATA

FEATURES = ["reader_best", "reader_margin", "answerability"]
MIXES = [0.0, 0.25, 0.5, 1.0, 2.0]


def cases(per_set: int) -> list[dict]:
    """Held-out questions, each as one or two cases: (question, passage text, label, index of the answer sentence)."""
    by_set: dict[str, list[dict]] = defaultdict(list)
    for q in qa_questions("held_out"):
        by_set[f"{q['set']}/{q['lang']}"].append(q)
    out = []
    for key in sorted(by_set):
        for q in random.Random(3).sample(by_set[key], min(per_set, len(by_set[key]))):
            base = {"lang": q["lang"], "half": half(q), "question": q["question"], "translation_trained": q["translation_trained"]}
            if q["answer"] is None:
                out.append({**base, "text": " ".join(q["sentences"]), "label": 0, "gold": None})
                continue
            out.append({**base, "text": " ".join(q["sentences"]), "label": 1, "gold": q["sentences"][q["answer"]]})
            rest = [s for i, s in enumerate(q["sentences"]) if i != q["answer"]]
            if rest:
                out.append({**base, "text": " ".join(rest), "label": 0, "gold": None})
    return out


def observe(case: dict, synthesizer, reader, retrieve) -> dict:
    from sourcerer.models import Passage

    hits = retrieve([Passage(text=case["text"], source="held-out")], case["question"])
    analysis = synthesizer.analyse(case["question"], hits)
    candidates = analysis.sentences[:5]
    read = reader.answers(case["question"], [c.text for c in candidates]) if candidates else []
    ordered = sorted(read, reverse=True)
    return {
        **{k: case[k] for k in ("lang", "half", "label", "translation_trained")},
        "reader_best": logit(ordered[0]) if ordered else -10.0,
        "reader_margin": ordered[0] - ordered[1] if len(ordered) > 1 else ordered[0] if ordered else 0.0,
        "answerability": logit(analysis.answerability),
        "sentences": [
            {"reader": logit(p), "model": logit(c.score), "gold": case["gold"] is not None and case["gold"].strip() in c.text}
            for c, p in zip(candidates, read, strict=True)
        ],
    }


def chosen_right(row: dict, mix: float) -> bool:
    if not row["sentences"]:
        return False
    best = max(row["sentences"], key=lambda s: s["reader"] + mix * s["model"])
    return best["gold"]


def by_language(rows: list[dict], model, threshold: float, mix: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for lang in sorted({r["lang"] for r in rows}):
        rs = [r for r in rows if r["lang"] == lang]
        pos = [r for r in rs if r["label"] == 1]
        neg = [r for r in rs if r["label"] == 0]
        answered = [model.probability(r) >= threshold and chosen_right(r, mix) for r in pos]
        refused = [model.probability(r) < threshold for r in neg]
        out[lang] = {
            "answerable": len(pos),
            "unanswerable": len(neg),
            "answered_right": sum(answered) / max(1, len(answered)),
            "refused": sum(refused) / max(1, len(refused)),
        }
    return out


def run(per_set: int, write: bool) -> dict:
    use_bench_cache()
    from sourcerer.reading import _engine_reader
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.retrieval.hybrid import hybrid_retriever
    from sourcerer.synthesis.extractive import ExtractiveSynthesizer

    _engine_reader.cache_clear()
    reader = _engine_reader()
    embedder = local_embedder()
    synthesizer = ExtractiveSynthesizer(embedder)

    def retrieve(passages, question):
        return hybrid_retriever(passages, embedder=embedder)(question, 5)

    rows = [observe(c, synthesizer, reader, retrieve) for c in cases(per_set)]
    calibrate = [r for r in rows if r["half"] == "calibrate"]
    report = [r for r in rows if r["half"] == "report"]
    model = fit_logistic(calibrate, [r["label"] for r in calibrate], FEATURES)
    mix = max(MIXES, key=lambda m: sum(chosen_right(r, m) for r in calibrate if r["label"] == 1))

    def balanced(t: float) -> float:
        figs = by_language(calibrate, model, t, mix)
        return sum((f["answered_right"] + f["refused"]) / 2 for f in figs.values()) / max(1, len(figs))

    threshold = max((i / 100 for i in range(2, 98)), key=balanced)
    model.threshold = threshold
    figures = by_language(report, model, threshold, mix)
    reader_only = fit_logistic(calibrate, [r["label"] for r in calibrate], ["reader_best"])
    t_reader = max((i / 100 for i in range(2, 98)), key=lambda t: sum(
        (f["answered_right"] + f["refused"]) / 2 for f in by_language(calibrate, reader_only, t, 0.0).values()))
    reader_figures = by_language(report, reader_only, t_reader, 0.0)
    old_only = fit_logistic(calibrate, [r["label"] for r in calibrate], ["answerability"])
    t_old = max((i / 100 for i in range(2, 98)), key=lambda t: sum(
        (f["answered_right"] + f["refused"]) / 2 for f in by_language(calibrate, old_only, t, 1e6).values()))
    old_figures = by_language(report, old_only, t_old, 1e6)
    lines = []
    for lang in figures:
        lines.append([lang, figures[lang]["answerable"], figures[lang]["unanswerable"],
                      figures[lang]["answered_right"], figures[lang]["refused"],
                      reader_figures[lang]["answered_right"], reader_figures[lang]["refused"],
                      old_figures[lang]["answered_right"], old_figures[lang]["refused"]])
    text = table(
        f"Answer decision on the report half of the reader's held-out articles ({len(report)} cases; threshold {threshold:.2f}, "
        f"sentence mix {mix})",
        ["lang", "answerable", "unanswerable", "answered right: decision", "refused: decision",
         "answered right: reader alone", "refused: reader alone", "answered right: previous models", "refused: previous models"],
        lines,
    )
    # the reader trained on a translation of most held-out questions of some languages (`qa_questions`): the rest
    untranslated = [r for r in report if not r["translation_trained"]]
    clean = {
        name: by_language(untranslated, m, t, x)
        for name, (m, t, x) in {"decision": (model, threshold, mix), "reader_alone": (reader_only, t_reader, 0.0), "previous": (old_only, t_old, 1e6)}.items()
    }
    if len(untranslated) < len(report):  # else the table would repeat the one above
        text += "\n" + table(
            f"The same, on the {len(untranslated)} cases of questions no translation of which the reader trained on",
            ["lang", "answerable", "unanswerable", "answered right: decision", "refused: decision",
             "answered right: reader alone", "refused: reader alone", "answered right: previous models", "refused: previous models"],
            [[lang, f["answerable"], f["unanswerable"], f["answered_right"], f["refused"],
              clean["reader_alone"][lang]["answered_right"], clean["reader_alone"][lang]["refused"],
              clean["previous"][lang]["answered_right"], clean["previous"][lang]["refused"]] for lang, f in clean["decision"].items()],
        )
    data = {"decision": model.to_json(), "sentence_mix": mix, "report": figures, "reader_alone": reader_figures, "previous": old_figures,
            "report_untranslated": clean}
    write_result("reader_decision", text, data)
    if write:
        path = DATA / "reader.json"
        config = json.loads(path.read_text())
        config["decision"] = {**model.to_json(), "sentence_mix": mix}
        path.write_text(json.dumps(config, indent=1) + "\n")
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=40)
    parser.add_argument("--write", action="store_true", help="store the decision in data/reader.json")
    args = parser.parse_args()
    run(args.per_set, args.write)


if __name__ == "__main__":
    main()
