"""What a retriever is, and how `ask()` calls one whether it is sync or async."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from sourcerer.errors import InvalidRequest
from sourcerer.models import Passage


@runtime_checkable
class Retriever(Protocol):
    """Any callable `(question, k)` returning passages (dicts or `Passage`), best first, or an awaitable of them.

    Scores should be in [0, 1] so that `min_score` means the same across retrievers.
    """

    def __call__(self, question: str, k: int) -> Iterable[Any] | Awaitable[Iterable[Any]]: ...


@runtime_checkable
class TracedRetriever(Retriever, Protocol):
    """A retriever that says what its last search did (`last_trace`: mode, fallbacks, stage times, rerank), which
    `ask()` adds to the answer's retrieve stage: the bundled retrievers and the index's."""

    last_trace: dict[str, Any]


@runtime_checkable
class SemanticFloored(Protocol):
    """A retriever that drops a passage sharing no word with the question unless its calibrated similarity reaches
    `semantic_floor` (the bundled hybrid retriever and the index's)."""

    semantic_floor: float


def unfloored(retriever: Any) -> Any | None:
    """A shallow copy of `retriever` that drops nothing for want of similarity, leaving the caller's as it was (an
    index retriever's copy adds its hits to the original's `hits`, which the service reads), or None where it has
    no floor to lower."""
    if not isinstance(retriever, SemanticFloored) or retriever.semantic_floor <= 0:
        return None
    other = copy.copy(retriever)
    other.semantic_floor = 0.0
    return other


def as_passages(items: Iterable[Any] | None) -> list[Passage]:
    """Passages from what `ask(passages=...)` or a retriever gives: an iterable of dicts, strings or `Passage`s (`ask`
    reads a `pathlib.Path` first). One string or one passage is refused: iterated, a string was a passage per
    character (`ask(q, passages="handbook/")` refused every question, saying nothing was near) and a dict a
    passage per key."""
    if isinstance(items, str | bytes | Mapping | Passage):
        raise InvalidRequest(
            "passages must be a list of passages (dicts with text and source, strings or Passage objects) or a "
            "pathlib.Path to a .jsonl, a document or a folder, not one string or one passage: wrap it in a list, "
            "or pass Path(...)"
        )
    return [Passage.coerce(item) for item in (items or [])]


async def call_retriever(retriever: Callable[..., Any], question: str, k: int) -> list[Passage]:
    """Call a sync or async retriever and coerce what it returns into `Passage` objects."""
    if not callable(retriever):  # `retriever=[...]` failed with "'list' object is not callable"
        raise InvalidRequest(f"retriever must be a callable (question, k), not {type(retriever).__name__}: give a list of passages as passages=")
    result = retriever(question, k)
    if inspect.isawaitable(result):
        result = await result
    return as_passages(result)
