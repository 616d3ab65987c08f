"""Sentence-aware chunking: windows of whole pieces (sentences or cues) with overlap, within one section."""

from __future__ import annotations

from dataclasses import dataclass

from sourcerer.models import merge_locators, receipt_of
from sourcerer.store.models import Chunk, unit_id_for
from sourcerer.store.parsers import Piece

_CJK_END = tuple("。！？」』，、")


@dataclass
class ChunkSettings:
    max_words: int = 180  # about 250 model tokens for English
    overlap_pieces: int = 1  # the last sentence of a chunk opens the next one


def _size(text: str) -> int:
    # CJK text has no spaces: count characters / 2 so a window holds a comparable amount of text
    spaced = len(text.split())
    return max(spaced, len(text) // 2 if spaced <= 2 else spaced)


def _join(texts: list[str]) -> str:
    out = ""
    for text in texts:
        if out and not out.endswith(_CJK_END):
            out += " "
        out += text
    return out


def chunk_pieces(pieces: list[Piece], *, tenant: str, document_id: str, settings: ChunkSettings | None = None) -> list[Chunk]:
    """Group consecutive pieces of one section into windows of at most `max_words` (a single longer piece
    is kept whole rather than split inside a sentence)."""
    s = settings or ChunkSettings()
    windows: list[list[Piece]] = []
    current: list[Piece] = []
    size = 0
    for piece in pieces:
        crosses = current and piece.section != current[-1].section
        too_big = current and size + _size(piece.text) > s.max_words
        if crosses or too_big:
            windows.append(current)
            carry = [] if crosses else current[-s.overlap_pieces :] if s.overlap_pieces else []
            # never let the overlap alone fill a window
            carry = carry if sum(_size(p.text) for p in carry) < s.max_words // 2 else []
            current, size = list(carry), sum(_size(p.text) for p in carry)
        current.append(piece)
        size += _size(piece.text)
    if current:
        windows.append(current)
    chunks = []
    for position, window in enumerate(windows):
        text = _join([p.text for p in window])
        sentences, offset = [], 0
        for piece in window:  # where each piece sits in the joined text, so a citation can point at one
            start = text.index(piece.text, offset)
            sentences.append({"start": start, "end": start + len(piece.text), "locator": piece.locator})
            offset = start + len(piece.text)
        chunks.append(
            Chunk(
                unit_id=unit_id_for(tenant, document_id, position, text),
                document_id=document_id,
                position=position,
                text=text,
                label=window[0].section,
                locator=merge_locators([p.locator for p in window]),
                receipt=receipt_of(text),
                sentences=sentences,
            )
        )
    return chunks
