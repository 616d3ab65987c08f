"""Sentence-aware chunking: windows of whole pieces (sentences or cues) with overlap, within one section."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sourcerer.errors import UnsupportedDocument
from sourcerer.models import merge_locators, receipt_of
from sourcerer.store.models import Chunk, unit_id_for
from sourcerer.store.parsed import Piece

_CJK_END = tuple("。！？」』，、")
MAX_PIECE_CHARS = 2000  # a longer "sentence" (text without stops, a minified blob) is cut into pieces this long
MAX_HEADING_CHARS = 200  # a heading opens each chunk under it; a longer one is cut (a heading is a line, not a page)
MAX_DOCUMENT_CHUNKS = 10_000  # about 10 MB of prose; a bigger file is refused with the reason, never half-written


@dataclass
class ChunkSettings:
    max_words: int = 180  # about 250 model tokens for English
    overlap_pieces: int = 1  # the last sentence of a chunk opens the next one


def _size(text: str) -> int:
    # CJK text has no spaces: count characters / 2 so a window holds a comparable amount of text
    spaced = len(text.split())
    return max(spaced, len(text) // 2 if spaced <= 2 else spaced)


def _join(pieces: list[Piece]) -> str:
    """Pieces as one text: the line breaks a piece stood after in its source (a list's steps, each on its line, and
    the blank line after the list), else a space between sentences and a line break around a piece without final
    punctuation (a heading, a short list item), so "Pricing FAQ" does not run into the paragraph under it."""
    out = ""
    for piece in pieces:
        text = piece.text
        if out and not out.endswith(_CJK_END):
            sentences = out.rstrip().endswith(_SENTENCE_END) and text.rstrip().endswith(_SENTENCE_END)
            out += "\n" * piece.breaks if piece.breaks else " " if sentences else "\n"
        out += text
    return out


def _heading_line(heading: str) -> str:
    """The line a chunk opens with: its heading, spaces collapsed, at most `MAX_HEADING_CHARS` (cut at a space)."""
    heading = " ".join(heading.split())
    if len(heading) > MAX_HEADING_CHARS:
        cut = heading.rfind(" ", 0, MAX_HEADING_CHARS)
        heading = heading[: cut if cut > 0 else MAX_HEADING_CHARS]
    return f"{heading}\n" if heading else ""


_SENTENCE_END = (".", "!", "?", ":", ";", ",", "…", ")", '"', "'", "»", "”")


def bounded(pieces: list[Piece]) -> Iterator[Piece]:
    """The pieces, each cut to at most `MAX_PIECE_CHARS` (at a space where there is one), so no chunk and no
    search response can grow with the length of a single run-on sentence."""
    for piece in pieces:
        if len(piece.text) <= MAX_PIECE_CHARS:
            yield piece
            continue
        start = 0
        while start < len(piece.text):
            end = min(len(piece.text), start + MAX_PIECE_CHARS)
            if end < len(piece.text):
                space = piece.text.rfind(" ", start + MAX_PIECE_CHARS // 2, end)
                end = space if space > start else end
            locator = piece.locator
            if locator.get("kind") == "char_span":  # narrow a character span to the part
                locator = {**locator, "start": locator["start"] + start, "end": locator["start"] + end}
            part = piece.text[start:end].strip()
            if part:
                yield Piece(part, locator, piece.section, piece.heading, piece.breaks if start == 0 else 0)
            start = end


def chunk_pieces(pieces: list[Piece], *, tenant: str, document_id: str, settings: ChunkSettings | None = None) -> list[Chunk]:
    """Group consecutive pieces of one section into windows of at most `max_words`. A sentence is never split
    unless it is longer than `MAX_PIECE_CHARS`; a document of more than `MAX_DOCUMENT_CHUNKS` is refused."""
    s = settings or ChunkSettings()
    windows: list[list[Piece]] = []
    current: list[Piece] = []
    size = 0
    for piece in bounded(pieces):
        crosses = current and piece.section != current[-1].section
        # words bound a window, and characters too: long runs with a few spaces ("| a | |---|---...") count as
        # few words, and must not pile up into one chunk
        too_big = current and (
            size + _size(piece.text) > s.max_words or sum(len(p.text) for p in current) + len(piece.text) > MAX_PIECE_CHARS
        )
        if crosses or too_big:
            windows.append(current)
            carry = [] if crosses else current[-s.overlap_pieces :] if s.overlap_pieces else []
            # never let the overlap alone fill a window
            carry = carry if sum(_size(p.text) for p in carry) < s.max_words // 2 and sum(len(p.text) for p in carry) < MAX_PIECE_CHARS // 2 else []
            current, size = list(carry), sum(_size(p.text) for p in carry)
        current.append(piece)
        size += _size(piece.text)
        if len(windows) >= MAX_DOCUMENT_CHUNKS:  # stop early: the rest of a huge file is never chunked
            break
    if current:
        windows.append(current)
    if len(windows) > MAX_DOCUMENT_CHUNKS:
        raise UnsupportedDocument(f"too large: more than {MAX_DOCUMENT_CHUNKS:,} chunks; split it into several documents")
    chunks = []
    for position, window in enumerate(windows):
        # the heading over a window opens its text, so a search finds "Do you ship to Canada?" over "Yes, for a
        # flat fee." by its words; no sentence points at it, so no answer quotes it
        heading = _heading_line(window[0].heading)
        text = heading + _join(window)
        sentences, offset = [], len(heading)
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
