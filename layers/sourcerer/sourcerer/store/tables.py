"""Tables as sentences: each row of a Markdown or HTML table, or of a CSV file, is read with its header.

A pricing or dosage table is where a policy keeps its facts, and a row alone ("| Enterprise | $99 | 50 |") says
nothing about what its cells are. So a row becomes one sentence that names them, "Plan: Enterprise; Price per
month: $99; Seats: 50.", which a question can match ("How much is the Enterprise plan?"), an answer can quote
and a claim can be checked against; the header row itself is no sentence. A row wider or narrower than its
header, or a table without one, lists its cells.
"""

from __future__ import annotations

import csv
import io
import re

from sourcerer.errors import UnsupportedDocument
from sourcerer.sentences import CELL_SEPARATOR, NAME_SEPARATOR
from sourcerer.store.parsed import Piece

# The rule under a Markdown table's header: "|---|:---:|". Each cell starts at a pipe, so the match is linear.
_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*")


def row_sentence(header: list[str], cells: list[str]) -> str:
    """A row as a sentence: each cell after its column's name where the header gives one, empty cells left out."""
    cells = [" ".join(c.split()) for c in cells]
    names = [" ".join(h.split()) for h in header] if len(header) == len(cells) else [""] * len(cells)
    parts = [f"{name}{NAME_SEPARATOR}{cell}" if name else cell for name, cell in zip(names, cells, strict=True) if cell]
    text = CELL_SEPARATOR.join(parts)
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)]


def markdown_tables(body: str) -> str:
    """`body` with each Markdown table's rows as list items of row sentences (`sentence_spans` reads an item as a
    sentence of its own), and its header and rule blanked: one line out for each line in, so line numbers hold."""
    lines = body.split("\n")
    at = 0
    while at + 1 < len(lines):
        header = _cells(lines[at]) if "|" in lines[at] and "|" in lines[at + 1] and _RULE.fullmatch(lines[at + 1]) else []
        if not header or len(header) != len(_cells(lines[at + 1])):  # a rule of its header's width, as in GFM
            at += 1
            continue
        lines[at] = lines[at + 1] = ""
        at += 2
        while at < len(lines) and "|" in lines[at] and lines[at].strip():
            sentence = row_sentence(header, _cells(lines[at]))
            lines[at] = f"- {sentence}" if sentence else ""
            at += 1
    return "\n".join(lines)


def table_rows(text: str, name: str, *, tabs: bool) -> list[Piece]:
    """A CSV (or, with `tabs`, TSV) file's rows as sentences under its first row, each located by its lines. A
    CSV's delimiter is read from its first lines (a comma, or the semicolon of a European spreadsheet)."""
    delimiter = "\t"
    if not tabs:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;|\t").delimiter
        except csv.Error:
            delimiter = ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header: list[str] = []
    pieces = []
    first_line = 1
    try:
        for row in reader:
            lines = {"kind": "lines", "start": first_line, "end": reader.line_num}
            first_line = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if not header:
                header = row
                continue
            sentence = row_sentence(header, row)
            if sentence:
                pieces.append(Piece(sentence, lines, name))
    except csv.Error as exc:
        raise UnsupportedDocument(f"not readable as {'TSV' if tabs else 'CSV'} (line {reader.line_num}): {exc}") from exc
    return pieces
