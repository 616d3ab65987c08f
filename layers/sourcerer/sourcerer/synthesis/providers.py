"""Chat providers (OpenAI-compatible over httpx, Amazon Bedrock Converse) and the fallback chain.

A provider turns chat messages into a reply. Transient failures (timeouts, 429, 5xx) are retried with
exponential backoff; when a provider is exhausted the chain moves to the next one, and the extractive
synthesiser answers last unless it was disabled.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx

from sourcerer import config
from sourcerer.errors import ConfigurationError, ProviderError


@dataclass
class ChatReply:
    content: str
    usage: dict[str, float] = field(default_factory=dict)


class TransientProviderError(ProviderError):
    """Worth retrying: a timeout, a connection error, HTTP 429 or 5xx."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@runtime_checkable
class ChatProvider(Protocol):
    """A chat model. `name` is what `Answer.provider` reports, e.g. `openai:<model>`."""

    name: str

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply: ...


def _backoff_base() -> float:
    return float(config.env("SOURCERER_BACKOFF_S", "0.5") or 0.5)


async def with_retries(provider: ChatProvider, messages: list[dict[str, str]], attempts: int = 3) -> ChatReply:
    """Call `provider`, retrying transient failures with exponential backoff and jitter (honouring Retry-After)."""
    base = _backoff_base()
    for attempt in range(1, attempts + 1):
        try:
            return await provider.complete(messages)
        except TransientProviderError as exc:
            if attempt == attempts:
                raise
            delay = exc.retry_after if exc.retry_after is not None else base * 2 ** (attempt - 1)
            await asyncio.sleep(min(delay, 10 * max(base, 0.01)) * (1 + random.random() * 0.1))
    raise AssertionError("unreachable")  # pragma: no cover


class OpenAIChat:
    """Any OpenAI-compatible `/chat/completions` endpoint (OpenRouter by default)."""

    def __init__(
        self,
        model: str | None = None,
        endpoint: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        json_mode: bool = True,
    ) -> None:
        self.model = model or config.env("SOURCERER_MODEL", config.DEFAULT_MODEL)
        self.endpoint = endpoint or config.env("SOURCERER_ENDPOINT", config.DEFAULT_ENDPOINT)
        self.api_key = api_key or config.api_key()
        if not self.model:
            raise ConfigurationError("no chat model configured: set SOURCERER_MODEL")
        self.timeout = timeout
        self.json_mode = json_mode
        self.name = f"openai:{self.model}"

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.json_mode:
            payload["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(self.endpoint, json=payload, headers=headers)
        except httpx.TimeoutException as exc:
            raise TransientProviderError(f"{self.name}: timed out") from exc
        except httpx.TransportError as exc:
            raise TransientProviderError(f"{self.name}: connection failed: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            retry_after = response.headers.get("retry-after")
            raise TransientProviderError(
                f"{self.name}: HTTP {response.status_code}",
                retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None,
            )
        if response.status_code >= 400:
            raise ProviderError(f"{self.name}: HTTP {response.status_code}: {response.text[:300]}")
        try:
            body = response.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"{self.name}: unexpected response shape") from exc
        usage = body.get("usage") or {}
        return ChatReply(
            content=content or "",
            usage={
                "input_tokens": float(usage.get("prompt_tokens", 0)),
                "output_tokens": float(usage.get("completion_tokens", 0)),
            },
        )


class BedrockChat:
    """Amazon Bedrock Converse API (boto3). The client is created lazily unless one is passed in."""

    _TRANSIENT = {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }

    def __init__(self, model: str | None = None, client: Any = None, max_tokens: int = 1024) -> None:
        self.model = model or config.env("SOURCERER_BEDROCK_MODEL")
        if not self.model:
            raise ConfigurationError("no Bedrock model configured: set SOURCERER_BEDROCK_MODEL")
        self.name = f"bedrock:{self.model}"
        self.max_tokens = max_tokens
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
            except ImportError as exc:  # pragma: no cover
                raise ConfigurationError("Bedrock needs boto3: pip install 'sourcerer-answers[aws]'") from exc
            self._client = boto3.client("bedrock-runtime")
        return self._client

    def _converse(self, messages: list[dict[str, str]]) -> ChatReply:
        from botocore.exceptions import BotoCoreError, ClientError

        system = [{"text": m["content"]} for m in messages if m["role"] == "system"]
        turns = [{"role": m["role"], "content": [{"text": m["content"]}]} for m in messages if m["role"] != "system"]
        try:
            response = self.client.converse(
                modelId=self.model,
                messages=turns,
                system=system,
                inferenceConfig={"maxTokens": self.max_tokens, "temperature": 0},
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in self._TRANSIENT:
                raise TransientProviderError(f"{self.name}: {code}") from exc
            raise ProviderError(f"{self.name}: {code or exc}") from exc
        except BotoCoreError as exc:
            raise TransientProviderError(f"{self.name}: {exc}") from exc
        try:
            parts = response["output"]["message"]["content"]
            content = "".join(part.get("text", "") for part in parts)
        except (KeyError, TypeError) as exc:
            raise ProviderError(f"{self.name}: unexpected response shape") from exc
        usage = response.get("usage", {})
        return ChatReply(
            content=content,
            usage={
                "input_tokens": float(usage.get("inputTokens", 0)),
                "output_tokens": float(usage.get("outputTokens", 0)),
            },
        )

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        return await asyncio.to_thread(self._converse, messages)


def make_provider(name: str) -> ChatProvider:
    if name == "openai":
        return OpenAIChat()
    if name == "bedrock":
        return BedrockChat()
    raise ConfigurationError(f"unknown chat provider {name!r}: use openai, bedrock or extractive")


def chat_chain_from_env() -> tuple[list[ChatProvider], bool]:
    """The configured chain: (LLM providers in order, whether extractive answers last).

    `SOURCERER_PROVIDERS` (e.g. `bedrock,openai,extractive`) sets it explicitly; otherwise OpenAI-compatible
    when a key is set, Bedrock when `SOURCERER_BEDROCK_MODEL` is set, and extractive last.
    """
    explicit = config.env("SOURCERER_PROVIDERS")
    if explicit:
        names = [n.strip().lower() for n in explicit.split(",") if n.strip()]
        providers = [make_provider(n) for n in names if n != "extractive"]
        return providers, "extractive" in names
    providers: list[ChatProvider] = []
    if config.env("SOURCERER_BEDROCK_MODEL"):
        providers.append(BedrockChat())
    if config.api_key():
        providers.append(OpenAIChat())
    return providers, True


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
