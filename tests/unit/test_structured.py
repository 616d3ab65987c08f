"""Citations inside structured output: `ask(schema=...)` and `response_schema` return the caller's shape, each
string with its own enforced markers; a field without a valid citation is refused, verification runs per
field, and the extractive synthesiser fills what the passages state."""

import json

import pytest
from fakes import RETURNS, SHIPPING, chat_completion
from pydantic import BaseModel, Field
from sourcerer import ask
from sourcerer.citations import inline_markers
from sourcerer.errors import InvalidRequest
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.core import Service
from sourcerer.service.schemas import AnswerRequest, DocumentRequest
from sourcerer.service.tenancy import new_key
from sourcerer.store.sqlite import SQLiteIndex
from sourcerer.structured import leaves

WARRANTY = "Appliances carry a two-year warranty against manufacturing defects."
PASSAGES = [
    {"text": SHIPPING, "source": "Shipping Policy"},
    {"text": RETURNS, "source": "Returns Policy"},
    {"text": WARRANTY, "source": "Warranty"},
]


class Policy(BaseModel):
    shipping_time: str = Field(description="how long standard shipping takes")
    return_window: str = Field(description="how long returns are accepted after delivery")
    gift_wrap: str | None = Field(default=None, description="whether gift wrapping is offered")


def test_extractive_fills_each_field_it_can_and_refuses_the_rest():
    answer = ask("Summarise our shipping and returns policy", passages=PASSAGES, schema=Policy)
    data = answer.structured.data
    assert data["shipping_time"].startswith(SHIPPING) and data["return_window"].startswith(RETURNS)
    assert data["gift_wrap"] is None
    fields = {f.path: f for f in answer.structured.fields}
    assert fields["gift_wrap"].refused and fields["gift_wrap"].reason in ("not_in_sources", "below_threshold", "unsupported")
    for f in fields.values():  # a field's markers number its own citations, each one valid
        if not f.refused:
            assert set(inline_markers(f.text)) == {c.index for c in f.citations}
            assert all(f.text[a:b] == f"[{c.index}]" for c in f.citations for a, b in c.answer_spans)
    # the prose form numbers the passages once: two fields, two sources
    assert answer.answer == f"{SHIPPING} [1]\n\n{RETURNS} [2]"
    assert [c.label for c in answer.citations] == ["Shipping Policy", "Returns Policy"]
    assert [s.stage for s in answer.trace.stages] == ["retrieve", "structure"]


def test_an_llm_fills_the_object_in_one_reply_and_each_field_is_enforced(openai):
    data = {
        "shipping_time": "Standard shipping takes 3 to 5 business days [1].",
        "return_window": "Returns are accepted within 30 days [9].",  # out of range: no valid citation
        "gift_wrap": None,  # the sources do not say
    }
    openai.script((200, chat_completion(json.dumps({"refused": False, "citations": [1, 2, 9], "data": data}))))
    answer = ask("Summarise our shipping and returns policy", passages=PASSAGES, schema=Policy.model_json_schema())
    sent = openai.requests[0]["body"]
    assert sent["response_format"] == {"type": "json_object"} and '"shipping_time"' in sent["messages"][-1]["content"]
    fields = {f.path: f for f in answer.structured.fields}
    assert fields["shipping_time"].text == "Standard shipping takes 3 to 5 business days [1]."
    assert fields["shipping_time"].citations[0].quote == SHIPPING
    assert (fields["return_window"].refused, fields["return_window"].reason) == (True, "no_citation")
    assert (fields["gift_wrap"].refused, fields["gift_wrap"].reason) == (True, "unsupported")
    assert answer.structured.data == {"shipping_time": data["shipping_time"], "return_window": None, "gift_wrap": None}
    assert len(openai.requests) == 1  # one reply for the whole object


def test_verification_runs_per_field(openai):
    data = {
        "shipping_time": "Standard shipping takes 3 to 5 business days [1].",
        "return_window": "Returns are accepted within 90 days of delivery [2].",
    }
    for verify in ("strict", "partial"):  # one claim per field: partial keeps nothing of the wrong one either
        openai.script((200, chat_completion(json.dumps({"refused": False, "citations": [1, 2], "data": data}))))
        answer = ask("Summarise the policy", passages=PASSAGES, schema=Policy, verify=verify, judge="local")
        fields = {f.path: f for f in answer.structured.fields}
        assert fields["shipping_time"].faithfulness.faithful is True and not fields["shipping_time"].refused
        assert fields["return_window"].refused and fields["return_window"].reason == "unfaithful"
        assert fields["return_window"].faithfulness.unsupported == ["Returns are accepted within 90 days of delivery."]
        assert "90 days" not in answer.answer


def test_lists_of_strings_and_nested_objects():
    schema = {
        "type": "object",
        "properties": {
            "facts": {"type": "array", "items": {"type": "string"}, "description": "how long standard shipping takes"},
            "returns": {"type": "object", "properties": {"window": {"type": "string", "description": "how long returns are accepted after delivery"}}},
        },
    }
    assert [(leaf.path, leaf.is_list) for leaf in leaves(schema)] == [(["facts"], True), (["returns", "window"], False)]
    answer = ask("Summarise the policy", passages=PASSAGES, schema=schema)
    assert answer.structured.data["facts"][0].startswith(SHIPPING)
    assert answer.structured.data["returns"]["window"].startswith(RETURNS)
    assert [f.path for f in answer.structured.fields] == ["facts[0]", "returns.window"]


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object", "properties": {"price": {"type": "number"}}}, "price: only strings"),
        ({"type": "array", "items": {"type": "string"}}, "must describe an object"),
        ({"type": "object", "properties": {}}, "needs properties"),
        ("not a schema", "pydantic model class or a JSON Schema"),
    ],
)
def test_a_schema_that_cannot_carry_citations_is_refused_clearly(schema, why):
    with pytest.raises(InvalidRequest, match=why):
        ask("Summarise the policy", passages=PASSAGES, schema=schema)


def test_nothing_answerable_refuses_the_whole():
    class Unrelated(BaseModel):
        capital: str = Field(description="the capital of France")

    answer = ask("Geography", passages=PASSAGES, schema=Unrelated)
    assert answer.refused and answer.structured.data == {"capital": None}


API_SCHEMA = {
    "type": "object",
    "properties": {
        "shipping_time": {"type": "string", "description": "how long standard shipping takes"},
        "return_window": {"type": "string", "description": "how long returns are accepted after delivery"},
        "gift_wrap": {"type": "string", "description": "whether gift wrapping is offered"},
    },
}


def test_response_schema_over_the_api(tmp_path):
    from pydantic import ValidationError

    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    service.ledger.create_tenant("acme", "pro")
    key, record = new_key("acme", ["acme"], ["read", "write"], [])
    service.ledger.put_key(record)
    ctx = service.authenticate(f"Bearer {key}")
    for name, text in (("shipping.md", SHIPPING), ("returns.md", RETURNS)):
        service.ingest(ctx, None, DocumentRequest(source_uri=name, text=text))
    request = AnswerRequest.model_validate({"q": "How long do shipping and returns take?", "response_schema": API_SCHEMA})
    body = service.answer(ctx, None, request).model_dump(mode="json")
    structured = body["answer"]["structured"]
    assert structured["data"]["shipping_time"].startswith(SHIPPING)
    field = structured["fields"][0]
    assert set(field["citations"][0]) >= {"unit_id", "source_uri", "locator", "receipt", "quote"}
    assert field["citations"][0]["source_uri"].startswith("shipping.md#L")
    # each field searched on its own: every cited chunk is logged with its document, so an audit can find it again
    logged = service.get_answer(ctx, None, body["answer_id"]).answer
    assert len(logged.citations) == 2 and all(c.document_id and c.position is not None for c in logged.citations)
    assert {h["source_uri"] for h in body["hits"]} >= {"shipping.md", "returns.md"}
    # the API's shape says what can carry a citation, so a number or a deeper object is a validation error (422)
    for wrong in (
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {}}}}}},
        {"type": "object", "properties": {}},
    ):
        with pytest.raises(ValidationError):
            AnswerRequest.model_validate({"q": "x", "response_schema": wrong})
    with pytest.raises(InvalidRequest, match="not streamed"):
        service.answer(ctx, None, request, on_event=lambda e: None)


def test_cli_ask_with_a_schema(capsys):
    from pathlib import Path

    from sourcerer.cli.main import main

    root = Path(__file__).resolve().parents[2] / "examples"
    question = ["ask", "Summarise our shipping and returns policy", "--passages", str(root / "policies.jsonl")]
    assert main([*question, "--schema", str(root / "policy-schema.json"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["structured"]["data"]["shipping_time"].startswith("Standard shipping takes 3 to 5 business days")
    assert printed["structured"]["data"]["gift_wrap"] is None
    assert main([*question, "--schema", str(root / "policy-schema.json")]) == 0
    out = capsys.readouterr().out
    assert "shipping_time: Standard shipping" in out and "gift_wrap: REFUSED" in out
    assert main([*question, "--schema", str(root / "policy-schema.json"), "--stream"]) == 2
    assert "not streamed" in capsys.readouterr().err


def test_a_failing_llm_leaves_the_fields_to_the_extractive_synthesiser(openai):
    openai.script((500, {"error": "overloaded"}))
    answer = ask("Summarise our shipping and returns policy", passages=PASSAGES, schema=Policy)
    assert answer.structured.data["shipping_time"].startswith(SHIPPING) and answer.provider == "extractive"
    assert any("failed, the extractive synthesiser fills the fields" in note for note in answer.trace.notes)
