"""PDF: sentences with their page and word box, read by pdfplumber after a bounded check of what the file's
compressed streams would inflate to (`check_inflation`). Headings (lines set larger than the body text, or bold
where it is not, short and without a final stop) become the pieces' heading path, as in Markdown: never the start
of a sentence, never inside a cited box."""

from __future__ import annotations

import io
import re
import zlib

from sourcerer.errors import PayloadTooLarge, UnsupportedDocument
from sourcerer.sentences import sentence_spans
from sourcerer.store.parsed import Parsed, Piece

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


HEADING_SIZE = 1.15  # a line this much larger than the body text (or bold where the body is not) may be a heading
HEADING_WORDS = 12  # and it is short and does not end a sentence


def _body_size(words: list[dict]) -> float:
    """The size most of the document's characters are set in."""
    sizes: dict[float, int] = {}
    for w in words:
        size = round(float(w.get("size") or 0), 1)
        sizes[size] = sizes.get(size, 0) + len(w["text"])
    return max(sizes, key=lambda k: sizes[k]) if sizes else 0.0


def _lines(words: list[dict]) -> list[list[dict]]:
    """Words grouped into lines: the same line while the top edge stays within a couple of points."""
    lines: list[list[dict]] = []
    for word in words:
        if lines and abs(float(word["top"]) - float(lines[-1][-1]["top"])) < 2:
            lines[-1].append(word)
        else:
            lines.append([word])
    return lines


def _heading(line: list[dict], body: float) -> tuple[float, str] | None:
    """(size, text) when the line reads as a heading: larger than the body (or bold where it is not), short, and
    without a sentence's final stop."""
    text = " ".join(w["text"] for w in line)
    size = max(float(w.get("size") or 0) for w in line)
    bold = all("bold" in str(w.get("fontname", "")).lower() for w in line)
    larger = body > 0 and size >= body * HEADING_SIZE
    if (larger or bold) and len(line) <= HEADING_WORDS and not re.search(r"[.!?:;,]$", text) and re.search(r"\w", text):
        return (size + (0.5 if bold and not larger else 0.0), text)
    return None


def _sections(lines: list[list[dict]], body: float) -> list[tuple[tuple[float, str] | None, list[dict]]]:
    """The page as headings and the runs of body words between them, in reading order."""
    out: list[tuple[tuple[float, str] | None, list[dict]]] = []
    run: list[dict] = []
    for line in lines:
        heading = _heading(line, body)
        if heading is None:
            run.extend(line)
            continue
        if run:
            out.append((None, run))
            run = []
        out.append((heading, []))
    if run:
        out.append((None, run))
    return out


def _sentences(words: list[dict], height: float, number: int, label: str, heading: str) -> list[Piece]:
    """The sentences of a run of words, each with the box of the words it covers (PDF points, origin at the
    bottom left, as PDF viewers expect)."""
    text, spans = "", []
    for word in words:
        if text:
            text += " "
        spans.append((len(text), len(text) + len(word["text"]), word))
        text += word["text"]
    pieces = []
    for start, end in sentence_spans(text):
        covered = [w for s, e, w in spans if s < end and e > start]
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
        pieces.append(Piece(text[start:end], {"kind": "page", "page": number, "box": box}, label, heading))
    return pieces


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
            pages = [(n, p, p.extract_words(keep_blank_chars=False, use_text_flow=True, extra_attrs=["size", "fontname"])) for n, p in enumerate(pdf.pages, start=1)]
            body = _body_size([w for _, _, words in pages for w in words])
            path: list[tuple[float, str]] = []  # the headings above the current line: (size, text), outermost first
            for number, page, words in pages:
                height = float(page.height)
                for heading, section in _sections(_lines(words), body):
                    if heading is not None:  # a heading is a label, never the start of a sentence
                        size, text = heading
                        path = [h for h in path if h[0] > size] + [heading]
                        continue
                    # a heading that repeats the document's title adds nothing to the label
                    label = " › ".join([f"{title} p.{number}", *(h[1] for h in path if h[1].casefold() != title.casefold())])
                    pieces.extend(_sentences(section, height, number, label, path[-1][1] if path else ""))
    except UnsupportedDocument:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types for a broken file
        raise UnsupportedDocument(f"unreadable PDF: {type(exc).__name__}: {exc}") from exc
    return Parsed(title, pieces)
