"""Citation enforcement: a citation exists only if it is listed, appears inline, and is in range."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sourcerer.models import CharSpan, Citation, Locator, Passage, merge_locators, receipt_of
from sourcerer.sentences import sentence_spans

MARKER = re.compile(r"\[(\d+)\]")
_GROUPED = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)+)\]")


def split_grouped_markers(answer: str) -> str:
    """`[1, 3]` -> `[1][3]`, so every marker names exactly one source."""
    return _GROUPED.sub(lambda m: "".join(f"[{n}]" for n in re.split(r"\s*[,;]\s*", m.group(1))), answer)


def inline_markers(answer: str) -> list[int]:
    return [int(m.group(1)) for m in MARKER.finditer(answer)]


def strip_markers(text: str) -> str:
    """`text` without its citation markers and the spaces they leave before punctuation ("days [1] ." -> "days.");
    a space the text itself puts before punctuation stays (French "si vous :", quoted as written)."""
    return re.sub(r"\s*\[\d+\](?:\s+(?=[.,;:!?。]))?", "", text).strip()


@dataclass
class Enforced:
    answer: str
    citations: list[Citation]
    dropped: list[int]


def _between(text: str, end: int, start: int) -> str:
    """What a quote puts between two quoted spans: " … " where it leaves text out, so two sentences apart never
    read as one passage; " / " for a line break after a line without a stop ("alcohol / traffic fines", a list's
    items); else a space."""
    gap = text[end:start]
    if gap.strip():
        return " … "
    return " / " if "\n" in gap and not text[:end].rstrip().endswith(_STOPS) else " "


_STOPS = tuple(".!?:;…。！？؟")


def localize(passage: Passage, spans: Sequence[CharSpan]) -> tuple[str, list[tuple[int, int]], Locator | dict]:
    """Pin a citation to the quoted sentences `spans` of `passage`: (quote, quote spans, narrowed locator).

    With sentence locators stored at ingest, the locator covers only the pieces that hold the quote (the lines,
    the cue times, the page box of those words); a passage handed in without a locator gets a `char_span` of
    the quote in its text; otherwise the passage's own locator stands.
    """
    ordered = sorted({(s.start, s.end) for s in spans})
    quote = passage.text[ordered[0][0] : ordered[0][1]].strip()
    for (_, end), (start, stop) in itertools.pairwise(ordered):
        quote += _between(passage.text, end, start) + passage.text[start:stop].strip()
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
                source_uri=deep_link(passage.source_uri, locator),
                original=original_link(passage.metadata.get("document_id"), locator),
            )
        )
    return Enforced(answer=answer, citations=citations, dropped=dropped)


LEADING_MARKERS = re.compile(r"^(?:\s*\[\d+\])+\s*")


def groundedness(answer: str) -> float:
    """The share of `answer`'s sentences that carry at least one citation marker: a cheap, deterministic score of
    how much of the answer stands on a cited source (markers left in an answer are valid: `enforce` removed the
    others). A sentence that is only a marker belongs to the one before it."""
    sentences: list[str] = []
    for start, end in sentence_spans(answer):
        piece = answer[start:end]
        lead = LEADING_MARKERS.match(piece)
        if sentences and lead:  # "demo. [1] The failover…": a marker after the full stop cites the sentence before
            sentences[-1] += lead.group()
            piece = piece[lead.end() :]
        if sentences and not re.sub(r"[\W_]+", "", strip_markers(piece)):  # only a marker and punctuation left
            sentences[-1] += piece
        elif piece:
            sentences.append(piece)
    if not sentences:
        return 0.0
    return round(sum(1 for s in sentences if MARKER.search(s)) / len(sentences), 4)


def original_link(document_id: Any, locator: Locator | dict) -> str | None:
    """The API path of an indexed document's original (`GET /v1/documents/{id}/original`), opened at the cited place."""
    if not isinstance(document_id, str) or not document_id:
        return None
    return deep_link(f"/v1/documents/{quote(document_id, safe='')}/original", locator)


def deep_link(source_uri: str | None, locator: Locator | dict) -> str | None:
    """`source_uri` with a fragment that opens the cited place (the locator itself is unchanged):
    `#t=767` (seconds into a recording, W3C media fragments), `#page=14` (PDF open parameters), `#L12-L18`
    (lines, as code hosts show them), `#char=120,480` (RFC 5147 character range). Any fragment the source
    already had is replaced."""
    if not source_uri:
        return source_uri
    at = locator if isinstance(locator, dict) else locator.model_dump()  # a retriever may hand plain dicts
    base = source_uri.split("#", 1)[0]
    if at["kind"] == "time_range":
        return f"{base}#t={int(at['t_start_ms']) // 1000}"
    if at["kind"] == "page":
        return f"{base}#page={at['page']}"
    if at["kind"] == "lines":
        return f"{base}#L{at['start']}" + (f"-L{at['end']}" if at["end"] != at["start"] else "")
    return f"{base}#char={at['start']},{at['end']}"
