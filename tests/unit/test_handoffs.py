"""Refusals that hand off: the bundle (question, conversation, closest passages with locators and receipts, reason,
what would answer it) from the library, stored and posted by the service, listed by the API and the CLI."""

import json

import boto3
import pytest
from fakes import RETURNS, SHIPPING, chat_completion, reply
from moto import mock_aws
from sourcerer import ask
from sourcerer.errors import Forbidden, InvalidRequest, NotFound
from sourcerer.handoff import handoff
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.models import receipt_of
from sourcerer.service.core import Service
from sourcerer.service.schemas import AnswerRequest, DocumentRequest
from sourcerer.service.tenancy import new_key
from sourcerer.settings import get_settings
from sourcerer.store.sqlite import SQLiteIndex

PRICING = "The Pro plan costs 49 dollars per seat per month, billed yearly."
PASSAGES = [
    {"text": PRICING, "source": "Pricing"},
    {"text": SHIPPING, "source": "Shipping Policy"},
    {"text": RETURNS, "source": "Returns Policy"},
]


def test_a_refusal_hands_off_the_question_the_closest_passages_and_what_would_answer_it():
    history = [{"role": "user", "text": "Tell me about your plans."}, {"role": "assistant", "text": "We offer Pro."}]
    answer = ask("How much does the Pro plan cost per seat?", passages=PASSAGES[:1], min_score=0.99)
    assert answer.refused and answer.reason == "below_threshold"
    bundle = handoff(answer, "How much does the Pro plan cost per seat?", history)
    assert bundle.reason == "below_threshold" and bundle.message == answer.answer
    assert bundle.conversation == history
    closest = bundle.passages[0]
    assert (closest.rank, closest.label, closest.text, closest.receipt) == (1, "Pricing", PRICING, receipt_of(PRICING))
    assert closest.closest_sentence == PRICING
    assert bundle.needed.startswith("No passage states the answer to “How much does the Pro plan cost per seat?”; the closest, Pricing, says:")


def test_nothing_found_says_a_document_is_needed_and_a_whole_answer_needs_no_handoff():
    refused = ask("Do you ship to Mars?", passages=[{"text": "Zebras are striped.", "source": "Zoo"}])
    assert refused.reason == "not_in_sources"
    assert handoff(refused, "Do you ship to Mars?").needed == "No passage in the sources is about “Do you ship to Mars?”: a document that answers it is needed."
    answered = ask("How long does standard shipping take?", passages=PASSAGES)
    assert not answered.refused and handoff(answered, "How long does standard shipping take?") is None


def test_a_partial_answer_hands_off_its_removed_claims(openai):
    text = "Standard shipping takes 3 to 5 business days [1]. Express shipping takes 1 day [1]."
    openai.script((200, chat_completion(reply(text, [1]))))
    answer = ask("How long does shipping take?", passages=PASSAGES[1:2], verify="partial", judge="local")
    bundle = handoff(answer, "How long does shipping take?")
    assert bundle.reason == "partial" and [v.claim for v in bundle.removed] == ["Express shipping takes 1 day."]
    assert bundle.needed.startswith("The sources do not support: “Express shipping takes 1 day.” (number not in source: 1)")


@pytest.fixture
def service(tmp_path):
    return Service(index=SQLiteIndex(tmp_path / "index.db", embedder=None), ledger=SQLiteLedger(tmp_path / "ledger.db"))


def _key(service, scopes=("acme/alpha",), perms=("read", "write"), groups=(), tenant="acme"):
    if service.ledger.get_tenant(tenant) is None:
        service.ledger.create_tenant(tenant, "pro")
    key, record = new_key(tenant, list(scopes), list(perms), list(groups))
    service.ledger.put_key(record)
    return service.authenticate(f"Bearer {key}")


def test_the_service_stores_posts_and_lists_handoffs_only_where_the_answer_is_visible(service, server, monkeypatch):
    monkeypatch.setenv("SOURCERER_HANDOFF_WEBHOOK", server.url + "/hooks/handoff")
    service.settings = get_settings()  # as the composition root would read them
    server.script((204, ""))
    writer = _key(service, groups=("sales",))
    service.ingest(writer, "acme/alpha", DocumentRequest(source_uri="pricing.md", text=PRICING, acl=["sales"]))
    request = AnswerRequest(q="How much does the Enterprise plan cost?", handoff=True, min_score=0.99)
    response = service.answer(writer, None, request).model_dump(mode="json")
    assert response["answer"]["refused"] is True
    bundle = response["handoff"]
    assert bundle["question"] == request.q and bundle["passages"][0]["source_uri"] == "pricing.md"
    assert bundle["passages"][0]["locator"]["kind"] == "lines" and bundle["passages"][0]["unit_id"]
    posted = server.requests[-1]
    assert posted["path"] == "/hooks/handoff" and posted["body"]["answer_id"] == response["answer_id"]
    assert "groups" not in posted["body"]  # the asker's ACL groups stay inside
    stored = service.get_handoff(writer, None, response["answer_id"]).model_dump(mode="json")["handoff"]
    assert stored["delivered"] == ["webhook"] and stored["bundle"] == bundle

    admin = _key(service, scopes=("acme",), perms=("admin",))
    assert [h.answer_id for h in service.handoffs(admin, None, since=0).handoffs] == [response["answer_id"]]
    with pytest.raises(Forbidden):
        service.handoffs(writer, None, since=0)  # listing is for admins
    for outsider in (
        _key(service),  # same scope, without the asker's ACL group
        _key(service, scopes=("acme/beta",), groups=("sales",)),  # another scope
        _key(service, scopes=("globex",), groups=("sales",), tenant="globex"),  # another tenant
    ):
        with pytest.raises(NotFound):
            service.get_handoff(outsider, None, response["answer_id"])
    other_admin = _key(service, scopes=("globex",), perms=("admin",), tenant="globex")
    assert service.handoffs(other_admin, None, since=0).handoffs == []

    answered = service.answer(writer, None, AnswerRequest(q="How much does the Pro plan cost?", handoff=True, top_k=1))
    assert answered.answer.refused is False and answered.handoff is None  # answered whole: nothing to hand off


def test_a_failed_webhook_is_a_note_never_a_failed_answer(service, server, monkeypatch):
    monkeypatch.setenv("SOURCERER_HANDOFF_WEBHOOK", server.url + "/hooks/handoff")
    service.settings = get_settings()  # as the composition root would read them
    server.script((500, {"error": "down"}))
    ctx = _key(service)
    response = service.answer(ctx, None, AnswerRequest(q="Is there a company car policy?", handoff=True))
    assert response.answer.refused and response.handoff is not None
    assert "hand-off not delivered to the webhook: HTTPStatusError" in response.trace.notes
    assert service.get_handoff(ctx, None, response.answer_id).handoff.delivered == []


def test_handoffs_go_to_the_sqs_queue_on_aws(service, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        sqs = boto3.client("sqs")
        url = sqs.create_queue(QueueName="handoffs")["QueueUrl"]
        monkeypatch.setenv("SOURCERER_HANDOFF_QUEUE", url)
        service.settings = get_settings()
        ctx = _key(service)
        response = service.answer(ctx, None, AnswerRequest(q="Is there a company car policy?", handoff=True))
        messages = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
        body = json.loads(messages[0]["Body"])
        assert body["answer_id"] == response.answer_id and body["bundle"]["question"] == "Is there a company car policy?"
        assert messages[0]["MessageAttributes"]["tenant"]["StringValue"] == "acme"
        assert service.get_handoff(ctx, None, response.answer_id).handoff.delivered == ["queue"]


def test_hash_only_tenants_cannot_ask_for_a_handoff(service):
    _key(service)
    service.ledger.update_tenant_settings("acme", {"store_text": False})
    ctx = _key(service)
    with pytest.raises(InvalidRequest, match="store_text"):
        service.answer(ctx, None, AnswerRequest(q="Is there a company car policy?", handoff=True))


def test_cli_lists_handoffs(service, capsys, monkeypatch, tmp_path):
    from sourcerer.cli.main import main

    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))  # the CLI opens the ledger in SOURCERER_HOME
    ctx = _key(service)
    service.answer(ctx, None, AnswerRequest(q="Is there a company car policy?", handoff=True))
    assert main(["handoffs", "list", "--tenant", "acme", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [h["bundle"]["question"] for h in listed] == ["Is there a company car policy?"]
    assert main(["handoffs", "list"]) == 0
    out = capsys.readouterr().out
    assert "Is there a company car policy?" in out and "needed: No passage in the sources" in out and "1 hand-offs" in out


def test_a_handoff_that_cannot_be_stored_never_fails_the_answer(service, monkeypatch):
    ctx = _key(service)

    def broken(record):
        raise OSError("disk full")

    monkeypatch.setattr(service.ledger, "put_handoff", broken)
    response = service.answer(ctx, None, AnswerRequest(q="Is there a company car policy?", handoff=True))
    assert response.answer.refused and response.handoff is None
    assert "hand-off not stored: OSError" in response.trace.notes
