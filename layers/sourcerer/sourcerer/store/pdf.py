"""PDF: sentences with their page and word box, read by pdfplumber after a bounded check of what the file's
compressed streams would inflate to (`check_inflation`)."""

from __future__ import annotations

import io
import re
import zlib

from sourcerer.errors import PayloadTooLarge, UnsupportedDocument
from sourcerer.store.parsed import Parsed, Piece
from sourcerer.text import sentence_spans

# what PDF writers put in the Title field when nobody set one (reportlab: "untitled"): the file name says more
PLACEHOLDER_TITLES = {"", "untitled", "untitled document", "anonymous", "(anonymous)", "document", "title"}


# A PDF's size limit applies to its bytes as sent, but its streams inflate: 796 KB of FlateDecode can be 800 MB of
# content stream. Every compressed stream is inflated once here with a bounded decompressor, before the PDF
# library (which inflates without limit) sees the file.
MAX_STREAM_BYTES = 32 * 1024 * 1024  # one stream, decoded
MAX_DECODED_BYTES = 128 * 1024 * 1024  # every stream of the document, decoded
_STREAM = re.compile(rb"(<<(?:[^<>]|<<(?:[^<>]|<<[^<>]*>>)*>>)*>>)\s*stream\r?\n", re.DOTALL)
_FLATE = re.compile(rb"/(?:FlateDecode|Fl)\b")


def check_inflation(raw: bytes) -> int:
    """The decoded size of the PDF's Flate streams (each layer of a stream filtered twice or more), or a
    `PayloadTooLarge` naming the limit as soon as one stream or the whole document would pass it."""
    total = 0
    for match in _STREAM.finditer(raw):
        layers = len(_FLATE.findall(match.group(1)))
        if not layers:
            continue
        start = match.end()
        end = raw.find(b"endstream", start)
        data = raw[start : end if end >= 0 else len(raw)]
        for _ in range(layers):
            budget = min(MAX_STREAM_BYTES, MAX_DECODED_BYTES - total)
            inflater = zlib.decompressobj()
            try:
                data = inflater.decompress(data, budget + 1)
            except zlib.error:
                break  # a broken stream: the PDF library reports it (or skips it) as it would anyway
            if len(data) > budget:
                which = "one stream" if budget == MAX_STREAM_BYTES else "the document's streams"
                limit = MAX_STREAM_BYTES if budget == MAX_STREAM_BYTES else MAX_DECODED_BYTES
                raise PayloadTooLarge(
                    f"PDF refused: {which} would decode to more than {limit // (1024 * 1024)} MiB "
                    "(a compression bomb, or a document to split)"
                )
        total += len(data)
    return total


def parse_pdf(raw: bytes, name: str) -> Parsed:
    """A PDF's sentences with their page and box (PDF points, origin at the bottom left)."""
    try:
        import pdfplumber
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise UnsupportedDocument("PDF support needs the pdf extra: pip install 'sourcerer-answers[pdf]'") from exc
    check_inflation(raw)
    pieces: list[Piece] = []
    title = name
    try:
        with pdfplumber.open(io.BytesIO(raw)) as pdf:
            info_title = (pdf.metadata or {}).get("Title")
            if isinstance(info_title, str) and info_title.strip().lower() not in PLACEHOLDER_TITLES:
                title = info_title.strip()
            for number, page in enumerate(pdf.pages, start=1):
                words = page.extract_words(keep_blank_chars=False, use_text_flow=True)
                text, spans = "", []
                for word in words:
                    if text:
                        text += " "
                    spans.append((len(text), len(text) + len(word["text"]), word))
                    text += word["text"]
                height = float(page.height)
                for start, end in sentence_spans(text):
                    covered = [w for s, e, w in spans if s < end and e > start]
                    # PDF points with the origin at the bottom left, as PDF viewers expect
                    box = (
                        [
                            round(min(float(w["x0"]) for w in covered), 2),
                            round(height - max(float(w["bottom"]) for w in covered), 2),
                            round(max(float(w["x1"]) for w in covered), 2),
                            round(height - min(float(w["top"]) for w in covered), 2),
                        ]
                        if covered
                        else None
                    )
                    pieces.append(Piece(text[start:end], {"kind": "page", "page": number, "box": box}, f"{title} p.{number}"))
    except UnsupportedDocument:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types for a broken file
        raise UnsupportedDocument(f"unreadable PDF: {type(exc).__name__}: {exc}") from exc
    return Parsed(title, pieces)
