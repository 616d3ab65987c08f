"""Refusals that hand off: what a person needs to answer a question the sources could not — the question, the
conversation, the closest passages with their locators and receipts, why it was refused, and what would answer it.

`handoff(answer, question)` builds the bundle from a refusal, or from a partial answer's removed claims; an
answered, whole answer needs no hand-off (None). The service stores bundles in the ledger and may post them to a
webhook or a queue (`sourcerer.service.handoffs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from sourcerer.models import REFUSAL_MESSAGES, Answer, ClaimVerdict, Locator, Passage, receipt_of

CLOSEST = 3  # passages a hand-off carries


class HandoffPassage(BaseModel):
    """One of the closest passages, with where it sits and what it said when the hand-off was made."""

    rank: int = Field(description="1 for the closest")
    label: str
    source_uri: str | None = None
    unit_id: str | None = None
    score: float | None = None
    locator: Locator | None = None
    receipt: str = Field(description="sha256: of `text`")
    text: str
    closest_sentence: str | None = Field(default=None, description="the sentence of `text` nearest the question")


class Handoff(BaseModel):
    """A bundle a person can act on."""

    question: str
    conversation: list[dict[str, str]] = Field(default_factory=list, description="earlier turns, oldest first")
    reason: str = Field(description="the refusal reason, or `partial` when only some claims were removed")
    message: str = Field(description="what the asker was told")
    removed: list[ClaimVerdict] = Field(default_factory=list, description="a partial answer's removed claims, with why")
    passages: list[HandoffPassage] = Field(default_factory=list, description="the closest passages, closest first")
    needed: str = Field(description="what would answer it, in words")


def needs_handoff(answer: Answer) -> bool:
    """A refusal, or an answer with removed claims."""
    return answer.refused or bool(answer.faithfulness and answer.faithfulness.removed)


def handoff(
    answer: Answer,
    question: str,
    history: Sequence[dict[str, Any]] | None = None,
    passages: Sequence[Passage | dict[str, Any]] | None = None,
) -> Handoff | None:
    """The hand-off for `answer` to `question` (None when it was answered whole). `passages` default to the
    passages the answer stood on (`answer.passages`); a service hands its search hits."""
    if not needs_handoff(answer):
        return None
    found = [Passage.coerce(p) for p in (passages if passages is not None else answer.passages)]
    ranked = sorted(found, key=lambda p: -(p.score or 0.0))[:CLOSEST]
    closest = [_view(rank, p, question) for rank, p in enumerate(ranked, start=1)]
    removed = list(answer.faithfulness.removed) if answer.faithfulness else []
    return Handoff(
        question=question,
        conversation=[{"role": str(t.get("role", "")), "text": str(t.get("text", ""))} for t in history or []],
        reason=answer.reason or "partial",
        message=answer.answer if answer.refused else REFUSAL_MESSAGES["unfaithful"],
        removed=removed,
        passages=closest,
        needed=_needed(answer, question, closest, removed),
    )


def _view(rank: int, passage: Passage, question: str) -> HandoffPassage:
    from sourcerer.support import source_sentences, supporting_sentences  # here: the API's schemas import this module

    sentences = supporting_sentences(question, source_sentences(passage.text))
    return HandoffPassage(
        rank=rank,
        label=passage.source or passage.source_uri or f"passage {rank}",
        source_uri=passage.source_uri,
        unit_id=passage.id,
        score=passage.score,
        locator=passage.locator,
        receipt=receipt_of(passage.text),
        text=passage.text,
        closest_sentence=" ".join(s.text.strip() for s in sentences) or None,
    )


def _needed(answer: Answer, question: str, closest: list[HandoffPassage], removed: list[ClaimVerdict]) -> str:
    """What would answer it: the claims the sources did not support, or the question no passage answers, beside
    what the closest passage does say."""
    if removed:
        missing = "; ".join(f"“{v.claim}” ({v.why})" for v in removed)
        return f"The sources do not support: {missing}. A passage that states these would let the answer keep them."
    if not closest:
        return f"No passage in the sources is about “{question}”: a document that answers it is needed."
    best = closest[0]
    said = f" says: “{best.closest_sentence}”" if best.closest_sentence else " does not say it"
    if answer.reason == "off_topic":
        return f"The sources hold the words, not the answer to “{question}”; the closest, {best.label},{said}."
    return f"No passage states the answer to “{question}”; the closest, {best.label},{said}."


__all__ = ["Handoff", "HandoffPassage", "handoff", "needs_handoff"]
