"""Rerankers: reorder a search's candidates by a model's relevance to the question, before localizing.

A reranker sees the question and the candidates' texts and returns one relevance per text (higher is better);
the service reorders the hits by it and keeps their retrieval scores (which the refusal threshold reads). The
cloud path has Amazon Bedrock's `Rerank` API (Amazon Rerank or Cohere Rerank models), chosen with
`SOURCERER_RERANKER=bedrock`; no local reranker ships in this release (a learned one is planned: see the README).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from sourcerer.errors import ConfigurationError, ProviderError
from sourcerer.settings import get_settings

DEFAULT_BEDROCK_RERANK_MODEL = "amazon.rerank-v1:0"
MAX_CANDIDATES = 100  # the most the service sends to be reranked (Bedrock takes up to 1,000 sources)


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text, in the order given (higher is more relevant)."""
        ...


class BedrockReranker:
    """`bedrock-agent-runtime` `Rerank` with a reranking model (`SOURCERER_RERANK_MODEL`: a model id such as
    `amazon.rerank-v1:0` or `cohere.rerank-v3-5:0`, or its full ARN)."""

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

    def rerank(self, query: str, texts: list[str]) -> list[float]:
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


def make_reranker(name: str | None = None) -> Reranker | None:
    """The reranker `name` or `SOURCERER_RERANKER` names (`bedrock`, `none`); None when none is configured."""
    choice = (name or get_settings().reranker or "none").lower()
    if choice == "none":
        return None
    if choice == "bedrock":
        return BedrockReranker()
    raise ConfigurationError(f"unknown reranker {choice!r}: use bedrock or none")
