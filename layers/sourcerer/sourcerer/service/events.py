"""A streamed answer's events as the API sends them (`POST /v1/answer` with `Accept: text/event-stream`): the
library's events (`sourcerer.streaming`), hits and citations shown as the API shows them, and `done` carrying the whole
`AnswerResponse` — sent once the answer is logged and billed, so it equals the response of the same request
not streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sourcerer.models import Answer
from sourcerer.service.schemas import AnswerResponse
from sourcerer.service.views import citation_view, hit_views
from sourcerer.store.models import Hit

Send = Callable[[dict[str, Any]], None]


class AnswerEvents:
    def __init__(self, send: Send, hits: Callable[[], list[Hit]]) -> None:
        self.send = send
        self.hits = hits  # the search's hits, once it has run

    def library(self, event: dict[str, Any]) -> None:
        """One event of `ask()`: passed on, but `done`, which waits for the log and the bill."""
        if event["event"] == "done":
            return
        if event["event"] == "retrieve":
            kept = {p.id for p in event["hits"]}  # passages of instructions alone were set aside
            event = {"event": "retrieve", "hits": [v for v in hit_views(self.hits()) if v.unit_id in kept]}
        elif event["event"] == "citation":
            event = {"event": "citation", "citation": citation_view(event["citation"])}
        self.send(event)

    def replay(self, answer: Answer, hits: list[Hit]) -> None:
        """A cached answer's events, as the pipeline would have sent them."""
        from sourcerer.streaming import Stream  # here: only a streamed answer needs the pipeline's modules

        self.send({"event": "retrieve", "hits": hit_views(hits)})
        Stream(self.library).finish(answer)

    def done(self, response: AnswerResponse) -> None:
        self.send({"event": "done", "response": response})


__all__ = ["AnswerEvents"]
