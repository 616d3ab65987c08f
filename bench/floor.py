"""The retrieval floor of the default path (no reader): `pipeline.DEFAULT_MIN_SCORE`, the score under which a
passage is no candidate and a question whose best passage scores under it is refused before synthesis.

A floor trades two things: it drops distractor passages (the sentence models then pick among fewer wrong
sentences) and it refuses questions whose answer-bearing passage scores low (a paraphrase). Each floor is run
whole, since it filters candidates as well as refusing: XQuAD containment en/ar/zh (gold paragraph and four random
others of the same half, as `bench.containment` does) and NoMIRACL en (non-relevant refused, relevant refused). The
floor was chosen on the design half (XQuAD's other 24 articles, NoMIRACL's training ids) and is reported on the
held-out half; both tables are printed. The reader has no floor (`pipeline.retrieval_floor`).
"""

from __future__ import annotations

import argparse
import random

from bench.common import EVAL, MODES, answer_mode, table, use_bench_cache, write_result
from bench.containment import _passages, contains
from bench.datasets import held_out_articles, nomiracl_training_ids, read_jsonl, sample, xquad_qrels, xquad_titles
from bench.metrics import mean

FLOORS = (0.0, 0.1, 0.2, 0.25, 0.3)
LANGUAGES = ("en", "ar", "zh")


def _containment(ask, lang: str, held: bool) -> float:
    titles, held_out = xquad_titles(), held_out_articles()
    corpus = {r["_id"]: r for r in read_jsonl(EVAL / "xquad" / lang / "corpus.jsonl") if (titles[r["_id"]] in held_out) == held}
    qrels = xquad_qrels(lang)
    queries = [q for q in read_jsonl(EVAL / "xquad" / lang / "queries.jsonl") if qrels[q["_id"]] in corpus]
    rng = random.Random(7)
    hits = []
    for query in queries:
        answer = ask(query["text"], passages=_passages(corpus, qrels[query["_id"]], rng), chat="extractive")
        hits.append((not answer.refused) and contains(answer.answer, query["metadata"]["answers"]))
    return mean(hits)


def _refused(ask, subset: str, held: bool, n: int) -> float:
    trained = nomiracl_training_ids()
    rows = [r for r in read_jsonl(EVAL / "nomiracl" / f"en.test.{subset}.jsonl") if (r["query_id"] not in trained) == held]
    answers = [
        ask(r["query"], passages=[{"text": p["text"], "source": p["docid"]} for p in r["passages"]], chat="extractive")
        for r in sample(rows, n)
    ]
    return mean([1.0 if a.refused else 0.0 for a in answers])


def run(n: int) -> dict:
    use_bench_cache()
    import sourcerer.pipeline as pipeline
    from sourcerer import ask

    shipped = pipeline.DEFAULT_MIN_SCORE
    data: dict = {"shipped": shipped, "halves": {}}
    texts = []
    try:
        with answer_mode(MODES[1]):  # the default: embeddings, no reader
            for half, held in (("design", False), ("held-out", True)):
                rows = []
                for floor in FLOORS:
                    pipeline.DEFAULT_MIN_SCORE = floor
                    row = {lang: _containment(ask, lang, held) for lang in LANGUAGES}
                    row["non_relevant_refused"] = _refused(ask, "non_relevant", held, n)
                    row["relevant_refused"] = _refused(ask, "relevant", held, n)
                    data["halves"].setdefault(half, {})[str(floor)] = row
                    mark = " (shipped)" if floor == shipped else ""
                    rows.append([f"{floor:.2f}{mark}", *(row[lang] for lang in LANGUAGES), row["non_relevant_refused"], row["relevant_refused"]])
                texts.append(
                    table(
                        f"Retrieval floor, default path (no reader), {half} half",
                        ["floor", "XQuAD en containment", "ar", "zh", "NoMIRACL non-relevant refused", "relevant refused (false)"],
                        rows,
                    )
                )
    finally:
        pipeline.DEFAULT_MIN_SCORE = shipped
    text = "\n\n".join(texts)
    write_result("floor", text, data)
    print(text)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=250, help="NoMIRACL questions per subset and half")
    run(parser.parse_args().n)
