"""Small inputs must never buy unbounded work: every parser and splitter is linear (or bounded) in its input,
chunks have a hard maximum size, and so do search responses. Each shape below took from 29 s to hours before.

The time bounds are generous (a slow CI core), far below what the quadratic and cubic versions needed.
"""

from __future__ import annotations

import json
import time

import pytest
from sourcerer.errors import UnsupportedDocument
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.sentences import sentence_spans
from sourcerer.service.core import Service
from sourcerer.service.schemas import DocumentRequest, SearchRequest
from sourcerer.service.tenancy import new_key
from sourcerer.store.base import prepare
from sourcerer.store.chunking import MAX_DOCUMENT_CHUNKS, MAX_PIECE_CHARS
from sourcerer.store.models import Document
from sourcerer.store.sqlite import SQLiteIndex

SHAPES = {
    "a Markdown heading with 20,000 spaces inside": ("a.md", "# a" + " " * 20_000 + "b\n\nThe body.\n"),
    "Markdown emphasis openers that never close": ("a.md", "*a " * 30_000),
    "Markdown link openers that never close": ("a.md", "[" * 200_000),
    "Markdown link targets that never close": ("a.md", "[a](" * 50_000),
    "lines of blanks in Markdown": ("a.md", "  \n" * 200_000 + "x"),
    "16,000 sentences": ("a.txt", " ".join(f"Sentence number {i} ends here." for i in range(16_000))),
    "16,000 sentences on their own lines": ("a.txt", "\n".join(f"Sentence number {i} ends here." for i in range(16_000))),
    "a run of 200,000 full stops": ("a.txt", "." * 200_000),
    "2 MB without sentence punctuation": ("a.txt", "word " * 400_000),
    "1 MB without a space": ("a.txt", "x" * 1_000_000),
    "a WebVTT line of 100,000 digits": ("a.vtt", "WEBVTT\n\n" + "1" * 100_000 + " --> x\n"),
    "100,000 unclosed HTML tags": ("a.html", "<" * 100_000),
    "a heading line of 50,000 hashes": ("a.txt", "# " * 50_000 + "x\nThe body."),
    "100,000 list markers on one line": ("a.txt", "- " * 100_000 + "x"),
    "100,000 list items": ("a.txt", "\n".join(f"{i % 1000}. item {i}" for i in range(100_000))),
    "100,000 Markdown headings": ("a.txt", "\n".join(f"## Heading {i}" for i in range(100_000))),
    "a Markdown table of 50,000 rows": ("a.md", "| a | b |\n|---|---|\n" + "| x | y |\n" * 50_000),
    "a table rule of 100,000 cells": ("a.md", "| a |\n" + "|---" * 100_000 + "\n| x |\n"),
    "100,000 pipes on one line": ("a.md", "|" * 100_000 + "\n|---|\n"),
    "100,000 unclosed HTML table cells": ("a.html", "<table><tr>" + "<td>x" * 100_000),
    "10,000 nested HTML tables": ("a.html", "<table><tr><td>" * 10_000 + "x"),
    "100,000 HTML headings": ("a.html", "<h2>x</h2>" * 100_000),
    "200,000 short lines": ("a.txt", "Title\n" * 200_000),
    "a 1 MB line then short lines": ("a.txt", "x " * 500_000 + "\nA\nB\nC"),
    "a CSV of 100,000 rows": ("a.csv", "a,b,c\n" + "1,2,3\n" * 100_000),
    "a CSV row of 100,000 cells": ("a.csv", "a\n" + "x," * 100_000 + "\n"),
    "a CSV quote that never closes": ("a.csv", 'a,b\n"' + "x " * 50_000),
    "200,000 Setext underlines": ("a.md", "Title\n===\n" * 100_000),
    "front matter that never closes": ("a.md", "---\n" + "key: value\n" * 100_000),
    "a rule of 100,000 stars": ("a.md", "* " * 100_000 + "\ntext"),
    "100,000 unclosed definition terms": ("a.html", "<dl>" + "<dt>term<dd>value" * 100_000),
}


@pytest.mark.parametrize("name", SHAPES)
def test_each_pathological_shape_parses_in_bounded_time_into_bounded_chunks(name):
    uri, text = SHAPES[name]
    started = time.perf_counter()
    try:
        chunks = prepare(Document(source_uri=uri, text=text, tenant="t")).chunks
    except UnsupportedDocument as exc:  # refused with a reason is a fine outcome; hanging is not
        chunks = []
        assert str(exc)
    assert time.perf_counter() - started < 8.0, name
    assert all(len(c.text) <= 2 * MAX_PIECE_CHARS for c in chunks)


def test_sentence_splitting_grows_linearly():
    def seconds(n):
        text = " ".join(f"Sentence number {i} ends here." for i in range(n))
        started = time.perf_counter()
        assert len(sentence_spans(text)) == n
        return time.perf_counter() - started

    seconds(1000)  # warm up
    small, large = seconds(4_000), seconds(32_000)
    assert large < 8 * small * 3 + 0.05  # 8x the text in well under 3x linear time (quadratic would be 64x)


@pytest.mark.parametrize("shape", ["[" * 5000 + "]" * 5000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_deeply_nested_json_is_refused_with_a_reason(shape):
    for uri, content in (("deep.json", shape), ("deep.jsonl", shape + "\n")):
        with pytest.raises(UnsupportedDocument, match="nested too deeply"):
            prepare(Document(source_uri=uri, text=content, tenant="t"))


def test_a_document_of_too_many_chunks_is_refused_before_anything_is_written(tmp_path):
    index = SQLiteIndex(tmp_path / "i.db", embedder=None)
    huge = "".join(f"Paragraph {i} is here.\n\n# Section {i}\n\n" for i in range(MAX_DOCUMENT_CHUNKS + 1))
    with pytest.raises(UnsupportedDocument, match="too large"):
        index.ingest_document({"source_uri": "huge.md", "text": huge})
    assert index.stats()["chunks"] == 0


def test_search_responses_stay_far_under_lambdas_6_mb_with_the_largest_documents(tmp_path):
    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    service.ledger.create_tenant("acme", "enterprise")
    key, record = new_key("acme", ["acme"], ["read", "write"])
    service.ledger.put_key(record)
    ctx = service.authenticate(f"Bearer {key}")
    blob = "ünïcödé 日本語 failover " * 30_000  # ~1 MB of text without a full stop: hundreds of maximal chunks
    for name in ("a.txt", "b.txt"):
        service.ingest(ctx, None, DocumentRequest(source_uri=name, text=blob)).model_dump(mode="json")
    found = service.search(ctx, None, SearchRequest(q="failover", top_k=100, mode="keyword")).model_dump(mode="json")
    assert len(found["hits"]) == 100
    assert len(json.dumps(found).encode()) < 2_000_000


def test_a_folder_ingest_skips_links_that_leave_the_folder_and_says_why(tmp_path):
    outside = tmp_path / "private.txt"
    outside.write_text("The root password is hunter2.")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.txt").write_text("The guide explains failover.")
    (folder / "inside.txt").symlink_to(folder / "guide.txt")
    (folder / "escape.txt").symlink_to(outside)
    index = SQLiteIndex(tmp_path / "i.db", embedder=None)
    report = index.ingest_path(folder, tenant="t")
    status = {f.path.rsplit("/", 1)[-1]: (f.status, f.reason) for f in report.files}
    assert status["escape.txt"] == ("skipped", "a link to a file outside the folder being ingested")
    assert status["inside.txt"][0] == "ingested" and status["guide.txt"][0] == "ingested"
    assert list(index.search("root password", tenant="t", mode="keyword")) == []


def test_a_question_longer_than_the_api_takes_is_refused_by_the_library_too():
    from sourcerer import ask
    from sourcerer.errors import InvalidRequest
    from sourcerer.models import MAX_QUESTION_CHARS
    from sourcerer.service.schemas import AnswerRequest

    passages = [{"text": "Refunds are issued within 5 business days.", "source": "Returns"}]
    # 140,000 characters of "refund " took 22 s to answer through the library, and the API refuses them at once
    with pytest.raises(InvalidRequest, match="140,000 characters long: at most 4,000"):
        ask("refund " * 20_000, passages=passages)
    assert AnswerRequest.model_json_schema()["properties"]["q"]["maxLength"] == MAX_QUESTION_CHARS == 4000
    started = time.perf_counter()
    assert not ask(("How long do refunds take? " * 200)[:MAX_QUESTION_CHARS], passages=passages).refused  # at the bound: answered
    assert time.perf_counter() - started < 10


def test_a_long_conversation_is_read_by_its_last_turns_and_a_huge_turn_is_refused():
    from sourcerer import ask
    from sourcerer.errors import InvalidRequest
    from sourcerer.models import MAX_HISTORY_TURNS, MAX_TURN_CHARS
    from sourcerer.service.schemas import AnswerRequest

    passages = [
        {"text": "Refunds are issued within 5 business days.", "source": "Returns"},
        {"text": "Standard shipping takes 3 to 5 business days.", "source": "Shipping"},
    ]
    # each user turn was read in turn, recursively: 1,000 turns raised RecursionError out of ask()
    turns = [{"role": ("user", "assistant")[i % 2], "text": "How long does standard shipping take?"} for i in range(1000)]
    answer = ask("And refunds?", passages=passages, history=turns)
    assert answer.answer.startswith("Refunds are issued within 5 business days."), answer.answer
    with pytest.raises(InvalidRequest, match="1,000,000 characters long: at most 20,000"):
        ask("And refunds?", passages=passages, history=[{"role": "user", "text": "x" * 1_000_000}])
    schema = AnswerRequest.model_json_schema()
    assert schema["properties"]["history"]["maxItems"] == MAX_HISTORY_TURNS == 50
    assert schema["$defs"]["Turn"]["properties"]["text"]["maxLength"] == MAX_TURN_CHARS == 20_000
