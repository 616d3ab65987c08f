"""What a synthesiser returns before citations are enforced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sourcerer.errors import MalformedReply
from sourcerer.models import CharSpan


@dataclass
class Draft:
    """A synthesiser's reply: answer text with inline markers, the passages it says it used, and whether it
    declined. `spans` pins each citation to the sentences of its passage it quotes (the extractive synthesiser
    knows them; for an LLM's answer they are picked after the fact)."""

    answer: str
    citations: list[int]
    refused: bool = False
    provider: str = "extractive"
    usage: dict[str, float] = field(default_factory=dict)
    spans: dict[int, list[CharSpan]] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    # the extractive synthesiser's `Analysis` (its ranked sentences), reused by verification; `Any`, since typing it
    # would import the synthesiser here, a cycle
    analysis: Any = None


def read_draft(data: dict[str, Any], provider: str) -> Draft:
    """A draft from `{"answer": str, "citations": [int], "refused": bool}`, the answer JSON a model replied with (`MalformedReply` when it is not that shape)."""
    answer = data.get("answer")
    refused = data.get("refused", False)
    citations = data.get("citations", [])
    if not isinstance(answer, str) or not isinstance(refused, bool) or not isinstance(citations, list):
        raise MalformedReply("reply must have answer (string), citations (list) and refused (boolean)")
    numbers = []
    for item in citations:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            numbers.append(item)
        elif isinstance(item, str) and item.strip().strip("[]").isdigit():
            numbers.append(int(item.strip().strip("[]")))
    return Draft(answer=answer.strip(), citations=numbers, refused=refused, provider=provider)
