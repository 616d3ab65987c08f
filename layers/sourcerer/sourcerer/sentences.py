"""Sentences: where one ends, in the languages Sourcerer reads.

One splitter for every job that needs sentences: ingest stores each chunk's sentences (a citation points at
one), the extractive synthesiser ranks them, the judge splits an answer into claims, and a stream shows an
answer sentence by sentence. It knows Latin stops (not after an abbreviation, an initial or inside a number, nor
a "?" or "!" inside a quoted title, a doubtful date or a link), CJK, Arabic and Devanagari stops, paragraph
breaks, list items, Markdown headings and short lines of plain text.

It also says which sentences state nothing, so that none is an answer or a claim: a heading, a plain-text
title and a question (`states_nothing`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sourcerer.text import CJK_LETTER

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e no nos fig figs al approx dept est inc ltd co corp jan feb mar "
    "apr jun jul aug sep sept oct nov dec u.s u.k mt ft gen col lt sgt rev hon op cf ca".split()
)
# A stop followed by whitespace; CJK, Arabic and Devanagari stops; and a full stop glued to the next
# sentence ("...century.First for Women is") as left behind when paragraphs are joined without a space.
# A run of stops is matched from its first character only (the lookbehind) and without backtracking into
# it (possessive): otherwise a long run of dots is tried from every position, quadratic in its length.
# The lookahead in front names every character a stop can start with, so the scan skips the rest of the text
# at C speed (five times faster than trying each alternative at every position).
_SENTENCE_END = re.compile(
    r"(?=[.!?…。！？؟۔।॥])(?:(?<![.!?…])[.!?…]++[\"'”’)\]]*+(?=\s)|[。！？!?]+[」』”)]*|[؟۔।॥]+|(?<=[a-z0-9)\"”])\.(?=[A-Z][a-z]))"
)


# "bis zum 31. März": German, Scandinavian and other languages write the day as an ordinal, with a stop.
_ORDINAL_MONTH = re.compile(
    r"\s{1,3}(januar|jänner|janvier|februar|februari|märz|marz|marts|mars|april|mai|maj|juni|juli|august|augusti|"
    r"september|oktober|october|november|dezember|december|desember)\b",
    re.IGNORECASE,
)
# ... and after an article or a preposition with one: "die 1. Klasse", "in der 2. Klasse", "zum 3. Mal"
_ORDINAL_BEFORE = frozenset("der die das dem den des zum zur am im vom beim".split())
_WORD_WINDOW = 40  # longer than any abbreviation: the word before a stop is found within this many characters
_NEXT_CHAR = re.compile(r"[ \t\r\n\f\v]{0,200}(\S)")
# A section's number before its title or its clause, on the same line: "2. Payment" over "2.1 Subscriptions
# renew ...", as terms of service and policies number them ("IV.", "B." too)
_SECTION_NUMBER = re.compile(r"[ \t]{0,8}(?:\d{1,3}(?:\.\d{1,3}){0,3}\.?|[IVXLC]{1,7}\.|[A-Z]\.)[ \t]{1,8}")
# the first character of the next text, past its clause number ("2.1 Subscriptions": "S")
_NEXT_TEXT = re.compile(r"[ \t\r\n\f\v]{0,200}(?:\d{1,3}(?:\.\d{1,3}){0,3}\.?[ \t]{1,8})?(\S)")


# A Markdown (ATX) heading line: "## Refunds". Bounded runs on one line, so matching stays linear.
_HEADING_LINE = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+[^\n]*\S")
# A list item's marker at the start of a line ("- ", "2. ", "3) "): the item is a sentence of its own, which
# starts after its marker, and the stop of "2." ends nothing.
_LIST_MARKER = re.compile(r"(?m)^[ \t]{0,8}(?:[-*+•]|(\d{1,3})[.)])[ \t]+(?=\S)")


# An FAQ's labels: "A: Refunds take 5 days." (quoted without it) and "Q: Do you ship to Canada?"
ANSWER_LABEL = re.compile(r"^\s*(?:A|Answer|R|Réponse|Respuesta|Resposta|Antwort)\s?[:：]\s+(?=\S)")
QUESTION_LABEL = re.compile(r"^\s*(?:Q|Question|Frage|Pregunta|Pergunta)\s?[:：.]\s+(?=\S)")

_QUESTION_END = re.compile(r"[?？؟]\W*$")


def is_question(sentence: str) -> bool:
    """Whether a sentence asks rather than states: an FAQ's own question, or a question in an answer."""
    return _QUESTION_END.search(sentence) is not None


def is_heading(sentence: str) -> bool:
    """Whether a sentence is a Markdown heading: a title over the text below it, which asserts nothing and
    answers nothing ("# Support policy" is no answer to "Is there a company car policy?")."""
    return "\n" not in sentence.strip() and _HEADING_LINE.fullmatch(sentence.strip()) is not None


SHORT_LINE = 60  # characters: a title or a "Refund window: 30 days" line, not a line of prose wrapped at 72-80
TITLE_WORDS = 4  # "Parental leave policy" is a title; "Free shipping on all orders" a fact written without a stop
_CONTINUES = tuple(",;-–—/&(")
_STOPS = ".!?…。！？؟"  # a line ending in one of these ends a sentence of its own: no title, no list item
_ITEM_ENDS = (";", "；", ",", "，", "、")  # a list item that ends in one of these announces the next ("a; b; c.")


def _short_line_ends(text: str) -> list[int]:
    """Where a short line without a final stop ends and a capitalised line starts: a title over its text or one
    line of a list of facts ("Refund window: 30 days" / "Shipping: 3 to 5 days"), each a sentence of its own. A
    line of prose wrapped at a usual width is longer, and a line that continues (a comma, a dash) is left alone.
    Each line is looked at once and only its last `SHORT_LINE` characters, so the work is linear."""
    ends = []
    for newline in re.finditer(r"\n(?=[ \t]*\S)", text):
        at = newline.start()
        line_start = text.rfind("\n", max(0, at - SHORT_LINE - 1), at) + 1  # 0: the text's first line, or a long one
        line = text[line_start:at].strip()
        if not line or len(line) > SHORT_LINE or (line_start == 0 and at > SHORT_LINE + 1):
            continue
        following = _NEXT_CHAR.match(text, at)
        nxt = following.group(1) if following else ""
        if line.endswith(_CONTINUES) or line[-1] in _STOPS + ":" or not (nxt.isupper() or nxt.isdigit()):
            continue
        ends.append(at)
    return ends


def is_title(text: str, start: int, end: int) -> bool:
    """Whether the sentence `text[start:end]` is a plain-text title: a whole line of at most four words without a
    stop, a digit or a colon, over a capitalised line or paragraph ("Refunds" over "Refunds are issued within 5
    days."; a bold paragraph in HTML or Markdown reads the same once its markup is gone). A section's number may
    stand before it and before the line under it: "2. Payment" over "2.1 Subscriptions renew ...". Like a Markdown heading
    it says what the text under it is about, and is neither an answer nor a claim. A line of facts ("Enterprise:
    $99 per month") is none. A line that names a procedure ("How to make a claim" over "Contact support with your
    order number.") is a title at any length the procedure's heading may have."""
    line = text[start:end]
    if len(line.split()) > TITLE_WORDS and not _STEPS_HEADING.match(text, start):
        return False
    if "\n" in line or any(c.isdigit() for c in line) or ":" in line:
        return False
    opens_line = not start or text[start - 1] == "\n" or _numbered(text, start)
    if line[-1:] in _STOPS or line.endswith(_CONTINUES) or not opens_line:
        return False
    before, after = _neighbour_lines(text, start, end)
    if _bare(before) or (_bare(after) and ":" not in after):
        return False  # a line of a list ("A photo ID" / "Your signed offer letter", markers gone), not its title
    following = _NEXT_TEXT.match(text, end)
    return bool(following) and text[end : following.start(1)].count("\n") in (1, 2) and following.group(1).isupper()


def _numbered(text: str, start: int) -> bool:
    """Whether only a section's number stands before `start` on its line ("2. " of "2. Payment"); a bounded look
    back, as a number is a few characters."""
    line_start = text.rfind("\n", max(0, start - 32), start) + 1
    if line_start == 0 and start > 32:
        return False
    return _SECTION_NUMBER.fullmatch(text, line_start, start) is not None


def _neighbour_lines(text: str, start: int, end: int) -> tuple[str, str]:
    """The lines right before and after the line `text[start:end]` (one line break away, not across a blank line;
    "" where there is none), each read only when it is at most `SHORT_LINE` characters long (bounded work)."""
    before = after = ""
    if start > 1 and text[start - 1] == "\n" and text[start - 2] != "\n":
        found = text.rfind("\n", max(0, start - SHORT_LINE - 2), start - 1)
        if found >= 0 or start - 1 <= SHORT_LINE:
            before = text[found + 1 : start - 1]
    if text[end : end + 1] == "\n" and text[end + 1 : end + 2] not in ("", "\n"):
        found = text.find("\n", end + 1, end + SHORT_LINE + 2)
        if found >= 0 or len(text) - end - 1 <= SHORT_LINE:
            after = text[end + 1 : found if found >= 0 else len(text)]
    return before, after


def _bare(line: str) -> bool:
    """A short line that ends without a stop: a list item once its marker is gone, or the heading over a list."""
    line = line.strip()
    return 0 < len(line) <= SHORT_LINE and line[-1] not in _STOPS + ":"


def states_nothing(text: str, start: int, end: int) -> bool:
    """Whether the sentence `text[start:end]` is a heading, a plain-text title or a question: what its passage is
    about, never an answer or a claim."""
    sentence = text[start:end]
    return is_heading(sentence) or is_question(sentence) or is_title(text, start, end)


# Words that leave a line open for the lines under it to complete: "Do not take this medicine if" over "You are
# pregnant." (English, French, German, Spanish).
_OPENING_WORDS = frozenset("if when unless whenever whether while where because that si lorsque quand wenn falls sofern cuando".split())
# the subject an opening word may take before the line ends: "Paracetamol darf nicht eingenommen werden, wenn Sie"
# over "allergisch gegen Paracetamol sind," (German puts the verb last), "Do not take it if you" over "are pregnant"
_SUBJECTS = frozenset("you sie du ihr vous tu usted ustedes".split())
LEAD_IN_REACH = 12  # lines under one lead-in, at most
# a line that may be a lead-in: it ends in a colon, or in an opening word (found by one scan, so a text without one
# costs nothing more)
_OPEN_LINE_END = re.compile(
    r"(?:[:：]|\b(?:" + "|".join(sorted(_OPENING_WORDS)) + r")(?:[ \t]+(?:" + "|".join(sorted(_SUBJECTS)) + r"))?)[ \t]*\r?\n",
    re.IGNORECASE,
)


# A heading that names a procedure, whose lines are its steps: "How to return an item" over "Sign in to your
# account." / "Open Orders and choose the item." / ... (English, French, German, Spanish, Portuguese). One step
# alone is no answer to how it is done, as one line under "Do not take ibuprofen if you:" is none to when not to.
_STEPS_HEADING = re.compile(
    r"^[ \t]*¿?(?:how (?:to|do|can|should) |steps? (?:to|for) |comment |wie (?:man|sie|kann|können) |so (?:geht|funktioniert|\w+ (?:sie|du)) "
    r"|wie (?:ist|sind) (?=[^\n]{0,60}zu)"  # a German leaflet's "Wie ist Paracetamol einzunehmen?" ("aufzubewahren")
    r"|c[oó]mo |como |para \w+(?:ar|er|ir) )[^\n.!?:：]{0,60}[?？]?\r?\n",
    re.IGNORECASE | re.MULTILINE,
)


def has_lead_ins(text: str) -> bool:
    """Whether any line of `text` ends as a lead-in does (`opens_clause`): without one, no sentence completes one."""
    return _OPEN_LINE_END.search(text) is not None or _STEPS_HEADING.search(text) is not None


def names_steps(line: str) -> bool:
    """Whether a line is a heading that names a procedure (`_STEPS_HEADING`): "How to return an item", "Comment
    changer mon adresse e-mail ?"."""
    return _STEPS_HEADING.match(line.strip() + "\n") is not None


def opens_clause(sentence: str) -> bool:
    """Whether a sentence is a lead-in that the lines under it complete: it ends with a colon ("Do not take
    ibuprofen if you:"), or without a stop in a word that opens a clause ("Do not take this medicine if", or with
    its subject: "... eingenommen werden, wenn Sie"), or it is
    a heading that names a procedure ("How to return an item": its lines are the steps). Alone it says nothing,
    and a line under it alone can say the opposite of what the two say ("You are allergic to aspirin."), or one
    step of several."""
    line = sentence.strip()
    if line.endswith((":", "：")):
        return True
    if line.endswith(("?", "？")):  # an FAQ's "How do I return an item?" over its steps
        return names_steps(line)
    words = [w.casefold() for w in line.split()]
    if not words or line[-1] in _STOPS:
        return False
    subject = len(words) > 1 and words[-1] in _SUBJECTS and words[-2] in _OPENING_WORDS
    return words[-1] in _OPENING_WORDS or subject or names_steps(line)


def lead_in(text: str, offsets: Sequence[tuple[int, int]], index: int) -> int | None:
    """The lead-in (`opens_clause`) that sentence `index` of `text` completes, as an index into `offsets`, or
    None: the lead-in ends a line, and the sentences from it down to this one follow each other on the next lines
    (a blank line at most under the lead-in, none between them: a list's lines, or a paragraph under a heading
    that ends open), and are alike: all list items or none, all ending in a stop or none (an item that ends in a
    semicolon goes with either: "a; b; c." is how many lists are punctuated, and its "c." closes it; lines that end
    in a stop open in the same case: "are pregnant." and "Talk to a pharmacist first." are not alike). A heading, a
    title or a
    question ends the walk, and so does a line of prose after a marked list ("Talk to a pharmacist first if ...")."""
    line = text[offsets[index][0] : offsets[index][1]].rstrip()
    marked, stopped = _marked(text, offsets[index][0]), line[-1:] in _STOPS
    closed = False  # a line above this one ends in a stop
    i = index
    while i > 0 and index - i < LEAD_IN_REACH:
        gap = text[offsets[i - 1][1] : offsets[i][0]]
        breaks = gap.count("\n")
        if breaks > 2 or gap.strip(" \t\r\n-*+•0123456789.)"):
            return None
        previous = text[offsets[i - 1][0] : offsets[i - 1][1]].rstrip()
        if opens_clause(previous):  # it ends its line, a blank line at most below it (a Markdown heading's)
            return i - 1 if breaks else None
        if breaks > 1:
            return None
        # an item that ends in a semicolon announces the next, whatever ends that one: "...; ...; ... embarazo.";
        # the item that ends in a stop after such items closes the list, and a line under it is none of its lines
        semicolon = previous.endswith(_ITEM_ENDS)
        if semicolon and closed:
            return None
        if _marked(text, offsets[i - 1][0]) != marked or (not semicolon and (previous[-1:] in _STOPS) != stopped):
            return None
        # items that complete the lead-in ("are pregnant.") and a sentence of its own under them ("Talk to a
        # pharmacist first."): stopped lines alike open in the same case
        if stopped and previous[-1:] in _STOPS and _opens_lower(previous) != _opens_lower(line):
            return None
        closed = closed or previous[-1:] in _STOPS
        if states_nothing(text, offsets[i - 1][0], offsets[i - 1][1]):
            return None
        i -= 1
    return None


def _opens_lower(line: str) -> bool:
    first = next((c for c in line if c.isalpha()), "")
    return first.islower()


def lead_ins_of(text: str, spans: Sequence[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Each of `spans` that completes a lead-in (`lead_in`), to the span of that lead-in."""
    return {span: spans[lead] for i, span in enumerate(spans) if (lead := lead_in(text, spans, i)) is not None}


_COLON_LINE_END = re.compile(r"[:：][ \t]*\n\s*")


def lead_ins_apart(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` with each line that ends in a colon split from the lines under it: "Exceptions:" over "London and
    Paris: up to 250 EUR per night" is one sentence to `sentence_spans` once a list has lost its markers (ingest
    drops them), and the judge reads a lead-in apart from its lines, as the extractive answer quotes them."""
    if not has_lead_ins(text):
        return list(spans)
    out = []
    for start, end in spans:
        for cut in _COLON_LINE_END.finditer(text, start, end):
            if cut.end() < end:
                out.append((start, cut.start() + 1))
                start = cut.end()
        out.append((start, end))
    return out


def _marked(text: str, start: int) -> bool:
    """Whether the line a sentence starting at `start` stands on opens with a list marker (looked for only within
    `SHORT_LINE` characters before it: a sentence further into a long line is read as unmarked, and the work stays
    bounded on a text of one long line)."""
    line_start = text.rfind("\n", max(0, start - SHORT_LINE), start) + 1
    if line_start == 0 and start > SHORT_LINE:
        return False
    return _LIST_MARKER.match(text, line_start) is not None


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Split `text` into sentences; returns `[start, end)` spans with surrounding whitespace trimmed.

    Handles Latin punctuation (not after a known abbreviation, an initial or inside a number), CJK full stops
    (no space needed), Arabic and Devanagari stops, paragraph breaks, list items, Markdown heading lines (a
    heading is a sentence of its own, not the start of the sentence under it) and short lines (`_short_line_ends`).
    """
    # Linear in the text: each stop looks at a bounded window around it, never at everything before or after.
    spans: list[tuple[int, int]] = []
    start = 0
    # In text written without capitals (a lowercased transcript or summary, a chat message) a lowercase word after a
    # stop starts the next sentence; in cased text it means the stop ends an abbreviation ("approx. five").
    uncased = text == text.lower()
    items = list(_LIST_MARKER.finditer(text))
    boundaries: list[int] = [item.start() for item in items]
    enumerators = {item.end(1) for item in items if item.group(1)}  # where the stop of "2." stands
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if match.start() in enumerators:
            continue
        if match.group()[0] in "?!":
            # a title in quotes ('"Which Way Is Up?" starring Richard Pryor'), a doubtful date ("(1903–1942?),") or a
            # name ("Yahoo!'s") goes on: a lowercase word after the closing quote or bracket, or text glued to the
            # stop that is not CJK. A question left open ("Is it free? yes") still ends where it asks.
            following = _NEXT_CHAR.match(text, end)
            quoted = match.group()[-1] in "\"'”’)]" and following is not None and following.group(1).islower()
            glued = end < len(text) and not text[end].isspace() and not CJK_LETTER.match(text, end)
            if quoted or glued:
                continue
        if match.group()[0] == ".":
            before = text[max(0, match.start() - _WORD_WINDOW) : match.start()].split()
            last = before[-1].casefold().rstrip(".").lstrip("([{\"'“‘«") if before else ""  # "(c. 1455" as "c."
            # a single letter is an initial ("J. Smith"), but after a number a unit that ends its sentence ("45 W."),
            # in Latin letters: Arabic writes a year's era so ("1950 م.") inside its sentence
            unit = last.isascii() and len(before) > 1 and before[-2].replace(",", "").replace(".", "").isdigit()
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha() and not unit):
                continue
            if last.isdigit() and len(last) <= 2 and (_ORDINAL_MONTH.match(text, end) or (len(before) > 1 and before[-2].casefold() in _ORDINAL_BEFORE)):
                continue
            # "No. 5", decimals are excluded by requiring whitespace after the stop already
            following = _NEXT_CHAR.match(text, end)
            if following and following.group(1).islower() and not uncased:
                continue
        boundaries.append(end)
    for para in re.finditer(r"\n\s*\n", text):
        boundaries.append(para.start())
    for heading in _HEADING_LINE.finditer(text):
        boundaries.extend((heading.start(), heading.end()))
    boundaries.extend(_short_line_ends(text))
    for end in sorted(set(boundaries)):
        if end <= start:
            continue
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    trimmed = []
    past_marker = {item.start(): item.end() for item in items}  # an item's sentence is its words, not "2."
    for s, e in spans:
        s = min(past_marker.get(s, s), e)
        segment = text[s:e]
        lead = len(segment) - len(segment.lstrip())
        trail = len(segment) - len(segment.rstrip())
        if e - trail > s + lead:
            trimmed.append((s + lead, e - trail))
    return trimmed


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# How a table row is written as a sentence (`store.tables.row_sentence`) and read back (`row_cells`):
# "Plan: Pro; Price: $49."
CELL_SEPARATOR, NAME_SEPARATOR = "; ", ": "


def row_cells(sentence: str) -> list[str] | None:
    """The cells of a table row as `store.tables` writes it ("Plan: Pro; Price: $49." -> ["Pro", "$49"]), or None
    for any other sentence (a row without column names lists its cells and is read as any sentence)."""
    pairs = [part.split(NAME_SEPARATOR, 1) for part in sentence.rstrip(".").split(CELL_SEPARATOR)]
    # a column's name is a short label and a cell closes what it opens: "The Amazon rainforest (Portuguese:
    # Floresta…; Spanish: Selva…)" and "… City Hall; it has jurisdiction over …: Manhattan, …" are prose
    if len(pairs) < 2 or not all(len(pair) == 2 and _column_name(pair[0]) and _balanced(pair[1]) for pair in pairs):
        return None
    return [cell for _, cell in pairs]


def _column_name(name: str) -> bool:
    return 0 < len(name.split()) <= 5 and not any(mark in name for mark in '()[]",;')


def _balanced(cell: str) -> bool:
    return cell.count("(") == cell.count(")") and cell.count("[") == cell.count("]")


def list_run(text: str, offsets: list[tuple[int, int]], index: int) -> list[int]:
    """The sentences (indices into `offsets`, in order) of the list that sentence `index` of `text` is a line of:
    short lines without a stop, one line break apart (a list's items once their markers are gone, or with them),
    or `[index]` alone when it is no such line."""

    def item(i: int) -> bool:
        return _bare(text[offsets[i][0] : offsets[i][1]])

    def adjacent(i: int) -> bool:  # sentence i and i + 1 are one line break apart, a list marker at most between
        gap = text[offsets[i][1] : offsets[i + 1][0]]
        return gap.count("\n") == 1 and not gap.strip(" \t\r\n-*+•0123456789.)")

    if not item(index):
        return [index]
    first = last = index
    while first > 0 and item(first - 1) and adjacent(first - 1):
        first -= 1
    while last + 1 < len(offsets) and item(last + 1) and adjacent(last):
        last += 1
    return list(range(first, last + 1))
