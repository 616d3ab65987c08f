"""Rerankers: reorder a search's candidates by a model's relevance to the question, before localizing.

A reranker sees the question and the candidate hits (in their fused order) and returns one relevance per hit
(higher is better); the caller reorders the hits by it and keeps their retrieval scores (which the refusal
threshold reads). Two ship:

* `LocalReranker` (`SOURCERER_RERANKER=local`, the default when `rerank` is asked for and nothing else is
  configured): a learned model over what the hits already carry (`RERANK_FEATURES`): the fused rank and score,
  the question's terms, word pairs and numbers found in the passage and in its best sentence, and, when the hits
  carry the vectors stored at ingest, the calibrated e5 similarity of the question to the passage and to its
  best sentences, and of the passage to the best candidates. No model runs per request beyond the question's
  embedding, which the search already computed (cached). The model is a LambdaMART tree ensemble trained by
  `bench/train/reranker.py` (LightGBM) on SciFact's train claims (disjoint from the 300 test claims
  `bench/retrieval.py` reports on), shipped as arrays in `data/rerank_model.json` and scored here with numpy.
* `BedrockReranker` (`SOURCERER_RERANKER=bedrock`): Amazon Bedrock's `Rerank` API (Amazon Rerank or Cohere
  Rerank models), for the cloud path.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sourcerer.errors import ConfigurationError, ProviderError
from sourcerer.retrieval.keyword import pool_idf
from sourcerer.settings import get_settings
from sourcerer.text import passage_terms, terms

NUMBER = re.compile(r"\d")

DEFAULT_BEDROCK_RERANK_MODEL = "amazon.rerank-v1:0"
CANDIDATES = 50  # fused candidates a reranker reorders before the top k are kept (what the local model trained on)


@runtime_checkable
class Reranker(Protocol):
    name: str
    typical_ms: int  # what one call on 50 candidates usually takes: a request's budget skips it when it cannot fit

    def rerank(self, query: str, hits: Sequence[Any]) -> list[float]:
        """One relevance score per hit (anything with `text`; `score`, `sentences` and `vectors` when it has
        them), in the order given: the retrieval's order (higher is more relevant)."""
        ...


RERANK_FEATURES: dict[str, list[str]] = {
    "lexical": [
        "log_rank",  # log(1 + position) in the fused order the reranker is given
        "score",  # the retrieval score in [0, 1]
        "score_gap",  # its distance below the best candidate's
        "coverage",  # share of the question's terms in the passage, weighted by rarity among the candidates
        "coverage_gap",
        "sentence_coverage",  # the same share in the passage's best sentence: the claim is stated in one place
        "sentence_coverage_gap",
        "bigrams",  # share of the question's adjacent term pairs found adjacent in the passage: phrases, not words
        "bigrams_gap",
        "numbers",  # share of the question's numbers the passage holds (0.5 when the question has none)
        "length",  # log(1 + the passage's terms): long passages match more words by chance
    ],
}
RERANK_FEATURES["semantic"] = RERANK_FEATURES["lexical"] + [
    "similarity",  # calibrated cosine of the question to the passage (vectors stored at ingest)
    "similarity_gap",
    "sentence_similarity",  # ... to the passage's most similar sentence
    "sentence_similarity_gap",
    "sentence_similarity_2",  # mean of the two most similar sentences: a passage about it, not one phrase
    "neighbourhood",  # calibrated cosine to the mean of the best five candidates: on the topic the search found
    "neighbourhood_gap",
]
NEIGHBOURHOOD = 5


@dataclass(frozen=True)
class TreeEnsemble:
    """A boosted tree ensemble (LambdaMART, fitted by LightGBM in `bench/train/reranker.py`) flattened into
    arrays, so scoring needs numpy only. Node `i` sends a row left when `row[feature[i]] <= threshold[i]`; a
    child `c >= 0` is another node, `c < 0` the leaf `-c - 1`; a row's score is the sum of its leaves' values
    over the trees, which start at `roots`."""

    features: list[str]
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray

    def scores(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        matrix = np.array([[row.get(name, 0.0) for name in self.features] for row in rows], dtype=np.float64)
        node = np.broadcast_to(self.roots, (len(rows), len(self.roots))).copy()  # every tree, walked at once
        at = np.arange(len(rows))[:, None]
        while (inner := node >= 0).any():
            i = np.where(inner, node, 0)
            step = np.where(matrix[at, self.feature[i]] <= self.threshold[i], self.left[i], self.right[i])
            node = np.where(inner, step, node)
        return self.value[-node - 1].sum(axis=1)

    def to_json(self) -> dict:
        return {
            "features": self.features,
            "trees": {
                "feature": self.feature.tolist(),
                "threshold": [float(f"{t:.9g}") for t in self.threshold],
                "left": self.left.tolist(),
                "right": self.right.tolist(),
                "value": [float(f"{v:.7g}") for v in self.value],
                "roots": self.roots.tolist(),
            },
        }

    @classmethod
    def from_json(cls, data: dict) -> TreeEnsemble:
        trees = data["trees"]
        return cls(
            features=list(data["features"]),
            feature=np.asarray(trees["feature"], dtype=np.int64),
            threshold=np.asarray(trees["threshold"], dtype=np.float64),
            left=np.asarray(trees["left"], dtype=np.int64),
            right=np.asarray(trees["right"], dtype=np.int64),
            value=np.asarray(trees["value"], dtype=np.float64),
            roots=np.asarray(trees["roots"], dtype=np.int64),
        )


@lru_cache(maxsize=1)
def load_rerank_models() -> tuple[dict[str, TreeEnsemble], str]:
    """The shipped reranking models, keyed by feature set, and the embedding model whose similarities the
    semantic one was trained on (read once per process)."""
    raw = json.loads(resources.files("sourcerer").joinpath("data", "rerank_model.json").read_text(encoding="utf-8"))
    return {name: TreeEnsemble.from_json(entry["model"]) for name, entry in raw["models"].items()}, raw["embed_model"]


def _sentences(hit: Any) -> list[str]:
    text = hit.text
    segments = getattr(hit, "sentences", None) or []
    found = [text[s.start : s.end] for s in segments if s.end > s.start]
    return found or [text]


def rerank_features(query: str, hits: Sequence[Any], embedder: Any = None) -> tuple[str, list[dict[str, float]]]:
    """The feature set that applies (`semantic` when an embedder is given and every hit carries its stored
    vectors, else `lexical`) and one feature row per hit. Never runs the model on a passage."""
    question = list(dict.fromkeys(terms(query)))
    texts = [[hit.text, *_sentences(hit)] for hit in hits]
    bags = [[set(passage_terms(t)) for t in group] for group in texts]  # remembered: candidates recur
    n = len(hits)
    weight = {t: pool_idf(n, sum(1 for b in bags if t in b[0])) for t in question}
    total = sum(weight.values()) or 1.0

    def covered(bag: set[str]) -> float:
        return sum(w for t, w in weight.items() if t in bag) / total

    asked_pairs = set(itertools.pairwise(terms(query)))
    asked_numbers = {t for t in question if NUMBER.search(t)}
    rows = []
    for position, (hit, bag) in enumerate(zip(hits, bags, strict=True)):
        words = passage_terms(hit.text)
        rows.append(
            {
                "log_rank": math.log1p(position),
                "score": float(getattr(hit, "score", None) or 0.0),
                "coverage": covered(bag[0]),
                "sentence_coverage": max(covered(b) for b in bag[1:]),
                "bigrams": len(asked_pairs & set(itertools.pairwise(words))) / len(asked_pairs) if asked_pairs else 0.0,
                "numbers": len(asked_numbers & bag[0]) / len(asked_numbers) if asked_numbers else 0.5,
                "length": math.log1p(len(words)),
            }
        )
    feature_set = "lexical"
    vectors = [getattr(hit, "vectors", None) or {} for hit in hits]
    if embedder is not None and all(all(t in v for t in group) for v, group in zip(vectors, texts, strict=True)):
        try:
            question_vector = np.asarray(embedder.embed([query], "query")[0], dtype=np.float32)
        except Exception:  # noqa: BLE001 - no question vector means lexical features, never a failed search
            question_vector = None
        if question_vector is not None:
            feature_set = "semantic"
            passages = np.stack([np.asarray(v[group[0]], dtype=np.float32) for v, group in zip(vectors, texts, strict=True)])
            centre = passages[:NEIGHBOURHOOD].mean(axis=0)
            centre /= float(np.linalg.norm(centre)) or 1.0
            for row, cosine in zip(rows, passages @ centre, strict=True):
                row["neighbourhood"] = embedder.calibrate(float(cosine))
            for row, v, group in zip(rows, vectors, texts, strict=True):
                cosines = [embedder.calibrate(float(np.dot(v[t], question_vector))) for t in group]
                best = sorted(cosines[1:], reverse=True)
                row["similarity"] = cosines[0]
                row["sentence_similarity"] = best[0]
                row["sentence_similarity_2"] = sum(best[:2]) / len(best[:2])
    for name in ("score", "coverage", "sentence_coverage", "bigrams", "similarity", "sentence_similarity", "neighbourhood"):
        if rows and name in rows[0]:
            top = max(r[name] for r in rows)
            for r in rows:
                r[f"{name}_gap"] = top - r[name]
    return feature_set, rows


class LocalReranker:
    """The learned local reranker (see the module docstring): no network, no download, no passage embedding."""

    name = "local"
    typical_ms = 30

    def __init__(self, embedder: Any = None) -> None:
        self.models, trained_with = load_rerank_models()
        # similarities are read only from the model the semantic weights were trained on (another embedder's
        # cosines have another scale): with any other, the lexical model reranks
        self.embedder = embedder if getattr(embedder, "model_id", None) == trained_with else None

    def rerank(self, query: str, hits: Sequence[Any]) -> list[float]:
        if not hits:
            return []
        feature_set, rows = rerank_features(query, hits, self.embedder)
        return self.models[feature_set].scores(rows).tolist()


class BedrockReranker:
    """`bedrock-agent-runtime` `Rerank` with a reranking model (`SOURCERER_RERANK_MODEL`: a model id such as
    `amazon.rerank-v1:0` or `cohere.rerank-v3-5:0`, or its full ARN)."""

    typical_ms = 400  # one Rerank call on 50 candidates, typical

    def __init__(self, model: str | None = None, client: Any = None, region: str | None = None) -> None:
        self.model = model or get_settings().rerank_model or DEFAULT_BEDROCK_RERANK_MODEL
        self.name = f"bedrock:{self.model.rsplit('/', 1)[-1]}"
        self._client = client
        self._region = region

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
            except ImportError as exc:  # pragma: no cover
                raise ConfigurationError("the Bedrock reranker needs boto3: pip install 'sourcerer-answers[aws]'") from exc
            self._client = boto3.client("bedrock-agent-runtime", region_name=self._region)
        return self._client

    def model_arn(self) -> str:
        if self.model.startswith("arn:"):
            return self.model
        region = self._region or self.client.meta.region_name
        return f"arn:aws:bedrock:{region}::foundation-model/{self.model}"

    def rerank(self, query: str, hits: Sequence[Any]) -> list[float]:
        texts = [hit.text for hit in hits]
        if not texts:
            return []
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": query}}],
                sources=[
                    {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": text}}} for text in texts
                ],
                rerankingConfiguration={
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "numberOfResults": len(texts),
                        "modelConfiguration": {"modelArn": self.model_arn()},
                    },
                },
            )
        except (ClientError, BotoCoreError) as exc:
            raise ProviderError(f"{self.name}: rerank failed: {exc}") from exc
        scores = [0.0] * len(texts)
        for result in response.get("results", []):
            scores[int(result["index"])] = float(result["relevanceScore"])
        return scores


RERANK_UNAVAILABLE = "skipped: reranking is turned off (SOURCERER_RERANKER=none)"


def rerank_hits(reranker: Reranker, query: str, hits: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """`hits` reordered by `reranker` (ties keep the retrieval order) and the trace entry of the call."""
    started = time.perf_counter()
    relevance = reranker.rerank(query, hits)
    order = sorted(range(len(hits)), key=lambda i: (-relevance[i], i))
    ms = round((time.perf_counter() - started) * 1000, 3)
    return [hits[i] for i in order], {"by": reranker.name, "candidates": len(relevance), "ms": ms}


def make_reranker(name: str | None = None, embedder: Any = None) -> Reranker | None:
    """The reranker `name` or `SOURCERER_RERANKER` names: `local` (the default; `embedder` is the index's, whose
    question vectors it reuses), `bedrock`, or `none` (None: a requested rerank is skipped, and the trace says so)."""
    choice = (name or get_settings().reranker or "local").lower()
    if choice == "none":
        return None
    if choice == "local":
        return LocalReranker(embedder)
    if choice == "bedrock":
        return BedrockReranker()
    raise ConfigurationError(f"unknown reranker {choice!r}: use local, bedrock or none")
