"""`nli_faithfulness` (`Answer.groundedness`): the share of an answer's sentences that carry a valid citation
marker, on the HaluEval and XQuAD answers.

Three kinds of answer, all through `ask()`:

* extractive answers (no LLM) on XQuAD's held-out articles (gold paragraph + four others, en/ar/zh) and on
  HaluEval QA (its `knowledge` as the only passage), over the items the other benchmarks report on;
* LLM answers replayed from HaluEval (a chat provider that returns the item's right or hallucinated answer with
  `[1]` markers, as a model following the prompt would): the QA answers are one sentence; the summaries are
  several, marked after every sentence, or only after the first (as a model that cites once would write them).

Beside it, the local judge's verdict (`verify=True`), to show what each measures: `nli_faithfulness` is a cheap,
deterministic check that the answer says where each sentence comes from; whether the source supports it is the
judge's question (a hallucinated answer can be fully marked).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass

from bench.common import EVAL, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, sample
from bench.metrics import mean


@dataclass
class Replay:
    """A chat provider that answers with a fixed draft (what a model wrote), in the prompt's JSON reply contract,
    for `ask()` to enforce and score."""

    draft: str
    name: str = "replay:halueval"

    async def complete(self, messages):
        from sourcerer.synthesis.providers import ChatReply

        return ChatReply(json.dumps({"answer": self.draft, "citations": [1], "refused": False}))


def marked(text: str) -> str:
    """`text` with a citation marker after its first sentence only."""
    from sourcerer.sentences import sentence_spans

    spans = sentence_spans(text)
    if not spans:
        return f"{text} [1]"
    end = spans[0][1]
    return f"{text[:end].rstrip()} [1]{text[end:]}"


def marked_all(text: str) -> str:
    """`text` with a citation marker after every sentence."""
    from sourcerer.sentences import sentence_spans

    return " ".join(f"{text[a:b].strip()} [1]" for a, b in sentence_spans(text)) or f"{text} [1]"


def _row(name: str, answers: list) -> list:
    answered = [a for a in answers if not a.refused]
    scores = [a.groundedness or 0.0 for a in answered]
    verified = [a for a in answered if a.faithfulness is not None]
    return [
        name,
        len(answers),
        len(answered) / max(1, len(answers)),
        mean(scores) if scores else "",
        sum(1 for s in scores if s >= 1.0) / max(1, len(scores)),
        sum(1 for a in verified if a.faithfulness.faithful) / len(verified) if verified else "",
    ]


def run(n: int) -> dict:
    use_bench_cache()
    from sourcerer import ask

    from bench.containment import LANGUAGES, _passages
    from bench.datasets import held_out_articles, xquad_qrels, xquad_titles

    rows = []
    titles, held_out = xquad_titles(), held_out_articles()
    for lang in LANGUAGES:
        corpus = {r["_id"]: r for r in read_jsonl(EVAL / "xquad" / lang / "corpus.jsonl") if titles[r["_id"]] in held_out}
        qrels = xquad_qrels(lang)
        queries = sample([q for q in read_jsonl(EVAL / "xquad" / lang / "queries.jsonl") if qrels[q["_id"]] in corpus], n)
        rng = random.Random(7)
        answers = [ask(q["text"], passages=_passages(corpus, qrels[q["_id"]], rng), chat="extractive") for q in queries]
        rows.append(_row(f"XQuAD {lang}, extractive", answers))

    qa = sample(read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl"))), 2000)[:n]
    summaries = sample(read_jsonl(*sorted((EVAL / "halueval").glob("summarization_data.part-*.jsonl"))), 300)[:n]

    def over(text: str) -> list[dict]:
        return [{"text": text, "source": "knowledge", "id": "k"}]

    rows.append(
        _row("HaluEval QA, extractive", [ask(r["question"], passages=over(r["knowledge"]), chat="extractive") for r in qa])
    )

    def summarised(draft: str, r: dict):
        # a reader asking for the article by its opening words (the passage must be found first)
        question = "Summarise the article that begins: " + " ".join(r["document"].split()[:12])
        return ask(question, passages=over(r["document"]), chat=Replay(draft), verify=True, judge="local")

    for kind in ("right", "hallucinated"):
        rows.append(
            _row(
                f"HaluEval QA, LLM answer replayed ({kind})",
                [
                    ask(
                        r["question"],
                        passages=over(r["knowledge"]),
                        chat=Replay(f"{r[f'{kind}_answer']} [1]"),
                        verify=True,
                        judge="local",
                    )
                    for r in qa
                ],
            )
        )
    for kind, how, mark in (
        ("right", "every sentence", marked_all),
        ("hallucinated", "every sentence", marked_all),
        ("right", "first sentence only", marked),
    ):
        rows.append(
            _row(
                f"HaluEval summaries, LLM answer replayed ({kind}, marker on {how})",
                [summarised(mark(r[f"{kind}_summary"]), r) for r in summaries],
            )
        )
    text = table(
        f"nli_faithfulness — share of an answer's sentences with a valid citation marker ({n} items per row)",
        ["answers", "n", "answered", "mean nli_faithfulness", "fully cited", "judged faithful (verify=True)"],
        rows,
    )
    text += (
        "\nnli_faithfulness checks that every sentence says where it comes from (cheap, deterministic);"
        "\nthe judge checks that the source supports it: a hallucinated answer can be fully marked.\n"
    )
    data = {r[0]: {"n": r[1], "answered": r[2], "nli_faithfulness": r[3], "fully_cited": r[4], "faithful": r[5]} for r in rows}
    write_result("groundedness", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="items per row (default 200)")
    run(parser.parse_args().n)
