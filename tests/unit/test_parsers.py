"""Parsers and chunking: every format maps its text back to where it came from."""

import codecs
import io
import json

import pytest
from sourcerer import ask
from sourcerer.errors import UnsupportedDocument
from sourcerer.store.base import prepare
from sourcerer.store.chunking import ChunkSettings, chunk_pieces
from sourcerer.store.models import Document
from sourcerer.store.parsers import parse


def _chunks(uri, data, **kw):
    doc = Document(source_uri=uri, content=data if isinstance(data, bytes) else data.encode(), **kw)
    return prepare(doc).chunks


def test_markdown_keeps_heading_path_and_line_numbers():
    md = "# Guide\n\nIntro line.\n\n## Setup\n\nInstall **the** tool.\nThen run it.\n\n```\n# not a heading\n```\n"
    chunks = _chunks("docs/guide.md", md)
    assert [c.label for c in chunks] == ["guide.md › Guide", "guide.md › Guide › Setup"]
    setup = chunks[1]
    # its heading opens the chunk so a search finds it by its words; no sentence (nothing an answer quotes) holds it
    # the source's lines stay lines, and its blank lines blank: a list's steps stay apart from the paragraph after it
    assert setup.text.startswith("Setup\nInstall the tool.\nThen run it.\n\n")
    assert setup.text[setup.sentences[0]["start"] :].startswith("Install the tool.")
    assert (setup.locator["kind"], setup.locator["start"]) == ("lines", 7)
    assert md.split("\n")[setup.locator["start"] - 1].startswith("Install")


def test_plain_text_lines():
    chunks = _chunks("notes.txt", "First sentence here.\nSecond one on line two.\n")
    assert chunks[0].locator == {"kind": "lines", "start": 1, "end": 2}

FAQ_MD = """# Returns FAQ

**Can I return a gift card?**
No. Gift cards cannot be returned or exchanged.

**How long do refunds take?**
Refunds reach your card within 5 business days.

Q: Do you ship to Canada?
A: Yes, for a flat fee of $15.
"""
FAQ_TXT = "Shipping FAQ\n\nQ: Do you ship to Canada?\nA: Yes, for a flat fee of $15.\n\nQ: Can I return a gift card?\nA: No. Gift cards cannot be returned.\n"


@pytest.mark.parametrize(("name", "text"), [("faq.md", FAQ_MD), ("faq.txt", FAQ_TXT)])
def test_an_faq_question_on_its_own_line_heads_its_answer(name, text, tmp_path):
    """A page of FAQ items whose questions are bold lines or "Q:" lines was one chunk, and "Do you ship to Canada?"
    was answered "No. Gift cards cannot be returned or exchanged." (answerability 0.91): the question's words
    counted for the chunk, not for the answer under them. Each question now heads its answer, as a Markdown
    heading does, and a plain-text page's title line labels its questions instead of answering them."""
    chunks = _chunks(name, text)
    canada = next(c for c in chunks if c.label.endswith("Do you ship to Canada?"))
    assert canada.text.startswith("Do you ship to Canada?\nA: Yes, for a flat fee of $15.")
    assert all("Gift cards" not in c.text or c.label.endswith("Can I return a gift card?") for c in chunks)
    if name == "faq.txt":
        assert canada.label == "faq.txt › Shipping FAQ › Do you ship to Canada?"
        assert (canada.locator["kind"], canada.locator["start"]) == ("lines", 4)

    (tmp_path / name).write_text(text, encoding="utf-8")
    from sourcerer.passage_files import load_passages

    passages = load_passages(tmp_path / name)
    answer = ask("Do you ship to Canada?", passages=passages, chat="extractive")
    assert not answer.refused and answer.citations[0].quote.endswith("Yes, for a flat fee of $15."), answer.answer
    assert ask("Can I return a gift card?", passages=passages, chat="extractive").citations[0].quote.startswith(("No.", "A: No."))
    assert ask("Do you ship to Mexico?", passages=passages, chat="extractive").refused



def test_html_main_content_without_scripts_or_navigation():
    html = """<html><head><title>Refunds</title><script>var x = "evil";</script></head><body>
    <nav>Home | Products | Contact</nav><main><h1>Refund policy</h1><p>Refunds take 5 business days.</p></main>
    <footer>Copyright</footer></body></html>"""
    parsed = parse(html.encode(), "refunds.html")
    text = " ".join(p.text for p in parsed.pieces)
    assert parsed.title == "Refunds"
    assert "Refunds take 5 business days." in text
    assert "evil" not in text and "Products" not in text and "Copyright" not in text
    assert parsed.pieces[0].locator["kind"] == "char_span"


def _pdf_bytes(title="Runbook"):
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter)
    if title:
        pdf.setTitle(title)
    pdf.drawString(72, 700, "Page one says hello.")
    pdf.showPage()
    pdf.drawString(100, 500, "The failover cutover took 42 seconds.")
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def test_pdf_pages_and_word_boxes():
    chunks = _chunks("runbook.pdf", _pdf_bytes())
    second = next(c for c in chunks if "42 seconds" in c.text)
    assert second.locator["kind"] == "page" and second.locator["page"] == 2
    x0, y0, x1, y1 = second.locator["box"]
    assert 99 <= x0 <= 101 and 495 <= y0 <= 502 and x1 > x0 + 100 and y1 > y0
    assert second.label == "Runbook p.2"


def test_a_pdf_without_a_real_title_is_labelled_by_its_file_name():
    chunks = _chunks("runbook-2026.pdf", _pdf_bytes(title=None))  # reportlab writes "untitled" when none is set
    assert {c.label.rsplit(" p.", 1)[0] for c in chunks} == {"runbook-2026.pdf"}


def test_webvtt_and_srt_cues_have_time_ranges():
    vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:04.500\nWelcome to the drill.\n\n00:01:00.000 --> 00:01:03.250\n<v Ana>The cutover took 42 seconds.\n"
    srt = "1\n00:00:01,000 --> 00:00:04,500\nWelcome to the drill.\n\n2\n01:00:00,000 --> 01:00:02,000\nBye.\n"
    vtt_chunks = chunk_pieces(
        parse(vtt.encode(), "talk.vtt").pieces, tenant="t", document_id="d", settings=ChunkSettings(max_words=6, overlap_pieces=0)
    )
    assert [c.locator for c in vtt_chunks] == [
        {"kind": "time_range", "t_start_ms": 1000, "t_end_ms": 4500},
        {"kind": "time_range", "t_start_ms": 60000, "t_end_ms": 63250},
    ]
    assert vtt_chunks[1].text == "The cutover took 42 seconds."
    srt_pieces = parse(srt.encode(), "talk.srt").pieces
    assert srt_pieces[1].locator == {"kind": "time_range", "t_start_ms": 3600000, "t_end_ms": 3602000}


def test_json_and_jsonl_records():
    jsonl = "\n".join(json.dumps(r) for r in [{"title": "A", "text": "Alpha text."}, {"id": 7, "body": "Beta text."}, {"n": 1}])
    chunks = _chunks("records.jsonl", jsonl)
    assert [(c.label, c.locator) for c in chunks] == [
        ("records.jsonl › A", {"kind": "lines", "start": 1, "end": 1}),
        ("records.jsonl › 7", {"kind": "lines", "start": 2, "end": 2}),
    ]
    assert _chunks("one.json", json.dumps({"content": "Gamma text."}))[0].text == "Gamma text."


@pytest.mark.parametrize(
    "uri,data,reason",
    [
        ("x.docx", b"PK..", "unsupported file type"),
        ("bad.pdf", b"%PDF-1.4 garbage", "unreadable PDF"),
        ("bad.json", b"{nope", "not valid JSON"),
        ("bad.vtt", b"hello", "WebVTT"),
        ("latin1.txt", "café".encode("latin-1"), "not UTF-8"),
        ("empty.txt", b"   \n", "no text"),
    ],
)
def test_broken_or_unknown_files_say_why(uri, data, reason):
    with pytest.raises(UnsupportedDocument, match=reason):
        _chunks(uri, data)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_text_with_a_byte_order_mark_is_read_in_its_encoding(encoding):
    """Excel's "Unicode Text" export is UTF-16 with a byte-order mark; it was refused as "not UTF-8"."""
    table = "Plan\tPrice\nTeam\t12 €\nCafé\t3 €\n"
    data = table.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no mark: put the one Excel writes
        data = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + data
    chunks = _chunks("plans.tsv", data)
    assert [c.text for c in chunks] == [c.text for c in _chunks("plans.tsv", table.encode())]
    assert "Café" in " ".join(c.text for c in chunks)
    # a wide original is kept as UTF-8, so a citation opens it as the text it quotes (a UTF-8 one keeps its mark:
    # its content hash, and so whether a re-ingest replaces it, stays what it was)
    expected = data if encoding == "utf-8-sig" else table.encode()
    assert Document(source_uri="plans.tsv", content=data).raw_bytes() == expected


def test_bytes_that_only_open_like_a_byte_order_mark_are_still_refused():
    with pytest.raises(UnsupportedDocument, match="not UTF-8"):
        _chunks("noise.txt", codecs.BOM_UTF16_LE + bytes(range(256)))


def test_chunks_are_sentence_windows_with_overlap_and_stable_ids():
    text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(40))
    settings = ChunkSettings(max_words=40, overlap_pieces=1)
    doc = Document(source_uri="long.txt", text=text)
    first = chunk_pieces(parse(text.encode(), "long.txt").pieces, tenant="t", document_id=doc.document_id, settings=settings)
    again = chunk_pieces(parse(text.encode(), "long.txt").pieces, tenant="t", document_id=doc.document_id, settings=settings)
    assert len(first) > 3
    assert all(c.text.endswith(".") for c in first)  # never cut inside a sentence
    assert first[1].text.split(". ")[0] + "." == first[0].text.split(". ")[-1]  # one sentence of overlap
    assert [c.unit_id for c in first] == [c.unit_id for c in again]


def test_ingest_path_reports_every_file(tmp_path):
    from sourcerer.store.sqlite import SQLiteIndex

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha beta gamma.\n")
    (docs / "b.exe").write_bytes(b"\x00\x01")
    (docs / "c.json").write_text("{broken")
    index = SQLiteIndex(tmp_path / "i.db", embedder=None)
    report = index.ingest_path(docs, tenant="acme", scope="acme/alpha")
    outcome = {f.path.split("/")[-1]: (f.status, f.reason) for f in report.files}
    assert outcome["a.md"] == ("ingested", None)
    assert outcome["b.exe"][0] == "skipped" and "unsupported file type" in outcome["b.exe"][1]
    assert outcome["c.json"][0] == "skipped" and "not valid JSON" in outcome["c.json"][1]
    assert report.summary() == "1 ingested, 0 unchanged, 0 replaced, 2 skipped; 1 chunks written"
    again = index.ingest_path(docs, tenant="acme", scope="acme/alpha")
    assert [f.status for f in again.files if f.path.endswith("a.md")] == ["unchanged"]


def test_html_headings_label_the_text_under_them_and_are_never_pieces():
    """As in Markdown: a heading is what the text under it is about, so it labels those chunks and is never a
    sentence an answer could quote ("Pricing FAQ" once ran into the paragraph under it, then stood alone)."""
    from sourcerer.store.base import prepare
    from sourcerer.store.models import Document

    html = "<h1>Pricing FAQ</h1><p>The Pro plan costs 49 dollars a month.</p><h2>Refunds</h2><p>Refunds take 5 days.</p>"
    chunks = prepare(Document(source_uri="faq.html", text=html, tenant="t")).chunks
    assert [(c.label, c.text) for c in chunks] == [
        ("faq.html › Pricing FAQ", "Pricing FAQ\nThe Pro plan costs 49 dollars a month."),
        ("faq.html › Pricing FAQ › Refunds", "Refunds\nRefunds take 5 days."),
    ]
    # the heading opens its chunk (searched) but no sentence holds it (never quoted)
    assert [c.text[c.sentences[0]["start"] :] for c in chunks] == ["The Pro plan costs 49 dollars a month.", "Refunds take 5 days."]


def test_table_rows_are_sentences_read_with_their_header():
    """A row alone ("| Enterprise | $99 | 50 |") says nothing about what its cells are: each row of a Markdown or
    HTML table becomes one sentence naming them, and the header row is no sentence. A row of another width than
    the header, or a table without one, lists its cells; line numbers and character spans still point at the row."""
    markdown = (
        "# Pricing\n\n| Plan | Price per month | Seats |\n|:-----|----:|---|\n| Pro | $49 | 10 |\n"
        "| Enterprise | $99 | |\n| Legacy | $5 | 1 | extra |\n\nAnnual plans get two months free.\n"
    )
    pieces = parse(markdown.encode(), "pricing.md").pieces
    assert [(p.text, p.locator["start"]) for p in pieces] == [
        ("Plan: Pro; Price per month: $49; Seats: 10.", 5),
        ("Plan: Enterprise; Price per month: $99.", 6),
        ("Legacy; $5; 1; extra.", 7),
        ("Annual plans get two months free.", 9),
    ]
    html = (
        "<title>Dosage</title><h1>Paracetamol</h1><table><thead><tr><th>Age</th><th>Maximum per day</th></tr></thead>"
        "<tbody><tr><td>Adults<td>4000 mg<tr><td>Children <b>6 to 12</b></td><td>2000 mg</td></tr></tbody></table>"
        "<table><tr><td>No</td><td>header</td></tr></table>"
    )
    parsed = parse(html.encode(), "dosage.html")
    assert [(p.text, p.section) for p in parsed.pieces] == [
        ("Age: Adults; Maximum per day: 4000 mg.", "Dosage › Paracetamol"),
        ("Age: Children 6 to 12; Maximum per day: 2000 mg.", "Dosage › Paracetamol"),
        ("No; header.", "Dosage › Paracetamol"),
    ]
    in_head = "<table><thead><tr><td>Plan</td><td>Price</td></tr></thead><tr><td>Pro</td><td>$49</td></tr></table>"
    assert [p.text for p in parse(in_head.encode(), "plans.html").pieces] == ["Plan: Pro; Price: $49."]  # <thead> names them
    answer = ask("What is the most paracetamol a child may take in a day?", passages=[{"text": " ".join(p.text for p in parsed.pieces)}], chat="extractive")
    # the rows' order says nothing (the first row is no lead sentence), and the adults' row is no part of the answer
    assert answer.answer == "Age: Children 6 to 12; Maximum per day: 2000 mg. [1]"


def _pdf_with_streams(*streams: bytes, filters: str = "/FlateDecode") -> bytes:
    """A minimal PDF whose page has the given (already compressed) content streams."""
    objects = [b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj", b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj"]
    contents = " ".join(f"{4 + i} 0 R" for i in range(len(streams))).encode()
    objects.append(b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [" + contents + b"] >> endobj")
    for i, data in enumerate(streams):
        head = f"{4 + i} 0 obj << /Length {len(data)} /Filter {filters} >>\nstream\n".encode()
        objects.append(head + data + b"\nendstream endobj")
    return b"%PDF-1.4\n" + b"\n".join(objects) + b"\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def test_a_pdf_compression_bomb_is_refused_before_it_inflates():
    import time
    import zlib

    from sourcerer.errors import PayloadTooLarge
    from sourcerer.store.parsers import parse
    from sourcerer.store.pdf import MAX_DECODED_BYTES, MAX_STREAM_BYTES, check_inflation

    one = _pdf_with_streams(zlib.compress(b" " * (MAX_STREAM_BYTES + 1), 9))  # ~33 KB that would be 32 MiB + 1
    started = time.perf_counter()
    with pytest.raises(PayloadTooLarge, match="one stream would decode to more than 32 MiB"):
        parse(one, "bomb.pdf")
    assert time.perf_counter() - started < 2
    # many streams each under the stream limit, together over the document's
    piece = zlib.compress(b" " * (MAX_STREAM_BYTES - 1), 9)
    many = _pdf_with_streams(*[piece] * (MAX_DECODED_BYTES // MAX_STREAM_BYTES + 1))
    with pytest.raises(PayloadTooLarge, match="the document's streams would decode to more than 128 MiB"):
        check_inflation(many)
    # compressed twice: the inner layer is bounded too
    twice = _pdf_with_streams(zlib.compress(zlib.compress(b" " * (MAX_STREAM_BYTES + 1), 9), 9), filters="[/FlateDecode /FlateDecode]")
    with pytest.raises(PayloadTooLarge):
        check_inflation(twice)
    assert 0 < check_inflation(_pdf_with_streams(zlib.compress(b"BT /F1 12 Tf 72 720 Td (The failover took 42 seconds.) Tj ET")))


def test_pdf_headings_are_labels_not_the_start_of_a_sentence():
    """A heading set larger (or bold) is the chunk's heading path, as in Markdown: the sentence under it starts
    with its own first word, and its box covers its own lines, not the heading and the blank space below it."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setTitle("Benefits guide")
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(72, 780, "Benefits guide 2026")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 740, "Every employee receives 28 days of paid leave a year.")
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(72, 700, "Parental leave")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 330, "Parents receive 20 weeks of paid leave.")
    pdf.drawString(72, 316, "It can be split into two blocks.")
    pdf.showPage()
    pdf.save()
    parsed = parse(buffer.getvalue(), "benefits.pdf")
    texts = [p.text for p in parsed.pieces]
    assert texts[0] == "Every employee receives 28 days of paid leave a year."
    assert texts[1] == "Parents receive 20 weeks of paid leave."
    assert not any("Parental leave" in t or "Benefits guide" in t for t in texts)
    labels = [p.section for p in parsed.pieces]
    assert labels[0] == "Benefits guide p.1 › Benefits guide 2026"
    assert labels[1] == "Benefits guide p.1 › Benefits guide 2026 › Parental leave"
    x0, y0, x1, y1 = parsed.pieces[1].locator["box"]
    assert y1 < 345 and y0 > 325  # the cited line only: not the heading at 700 nor the space between
    chunks = _chunks("benefits.pdf", buffer.getvalue())
    # each chunk opens with the heading over it (searched), and its first sentence is its own (quoted)
    assert [c.text.split("\n")[0] for c in chunks] == ["Benefits guide 2026", "Parental leave"]
    assert all(not c.text[c.sentences[0]["start"] :].startswith(("Benefits guide", "Parental leave")) for c in chunks)


def test_a_csv_file_is_read_row_by_row_under_its_column_names():
    """A spreadsheet export is a table: each row one sentence under the first row's names, located by its lines
    (a quoted cell may span two). A European export's semicolons are read as such; a broken file is refused
    with the line and the reason."""
    plans = 'Plan,Price per month,Seats\nPro,$49,10\n"Enterprise, annual","$99\nbilled yearly",50\n'
    assert [(p.text, p.locator) for p in parse(plans.encode(), "plans.csv").pieces] == [
        ("Plan: Pro; Price per month: $49; Seats: 10.", {"kind": "lines", "start": 2, "end": 2}),
        ("Plan: Enterprise, annual; Price per month: $99 billed yearly; Seats: 50.", {"kind": "lines", "start": 3, "end": 4}),
    ]
    assert [p.text for p in parse("Tarif;Prix\nPro;49 €\n".encode(), "tarifs.csv").pieces] == ["Tarif: Pro; Prix: 49 €."]
    assert [p.text for p in parse(b"Plan\tSeats\nPro\t10\n", "plans.tsv").pieces] == ["Plan: Pro; Seats: 10."]
    with pytest.raises(UnsupportedDocument, match="not readable as CSV"):
        parse(b'a,b\n"' + b"x" * 200_000 + b'",1\n', "huge.csv")
    answer = ask("How many seats does the Pro plan include?", passages=[{"text": p.text} for p in parse(plans.encode(), "plans.csv").pieces], chat="extractive")
    assert answer.answer == "Plan: Pro; Price per month: $49; Seats: 10. [1]"


def test_setext_headings_rules_and_front_matter_are_not_text():
    """Markdown written the older way: an underlined title is a heading (it labels what is under it), a rule
    between paragraphs ("---", "***") is no sentence, and a static site's YAML front matter is metadata. None of
    them reaches a chunk; line numbers still point at the source."""
    md = (
        "---\ntitle: Help\nlayout: page\n---\n\nHelp center\n===========\n\nRefunds\n-------\n\n"
        "Refunds take 5 business days.\n\n---\n\nShipping\n--------\nShipping takes 3 days.\n***\nThe end.\n"
    )
    assert [(p.text, p.section, p.locator["start"]) for p in parse(md.encode(), "help.md").pieces] == [
        ("Refunds take 5 business days.", "help.md › Help center › Refunds", 12),
        ("Shipping takes 3 days.", "help.md › Help center › Shipping", 18),
        ("The end.", "help.md › Help center › Shipping", 20),
    ]


FAQ_HTML = """<html><body><main><h1>Help</h1>
<p><strong>Can I return a gift card?</strong></p><p>No. Gift cards cannot be returned or exchanged.</p>
<p><strong>Do you ship to Canada?</strong></p><p>Yes, for a flat fee of $15.</p>
<dl><dt>Do you ship to Japan?</dt><dd>Yes, by air mail only.</dd><dt>Can I pay by cheque?</dt><dd>No, we accept cards only.</dd></dl>
<details><summary>Do you ship to Brazil?</summary><p>No, not at the moment.</p></details>
</main></body></html>"""


@pytest.mark.parametrize(
    ("question", "quote"),
    [
        ("Do you ship to Canada?", "Yes, for a flat fee of $15."),
        ("Can I return a gift card?", "No. Gift cards cannot be returned or exchanged."),
        ("Do you ship to Japan?", "Yes, by air mail only."),
        ("Can I pay by cheque?", "No, we accept cards only."),
        ("Do you ship to Brazil?", "No, not at the moment."),
        ("Do you ship to Mexico?", None),
    ],
)
def test_an_html_faq_answers_each_question_with_the_answer_under_it(question, quote, tmp_path):
    """Found trying an HTML help page: every question on it, Mexico too, was answered with its first answer ("No.
    Gift cards cannot be returned or exchanged."). A question standing as a paragraph of its own (a bold line, a
    <dt>, a <summary>) now heads the answer under it, and a sentence is ranked as read under its heading: "No, we
    accept cards only." says nothing of cheques until it is read after "Can I pay by cheque?"."""
    from sourcerer.passage_files import load_passages

    (tmp_path / "faq.html").write_text(FAQ_HTML, encoding="utf-8")
    answer = ask(question, passages=load_passages(tmp_path / "faq.html"), chat="extractive")
    if quote is None:
        assert answer.refused, answer.answer
    else:
        assert not answer.refused and [c.quote for c in answer.citations] == [quote], answer.answer
        assert answer.citations[0].label == f"faq.html › Help › {question}"


PLAIN_FAQ = (
    "# Help\n\nCan I return a gift card?\n\nNo. Gift cards cannot be returned or exchanged.\n\n"
    "Do you ship to Canada?\n\nYes, for a flat fee of $15.\n\nCan I pay by cheque?\nNo, we accept cards only.\n"
)
ONE_PASSAGE_FAQ = (
    "Welcome to the help page of our shop. Can I return a gift card? No. Gift cards cannot be returned or exchanged. "
    "Do you ship to Canada? Yes, for a flat fee of $15. Can I pay by cheque? No, we accept cards only."
)


@pytest.mark.parametrize("where", ["plain.md", "plain.txt", "passage"])
def test_an_answer_is_the_sentence_under_the_question_it_answers(where, tmp_path):
    """FAQ questions as plain lines, or a whole FAQ handed in as one passage, stay sentences that state nothing in
    one chunk; a sentence is scored as read under the last question before it, and an answer's second sentence
    comes from under the same question ("Can I return a gift card?" once added "No, we accept cards only."). The
    welcome line before the first question stands under none of them."""
    from sourcerer.passage_files import load_passages

    if where == "passage":
        passages = [{"text": ONE_PASSAGE_FAQ, "source": "Help"}]
    else:
        (tmp_path / where).write_text(PLAIN_FAQ, encoding="utf-8")
        passages = load_passages(tmp_path / where)
    expected = {
        "Do you ship to Canada?": ["Yes, for a flat fee of $15."],
        "Can I pay by cheque?": ["No, we accept cards only."],
        "Can I return a gift card?": ["No. Gift cards cannot be returned or exchanged."],
        "Do you ship to Mexico?": None,
    }
    for question, quotes in expected.items():
        answer = ask(question, passages=passages, chat="extractive")
        assert (None if answer.refused else [c.quote for c in answer.citations]) == quotes, (question, answer.answer)


def test_a_definition_list_is_read_term_by_term():
    """<dl> holds facts as name and value ("Refund window" / "30 days"): each <dd> is one sentence under its <dt>
    (end tags are optional in HTML), while a <dt> that asks a question (an FAQ written as a list) heads the answer
    under it, as a heading does."""
    html = (
        "<dl><dt>Refund window<dd>30 days<dt>Shipping</dt><dd>3 to 5 <b>business</b> days</dd><dd>Free over $50</dd>"
        "<dt>How do I cancel?</dt><dd>Open Settings and click Cancel.</dd></dl><p>After.</p>"
    )
    pieces = parse(html.encode(), "terms.html").pieces
    assert [(p.text, p.heading) for p in pieces] == [
        ("Refund window: 30 days.", ""),
        ("Shipping: 3 to 5 business days.", ""),
        ("Shipping: Free over $50.", ""),
        ("Open Settings and click Cancel.", "How do I cancel?"),
        ("After.", "How do I cancel?"),
    ]
    passages = [{"text": " ".join(p.text for p in pieces)}]
    assert ask("How do I cancel?", passages=passages, chat="extractive").answer == "Open Settings and click Cancel. [1]"


def test_an_answer_from_a_table_quotes_the_row_asked_about_and_no_other():
    """Every row of a table repeats its column names, so another row shares "plan" or "seats" with any question
    about the table: only a row whose cells hold a word of the question joins an answer."""
    md = (
        "# Pricing\n\n| Plan | Price per month | Seats |\n|---|---|---|\n| Starter | $19 | 3 |\n| Pro | $49 | 10 |\n"
        "| Enterprise | $99 | 50 |\n"
    )
    passages = [{"text": " ".join(p.text for p in parse(md.encode(), "pricing.md").pieces), "source": "pricing.md"}]
    for question, row in (
        ("How much is the Pro plan?", "Plan: Pro; Price per month: $49; Seats: 10."),
        ("How many seats does the Enterprise plan include?", "Plan: Enterprise; Price per month: $99; Seats: 50."),
        ("What does the Starter plan cost per month?", "Plan: Starter; Price per month: $19; Seats: 3."),
    ):
        answer = ask(question, passages=passages, chat="extractive")
        assert answer.answer == f"{row} [1]", question


def test_a_row_sentence_is_told_from_prose_by_its_short_names_and_closed_cells():
    """`row_cells` reads back what `row_sentence` writes, and nothing else: it read no sentence of XQuAD,
    NoMIRACL, HaluEval or the FAQ sets (183,692 sentences) as a row."""
    from sourcerer.sentences import row_cells
    from sourcerer.store.tables import row_sentence

    assert row_cells(row_sentence(["Plan", "Price per month", "Seats"], ["Pro", "$49", "10"])) == ["Pro", "$49", "10"]
    assert row_cells(row_sentence(["id", "price"], ["7", "49"])) == ["7", "49"]
    for prose in (
        "The Amazon rainforest (Portuguese: Floresta Amazônica; Spanish: Selva Amazónica) covers most of the basin.",
        "The office is in City Hall; it has jurisdiction over all five boroughs: Manhattan, Brooklyn and Queens.",
        "Note: refunds take 5 days.",
        "Legacy; $5; 1; extra.",
    ):
        assert row_cells(prose) is None, prose


def test_an_faq_export_in_json_reads_each_answer_under_its_question():
    """{"question", "answer"} records, as help-centre tools export them: the answer is the text, the question its
    heading (the chunk's first line, searched, never quoted) and its label; a record's title heads it the same
    way, an id only labels it."""
    from sourcerer.store.base import prepare
    from sourcerer.store.models import Document

    faq = json.dumps(
        [
            {"id": "q1", "question": "Do you ship to Canada?", "answer": "Yes, for a flat fee of $15."},
            {"id": "q2", "text": "Refunds take 5 business days."},
        ]
    )
    chunks = prepare(Document(source_uri="faq.json", text=faq, tenant="t")).chunks
    assert [(c.label, c.text) for c in chunks] == [
        ("faq.json › Do you ship to Canada?", "Do you ship to Canada?\nYes, for a flat fee of $15."),
        ("faq.json › q2", "Refunds take 5 business days."),
    ]
    assert chunks[0].text[chunks[0].sentences[0]["start"] :] == "Yes, for a flat fee of $15."


@pytest.mark.parametrize(
    "uri, data",
    [
        ("steps.jsonl", json.dumps({"text": "To reset your password:\n1. Open Settings.\n2. Click Reset.\n\nThe code expires in 15 minutes."})),
        ("steps.md", "To reset your password:\n\n1. Open Settings.\n2. Click Reset.\n\nThe code expires in 15 minutes.\n"),
        ("steps.html", "<p>To reset your password:</p>\n<ol>\n  <li>Open Settings.</li>\n  <li><p>Click Reset.</p></li>\n</ol>"
         "<p>The code expires in 15 minutes.</p>"),
    ],
)
def test_a_documents_lines_stay_lines_in_its_chunks(uri, data):
    """Numbered steps that end in a stop ran into one paragraph at ingest ("To reset your password: Open Settings.
    Click Reset. The code ..."), so no step could be read under its lead-in. A chunk keeps the line breaks its
    sentences stood apart by (two at most), in Markdown and text, JSON records and HTML, whose list items are
    lines of their own and whose paragraphs stand a blank line apart."""
    text = _chunks(uri, data)[0].text
    assert "To reset your password:\n" in text and "Open Settings.\nClick Reset.\n\nThe code expires in 15 minutes." in text, text
