"""The reading model's cost against its quality: how many sentences it reads per answer (issue 23's budget).

The reader reads the cheap sentence model's best sentences with the question (`SOURCERER_READER_SENTENCES`,
2 by default, `settings.READER_SENTENCES`, picked from this curve). Fewer sentences cost less and give its
decision less to compare. For each setting, in one run:

* **cost**: warm `ask()` over five NoMIRACL passages (30 questions of the relevant set, their first five
  passages), the milliseconds the reader adds to the same answer with the reader off, p50 and p95; the budget is
  150 ms p50 / 300 ms p95;
* **quality**: the FAQ set (answerable answered with the right sentence, near-misses refused, and the right
  sentence when it must answer: what reading more than one sentence is for) and NoMIRACL en's
  held-out half (125 + 125 questions: non-relevant refused, relevant falsely refused, AUC of the decision's
  probability), the same items `bench/faq.py` and `bench/refusal.py` report on.

`--default-path` times the reader where it runs by default instead (`bench/results/reader_budget_default.md`): the
sentence models decide, the reader picks the answering sentence among their best and, under `verify`, judges
whether the answer answers. Against the same answers with `SOURCERER_READER=off`, with and without `verify`, over
the NoMIRACL questions above and over SciFact's test claims, each asked of its cited abstract among four others
(long biomedical sentences: the reader's costliest reads, and the service benchmark's corpus).
"""

from __future__ import annotations

import argparse
import os
import random
import time

from bench.common import EVAL, answer_mode, table, use_bench_cache, write_result
from bench.datasets import nomiracl_training_ids, read_jsonl, sample, scifact_corpus, scifact_queries
from bench.faq import always_answer, cited_right
from bench.faq import load as faq_items
from bench.metrics import mean, percentile, roc_auc
from bench.refusal import answerability

SETTINGS = (1, 2, 3, 5)
BUDGET_MS = {"p50": 150.0, "p95": 300.0}


def _added_ms(
    ask, rows: list[dict], variable: str = "SOURCERER_READER", on: str | None = "on", off: str = "off", verify: bool = False
) -> list[float]:
    """Per question, the warm answer's milliseconds with `variable` set to `on` (None: unset, the default) minus set
    to `off` (by default: the reader on and off)."""
    from sourcerer.reading import _engine_reader

    added = []
    for row in rows:
        passages = [{"text": p["text"], "source": p["docid"]} for p in row["passages"][:5]]
        spent = {}
        for value in (on, off):
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value
            ask(row["query"], passages=passages, chat="extractive", verify=verify)  # warm: the passages' vectors are cached
            _engine_reader().forget()  # but not the reader's pairs: a new question's are new
            started = time.perf_counter()
            ask(row["query"], passages=passages, chat="extractive", verify=verify)
            spent[value] = (time.perf_counter() - started) * 1000
        added.append(spent[on] - spent[off])
    return added


def _scifact_rows(n: int) -> list[dict]:
    """SciFact test claims, each with its (first) cited abstract among four others drawn at random, title then
    abstract, in NoMIRACL's row shape."""
    claims, cited = scifact_queries("test")
    corpus = {d["_id"]: d for d in scifact_corpus()}
    pool, rng = sorted(corpus), random.Random(21)
    rows = []
    for claim_id in sorted(cited, key=int)[:n]:
        ids = [next(iter(cited[claim_id])), *rng.sample(pool, 4)]
        rng.shuffle(ids)
        passages = [{"docid": i, "text": f"{corpus[i]['title']}\n{corpus[i]['text']}"} for i in ids]
        rows.append({"query": claims[claim_id], "passages": passages})
    return rows


def default_path(latency_n: int) -> dict:
    """What the reader adds where it runs by default (module docstring, `--default-path`)."""
    use_bench_cache()
    from sourcerer import ask

    corpora = {
        "NoMIRACL en": sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), latency_n, seed=21),
        "SciFact claims": _scifact_rows(latency_n),
    }
    data: dict = {"budget_ms": BUDGET_MS, "rows": []}
    with answer_mode("bundled model, no reader"):  # the default path, the reader switched off against it
        for corpus, rows in corpora.items():
            for verify in (False, True):
                added = _added_ms(ask, rows, "SOURCERER_READER", None, "off", verify=verify)
                p50, p95 = percentile(added, 50), percentile(added, 95)
                within = p50 <= BUDGET_MS["p50"] and p95 <= BUDGET_MS["p95"]
                data["rows"].append({"corpus": corpus, "verify": verify, "added_ms_p50": p50, "added_ms_p95": p95, "within_budget": within})
    text = table(
        f"Reader budget on the default path — ms the reader adds to a warm answer over 5 passages ({latency_n} questions "
        f"each, against SOURCERER_READER=off; budget {BUDGET_MS['p50']:.0f} ms p50 / {BUDGET_MS['p95']:.0f} ms p95)",
        ["passages", "verify", "added p50 ms", "added p95 ms", "within budget"],
        [[r["corpus"], "yes" if r["verify"] else "no", r["added_ms_p50"], r["added_ms_p95"], "yes" if r["within_budget"] else "no"] for r in data["rows"]],
    )
    write_result("reader_budget_default", text, data)
    return data


def _faq(ask) -> tuple[float, float, float]:
    """(answerable answered with the right sentence, near-misses refused, right sentence when always answering)."""
    answered, refused, chosen = [], [], []
    for item in faq_items():
        passages = [{"text": t, "source": f"{item['id']}#{n + 1}"} for n, t in enumerate(item["passages"])]
        yes = ask(item["answerable"]["q"], passages=passages, chat="extractive")
        answered.append(not yes.refused and cited_right(yes, item["answerable"]["cite"]))
        refused.append(ask(item["unanswerable"]["q"], passages=passages, chat="extractive").refused)
        with always_answer():  # which sentence the reader picks, whatever it decides
            best = ask(item["answerable"]["q"], passages=passages, chat="extractive", min_score=0.0)
        chosen.append(not best.refused and cited_right(best, item["answerable"]["cite"]))
    return mean(answered), mean(refused), mean(chosen)


def _nomiracl(ask, n: int) -> dict[str, float]:
    trained = nomiracl_training_ids()
    results = {}
    for subset in ("relevant", "non_relevant"):
        rows = sample([r for r in read_jsonl(EVAL / "nomiracl" / f"en.test.{subset}.jsonl") if r["query_id"] not in trained], n)
        answers = [ask(r["query"], passages=[{"text": p["text"], "source": p["docid"]} for p in r["passages"]], chat="extractive") for r in rows]
        results[subset] = [(a.refused, answerability(a)) for a in answers]
    return {
        "non_relevant_refused": mean([1.0 if refused else 0.0 for refused, _ in results["non_relevant"]]),
        "false_refusals": mean([1.0 if refused else 0.0 for refused, _ in results["relevant"]]),
        "auc": roc_auc([p for _, p in results["relevant"]], [p for _, p in results["non_relevant"]]),
    }


def run(n: int, latency_n: int) -> dict:
    use_bench_cache()
    from sourcerer import ask

    latency_rows = sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), latency_n, seed=21)
    data: dict = {"budget_ms": BUDGET_MS, "settings": {}}
    rows = []
    with answer_mode("bundled model"):
        for reads in SETTINGS:
            os.environ["SOURCERER_READER_SENTENCES"] = str(reads)
            os.environ.pop("SOURCERER_MIN_ANSWERABILITY", None)
            added = _added_ms(ask, latency_rows)
            os.environ["SOURCERER_READER"] = "on"
            faq_answered, faq_refused, faq_chosen = _faq(ask)
            nomiracl = _nomiracl(ask, n)
            figures = {
                "added_ms_p50": percentile(added, 50),
                "added_ms_p95": percentile(added, 95),
                "faq_answered_right": faq_answered,
                "faq_near_misses_refused": faq_refused,
                "faq_right_sentence_always_answering": faq_chosen,
                **{f"nomiracl_{k}": v for k, v in nomiracl.items()},
            }
            figures["within_budget"] = figures["added_ms_p50"] <= BUDGET_MS["p50"] and figures["added_ms_p95"] <= BUDGET_MS["p95"]
            data["settings"][str(reads)] = figures
            shown = (
                "added_ms_p50",
                "added_ms_p95",
                "faq_answered_right",
                "faq_near_misses_refused",
                "faq_right_sentence_always_answering",
                "nomiracl_non_relevant_refused",
                "nomiracl_false_refusals",
                "nomiracl_auc",
            )
            rows.append([reads, *(figures[k] for k in shown), "yes" if figures["within_budget"] else "no"])
    os.environ.pop("SOURCERER_READER_SENTENCES", None)
    text = table(
        f"Reader budget — sentences read per answer against cost and quality (cost: {latency_n} NoMIRACL questions over 5 passages, "
        f"warm, ms added to the same answer without the reader; budget {BUDGET_MS['p50']:.0f} ms p50 / {BUDGET_MS['p95']:.0f} ms p95; "
        f"quality: the FAQ set and NoMIRACL en held-out {n} + {n})",
        [
            "sentences read",
            "added p50 ms",
            "added p95 ms",
            "FAQ answered right",
            "FAQ near-misses refused",
            "FAQ right sentence, always answering",
            "NoMIRACL non-relevant refused",
            "NoMIRACL false refusals",
            "NoMIRACL AUC",
            "within budget",
        ],
        rows,
    )
    write_result("reader_budget", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=125, help="NoMIRACL questions per set (relevant, non-relevant)")
    parser.add_argument("--latency-n", type=int, default=30, help="questions timed per setting")
    parser.add_argument("--default-path", action="store_true", help="time the reader on the default path only (docstring)")
    args = parser.parse_args()
    if args.default_path:
        default_path(args.latency_n)
    else:
        run(args.n, args.latency_n)
