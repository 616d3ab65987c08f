"""HTML: the page's main content as text, with character spans into that text.

Scripts, styles, navigation, headers and footers are left out, and `<main>` or `<article>` is the content where
the page has one. A heading (`<h1>`–`<h6>`) is what the text under it is about, as in Markdown: it labels the
chunks under it (`Refunds › Annual plans`) and is never a piece of its own, which an answer could quote or a
question match alone. A table's rows are read with its header row (`sourcerer.store.tables`), and a definition
list's `<dd>` with its `<dt>`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from sourcerer.sentences import is_heading, is_question
from sourcerer.store.parsed import Parsed, Piece, spans_and_breaks
from sourcerer.store.tables import row_sentence

_SKIP_TAGS = {"script", "style", "nav", "header", "footer", "aside", "noscript", "template", "svg", "form", "button"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "li", "ul", "ol", "br", "tr", "table", "blockquote", "pre", "dd", "dt"}
_BLOCK_TAGS |= set(_HEADINGS)
# a list item's marker: its sentence opens at it (`sentence_spans` drops it), and its line follows the line before
_ITEM = "• "
_ITEM_APART = re.compile(r"\n\n(?=• )")


class _HTMLText(HTMLParser):
    """The page's text. A heading comes out as a Markdown heading line ("## Refunds") that `parse_html` turns
    into a section; a table row of the outermost table as one row sentence."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.parts: list[str] = []
        self.main_parts: list[str] | None = None
        self.main_depth = 0
        self.title = ""
        self._in_title = False
        self._heading: tuple[int, list[str]] | None = None  # (level, its text so far)
        self._tables = 0  # depth: rows of a table inside a cell are read as the cell's text
        self._header: list[str] = []
        self._row: list[tuple[str, bool]] | None = None  # (cell text, is a header cell)
        self._cell: tuple[list[str], bool] | None = None
        self._in_head = False  # inside <thead>: its row names the columns, whatever its cells are
        self._term = ""  # the last <dt> of a definition list: the name its <dd> is read under
        self._definition: tuple[str, list[str]] | None = None  # ("dt" or "dd", its text so far)
        self._item = False  # in a list item whose text has not started: its marker goes before its first words

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS or dict(attrs).get("role") in ("navigation", "banner", "contentinfo"):
            self.skip += 1
        if tag == "title":
            self._in_title = True
        if tag in ("main", "article") and self.main_parts is None:
            self.main_parts, self.main_depth = [], 1
        elif tag in ("main", "article") and self.main_depth:
            self.main_depth += 1
        if tag == "table":
            self._tables += 1
            if self._tables == 1:
                self._header, self._row = [], None
        if self._tables == 1 and tag == "thead":
            self._in_head = True
        if self._tables == 1 and tag == "tr":
            self._end_row()
            self._row = []
        if self._tables == 1 and tag in ("td", "th"):
            self._end_cell()
            if self._row is None:
                self._row = []
            self._cell = ([], tag == "th")
            return
        if tag in ("dt", "dd") and self._cell is None and self._heading is None:
            if self._definition is not None:  # "<dt>A<dd>B": the end tags are optional
                self._end_definition()
            self._definition = (tag, [])
        if tag in _HEADINGS and self._cell is None:
            self._heading = (_HEADINGS[tag], [])
        if tag in _BLOCK_TAGS:
            self._emit("\n\n")
        self._item = self._item or tag == "li"

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS and self.skip:
            self.skip -= 1
        if tag == "title":
            self._in_title = False
        if tag in ("main", "article") and self.main_depth:
            self.main_depth -= 1
        if self._tables == 1 and tag in ("td", "th"):
            self._end_cell()
            return
        if self._tables == 1 and tag in ("tr", "table", "thead"):
            self._end_row()
            self._in_head = self._in_head and tag == "tr"
        if tag == "table" and self._tables:
            self._tables -= 1
        if tag in ("dt", "dd", "dl") and self._definition is not None:
            self._end_definition()
        if tag in _HEADINGS and self._heading is not None:
            level, words = self._heading
            self._heading = None
            title = " ".join("".join(words).split())
            if title:  # a line `sentence_spans` reads as a heading, and `parse_html` as a section
                self._emit(f"\n\n{'#' * level} {title}\n\n")
        if tag in _BLOCK_TAGS:
            self._emit("\n\n")
        if tag == "li":
            self._item = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self.skip:
            return
        elif self._cell is not None:
            self._cell[0].append(data)
        elif self._heading is not None:
            self._heading[1].append(data)
        elif self._definition is not None:
            self._definition[1].append(data)
        else:
            if self._item and data.strip():
                self._emit(_ITEM)
                self._item = False
            self._emit(data)

    def _end_definition(self) -> None:
        """A <dd> is read under its <dt> ("Refund window: 30 days."), as a table row under its header; a <dt> that
        asks a question (an FAQ written as a list) stays a sentence of its own, and its <dd> the answer under it."""
        assert self._definition is not None
        tag, words = self._definition
        self._definition = None
        text = " ".join("".join(words).split())
        if tag == "dt":
            self._term = text
            if text and is_question(text):
                self._emit(f"\n\n{text}\n\n")
        elif text:
            named = self._term and not is_question(self._term)
            self._emit(f"\n\n{row_sentence([self._term], [text]) if named else text}\n\n")

    def _end_cell(self) -> None:
        if self._cell is not None and self._row is not None:
            self._row.append((" ".join("".join(self._cell[0]).split()), self._cell[1]))
        self._cell = None

    def _end_row(self) -> None:
        """A row of header cells (the first such row) names the columns; any other row is one sentence."""
        self._end_cell()
        row, self._row = self._row, None
        if not row:
            return
        cells = [text for text, _ in row]
        if not self._header and (self._in_head or all(is_header for _, is_header in row)):
            self._header = cells
            return
        sentence = row_sentence(self._header, cells)
        if sentence:
            self._emit(f"\n\n{sentence}\n\n")

    def _emit(self, text: str) -> None:
        self.parts.append(text)
        if self.main_parts is not None and self.main_depth:
            self.main_parts.append(text)


def parse_html(text: str, name: str) -> Parsed:
    parser = _HTMLText()
    parser.feed(text)
    parser.close()
    chosen = parser.main_parts if parser.main_parts else parser.parts
    extracted = re.sub(r"[ \t\r\f\v]+", " ", "".join(chosen))
    extracted = re.sub(r"\s*\n\s*\n\s*", "\n\n", extracted).strip()
    extracted = _ITEM_APART.sub("\n", extracted)  # a list's items on lines of their own, as Markdown writes them
    title = " ".join(parser.title.split()) or name
    path: list[str] = []
    asked = False  # whether the path ends with an FAQ question, not a heading
    pieces: list[Piece] = []
    for s, e, breaks in spans_and_breaks(extracted):
        sentence = extracted[s:e]
        if is_heading(sentence):
            level = len(sentence) - len(sentence.lstrip("#"))
            path, asked = path[: level - 1] + [sentence.lstrip("#").strip()], False
            continue
        if is_question(sentence) and _alone(extracted, s, e):
            # an FAQ's question as a paragraph of its own (a bold line, a <dt>, a <summary>) heads its answer as a
            # heading does: read as a sentence, every answer of the page shared its words, and the page's first
            # answer ("No. Gift cards cannot be returned.") answered every question on it
            path, asked = [*(path[:-1] if asked else path), sentence.replace("\n", " ")], True
            continue
        section = " › ".join([title, *(p for p in path if p != title)])
        heading = path[-1] if path else ""
        pieces.append(Piece(sentence.replace("\n", " "), {"kind": "char_span", "start": s, "end": e}, section, heading, breaks))
    return Parsed(title, pieces)


def _alone(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is a paragraph of its own (blank lines or the text's ends around it)."""
    return text[max(0, start - 2) : start] in ("", "\n\n") and text[end : end + 2] in ("", "\n\n")
