"""A Powertools REST resolver that concurrent requests can share.

Powertools' `resolve()` keeps the request it is handling in class attributes of `BaseRouter` (the event and the
Lambda context) and in the resolver's `context` dict (the route, its arguments, the `Depends()` cache): one per
process, which is right for Lambda (one request per container) and wrong for a server with threads, where one
request would read another's caller. This resolver keeps all of it in a context variable per request instead —
the technique Powertools' own ASGI resolver (`HttpResolverLocal`) uses — so `sourcerer serve` runs the exact
routes of the Lambda functions on many threads.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent


@dataclass
class _RequestState:
    event: BaseProxyEvent | None = None
    lambda_context: Any = None
    context: dict[str, Any] = field(default_factory=dict)
    processed_stack_frames: list[str] = field(default_factory=list)


class ConcurrentRestResolver(APIGatewayRestResolver):
    def __init__(self, **kwargs: Any) -> None:
        self._startup_state = _RequestState()  # what is set up before any request (e.g. by include_router)
        self._request_state: ContextVar[_RequestState | None] = ContextVar("sourcerer_request", default=None)
        super().__init__(**kwargs)

    @property
    def _state(self) -> _RequestState:
        return self._request_state.get() or self._startup_state

    @property  # type: ignore[override]
    def current_event(self) -> BaseProxyEvent:
        return self._state.event  # type: ignore[return-value]

    @current_event.setter
    def current_event(self, value: BaseProxyEvent) -> None:
        self._state.event = value

    @property  # type: ignore[override]
    def lambda_context(self) -> Any:
        return self._state.lambda_context

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self._state.lambda_context = value

    @property  # type: ignore[override]
    def context(self) -> dict[str, Any]:
        return self._state.context

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        self._state.context = value

    @property  # type: ignore[override]
    def processed_stack_frames(self) -> list[str]:
        return self._state.processed_stack_frames

    @processed_stack_frames.setter
    def processed_stack_frames(self, value: list[str]) -> None:
        self._state.processed_stack_frames = value

    def resolve(self, event: Any, context: Any) -> dict[str, Any]:
        """Powertools' `resolve()`, with the request's state in this request's context variable only."""
        raw = event.raw_event if isinstance(event, BaseProxyEvent) else event
        state = _RequestState(
            event=self._to_proxy_event(dict(raw)), lambda_context=context, context=self._startup_state.context.copy()
        )
        token = self._request_state.set(state)
        try:
            return with_headers(self._build_response(self._resolve()), API_HEADERS)
        finally:
            self._request_state.reset(token)


# What every API response carries (JSON, never a page): nothing in it may be sniffed as HTML, framed, or run.
API_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
# What the pages (the playground, Swagger UI) carry: scripts only from this server's own files (no inline
# script, no eval), no plugins, no framing, no form posts elsewhere. Styles may be inline (Swagger UI sets
# style attributes); pdf.js renders from blob: workers and images; media plays from https only.
PAGE_HEADERS = {
    **API_HEADERS,
    "Content-Security-Policy": "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "media-src 'self' https:",  # a transcript's recording, where its document names one (metadata.media_url)
            "font-src 'self' data:",
            "worker-src 'self' blob:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    ),
}


def with_headers(response: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """A proxy response with `headers` added (single- and multi-value forms, as Powertools may use either)."""
    multi = response.get("multiValueHeaders")
    for name, value in headers.items():
        if multi is not None:
            multi.setdefault(name, [value])
        else:
            response.setdefault("headers", {}).setdefault(name, value)
    return response


class OriginPatterns(CORSConfig):
    """CORS for origins given as patterns: `http://localhost:*` allows any port of localhost (a local playground
    or dev server), `*` any origin. The API authenticates with bearer keys, never cookies, so no credentials."""

    def __init__(self, patterns: list[str]) -> None:
        super().__init__(
            allow_origin=patterns[0],
            extra_origins=patterns[1:],
            allow_headers=["Authorization", "Content-Type", "X-Sourcerer-Scope"],
            expose_headers=["Retry-After"],
            max_age=600,
        )
        self.patterns = patterns
        self.matchers = [origin_pattern(p) for p in patterns]

    def allowed_origin(self, extracted_origin: str) -> str | None:
        if extracted_origin and ORIGIN.fullmatch(extracted_origin) and any(p.fullmatch(extracted_origin) for p in self.matchers):
            return extracted_origin
        return None

    def to_dict(self, origin: str | None) -> dict[str, str]:
        if not origin or self.allowed_origin(origin) is None:
            return {}
        headers = super().to_dict(self._allowed_origins[0])  # a listed origin, so the parent builds every header
        headers["Access-Control-Allow-Origin"] = origin
        headers["Vary"] = "Origin"
        return headers


# an origin as browsers send it: scheme, host (a name, IPv4 or [IPv6]) and an optional port; nothing else
ORIGIN = re.compile(r"https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def origin_pattern(pattern: str) -> re.Pattern[str]:
    """An origin pattern as a regex: `*` alone is any origin; a `*` after `:` is a port (digits only); any other
    `*` is host labels (`https://*.example.com`). The old glob let `http://localhost:*` match
    `http://localhost:80@evil.example` and `http://localhost:3000 http://evil.example`."""
    if pattern == "*":
        return ORIGIN
    parts = re.split(r"(\*)", pattern)
    regex = ""
    for i, part in enumerate(parts):
        if part != "*":
            regex += re.escape(part)
        else:
            regex += "[0-9]{1,5}" if parts[i - 1].endswith(":") else "[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*"
    return re.compile(regex, re.IGNORECASE)


def cors_from(origins: str | None) -> OriginPatterns | None:
    """CORS from a comma-separated list of origin patterns (`SOURCERER_CORS_ORIGINS`); None turns it off."""
    patterns = [o.strip().rstrip("/") for o in (origins or "").split(",") if o.strip()]
    return OriginPatterns(patterns) if patterns else None
