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


@dataclass
class Parsed:
    title: str
    pieces: list[Piece]
