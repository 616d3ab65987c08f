"""The grounding endpoint path against a loopback server."""

import pytest
from sourcerer import ask
from sourcerer.errors import ProviderError, VerificationUnavailable

QUESTION = "How long does standard shipping take?"


def test_endpoint_answer_maps_onto_citations(server):
    server.script(
        (
            200,
            {
                "text": "Standard shipping takes 3 to 5 business days [1].",
                "citations": [{"index": 1, "source": "Shipping Policy", "text": "Standard shipping takes 3 to 5 business days."}],
                "abstained": False,
            },
        )
    )

    answer = ask(QUESTION, endpoint=server.url + "/ground", history=[{"role": "user", "text": "hi"}])

    assert answer.via == "endpoint" and answer.refused is False
    assert answer.citations[0].label == "Shipping Policy"
    assert answer.citations[0].receipt.startswith("sha256:")
    start, end = answer.citations[0].answer_spans[0]
    assert answer.answer[start:end] == "[1]"
    assert server.requests[0]["body"] == {"question": QUESTION, "history": [{"role": "user", "text": "hi"}]}


def test_endpoint_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("SOURCERER_GROUNDING_URL", server.url)
    server.script((200, {"text": "Nope.", "citations": [], "abstained": True}))
    answer = ask(QUESTION)
    assert answer.refused and answer.reason == "unsupported" and answer.via == "endpoint"


def test_answer_without_citations_is_no_citation(server):
    server.script((200, {"text": "Three to five days.", "citations": [], "abstained": False}))
    assert ask(QUESTION, endpoint=server.url).reason == "no_citation"


@pytest.mark.parametrize("status,body", [(200, "not json"), (200, {"text": 5, "citations": "x"}), (503, {"error": "down"})])
def test_malformed_or_failed_response_is_a_provider_error(server, status, body):
    server.script((status, body))
    with pytest.raises(ProviderError):
        ask(QUESTION, endpoint=server.url)


def test_unreachable_endpoint_is_a_provider_error():
    with pytest.raises(ProviderError, match="unreachable"):
        ask(QUESTION, endpoint="http://127.0.0.1:9/ground")


def test_verify_on_the_endpoint_path_raises_before_any_request(server):
    with pytest.raises(VerificationUnavailable):
        ask(QUESTION, endpoint=server.url, verify=True)
    assert server.requests == []
