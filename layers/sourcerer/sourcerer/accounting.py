"""Per-request accounting that concurrent requests cannot mix up.

The embedding tokens a request spends and the trace its last search leaves are kept in a context variable: one
`Tally` per request, whether requests run on threads (`sourcerer serve`), in tasks, or one per process (Lambda).
Nothing about a request is read back from a shared object after the call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Tally:
    embedding_tokens: int = 0
    search: dict[str, Any] = field(default_factory=dict)  # the trace detail of the latest search


_current: ContextVar[Tally | None] = ContextVar("sourcerer_tally", default=None)


@contextmanager
def tally() -> Iterator[Tally]:
    """Count what the code inside spends (in this thread or task, and in threads it hands its context to)."""
    outer = _current.get()
    mine = Tally()
    token = _current.set(mine)
    try:
        yield mine
    finally:
        _current.reset(token)
        if outer is not None:  # a tally inside another (one search in a request) counts toward it too
            outer.embedding_tokens += mine.embedding_tokens
            if mine.search:
                outer.search = mine.search


def current() -> Tally:
    """The running request's tally, or a throwaway one outside any request."""
    return _current.get() or Tally()


def add_embedding_tokens(count: int) -> None:
    running = _current.get()
    if running is not None:
        running.embedding_tokens += count


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Time a step of the running search (`embed`, `keyword`, `vector`, `fuse`): its milliseconds go to the
    search's trace under `stages`, summed when a step runs twice."""
    started = time.perf_counter()
    try:
        yield
    finally:
        running = _current.get()
        if running is not None:
            stages = running.search.setdefault("stages", {})
            stages[name] = round(stages.get(name, 0.0) + (time.perf_counter() - started) * 1000, 3)


def note_search(detail: dict[str, Any]) -> None:
    running = _current.get()
    if running is not None:
        running.search = detail
