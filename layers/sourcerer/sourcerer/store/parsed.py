"""What a parser returns: a document's title and its pieces (sentences or lines), each with its locator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Piece:
    text: str
    locator: dict[str, Any]
    section: str


@dataclass
class Parsed:
    title: str
    pieces: list[Piece]
