"""The local judge's reader veto, measured on the judge's own benchmarks: why it ships switched off.

The judge can let the reading model's claim head veto a claim it passed (`LocalJudge`, the `claim_veto` operating
point in `sourcerer/data/reader.json`; none is shipped). Here every answer of the verification benchmark (HaluEval QA
and summaries, `bench.verification`) and of the consistency benchmark (`bench.consistency`) is judged as
`ask(verify=True)` judges it, without the reader, and every claim the judge passes is read as the veto reads it
(`LocalJudge.claim_reading`: not a claim a cited sentence holds word for word, which passes by rule). An answer is faithful at a bar when the judge passed it and no claim it passed
reads under the bar; the bars are the head's points (`bench/reader_eval.py`: `claim_veto`, under which 5% of the
supported held-out NLI claims fall, and the point that reads those pairs best) and a few around them. Two ways:

* **every claim** the judge passes is read;
* **only claims passed with the answer as a whole** (doubted alone, carried by the answer model: the issue's
  "never let a claim the reader rejects pass with the answer as a whole").

Balanced accuracy per set at each bar (targets: HaluEval QA >= 0.97, summaries >= 0.80, each consistency set
>= 0.75), and what one claim's reading costs (2 cores, warm).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from bench.common import RESULTS, table, use_bench_cache, write_result
from bench.consistency import consistency_sets
from bench.metrics import percentile
from bench.verification import balanced_accuracy, halueval_pairs

WHOLE = "with the answer as a whole"  # the judge's words for a claim the answer model carried (sourcerer.support)


def readings(judge, answer: str, source: str, timings: list[float]) -> tuple[bool, list[tuple[float, bool]]]:
    """The judge's verdict on an answer citing `source` (the veto off), and per claim it would read, the claim head's
    reading and whether the answer as a whole carried the claim."""
    from sourcerer.models import Passage
    from sourcerer.verify import Claim, faithfulness_of, split_claims

    claims = [Claim(text=c.text, citations=[1]) for c in split_claims(answer)] or [Claim(text=answer, citations=[1])]
    verdicts = asyncio.run(judge.judge(claims, [Passage(text=source)]))
    read = []
    for claim, verdict in zip(claims, verdicts, strict=True):
        started = time.perf_counter()
        p = judge.claim_reading(claim.text, source, verdict)
        if p is not None:
            timings.append((time.perf_counter() - started) * 1000)
            read.append((p, WHOLE in verdict.why))
    return faithfulness_of(verdicts, judge.name).faithful, read


def faithful_at(item: tuple[bool, list[tuple[float, bool]]], bar: float, whole_only: bool) -> bool:
    passed, read = item
    return passed and all(p >= bar for p, whole in read if whole or not whole_only)


def run(n_qa: int, n_summaries: int, per_set: int) -> dict:
    use_bench_cache()
    from sourcerer.reading import confirming_reader
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.verify import LocalJudge

    reader = confirming_reader()
    assert reader is not None, "the reader needs the bundled engine (the `local` extra)"
    assert "claim_veto" not in reader.operating_points, "the judge below must rule with the veto off"
    head = json.loads((RESULTS / "reader.json").read_text(encoding="utf-8"))
    fitted = {"claim_veto": round(head["claim_veto"], 4), "claim point": round(head["claim_threshold"], 4)}
    bars = sorted({0.0, 0.02, 0.05, 0.25, 0.5, *fitted.values()})
    judge, timings = LocalJudge(local_embedder(), reader=reader), []
    labelled: dict[str, list[tuple[tuple[bool, list], int]]] = {}
    for name, pairs in halueval_pairs(n_qa, n_summaries).items():
        labelled[f"HaluEval {name}"] = [
            (readings(judge, answer, source, timings), label)
            for source, right, made_up in pairs
            for answer, label in ((right, 1), (made_up, 0))
        ]
    for name, items in consistency_sets(per_set).items():
        labelled[name] = [(readings(judge, claim, document, timings), label) for claim, document, label in items]

    data: dict = {"bars": bars, "fitted": fitted, "sets": {}, "ms_per_claim": {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}}
    text = ""
    for whole_only in (False, True):
        mode = "claims passed with the answer as a whole" if whole_only else "every claim the judge passes"
        rows = []
        for name, items in labelled.items():
            figures = []
            for bar in bars:
                kept = [faithful_at(item, bar, whole_only) for item, label in items if label == 1]
                caught = [faithful_at(item, bar, whole_only) for item, label in items if label == 0]
                figures.append(balanced_accuracy(kept, caught))
            data["sets"].setdefault(name, {})[mode] = dict(zip((f"{b:.4f}" for b in bars), figures, strict=True))
            rows.append([name, len(items), *figures])
        names = {v: k for k, v in fitted.items()}
        header = ["set", "answers", *(f"{b:.3f}" + (f" ({names[b]})" if b in names else "") + (" (off)" if b == 0 else "") for b in bars)]
        text += table(f"Reader veto on {mode}: balanced accuracy at each bar", header, rows) + "\n"
    text += (
        f"\nOne claim's reading: {data['ms_per_claim']['p50']:.1f} ms p50 / {data['ms_per_claim']['p95']:.1f} ms p95 "
        f"({len(timings)} claims, 2 cores, warm).\n"
    )
    write_result("claim_veto", text, data)
    print(text)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qa", type=int, default=2000, help="HaluEval QA items (default: the verification benchmark's 2,000)")
    parser.add_argument("--summaries", type=int, default=300, help="HaluEval summaries (default: its 300)")
    parser.add_argument("--per-set", type=int, default=100, help="items per consistency set (default 100)")
    args = parser.parse_args()
    run(args.qa, args.summaries, args.per_set)
