"""Citation enforcement: a citation exists only if it is listed, appears inline, and is in range."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sourcerer.models import CharSpan, Citation, Locator, Passage, merge_locators, receipt_of

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


def localize(passage: Passage, spans: Sequence[CharSpan]) -> tuple[str, list[tuple[int, int]], Locator | dict]:
    """Pin a citation to the quoted sentences `spans` of `passage`: (quote, quote spans, narrowed locator).

    With sentence locators stored at ingest, the locator covers only the pieces that hold the quote (the lines,
    the cue times, the page box of those words); a passage handed in without a locator gets a `char_span` of
    the quote in its text; otherwise the passage's own locator stands.
    """
    ordered = sorted({(s.start, s.end) for s in spans})
    quote = " ".join(passage.text[a:b].strip() for a, b in ordered)
    segments = [seg for seg in passage.sentences or [] if seg.locator is not None]
    touched = [seg for seg in segments if any(seg.start < b and a < seg.end for a, b in ordered)]
    if touched:
        return quote, ordered, merge_locators([seg.locator.model_dump() for seg in touched])  # type: ignore[union-attr]
    if passage.locator is None:
        return quote, ordered, CharSpan(start=ordered[0][0], end=ordered[-1][1])
    return quote, ordered, passage.locator


def enforce(
    answer: str,
    listed: Sequence[int],
    passages: Sequence[Passage],
    quotes: dict[int, list[CharSpan]] | None = None,
) -> Enforced:
    """Keep only markers that are listed **and** inline **and** point at a retrieved passage.

    Markers that fail (out of range, or not listed) are removed from the text and never become citations.
    Each kept citation carries the passage text, its locator, a sha256 receipt and the [start, end) offsets of
    its markers in the final answer (Python string indices, so correct for any script). `quotes` pins each
    citation to the sentences that support it (`quote`, and a locator narrowed to them).
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
        quote, quote_spans, locator = None, [], passage.locator or CharSpan(start=0, end=len(passage.text))
        if (quotes or {}).get(number):
            quote, quote_spans, locator = localize(passage, quotes[number])  # type: ignore[index]
        citations.append(
            Citation(
                index=number,
                label=passage.source or passage.source_uri or f"source {number}",
                source=passage.source or passage.source_uri or "",
                text=passage.text,
                locator=locator,
                receipt=receipt_of(passage.text),
                quote=quote,
                quote_spans=quote_spans,
                answer_spans=positions.get(number, []),
                unit_id=passage.id,
                source_uri=passage.source_uri,
            )
        )
    return Enforced(answer=answer, citations=citations, dropped=dropped)
