"""Chat providers (OpenAI-compatible over httpx, Amazon Bedrock Converse) and the fallback chain.

A provider turns chat messages into a reply. Transient failures (timeouts, 429, 5xx) are retried with
exponential backoff; when a provider is exhausted the chain moves to the next one, and the extractive
synthesiser answers last unless it was disabled.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import httpx

from sourcerer.errors import ConfigurationError, MalformedReply, ProviderError, TransientProviderError
from sourcerer.settings import get_settings

T = TypeVar("T")


@dataclass
class ChatReply:
    content: str
    usage: dict[str, float] = field(default_factory=dict)


@dataclass
class ChatDelta:
    """A piece of a streamed reply: its text, and the usage where the provider reports it (the last piece)."""

    text: str = ""
    usage: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class ChatProvider(Protocol):
    """A chat model. `name` is what `Answer.provider` reports, e.g. `openai:<model>`."""

    name: str

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply: ...


@runtime_checkable
class StreamingChatProvider(ChatProvider, Protocol):
    """A chat model that can also stream its reply as it writes it (`sourcerer.streaming` shows it early)."""

    def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[ChatDelta]: ...


def _backoff_base() -> float:
    return get_settings().backoff_s


async def with_retries(provider: ChatProvider, messages: list[dict[str, str]], attempts: int | None = None) -> ChatReply:
    """Call `provider`, retrying transient failures with exponential backoff and jitter (honouring Retry-After);
    `attempts` defaults to the `SOURCERER_LLM_ATTEMPTS` setting."""
    base = _backoff_base()
    attempts = attempts or get_settings().llm_attempts
    for attempt in range(1, attempts + 1):
        try:
            return await provider.complete(messages)
        except TransientProviderError as exc:
            if attempt == attempts:
                raise
            delay = exc.retry_after if exc.retry_after is not None else base * 2 ** (attempt - 1)
            await asyncio.sleep(min(delay, 10 * max(base, 0.01)) * (1 + random.random() * 0.1))
    raise AssertionError("unreachable")  # pragma: no cover


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def json_object(content: str) -> dict[str, Any]:
    """A reply's JSON object, bare or inside a Markdown code fence (`MalformedReply` when it is neither)."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReply(f"reply is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise MalformedReply("reply is not a JSON object")
    return data


async def ask_for_json(
    provider: ChatProvider, messages: list[dict[str, str]], read: Callable[[dict[str, Any]], T], attempts: int = 2
) -> tuple[T, dict[str, float], int]:
    """Ask `provider` for a JSON object and `read` it (which raises `MalformedReply` when it cannot): transient
    failures are retried inside `with_retries`, an unusable reply is asked again up to `attempts` times.
    Returns (what `read` made of it, the usage of every call, the attempts it took)."""
    usage: dict[str, float] = {}
    for attempt in range(1, attempts + 1):
        reply = await with_retries(provider, messages)
        for key, value in reply.usage.items():
            usage[key] = usage.get(key, 0.0) + value
        try:
            return read(json_object(reply.content)), usage, attempt
        except MalformedReply as exc:
            if attempt == attempts:
                raise MalformedReply(str(exc), usage) from exc
    raise AssertionError("unreachable")  # pragma: no cover


class OpenAIChat:
    """Any OpenAI-compatible `/chat/completions` endpoint (OpenRouter by default)."""

    def __init__(
        self,
        model: str | None = None,
        endpoint: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        json_mode: bool = True,
    ) -> None:
        settings = get_settings()
        self.model = model or settings.model
        self.endpoint = endpoint or settings.endpoint
        self.api_key = api_key or settings.api_key
        if not self.model:
            raise ConfigurationError("no chat model configured: set SOURCERER_MODEL")
        self.timeout = timeout if timeout is not None else settings.llm_timeout_s
        self.json_mode = json_mode
        self.name = f"openai:{self.model}"

    def _payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.json_mode:
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _check(self, response: httpx.Response) -> None:
        if response.status_code == 429 or response.status_code >= 500:
            retry_after = response.headers.get("retry-after")
            raise TransientProviderError(
                f"{self.name}: HTTP {response.status_code}",
                retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None,
            )
        if response.status_code >= 400:
            raise ProviderError(f"{self.name}: HTTP {response.status_code}: {response.text[:300]}")

    @staticmethod
    def _usage(usage: dict[str, Any]) -> dict[str, float]:
        return {
            "input_tokens": float(usage.get("prompt_tokens", 0)),
            "output_tokens": float(usage.get("completion_tokens", 0)),
        }

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(self.endpoint, json=self._payload(messages), headers=self._headers())
        except httpx.TimeoutException as exc:
            raise TransientProviderError(f"{self.name}: timed out") from exc
        except httpx.TransportError as exc:
            raise TransientProviderError(f"{self.name}: connection failed: {exc}") from exc
        self._check(response)
        try:
            body = response.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"{self.name}: unexpected response shape") from exc
        return ChatReply(content=content or "", usage=self._usage(body.get("usage") or {}))

    async def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[ChatDelta]:
        """The reply as server-sent events (`stream: true`; the last chunk carries the usage)."""
        payload = {**self._payload(messages), "stream": True, "stream_options": {"include_usage": True}}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                async with client.stream("POST", self.endpoint, json=payload, headers=self._headers()) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        self._check(response)
                    async for line in response.aiter_lines():
                        if not line.startswith("data:"):
                            continue  # comments, event names and the blank lines between events
                        data = line[5:].strip()
                        if data == "[DONE]":
                            return
                        try:
                            chunk = json.loads(data)
                            choices = chunk.get("choices") or []
                            text = (choices[0].get("delta") or {}).get("content") or "" if choices else ""
                        except (ValueError, AttributeError, IndexError, TypeError) as exc:
                            raise ProviderError(f"{self.name}: unexpected stream chunk") from exc
                        yield ChatDelta(text=text, usage=self._usage(chunk["usage"]) if chunk.get("usage") else {})
        except httpx.TimeoutException as exc:
            raise TransientProviderError(f"{self.name}: timed out") from exc
        except httpx.TransportError as exc:
            raise TransientProviderError(f"{self.name}: connection failed: {exc}") from exc


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
        self.model = model or get_settings().bedrock_model
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
            from botocore.config import Config

            timeout = get_settings().llm_timeout_s  # our retries, not botocore's: with_retries bounds them
            self._client = boto3.client(
                "bedrock-runtime", config=Config(read_timeout=timeout, connect_timeout=5, retries={"max_attempts": 1})
            )
        return self._client

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "modelId": self.model,
            "messages": [{"role": m["role"], "content": [{"text": m["content"]}]} for m in messages if m["role"] != "system"],
            "system": [{"text": m["content"]} for m in messages if m["role"] == "system"],
            "inferenceConfig": {"maxTokens": self.max_tokens, "temperature": 0},
        }

    def _call(self, operation: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(**self._request(messages))
        except ClientError as exc:
            raise self._error(exc) from exc
        except BotoCoreError as exc:
            raise TransientProviderError(f"{self.name}: {exc}") from exc

    def _error(self, exc: Any) -> ProviderError:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in self._TRANSIENT:
            return TransientProviderError(f"{self.name}: {code}")
        return ProviderError(f"{self.name}: {code or exc}")

    @staticmethod
    def _usage(usage: dict[str, Any]) -> dict[str, float]:
        return {"input_tokens": float(usage.get("inputTokens", 0)), "output_tokens": float(usage.get("outputTokens", 0))}

    def _converse(self, messages: list[dict[str, str]]) -> ChatReply:
        response = self._call("converse", messages)
        try:
            parts = response["output"]["message"]["content"]
            content = "".join(part.get("text", "") for part in parts)
        except (KeyError, TypeError) as exc:
            raise ProviderError(f"{self.name}: unexpected response shape") from exc
        return ChatReply(content=content, usage=self._usage(response.get("usage", {})))

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        return await asyncio.to_thread(self._converse, messages)

    async def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[ChatDelta]:
        """The reply through ConverseStream: `contentBlockDelta` events carry text, `metadata` the usage. boto3 reads
        the event stream synchronously, so a thread reads it and hands each piece over."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ChatDelta | BaseException | None] = asyncio.Queue()

        def read() -> None:
            from botocore.exceptions import BotoCoreError, ClientError

            try:
                for event in self._call("converse_stream", messages)["stream"]:
                    if "contentBlockDelta" in event:
                        text = event["contentBlockDelta"].get("delta", {}).get("text", "")
                        loop.call_soon_threadsafe(queue.put_nowait, ChatDelta(text=text))
                    elif "metadata" in event:
                        usage = self._usage(event["metadata"].get("usage", {}))
                        loop.call_soon_threadsafe(queue.put_nowait, ChatDelta(usage=usage))
                    else:
                        for name in ("throttlingException", "serviceUnavailableException", "modelStreamErrorException"):
                            if name in event:  # an error inside the stream, after the response began
                                raise TransientProviderError(f"{self.name}: {name}")
                        if "validationException" in event or "internalServerException" in event:
                            raise ProviderError(f"{self.name}: {next(iter(event))}")
            except ClientError as exc:  # raised while the stream is read
                loop.call_soon_threadsafe(queue.put_nowait, self._error(exc))
            except BotoCoreError as exc:
                loop.call_soon_threadsafe(queue.put_nowait, TransientProviderError(f"{self.name}: {exc}"))
            except BaseException as exc:  # noqa: BLE001 - handed to the reader, which raises it
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        reader = asyncio.ensure_future(asyncio.to_thread(read))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            await reader


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
    settings = get_settings()
    explicit = settings.providers
    if explicit:
        names = [n.strip().lower() for n in explicit.split(",") if n.strip()]
        providers = [make_provider(n) for n in names if n != "extractive"]
        return providers, "extractive" in names
    providers: list[ChatProvider] = []
    if settings.bedrock_model:
        providers.append(BedrockChat())
    if settings.api_key:
        providers.append(OpenAIChat())
    return providers, True


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
