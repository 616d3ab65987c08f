"""Fit the reader's cross-language operating point (`make train`, after `bench.reader_decision`).

MLQA asks one question of one paragraph in several languages (one id), so each held-out question can be asked of
its paragraph as every other language writes it. Per (question, paragraph) pair, in the same language or across
two, three cases as `ask()` runs them (the hybrid retriever with no floor, the sentence model's ranking, the reader
on its best five, the decision model): the paragraph (answerable: answered right when the chosen sentence holds
the answer), the paragraph without its answer sentence, and another paragraph of the same article (no answer:
any answer is wrong). The pair crosses languages when `sourcerer.language` says so, as it does in `ask()`.

At the one operating point the decision has (fitted on same-language pairs), the reader answers the no-answer
cases of crossing pairs two to three times as often as those of same-language ones. The cross-language point is
the lowest threshold at which crossing pairs answer no more no-answer cases than same-language pairs do at the
shipped point: an answer across languages is held to the same error rate. Fitted on half of the MLQA ids,
figures on the other half; the XQuAD figures are `bench/crosslingual.py`'s.
"""

from __future__ import annotations

import argparse
import hashlib
import random
from collections import defaultdict

from bench.common import table, use_bench_cache, write_result
from bench.datasets import qa_questions
from bench.metrics import mean
from bench.reader_decision import chosen_right, observe
from bench.train.reader import store_operating_points

GRID = [round(0.40 + i / 100, 2) for i in range(59)]  # 0.40 … 0.98


def _half(mlqa_id: str) -> str:
    """By id, so a question's translations fall on one side with it."""
    return "calibrate" if int(hashlib.sha256(mlqa_id.encode()).hexdigest(), 16) % 2 == 0 else "report"


def cases(ids: int, seed: int = 5) -> list[dict]:
    by_id: dict[str, list[dict]] = defaultdict(list)
    for q in qa_questions("held_out"):
        if q["set"] == "mlqa_dev" and q["answer"] is not None:
            by_id[q["id"]].append(q)
    rng = random.Random(seed)
    chosen = sorted(i for i, versions in by_id.items() if len(versions) >= 2)
    rng.shuffle(chosen)
    out = []
    for mlqa_id in chosen[:ids]:
        for asker in by_id[mlqa_id]:
            for source in by_id[mlqa_id]:
                base = {"asked": asker["lang"], "written": source["lang"], "half": _half(mlqa_id), "question": asker["question"],
                        "lang": asker["lang"], "translation_trained": False}
                out.append({**base, "kind": "answerable", "text": " ".join(source["sentences"]), "label": 1,
                            "gold": source["sentences"][source["answer"]]})
                rest = [s for i, s in enumerate(source["sentences"]) if i != source["answer"]]
                if rest:
                    out.append({**base, "kind": "without the answer sentence", "text": " ".join(rest), "label": 0, "gold": None})
                if source["others"]:
                    out.append({**base, "kind": "another paragraph", "text": rng.choice(source["others"]), "label": 0, "gold": None})
    return out


def figures(rows: list[dict], decision, point, mix: float) -> dict[str, float]:
    """Answered right and refused, each case decided at `point(case)`."""
    def answers(r: dict) -> bool:
        return decision.probability(r) >= point(r)

    pos = [r for r in rows if r["label"] == 1]
    out = {"pairs": len(pos), "answered_right": mean([answers(r) and chosen_right(r, mix) for r in pos])}
    for kind in ("without the answer sentence", "another paragraph"):
        out[f"refused: {kind}"] = mean([not answers(r) for r in rows if r["kind"] == kind])
    return out


def _wrong(rows: list[dict], decision, threshold: float) -> float:
    return mean([decision.probability(r) >= threshold for r in rows if r["label"] == 0])


def run(ids: int, write: bool) -> dict:
    use_bench_cache()
    from sourcerer.language import crosses_languages
    from sourcerer.reading import _engine_reader
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.retrieval.hybrid import hybrid_retriever
    from sourcerer.synthesis.extractive import ExtractiveSynthesizer

    _engine_reader.cache_clear()
    reader = _engine_reader()
    assert reader is not None and reader.decision is not None, "the reader and its decision model are installed first"
    embedder = local_embedder()
    synthesizer = ExtractiveSynthesizer(embedder)

    def retrieve(passages, question):  # as ask() retrieves where the reader decides: no semantic floor
        return hybrid_retriever(passages, embedder=embedder, semantic_floor=0.0)(question, 5)

    rows = []
    for case in cases(ids):
        row = observe(case, synthesizer, reader, retrieve)
        row.update({k: case[k] for k in ("asked", "written", "kind")})
        row["crosses"] = crosses_languages(case["question"], case["text"]) is not None
        rows.append(row)
    decision, mix = reader.decision, reader.sentence_mix
    shipped = decision.threshold
    calibrate = [r for r in rows if r["half"] == "calibrate"]
    same_wrong = _wrong([r for r in calibrate if not r["crosses"]], decision, shipped)
    crossing = [r for r in calibrate if r["crosses"]]
    point = next((t for t in GRID if t >= shipped and _wrong(crossing, decision, t) <= same_wrong), GRID[-1])

    report = [r for r in rows if r["half"] == "report"]
    groups = {"same language": [r for r in report if r["asked"] == r["written"]]}
    for lang in sorted({r["asked"] for r in report}):
        groups[f"asked in {lang}, written in another"] = [r for r in report if r["asked"] == lang and r["written"] != lang]
    groups["every cross-language pair"] = [r for r in report if r["asked"] != r["written"]]
    lines, data = [], {"ids": ids, "shipped": shipped, "cross_lingual": point, "same_language_wrong_calibrate": same_wrong, "groups": {}}
    for name, rs in groups.items():
        one = figures(rs, decision, lambda r: shipped, mix)
        # each pair at the point ask() picks for it: the cross-language one where the pair is detected as crossing
        own = figures(rs, decision, lambda r: point if r["crosses"] else shipped, mix)
        detected = mean([r["crosses"] for r in rs if r["label"] == 1])
        data["groups"][name] = {"one_point": one, "own_point": own, "detected_crossing": detected}
        lines.append([name, one["pairs"], detected, one["answered_right"], own["answered_right"],
                      one["refused: without the answer sentence"], own["refused: without the answer sentence"],
                      one["refused: another paragraph"], own["refused: another paragraph"]])
    text = table(
        f"Reader across languages — held-out MLQA, report half by id ({len(report)} cases); cross-language point "
        f"{point:.2f} (shipped {shipped:.2f}; same-language no-answer cases answered on the calibration half: {same_wrong:.3f})",
        ["pairs", "question–paragraph pairs", "detected as crossing", "answered right: one point", "answered right: own point",
         "refused without the answer sentence: one point", "…: own point", "refused another paragraph: one point", "…: own point"],
        lines,
    )
    crossing_report = groups["every cross-language pair"]
    curve = []
    for t in GRID[:: 5]:
        f = figures(crossing_report, decision, lambda r, t=t: t, mix)
        curve.append([t, f["answered_right"], f["refused: without the answer sentence"], f["refused: another paragraph"]])
    data["curve"] = curve
    text += "\n" + table(
        "The trade across languages, report half: every cross-language pair at one threshold",
        ["threshold", "answered right", "refused without the answer sentence", "refused another paragraph"],
        curve,
    )
    write_result("reader_crosslingual", text, data)
    if write:
        store_operating_points({"cross_lingual": point})
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=240, help="held-out MLQA questions, each asked in every language it has")
    parser.add_argument("--write", action="store_true", help="store the point in data/reader.json (operating_points.cross_lingual)")
    args = parser.parse_args()
    run(args.ids, args.write)


if __name__ == "__main__":
    main()
