"""Citation enforcement: a citation exists only if it is listed, appears inline, and is in range."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sourcerer.models import CharSpan, Citation, Passage, receipt_of

MARKER = re.compile(r"\[(\d+)\]")
_GROUPED = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)+)\]")


def split_grouped_markers(answer: str) -> str:
    """`[1, 3]` -> `[1][3]`, so every marker names exactly one source."""
    return _GROUPED.sub(lambda m: "".join(f"[{n}]" for n in re.split(r"\s*[,;]\s*", m.group(1))), answer)


def inline_markers(answer: str) -> list[int]:
    return [int(m.group(1)) for m in MARKER.finditer(answer)]


def strip_markers(text: str) -> str:
    return re.sub(r"\s+([.,;:!?。])", r"\1", re.sub(r"\s*\[\d+\]", "", text)).strip()


@dataclass
class Enforced:
    answer: str
    citations: list[Citation]
    dropped: list[int]


def enforce(
    answer: str,
    listed: Sequence[int],
    passages: Sequence[Passage],
    spans: dict[int, CharSpan] | None = None,
) -> Enforced:
    """Keep only markers that are listed **and** inline **and** point at a retrieved passage.

    Markers that fail (out of range, or not listed) are removed from the text and never become citations.
    Each kept citation carries the passage text, its locator, a sha256 receipt and the [start, end) offsets of
    its markers in the final answer (Python string indices, so correct for any script).
    """
    answer = split_grouped_markers(answer)
    listed_set = set(listed)
    valid = {n for n in inline_markers(answer) if n in listed_set and 1 <= n <= len(passages)}
    dropped = sorted({n for n in inline_markers(answer) if n not in valid})
    if dropped:
        answer = MARKER.sub(lambda m: m.group() if int(m.group(1)) in valid else "", answer)
        answer = re.sub(r"[ \t]{2,}", " ", answer).replace(" .", ".").strip()
    positions: dict[int, list[tuple[int, int]]] = {}
    for m in MARKER.finditer(answer):
        positions.setdefault(int(m.group(1)), []).append((m.start(), m.end()))
    citations = []
    for number in sorted(valid):
        passage = passages[number - 1]
        locator = passage.locator or (spans or {}).get(number) or CharSpan(start=0, end=len(passage.text))
        citations.append(
            Citation(
                index=number,
                label=passage.source or passage.source_uri or f"source {number}",
                source=passage.source or passage.source_uri or "",
                text=passage.text,
                locator=locator,
                receipt=receipt_of(passage.text),
                answer_spans=positions.get(number, []),
                unit_id=passage.id,
                source_uri=passage.source_uri,
            )
        )
    return Enforced(answer=answer, citations=citations, dropped=dropped)
