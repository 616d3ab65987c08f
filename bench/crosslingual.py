"""Cross-lingual answers on XQuAD: a question in one language over passages in another (held-out articles).

XQuAD asks the same questions of the same paragraphs in English, Arabic and Chinese (one id), so an English
question can be asked of the Chinese paragraphs and its answer looked for among the Chinese answers. Two passage
sets per question, as `bench/containment.py` and `bench/scope.py` build them:

* **answerable**: the gold paragraph (in the passages' language) and four random other held-out paragraphs; an
  answer counts when it contains a gold answer string of that language (a refusal is a miss);
* **same topic, no answer**: up to five other paragraphs of the gold paragraph's article; any answer is wrong.

A question and its passages share no word across scripts, so nothing reaches synthesis but what the semantic
search returns, and cross-lingual similarities sit low (an English question and its Chinese gold paragraph:
calibrated similarity under 0.2 for nine in ten). Peer in the same run: the semantic floor every mode kept before
(`SEMANTIC_FLOOR`, 0.4), which refused nine in ten of these questions at retrieval, with the reader too; and the
reader at the one operating point it had for every pair before its cross-language one (`bench/reader_crosslingual.py`).
"""

from __future__ import annotations

import argparse
import random

from bench.common import EVAL, MODES, answer_mode, table, use_bench_cache, write_result
from bench.containment import contains
from bench.datasets import held_out_articles, read_jsonl, xquad_qrels, xquad_titles
from bench.metrics import mean

DIRECTIONS = (("en", "zh"), ("en", "ar"), ("zh", "en"), ("ar", "en"))


def _passages(corpus: dict, ids: list[str]) -> list[dict]:
    return [{"text": corpus[i]["text"], "source": corpus[i].get("title", i)} for i in ids]


def direction(asked: str, written: str, n: int, seed: int = 7) -> list[tuple[list[dict], list[dict], str, list[str]]]:
    """(answerable passages, same-topic passages, question, gold answers) for questions in `asked` over paragraphs
    in `written`."""
    titles, held = xquad_titles(), held_out_articles()
    corpus = {r["_id"]: r for r in read_jsonl(EVAL / "xquad" / written / "corpus.jsonl") if titles[r["_id"]] in held}
    qrels = xquad_qrels(written)
    golds = {q["_id"]: q["metadata"]["answers"] for q in read_jsonl(EVAL / "xquad" / written / "queries.jsonl")}
    questions = [q for q in read_jsonl(EVAL / "xquad" / asked / "queries.jsonl") if qrels.get(q["_id"]) in corpus]
    rng = random.Random(seed)
    by_article: dict[str, list[str]] = {}
    for pid in sorted(corpus):
        by_article.setdefault(titles[pid], []).append(pid)
    out = []
    for q in rng.sample(questions, min(n, len(questions))):
        gold = qrels[q["_id"]]
        others = rng.sample(sorted(p for p in corpus if p != gold), 4)
        siblings = [p for p in by_article[titles[gold]] if p != gold][:5]
        out.append((_passages(corpus, [gold, *others]), _passages(corpus, siblings), q["text"], golds[q["_id"]]))
    return out


def run(n: int) -> dict:
    use_bench_cache()
    import sourcerer.pipeline as pipeline
    from sourcerer import ask
    from sourcerer.reading import _engine_reader

    data: dict = {"n": n, "modes": {}}
    rows = []
    shipped = pipeline.hybrid_retriever
    floor = lambda passages, **_: shipped(passages)  # noqa: E731
    systems = {  # the retriever, and whether the reader keeps its cross-language operating point
        "shipped": (shipped, True),
        "one operating point for every language pair": (shipped, False),
        "previous: semantic floor 0.4 in every mode": (floor, False),
    }
    reader = _engine_reader()
    points = dict(reader.operating_points) if reader is not None else {}
    for mode in MODES[:2]:  # lexical only reads no other language
        for system, (make, cross_point) in systems.items():
            if mode != MODES[0] and system != "shipped":  # without the reader both peers are the shipped system
                continue
            pipeline.hybrid_retriever = make  # type: ignore[assignment]
            if reader is not None:
                reader.operating_points = points if cross_point else {k: v for k, v in points.items() if k != "cross_lingual"}
            try:
                with answer_mode(mode):
                    for asked, written in DIRECTIONS:
                        answered, refused, at_retrieval, wrong = [], [], [], []
                        for passages, same_topic, question, golds in direction(asked, written, n):
                            answer = ask(question, passages=passages, chat="extractive")
                            answered.append(not answer.refused and contains(answer.answer, golds))
                            refused.append(answer.refused)
                            at_retrieval.append(answer.reason in ("not_in_sources", "below_threshold"))
                            if same_topic:
                                wrong.append(not ask(question, passages=same_topic, chat="extractive").refused)
                        figures = {
                            "answered_with_gold": mean(answered),
                            "refused": mean(refused),
                            "refused_at_retrieval": mean(at_retrieval),
                            "same_topic_answered": mean(wrong),
                        }
                        data["modes"].setdefault(mode, {}).setdefault(system, {})[f"{asked}->{written}"] = figures
                        rows.append([mode, system, f"{asked} → {written}", len(answered), *figures.values()])
            finally:
                pipeline.hybrid_retriever = shipped  # type: ignore[assignment]
                if reader is not None:
                    reader.operating_points = points
    text = table(
        "Cross-lingual — XQuAD held-out articles, question in one language, passages in another (gold + 4 random; "
        "same-topic sets without the answer)",
        ["features", "system", "question → passages", "questions", "answered with the gold answer", "refused",
         "refused at retrieval", "same topic, no answer: answered (wrong)"],
        rows,
    )
    write_result("crosslingual", text, data)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=150, help="questions per direction (default 150)")
    run(parser.parse_args().n)


if __name__ == "__main__":
    main()
