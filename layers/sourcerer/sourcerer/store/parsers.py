"""Parsers: bytes in, text pieces out, each piece knowing where it came from in the original.

A `Piece` is the smallest unit a chunk is built from (a sentence, a transcript cue) with its origin: line
numbers for text, Markdown and CSV, a character span for HTML and JSON records, a page and word box for PDF, a
time range for WebVTT and SRT. `section` marks boundaries chunks never cross (a Markdown or HTML heading, an
FAQ's question on a line of its own, a PDF page, a JSON record); its label becomes the chunk label. HTML has its
own module (`store.html`), and tables in Markdown and HTML are read row by row with their header
(`store.tables`).
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import PurePosixPath
from typing import Any

from sourcerer.errors import UnsupportedDocument
from sourcerer.sentences import SHORT_LINE
from sourcerer.store.html import parse_html
from sourcerer.store.parsed import Parsed, Piece, spans_and_breaks
from sourcerer.store.pdf import parse_pdf
from sourcerer.store.tables import markdown_tables, table_rows

EXTENSIONS = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".vtt": "text/vtt",
    ".srt": "application/x-subrip",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".ndjson": "application/x-ndjson",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
}


READABLE = ".txt, .md, .html, .pdf, .vtt, .srt, .json, .jsonl, .csv and .tsv"
_BINARY = {b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"PK\x03\x04": "a ZIP archive (or a Word/Excel file)"}


def content_type_for(source_uri: str, declared: str | None = None) -> str:
    if declared:
        return declared.split(";")[0].strip().lower()
    suffix = PurePosixPath(source_uri.split("?")[0]).suffix.lower()
    if suffix not in EXTENSIONS:
        raise UnsupportedDocument(f"unsupported file type {suffix or '(none)'!r}: Sourcerer reads {READABLE}")
    return EXTENSIONS[suffix]


def sniff_content_type(source_uri: str, raw: bytes) -> str | None:
    """The declared-by-extension type, else PDF by its magic bytes, else plain text (an API client that names its
    document `policy` or `faq.v2` still gets it parsed). Folder ingest does not sniff: it skips unknown files."""
    suffix = PurePosixPath(source_uri.split("?")[0]).suffix.lower()
    if suffix in EXTENSIONS:
        return None
    return "application/pdf" if raw.startswith(b"%PDF-") else "text/plain"


# Text saved as UTF-16 or UTF-32 says so with a byte-order mark: Excel's "Unicode Text" export and Notepad's
# "Unicode" do. The UTF-32 marks first (UTF-32 LE opens with UTF-16 LE's). Without a mark the text must be UTF-8:
# guessing a legacy code page from the bytes misreads short Western text (charset-normalizer reads "España" in
# Windows-1252 as "Espańa"), and a wrong letter in a cited quote is worse than asking for the file as UTF-8.
_WIDE_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")


def as_utf8(raw: bytes) -> bytes:
    """Text saved as UTF-16 or UTF-32 with its byte-order mark, as UTF-8 without it; any other bytes as they are.
    A document's original is kept this way too, so a citation opens it as the text it quotes."""
    mark = next((encoding for bom, encoding in _WIDE_MARKS if raw.startswith(bom)), None)
    if mark is None:
        return raw
    try:
        text = raw.decode(mark)
    except UnicodeDecodeError:
        return raw
    return raw if _CONTROL.search(text) else text.encode("utf-8")  # control characters: bytes that open like a mark


def parse(raw: bytes, source_uri: str, content_type: str | None = None) -> Parsed:
    kind = content_type_for(source_uri, content_type)
    name = PurePosixPath(source_uri).name or source_uri
    if kind == "application/pdf":
        return parse_pdf(raw, name)
    try:
        text = as_utf8(raw).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        what = next((name for magic, name in _BINARY.items() if raw.startswith(magic)), None)
        if what:
            raise UnsupportedDocument(f"this is {what}, not text: Sourcerer reads {READABLE}") from exc
        raise UnsupportedDocument(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8 (or UTF-16 with its byte-order mark), or upload one of {READABLE}"
        ) from exc
    if kind in ("text/plain",):
        return Parsed(name, _text_pieces(text, name))
    if kind == "text/markdown":
        return _markdown(text, name)
    if kind == "text/html":
        return parse_html(text, name)
    if kind == "text/vtt":
        return Parsed(name, _cues(text, name, vtt=True))
    if kind == "application/x-subrip":
        return Parsed(name, _cues(text, name, vtt=False))
    if kind == "application/json":
        return _json(text, name, lines=False)
    if kind == "application/x-ndjson":
        return _json(text, name, lines=True)
    if kind in ("text/csv", "text/tab-separated-values"):
        return Parsed(name, table_rows(text, name, tabs=kind == "text/tab-separated-values"))
    raise UnsupportedDocument(f"unsupported content type {kind!r}")


# --- plain text and Markdown: line locators -----------------------------------------------------------


def _line_pieces(text: str, first_line: int, section: str, heading: str = "") -> list[Piece]:
    """Sentences of `text` (which starts at line `first_line`), each with its [start, end] lines and the line
    breaks before it."""
    pieces = []
    counted, line = 0, first_line  # newlines are counted once, moving forward, never again from the start
    for start, end, breaks in spans_and_breaks(text):
        line += text.count("\n", counted, start)
        line_end = line + text.count("\n", start, end)
        counted = start
        pieces.append(Piece(" ".join(text[start:end].split()), {"kind": "lines", "start": line, "end": line_end}, section, heading, breaks))
    return pieces


def _text_pieces(text: str, name: str) -> list[Piece]:
    """Plain text: one section, or one per FAQ question where its lines are labelled ("Q: ...?")."""
    lines = text.split("\n")
    if not any(_question_label(line, markdown=False) for line in lines):
        return _line_pieces(text, 1, name)
    pieces: list[Piece] = []
    block: list[str] = []
    block_start, question, path = 1, "", [name]

    def flush() -> None:
        body = "\n".join(block).strip()
        if not question and "\n" not in body and 0 < len(body) <= SHORT_LINE and body[-1] not in ".!?:":
            path.append(body)  # the page's title over its questions ("Shipping FAQ"), no sentence of its own
        elif body:
            pieces.extend(_line_pieces("\n".join(block), block_start, " › ".join([*path, question] if question else path), question))

    for number, line in enumerate(lines, start=1):
        found = _question_label(line, markdown=False)
        if found is None:
            block.append(line)
            continue
        flush()
        block, block_start, question = [], number + 1, found
    flush()
    return pieces


# An FAQ's question on a line of its own, labelled ("Q: Do you ship to Canada?") or, in Markdown, wholly bold
# ("**Can I return a gift card?**"): a heading over its answer, as "## Do you ship to Canada?" is. Read as text,
# every answer of a page of them stood in one chunk, and "No. Gift cards cannot be returned." answered "Do you
# ship to Canada?" (the question's words counted for the chunk, not for the answer under them).
_QUESTION_LABEL = re.compile(r"[ \t]{0,3}(?:Q|Question|Frage|Pregunta)[ \t]{0,2}[:.][ \t]{0,3}(\S[^\n]{0,300}\?)[ \t]*")
_BOLD_QUESTION = re.compile(r"[ \t]{0,3}(\*\*|__)(\S[^\n*_]{0,300}\?)\1[ \t]*")


def _question_label(line: str, *, markdown: bool) -> str | None:
    """The question of a line that is an FAQ's question label, or None."""
    found = _QUESTION_LABEL.fullmatch(line) or (_BOLD_QUESTION.fullmatch(line) if markdown else None)
    return found.group(found.lastindex or 1).strip() if found else None


_HEADING = re.compile(r"(#{1,6})[ \t]+(\S.*)")
_SETEXT = re.compile(r"[ ]{0,3}(=+|-+)[ \t]*")  # the line under a heading, Setext style
_RULE_LINE = re.compile(r"[ ]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")


def _heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line, its optional closing hashes dropped. Plain string operations,
    not a backtracking pattern: a pattern with two open-ended runs took seconds on one long line."""
    found = _HEADING.match(line)
    if not found:
        return None
    title = found.group(2).rstrip()
    unclosed = title.rstrip("#")
    if unclosed != title and (not unclosed or unclosed[-1] in " \t"):
        title = unclosed.rstrip()
    return (len(found.group(1)), title) if title else None


def _markdown(text: str, name: str) -> Parsed:
    """Sections split at headings (`# A` or Setext's underlined "A"); each chunk is labelled with its heading path
    (`file.md › A › B`)."""
    lines = text.split("\n")
    if lines[0].strip() == "---":  # YAML front matter (a static site's page): metadata, not text
        close = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), None)
        if close is not None:
            lines[: close + 1] = [""] * (close + 1)
    path: list[str] = []
    pieces: list[Piece] = []
    block: list[str] = []
    block_start = 1
    in_fence = False
    asked = False  # whether the path ends with an FAQ question (`_question_label`), not a heading

    def flush(end_line: int) -> None:
        body = "\n".join(block)
        if body.strip():
            label = " › ".join([name, *path])
            pieces.extend(_line_pieces(_strip_markdown(markdown_tables(body)), block_start, label, path[-1] if path else ""))

    for number, line in enumerate(lines, start=1):
        if line.strip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _heading(line)
        underline = None if in_fence else _SETEXT.fullmatch(line)
        if underline and block and block[-1].strip() and "|" not in block[-1]:  # "Refunds" over "=======" or "-------"
            heading = (1 if underline.group(1)[0] == "=" else 2, block.pop().strip())
        question = None if in_fence or heading else _question_label(line, markdown=True)
        if question:  # a level under the heading it stands under; the next question replaces it
            flush(number - 1)
            path = [*(path[:-1] if asked else path), question]
            asked = True
            block, block_start = [], number + 1
            continue
        if heading:
            asked = False
            flush(number - 1)
            level, title = heading
            path = path[: level - 1] + [title]
            block, block_start = [], number + 1
        else:  # a rule between paragraphs ("---", "***") is no text; its line stays, so line numbers hold
            block.append("" if not in_fence and _RULE_LINE.fullmatch(line) else line)
    flush(len(lines))
    title = next((p for p in path[:1]), name)
    return Parsed(title if pieces else name, pieces)


def _strip_markdown(body: str) -> str:
    """Drop link targets and emphasis but keep the line structure (line locators stay right). List markers stay:
    `sentence_spans` makes each item a sentence of its own, without its marker."""
    return _EMPHASIS.sub(r"\2", _LINK.sub(r"\1", body))


# Every open-ended run is bounded and stays on its line, so each pattern is linear in the text: an unclosed
# `[` or `*` looks ahead a few hundred characters, not to the end of the document.
_LINK = re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,2000}\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(\S(?:[^\n]{0,300}?\S)?)\1")


# --- transcripts: WebVTT and SRT cues with time ranges ---------------------------------------------------

_TIMING = re.compile(
    r"(?:(\d{1,5}):)?(\d{1,2}):(\d{2})[.,](\d{3})[ \t]{0,20}-->[ \t]{0,20}(?:(\d{1,5}):)?(\d{1,2}):(\d{2})[.,](\d{3})"
)


def _ms(h: str | None, m: str, s: str, ms: str) -> int:
    return ((int(h or 0) * 60 + int(m)) * 60 + int(s)) * 1000 + int(ms)


def _cues(text: str, name: str, *, vtt: bool) -> list[Piece]:
    text = text.replace("\r\n", "\n")
    if vtt and not text.lstrip().startswith("WEBVTT"):
        raise UnsupportedDocument("not a WebVTT file (no WEBVTT header)")
    pieces = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.strip().split("\n") if line.strip()]
        timing_at = next((i for i, line in enumerate(lines) if _TIMING.search(line)), None)
        if timing_at is None:
            continue  # header, NOTE or STYLE block, or a stray cue number
        g = _TIMING.search(lines[timing_at]).groups()  # type: ignore[union-attr]
        words = " ".join(re.sub(r"<[^>]+>", "", line) for line in lines[timing_at + 1 :]).strip()
        if words:
            pieces.append(Piece(words, {"kind": "time_range", "t_start_ms": _ms(*g[:4]), "t_end_ms": _ms(*g[4:])}, name))
    if not pieces:
        raise UnsupportedDocument("no timed cues found")
    return pieces


# --- JSON and JSONL records -------------------------------------------------------------------------

TEXT_FIELDS = ("text", "content", "body", "passage", "answer")  # "answer": an FAQ export's {"question", "answer"}


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnsupportedDocument(f"{what} ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError as exc:  # the decoder recurses per level of nesting
        raise UnsupportedDocument(f"{what}: nested too deeply") from exc


def _record_text(record: Any) -> tuple[str, str | None, str] | None:
    """A record's text, its label (title, question, name or id) and its heading: a title or an FAQ's question, the
    line its chunks open with as a Markdown heading's (an id is a label, no words to search)."""
    if not isinstance(record, dict):
        return None
    for field in TEXT_FIELDS:
        if isinstance(record.get(field), str) and record[field].strip():
            heading = next((record[k] for k in ("title", "question") if isinstance(record.get(k), str) and record[k].strip()), "")
            title = heading or record.get("name") or record.get("id")
            return record[field], str(title) if title is not None else None, heading
    return None


def _json(text: str, name: str, *, lines: bool) -> Parsed:
    records: list[tuple[int, Any]] = []
    if lines:
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                records.append((number, _loads(line, f"line {number} is not valid JSON")))
    else:
        data = _loads(text, "not valid JSON")
        items = data if isinstance(data, list) else [data]
        records = [(i + 1, item) for i, item in enumerate(items)]
    pieces: list[Piece] = []
    for number, record in records:
        found = _record_text(record)
        if not found:
            continue
        body, title, heading = found
        section = f"{name} › {title}" if title else f"{name} #{number}"
        for s, e, breaks in spans_and_breaks(body):
            locator = {"kind": "lines", "start": number, "end": number} if lines else {"kind": "char_span", "start": s, "end": e}
            pieces.append(Piece(body[s:e], locator, section, heading, breaks))
    if not pieces:
        raise UnsupportedDocument(f"no record with a text field ({', '.join(TEXT_FIELDS)})")
    return Parsed(name, pieces)
