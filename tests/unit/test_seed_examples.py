"""The README's quickstart, exactly as a user runs it: no key, no network, no model server."""

from sourcerer import Answer, ask
from sourcerer.models import receipt_of


def test_answers_with_a_citation_to_the_shipping_policy(seed_passages):
    answer = ask("How long does standard shipping take?", passages=seed_passages)

    assert isinstance(answer, Answer)
    assert answer.refused is False and answer.reason is None
    assert answer.answer.startswith("Standard shipping takes 3 to 5 business days")
    assert answer.answer.endswith("[1]")
    assert [c.label for c in answer.citations] == ["Shipping Policy"]
    citation = answer.citations[0]
    assert citation.index == 1
    assert citation.text == seed_passages[0]["text"]
    assert citation.receipt == receipt_of(seed_passages[0]["text"])
    assert citation.locator.kind == "char_span"
    assert seed_passages[0]["text"][citation.locator.start : citation.locator.end].startswith("Standard shipping")
    start, end = citation.answer_spans[0]
    assert answer.answer[start:end] == "[1]"
    assert answer.provider == "extractive" and answer.extractive is True and answer.via == "passages"


def test_refuses_a_question_the_sources_do_not_touch(seed_passages):
    answer = ask("Do you offer a lifetime warranty?", passages=seed_passages)

    assert answer.refused is True
    assert answer.reason == "not_in_sources"
    assert answer.answer == "I can't answer that from the provided sources — nothing supports it."
    assert answer.citations == []


def test_verification_finds_the_extractive_answer_faithful(seed_passages):
    faithfulness = ask("How long does standard shipping take?", passages=seed_passages, verify=True).faithfulness

    assert faithfulness is not None
    assert faithfulness.faithful is True
    assert faithfulness.unsupported == []
    assert faithfulness.score == 1.0


def test_answer_dumps_to_the_documented_json_shape(seed_passages):
    data = ask("How long does standard shipping take?", passages=seed_passages).model_dump(mode="json")

    assert {"answer", "refused", "reason", "citations", "faithfulness", "via", "provider", "extractive", "trace"} <= set(data)
    assert data["citations"][0]["locator"] == {"kind": "char_span", "start": 0, "end": len(seed_passages[0]["text"])}
    assert data["trace"]["total_ms"] >= 0
    assert [s["stage"] for s in data["trace"]["stages"]] == ["retrieve", "synthesize", "localize", "cite"]
