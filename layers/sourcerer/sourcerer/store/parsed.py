"""What a parser returns: a document's title and its pieces (sentences or lines), each with its locator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
