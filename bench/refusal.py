"""Refusal benchmark on NoMIRACL English with the extractive default.

`non_relevant`: ten hard-negative passages, none answers — the right output is a refusal.
`relevant`: at least one passage answers — a refusal there is a false refusal.
The answerability score is the learned model's probability (0 when retrieval already refused); its ROC AUC
says how well it separates the two sets independent of the threshold. The answerability model trained on
every other NoMIRACL question by id (`bench.datasets.nomiracl_training_ids`); this benchmark
reports on the other half only.
"""

from __future__ import annotations

import argparse
import time

from bench.common import EVAL, MODES, answer_mode, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, sample
from bench.metrics import mean, roc_auc


def answerability(answer) -> float:
    stage = answer.trace.stage("synthesize")
    if stage is None:
        return 0.0
    return float(stage.detail.get("answerability", 0.0))


def run(n: int) -> dict:
    use_bench_cache()
    from sourcerer import ask

    from bench.datasets import nomiracl_training_ids

    trained = nomiracl_training_ids()  # the answerability model trained on these; report on the other half
    data: dict = {"modes": {}}
    rows_out, curve_rows = [], []
    for mode in MODES:
        subsets = {}
        with answer_mode(mode):
            for subset in ("relevant", "non_relevant"):
                rows = [r for r in read_jsonl(EVAL / "nomiracl" / f"en.test.{subset}.jsonl") if r["query_id"] not in trained]
                rows = sample(rows, n)
                results = []
                started = time.perf_counter()
                for row in rows:
                    passages = [{"text": p["text"], "source": p["docid"]} for p in row["passages"]]
                    answer = ask(row["query"], passages=passages, chat="extractive")
                    results.append((answer.refused, answer.reason, answerability(answer)))
                subsets[subset] = (results, (time.perf_counter() - started) * 1000 / len(rows))
        relevant, non_relevant = subsets["relevant"][0], subsets["non_relevant"][0]
        refusal_rate = mean([1.0 if r[0] else 0.0 for r in non_relevant])
        false_refusal = mean([1.0 if r[0] else 0.0 for r in relevant])
        auc = roc_auc([r[2] for r in relevant], [r[2] for r in non_relevant])
        reasons: dict[str, int] = {}
        for refused, reason, _ in non_relevant + relevant:
            if refused:
                reasons[reason] = reasons.get(reason, 0) + 1
        rows_out.append([f"sourcerer extractive, {mode}", refusal_rate, false_refusal, auc])
        for threshold in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            curve_rows.append(
                [
                    mode,
                    threshold,
                    mean([1.0 if r[2] < threshold else 0.0 for r in non_relevant]),
                    mean([1.0 if r[2] < threshold else 0.0 for r in relevant]),
                ]
            )
        data["modes"][mode] = {
            "refusal_rate_non_relevant": refusal_rate,
            "false_refusal_rate_relevant": false_refusal,
            "auc": auc,
            "reasons": reasons,
            "ms_per_question": {k: v[1] for k, v in subsets.items()},
        }
    rows_out += [
        ["previous release (one e5 cosine, threshold tuned on this set)", 0.52, 0.148, 0.761],
        ["GPT-4 (NoMIRACL paper, reference)", 0.58, 0.05, ""],
        ["baseline: share of question words in best passage (AUC)", "", "", 0.54],
    ]
    text = table(
        f"Refusal — NoMIRACL en, the held-out half: {len(relevant)} relevant + {len(non_relevant)} non-relevant "
        "(targets: AUC ≥ 0.80, refuse ≥ 50% of non-relevant at ≤ 15% false refusals)",
        ["system", "refuses non-relevant", "false refusals (relevant)", "answerability AUC"],
        rows_out,
    )
    text += "\n" + table(
        "Trade-off: answerability threshold vs. refusals (SOURCERER_MIN_ANSWERABILITY moves along this curve)",
        ["features", "threshold", "refuses non-relevant", "false refusals"],
        curve_rows,
    )
    write_result("refusal", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=250, help="questions per subset (default all 250)")
    run(parser.parse_args().n)
