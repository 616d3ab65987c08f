"""What a parser returns: a document's title and its pieces (sentences or lines), each with its locator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sourcerer.sentences import sentence_spans


@dataclass
class Piece:
    text: str
    locator: dict[str, Any]
    section: str
    heading: str = ""  # the heading right over it (Markdown, HTML): its chunk's first line, searched, never cited
    # line breaks between it and the piece before it in its source, where the parser keeps lines (0-2: same line,
    # next line, after a blank line); the chunk keeps them, so the steps under "To reset your password:" stay lines
    breaks: int = 0


@dataclass
class Parsed:
    title: str
    pieces: list[Piece]


def spans_and_breaks(text: str) -> list[tuple[int, int, int]]:
    """`sentence_spans` of `text`, each with the line breaks (0-2) between it and the sentence before it: a
    `Piece`'s `breaks`."""
    out: list[tuple[int, int, int]] = []
    for start, end in sentence_spans(text):
        out.append((start, end, min(2, text.count("\n", out[-1][1], start)) if out else 0))
    return out
