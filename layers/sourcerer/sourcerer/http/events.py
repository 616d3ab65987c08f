"""Server-sent events for a streamed answer (`POST /v1/answer` with `Accept: text/event-stream`).

The answer route writes each event as SSE text. On `sourcerer serve`, each one goes to the client as it is made
(the server sets `EVENT_SINK` for the request); a Lambda function behind API Gateway (REST) returns the same
events in one response body, since Python's managed runtime cannot stream a response there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

EVENT_STREAM = "text/event-stream"
# where the request's events go as they are made (set by `sourcerer serve` for a streamed request; else None)
EVENT_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("sourcerer_event_sink", default=None)


def wants_events(accept: str | None) -> bool:
    return EVENT_STREAM in (accept or "").lower()


def sse(event: dict[str, Any]) -> str:
    """`event: <kind>` and one `data:` line of JSON (JSON text holds no raw newline), then a blank line."""
    from sourcerer.streaming import event_json  # here: the functions that never stream do not load the pipeline

    data = {key: value for key, value in event_json(event).items() if key != "event"}
    return f"event: {event['event']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The events of an SSE body (for clients, tests and the CLI): each as `{"event": kind, **data}`."""
    events = []
    for block in text.split("\n\n"):
        kind, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if kind:
            events.append({"event": kind, **(json.loads("\n".join(data)) if data else {})})
    return events


__all__ = ["EVENT_SINK", "EVENT_STREAM", "parse_sse", "sse", "wants_events"]
