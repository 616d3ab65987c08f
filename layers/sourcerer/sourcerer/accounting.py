"""Per-request accounting that concurrent requests cannot mix up.

The embedding tokens a request spends are counted in a context variable: one `Tally` per request, whether
requests run on threads (`sourcerer serve`), in tasks, or one per process (Lambda), because the embedders that
spend them sit far below the code that bills them. Nothing about a request is read back from a shared object
after the call; a search's trace is its own value (`store.base.SearchTrace`), not kept here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Tally:
    embedding_tokens: int = 0


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


def current() -> Tally:
    """The running request's tally, or a throwaway one outside any request."""
    return _current.get() or Tally()


def add_embedding_tokens(count: int) -> None:
    running = _current.get()
    if running is not None:
        running.embedding_tokens += count
