"""The reader's veto on the default path: where the sentence models decide to answer, the reader reads the answer's
sentences with the question, and the answer is refused where it reads none of them at its `veto` operating point.

The veto refuses what the reader reads as plainly no answer ("Can I borrow a laptop?" answered "Adults can borrow up
to 12 items at a time"); its cost is the right answers the reader misreads. Its bar is fitted to keep 99% of the
default path's right answers:

* **fit**: XQuAD en/ar/zh design articles (the answer models trained on them; the reader never saw any XQuAD
  article), every question asked with its gold paragraph and four random others (`bench.containment`), the veto
  off. Per answer the trace's `answer_read` (the reader's best reading of the sentences it quotes); the bar is the
  lowest such reading of a right answer that keeps 99% of them, pooled over the three languages;
* **report**: the held-out articles' containment (the benchmark's figure: a refusal is a miss) at each bar, and on
  the design half the right answers kept and the wrong ones refused;
* **cost**: warm `ask()` over five NoMIRACL passages (`bench.reader_budget`'s questions), the milliseconds the veto
  adds (the reader remembers the pairs the pick read; an answer the pick did not read costs one read).

`--write-operating-points` stores the fitted bar (`veto` in `sourcerer/data/reader.json`; `make train`).
"""

from __future__ import annotations

import argparse
import os

from bench.common import EVAL, MODES, answer_mode, table, use_bench_cache, write_result
from bench.containment import LANGUAGES, xquad_answers
from bench.datasets import read_jsonl, sample
from bench.metrics import mean, percentile
from bench.reader_budget import _added_ms
from bench.train.reader import store_operating_points

KEEP = 0.99  # the share of the design half's right answers the veto keeps
BARS = (0.0, 0.02, 0.03, 0.05, 0.0726, 0.1)  # beside the fitted one; 0.0726 is the relevance check's bar


def fitted_bar(right_reads: list[float], keep: float = KEEP) -> float:
    """The least bar under which at most `1 - keep` of the right answers' readings fall."""
    ranked = sorted(right_reads)
    return ranked[int(len(ranked) * (1 - keep))] if ranked else 0.0


def _vetoed(answers, bar: float) -> list[bool]:
    """Per answer: refused by the veto at `bar` (an answer the plain readings settle reads 1.0; one the veto did not
    reach, with no `answer_read`, stands)."""
    return [not a.refused and a.detail.get("answer_read", 1.0) < bar for a in answers]


def run(n: int | None = None, latency_n: int = 30, write_operating_points: bool = False) -> dict:
    use_bench_cache()
    from sourcerer import ask
    from sourcerer.reading import confirming_reader

    reader = confirming_reader()
    shipped = reader.threshold("veto", 0.0) if reader is not None else 0.0
    latency_rows = sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), latency_n, seed=21)
    os.environ["SOURCERER_READER_VETO"] = "0"  # every answer of the sentence models, with its reading
    try:
        with answer_mode(MODES[1]):  # the default: the sentence models decide
            halves = {half: {lang: xquad_answers(ask, lang, held, n) for lang in LANGUAGES} for half, held in (("design", False), ("held-out", True))}
            reads = [a.detail["answer_read"] for lang in LANGUAGES for a in halves["design"][lang] if a.hit and "answer_read" in a.detail]
            bar = fitted_bar(reads)
            added = _added_ms(ask, latency_rows, "SOURCERER_READER_VETO", f"{bar:.4f}", "0")
    finally:
        os.environ.pop("SOURCERER_READER_VETO", None)
    data: dict = {"keep": KEEP, "fitted": round(bar, 4), "shipped": shipped, "added_ms_p50": percentile(added, 50), "added_ms_p95": percentile(added, 95), "bars": {}}
    rows = []
    for b in sorted({*BARS, round(bar, 4)}):
        design = [(a.hit, vetoed) for lang in LANGUAGES for a, vetoed in zip(halves["design"][lang], _vetoed(halves["design"][lang], b), strict=True) if not a.refused]
        held = {lang: mean([a.hit and not v for a, v in zip(halves["held-out"][lang], _vetoed(halves["held-out"][lang], b), strict=True)]) for lang in LANGUAGES}
        point = {
            "design_right_kept": mean([not v for hit, v in design if hit]),
            "design_wrong_refused": mean([v for hit, v in design if not hit]),
            "held_out_containment": held,
        }
        data["bars"][f"{b:.4f}"] = point
        name = f"{b:.4f}" + (" (fitted)" if b == round(bar, 4) else "") + (" (off)" if b == 0 else "")
        rows.append([name, point["design_right_kept"], point["design_wrong_refused"], *(held[lang] for lang in LANGUAGES)])
    text = table(
        f"Reader veto on the default path — XQuAD (gold + 4 random paragraphs): the design half fits the bar (keeps "
        f"{KEEP:.0%} of its right answers), the held-out half reports containment (a refusal is a miss). The veto adds "
        f"{data['added_ms_p50']:.1f} ms p50 / {data['added_ms_p95']:.1f} ms p95 to a warm answer over 5 NoMIRACL passages "
        f"({latency_n} questions)",
        ["bar", "design: right answers kept", "design: wrong answers refused", *(f"held-out {lang}" for lang in LANGUAGES)],
        rows,
    )
    write_result("reader_veto", text, data)
    print(text)
    if write_operating_points:
        store_operating_points({"veto": round(bar, 4)})
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=None, help="XQuAD questions per language and half (default: all)")
    parser.add_argument("--latency-n", type=int, default=30, help="NoMIRACL questions timed")
    parser.add_argument("--write-operating-points", action="store_true", help="store the fitted bar in sourcerer/data/reader.json")
    args = parser.parse_args()
    run(args.n, args.latency_n, args.write_operating_points)
