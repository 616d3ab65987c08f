"""The learned decisions of the extractive synthesiser: which sentence answers, and whether any does.

Two small logistic models, trained by `bench/train/answerability.py` on public data that no benchmark reports
on (see docs/how-it-decides.md, "How Sourcerer decides to answer"), shipped as `data/answer_models.json`:

* the **sentence model** scores each candidate sentence: how likely it holds the answer;
* the **answerability model** scores the question against the passages as a whole: how likely the best
  sentence really answers it (rather than only sharing its words or its topic).

Each comes in two feature sets: `semantic` (lexical features plus calibrated cosines from the bundled e5
model) and `lexical` (no embedding model at all), so the keyword-only path has a model trained for it.
Features are cheap arithmetic over what retrieval and the sentence split already computed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

FeatureSet = Literal["semantic", "lexical"]

SENTENCE_FEATURES: dict[str, list[str]] = {
    "lexical": [
        "coverage",  # IDF-weighted share of the question's terms in the sentence
        "coverage_squared",
        "type",  # holds a new value of the asked-for type (1), none (0), not applicable (0.5)
        "type_known",  # whether the question's form tells the type
        "context",  # IDF-weighted share of the question's terms in the sentence's passage
        "passage_rank",  # 1 / (1 + rank) of the passage in the retrieved order
        "retrieval",  # the passage's retrieval score in [0, 1]
        "first",  # the passage's first sentence
        "log_length",  # log(1 + terms in the sentence)
        "type_coverage",  # type * coverage: the asked-for kind of value in a sentence about the question
        "novelty",  # share of the sentence's terms the question lacks (an answer adds something)
    ],
}
SENTENCE_FEATURES["semantic"] = SENTENCE_FEATURES["lexical"] + [
    "similarity",
    "passage_similarity",
    "similarity_over_passage",  # the sentence's similarity minus its passage's: it, not its neighbours, matches
    "type_similarity",  # type * similarity
]

ANSWER_FEATURES: dict[str, list[str]] = {
    "lexical": [
        "best_sentence",  # the sentence model's logit for the chosen sentence
        "sentence_gap",  # its margin over the runner-up sentence
        "best_coverage",
        "max_coverage",
        "best_type",
        "type_known",
        "missing",  # IDF-weighted share of the question's terms found in no passage at all
        "max_context",
        "retrieval_best",
        "retrieval_margin",  # best retrieval score minus the runner-up's
        "agreement",  # share of passages whose best sentence covers at least half of the question
        "log_question_terms",
        "best_type_coverage",
        "max_type_coverage",
        "best_novelty",
        "best_context",  # IDF-weighted share of the question's terms in the best sentence's passage
        "best_missing_peak",  # the largest IDF share of one question term that passage lacks
    ],
}
ANSWER_FEATURES["semantic"] = ANSWER_FEATURES["lexical"] + [
    "best_similarity",
    "max_similarity",
    "max_passage_similarity",
    "similarity_gap",  # best sentence similarity minus the runner-up sentence's
    "best_type_similarity",
    "max_type_similarity",
]


@dataclass
class LogisticModel:
    """`sigmoid(bias + sum(weight * (x - mean) / scale))` over named features; `threshold` is a probability."""

    features: list[str]
    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    threshold: float = 0.5

    def logit(self, values: Mapping[str, float]) -> float:
        total = self.bias
        for name, w, m, s in zip(self.features, self.weights, self.mean, self.scale, strict=True):
            total += w * (float(values.get(name, 0.0)) - m) / s
        return total

    def probability(self, values: Mapping[str, float]) -> float:
        return sigmoid(self.logit(values))

    def to_json(self) -> dict:
        return {
            "features": self.features,
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(m, 6) for m in self.mean],
            "scale": [round(s, 6) for s in self.scale],
            "threshold": round(self.threshold, 4),
        }

    @classmethod
    def from_json(cls, data: Mapping) -> LogisticModel:
        return cls(
            features=list(data["features"]),
            weights=[float(w) for w in data["weights"]],
            bias=float(data["bias"]),
            mean=[float(m) for m in data["mean"]],
            scale=[float(s) for s in data["scale"]],
            threshold=float(data.get("threshold", 0.5)),
        )


@dataclass
class AnswerModels:
    """The sentence and answerability models for one feature set."""

    feature_set: FeatureSet
    sentence: LogisticModel
    answerability: LogisticModel
    trained_on: str = ""
    held_out: dict = field(default_factory=dict)
    second_ratio: float = 0.6  # a second sentence joins when its probability is this share of the best one's
    # where the reader is off, strict verification's relevance check reads the sentence model: the least probability
    # of the best sentence an answer quotes (`bar`), and how far in logits a sentence it passes over may read above
    # it (`margin`), fitted by `bench/relevance.py --write-operating-points`; empty: not fitted, not checked
    relevance: dict[str, float] = field(default_factory=dict)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def logit(p: float) -> float:
    """The inverse of `sigmoid`, with p clipped off 0 and 1."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


MODELS_FILE = "answer_models.json"


@lru_cache(maxsize=1)
def load_answer_models() -> dict[str, AnswerModels]:
    """The shipped models, keyed by feature set (read once per process)."""
    raw = json.loads(resources.files("sourcerer").joinpath("data", MODELS_FILE).read_text(encoding="utf-8"))
    return {
        name: AnswerModels(
            feature_set=name,
            sentence=LogisticModel.from_json(entry["sentence"]),
            answerability=LogisticModel.from_json(entry["answerability"]),
            trained_on=raw.get("trained_on", ""),
            held_out=entry.get("held_out", {}),
            second_ratio=float(entry.get("second_ratio", 0.6)),
            relevance={k: float(v) for k, v in entry.get("relevance", {}).items()},
        )
        for name, entry in raw["models"].items()
    }


def answer_features(
    sentence_rows: Sequence[Mapping[str, float]],
    logits: Sequence[float],
    passage_rows: Sequence[Mapping[str, float]],
    missing: float,
    question_terms: int,
) -> dict[str, float]:
    """The answerability features of one question, from its scored sentences (best first by `logits`)."""
    order = sorted(range(len(logits)), key=lambda i: -logits[i])
    best = sentence_rows[order[0]]
    retrieval = sorted((p["retrieval"] for p in passage_rows), reverse=True)
    similarities = sorted((r.get("similarity", 0.0) for r in sentence_rows), reverse=True)
    per_passage: dict[int, float] = {}
    for row in sentence_rows:
        key = int(row["passage"])
        per_passage[key] = max(per_passage.get(key, 0.0), row["coverage"])
    best_passage = passage_rows[int(best["passage"])]
    return {
        "best_sentence": logits[order[0]],
        "best_context": best_passage["context"],
        "best_missing_peak": best_passage["missing_peak"],
        "sentence_gap": logits[order[0]] - logits[order[1]] if len(order) > 1 else 5.0,
        "best_coverage": best["coverage"],
        "max_coverage": max(r["coverage"] for r in sentence_rows),
        "best_type": best["type"],
        "type_known": best["type_known"],
        "missing": missing,
        "max_context": max((p["context"] for p in passage_rows), default=0.0),
        "retrieval_best": retrieval[0] if retrieval else 0.0,
        "retrieval_margin": retrieval[0] - retrieval[1] if len(retrieval) > 1 else retrieval[0] if retrieval else 0.0,
        "agreement": sum(1 for v in per_passage.values() if v >= 0.5) / max(1, len(passage_rows)),
        "log_question_terms": math.log1p(question_terms),
        "best_similarity": best.get("similarity", 0.0),
        "max_similarity": max(r.get("similarity", 0.0) for r in sentence_rows),
        "max_passage_similarity": max((p.get("passage_similarity", 0.0) for p in passage_rows), default=0.0),
        "best_type_coverage": best["type_coverage"],
        "max_type_coverage": max(r["type_coverage"] for r in sentence_rows),
        "best_novelty": best["novelty"],
        "similarity_gap": similarities[0] - similarities[1] if len(similarities) > 1 else similarities[0],
        "best_type_similarity": best.get("type_similarity", 0.0),
        "max_type_similarity": max(r.get("type_similarity", 0.0) for r in sentence_rows),
    }
