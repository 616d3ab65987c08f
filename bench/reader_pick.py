"""The reader picking the answering sentence where the sentence models decide (the default path): quality
against the margin it must read its pick better by, and what it costs.

On the default path the sentence models decide whether the passages answer; the reader then reads their best
sentences with the question (`SOURCERER_READER_PICK`, `settings.PICKED_FROM`), and the one with the highest sum of the two models'
logits answers where the reader reads it better than their best by `extractive.PICK_MARGIN` (in probability) and
it passes the same plain readings as their best (the value asked for, the name asked about).

* **quality**: XQuAD containment en/ar/zh (the gold paragraph and four random others, as `bench.containment`),
  on the design half (the 24 articles the answer models trained on), where the margin was chosen, and on the
  held-out half. Each half is answered twice, without the pick and with it at margin 0, and each margin's figure
  is read off those two runs: a pick applies at a margin where the reader's two reads (the trace's `picked_read`)
  differ by at least that much, and otherwise the answer is the one without the pick;
* **cost**: warm `ask()` over five NoMIRACL passages (the questions and passages `bench.reader_budget` times), the
  milliseconds the pick adds to the same answer without it, p50 and p95 (the reader's budget: 150 / 300 ms).
"""

from __future__ import annotations

import argparse
import os

from bench.common import EVAL, MODES, answer_mode, table, use_bench_cache, write_result
from bench.containment import xquad_answers
from bench.datasets import read_jsonl, sample
from bench.metrics import mean, percentile
from bench.reader_budget import BUDGET_MS, _added_ms

LANGUAGES = ("en", "ar", "zh")
MARGINS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)


def run(n: int | None = None, latency_n: int = 30) -> dict:
    use_bench_cache()
    from sourcerer import ask
    from sourcerer.settings import PICKED_FROM
    from sourcerer.synthesis import extractive

    shipped = extractive.PICK_MARGIN
    latency_rows = sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), latency_n, seed=21)
    data: dict = {"read": PICKED_FROM, "shipped_margin": shipped, "budget_ms": BUDGET_MS, "halves": {}}
    try:
        with answer_mode(MODES[1]):  # the default: the sentence models decide
            added = _added_ms(ask, latency_rows, "SOURCERER_READER_PICK", str(PICKED_FROM), "1")
            data["added_ms_p50"], data["added_ms_p95"] = percentile(added, 50), percentile(added, 95)
            extractive.PICK_MARGIN = 0.0
            for half, held in (("design", False), ("held-out", True)):
                runs = {}
                for reads in ("1", str(PICKED_FROM)):
                    os.environ["SOURCERER_READER_PICK"] = reads
                    runs[reads] = {  # per question: the answer holds a gold answer, the reader's two reads where it picked
                        lang: [(a.hit, a.detail.get("picked_read")) for a in xquad_answers(ask, lang, held, n)] for lang in LANGUAGES
                    }
                rows = {"no pick": {lang: mean([hit for hit, _ in runs["1"][lang]]) for lang in LANGUAGES}}
                for margin in MARGINS:
                    rows[f"{margin:.2f}"] = {
                        lang: mean(
                            [
                                picked if reads is not None and reads[1] - reads[0] >= margin else plain
                                for (plain, _), (picked, reads) in zip(runs["1"][lang], runs[str(PICKED_FROM)][lang], strict=True)
                            ]
                        )
                        for lang in LANGUAGES
                    }
                data["halves"][half] = rows
    finally:
        extractive.PICK_MARGIN = shipped
        os.environ.pop("SOURCERER_READER_PICK", None)
    names = list(data["halves"]["design"])
    text = table(
        f"Reader pick on the default path — XQuAD containment (gold + 4 random paragraphs), the reader picking among the "
        f"sentence models' best {PICKED_FROM} at each margin; the design half chose, the held-out half reports. The pick adds "
        f"{data['added_ms_p50']:.0f} ms p50 / {data['added_ms_p95']:.0f} ms p95 to a warm answer over 5 NoMIRACL passages "
        f"({latency_n} questions; the reader's budget {BUDGET_MS['p50']:.0f} / {BUDGET_MS['p95']:.0f} ms)",
        ["margin", *(f"design {lang}" for lang in LANGUAGES), *(f"held-out {lang}" for lang in LANGUAGES)],
        [
            [
                name + (" (shipped)" if name == f"{shipped:.2f}" else ""),
                *(data["halves"]["design"][name][lang] for lang in LANGUAGES),
                *(data["halves"]["held-out"][name][lang] for lang in LANGUAGES),
            ]
            for name in names
        ],
    )
    write_result("reader_pick", text, data)
    print(text)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=None, help="XQuAD questions per language and half (default: all)")
    parser.add_argument("--latency-n", type=int, default=30, help="NoMIRACL questions timed")
    args = parser.parse_args()
    run(args.n, args.latency_n)
