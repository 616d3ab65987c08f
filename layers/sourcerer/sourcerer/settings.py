"""Every `SOURCERER_*` setting, in one pydantic model read through `get_settings()`.

Nothing reads the environment at import time: `get_settings()` parses and validates it at first use and hands
the result to the factories (`open_index`, `open_ledger`, `make_embedder`, the chat providers, the tiers). An
invalid value is a `ConfigurationError` that names the variable, raised where the setting is first needed; a
service turns it into a 503 that charges nothing. Empty variables count as unset.

The parsed settings are cached per distinct environment: a process reads them once (the environment of a
Lambda container or a server does not change), and a test that sets a variable gets it on the next call.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, Json, ValidationError, field_validator

from sourcerer.errors import ConfigurationError

DEFAULT_ENDPOINT = "https://openrouter.ai/api/v1/chat/completions"
DEFAULT_MODEL = "google/gemini-3-flash-preview"
DEFAULT_BEDROCK_EMBED_MODEL = "amazon.titan-embed-text-v2:0"


READER_SENTENCES = 2  # the reader's sentences per answer: bench/results/reader_budget.md's curve
# where the sentence models decide, the reader picks the answering sentence among their best this many: three
# gained more on XQuAD's design half but added 181 ms p50 over 5 passages on 2 cores, over the reader's 150 ms
# budget; two add 102 ms (docs/how-it-decides.md, "By default the reader picks the sentence"; bench/results/reader_pick.md)
PICKED_FROM = 2


class Settings(BaseModel):
    """The environment Sourcerer runs in. Field aliases are the variable names (see the README's table)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    # local state and stores
    home: Path = Field(Path(".sourcerer"), alias="SOURCERER_HOME", description="local state: index, ledger, caches")
    index: str | None = Field(None, alias="SOURCERER_INDEX", description="index URL: sqlite:///path or opensearch://host")
    table: str | None = Field(None, alias="SOURCERER_TABLE", description="DynamoDB ledger table (else SQLite in home)")
    embed_queue: str | None = Field(None, alias="SOURCERER_EMBED_QUEUE", description="SQS queue URL for deferred embedding")
    originals: str | None = Field(
        None,
        alias="SOURCERER_ORIGINALS",
        description="where documents' original bytes are kept: s3://bucket/prefix or a directory (default: beside a SQLite index)",
    )
    # embeddings
    embedder: str | None = Field(None, alias="SOURCERER_EMBEDDER", description="local, openai, bedrock or none")
    embed_endpoint: str | None = Field(None, alias="SOURCERER_EMBED_ENDPOINT", description="OpenAI-compatible embeddings URL")
    embed_model: str | None = Field(None, alias="SOURCERER_EMBED_MODEL")
    bedrock_embed_model: str = Field(DEFAULT_BEDROCK_EMBED_MODEL, alias="SOURCERER_BEDROCK_EMBED_MODEL")
    # chat models
    api_key_value: str | None = Field(None, validation_alias=AliasChoices("SOURCERER_API_KEY", "OPENROUTER_API_KEY"), repr=False)
    model: str = Field(
        DEFAULT_MODEL, validation_alias=AliasChoices("SOURCERER_MODEL", "OPENAI_CHAT_MODEL"), description="chat model"
    )
    endpoint: str = Field(DEFAULT_ENDPOINT, alias="SOURCERER_ENDPOINT")
    bedrock_model: str | None = Field(None, alias="SOURCERER_BEDROCK_MODEL")
    providers: str | None = Field(None, alias="SOURCERER_PROVIDERS", description="comma-separated chain: openai,bedrock")
    backoff_s: float = Field(0.5, ge=0, alias="SOURCERER_BACKOFF_S", description="first retry delay of a chat call")
    # a hung model must never outlast the answer function (29 s): each call, its retries, and each LLM stage as a
    # whole are bounded, and the extractive synthesiser or the local judge answers after a deadline
    llm_timeout_s: float = Field(6.0, gt=0, alias="SOURCERER_LLM_TIMEOUT_S", description="one chat call")
    llm_attempts: int = Field(2, ge=1, le=5, alias="SOURCERER_LLM_ATTEMPTS", description="tries of a transient failure")
    llm_deadline_s: float = Field(12.0, gt=0, alias="SOURCERER_LLM_DEADLINE_S", description="all LLM synthesis")
    judge_deadline_s: float = Field(8.0, gt=0, alias="SOURCERER_JUDGE_DEADLINE_S", description="LLM verification")
    extractive_fallback: bool = Field(True, alias="SOURCERER_EXTRACTIVE_FALLBACK")
    grounding_url: str | None = Field(None, alias="SOURCERER_GROUNDING_URL")
    min_answerability: float | None = Field(
        None, ge=0, alias="SOURCERER_MIN_ANSWERABILITY", description="above 1 refuses everything"
    )
    reader: bool | None = Field(
        None,
        alias="SOURCERER_READER",
        description="on: the reading model decides answers and relevance (refuses more near-misses, answers fewer "
        "questions; a follow-up the rule rewrote is the sentence models'); unset: the sentence models decide, and "
        "the reader picks the answering sentence among their best two and confirms an answer from passages under "
        "the retrieval floor; off: never",
    )
    reader_sentences: int = Field(
        READER_SENTENCES,
        ge=1,
        le=20,
        alias="SOURCERER_READER_SENTENCES",
        description="sentences the reading model reads per answer, the cheap model's best first (its cost: bench/results/reader_budget.md)",
    )
    reader_pick: int = Field(
        PICKED_FROM,
        ge=1,
        le=20,
        alias="SOURCERER_READER_PICK",
        description="where the sentence models decide: the best sentences the reading model picks the answering one "
        "among (1: their best; its gain and cost: bench/results/reader_pick.md)",
    )
    reader_veto: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        alias="SOURCERER_READER_VETO",
        description="where the sentence models decide: the least probability the reading model must give the answer's "
        "sentence, else it is refused (unset: the fitted point, bench/results/reader_veto.md; 0: never)",
    )
    # the service
    prices: Json[dict[str, Any]] | None = Field(None, alias="SOURCERER_PRICES", description="price table overrides (JSON)")
    tiers: Json[dict[str, dict[str, Any]]] | None = Field(None, alias="SOURCERER_TIERS", description="tier overrides (JSON)")
    audit_window_days: float = Field(30.0, gt=0, alias="SOURCERER_AUDIT_WINDOW_DAYS")
    answer_cache: bool = Field(True, alias="SOURCERER_ANSWER_CACHE", description="serve repeated questions from the cache")
    cache_ttl_s: float = Field(86_400.0, gt=0, alias="SOURCERER_CACHE_TTL_S", description="how long a cached answer lives")
    cache_similarity: float = Field(
        0.95, gt=0, le=1, alias="SOURCERER_CACHE_SIMILARITY", description="question embedding cosine that counts as the same"
    )
    embed_backlog: int = Field(
        2000, ge=1, alias="SOURCERER_EMBED_BACKLOG", description="chunks waiting for vectors before an ingest gets a 429"
    )
    handoff_webhook: str | None = Field(
        None, alias="SOURCERER_HANDOFF_WEBHOOK", description="URL each new hand-off is POSTed to (JSON)"
    )
    handoff_queue: str | None = Field(None, alias="SOURCERER_HANDOFF_QUEUE", description="SQS queue URL for new hand-offs")
    reranker: str | None = Field(None, alias="SOURCERER_RERANKER", description="local (the default), bedrock or none")
    rerank_model: str | None = Field(None, alias="SOURCERER_RERANK_MODEL", description="the Bedrock reranking model")
    cors_origins: str | None = Field(
        None,
        alias="SOURCERER_CORS_ORIGINS",
        description="browser origins allowed to call the API, comma-separated; * matches a port or all origins",
    )

    @field_validator("extractive_fallback", "answer_cache", "reader", mode="before")
    @classmethod
    def _yes_no(cls, value: Any) -> Any:
        return value.strip().lower() not in ("0", "false", "no", "off") if isinstance(value, str) else value

    @property
    def api_key(self) -> str | None:
        return self.api_key_value

    @classmethod
    def variables(cls) -> list[str]:
        """Every environment variable the model reads (the test fixture clears exactly these)."""
        names: list[str] = []
        for field in cls.model_fields.values():
            choices = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else [field.alias]
            names.extend(str(c) for c in choices if c)
        return names


def get_settings() -> Settings:
    """The settings of this process's environment, validated (a `ConfigurationError` names a bad variable)."""
    environ = os.environ
    return _parse(tuple((name, value) for name in _variables() if (value := environ.get(name)) and value.strip()))


@lru_cache(maxsize=1)
def _variables() -> tuple[str, ...]:
    return tuple(Settings.variables())  # read on every request: the fields do not change


@lru_cache(maxsize=8)
def _parse(values: tuple[tuple[str, str], ...]) -> Settings:
    try:
        return Settings.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors()[0]  # located by the variable's name (the field's alias)
        raise ConfigurationError(f"{first['loc'][0]} is not valid: {first['msg']}") from exc
