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


def test_endpoint_markers_are_enforced_like_every_other_path(server):
    server.script(
        (
            200,
            {
                "text": "Standard shipping takes 3 to 5 business days [1]. Express is next-day [3].",
                "citations": [
                    {"index": 1, "source": "Shipping Policy", "text": "Standard shipping takes 3 to 5 business days."},
                    {"index": 2, "source": "Returns Policy", "text": "Returns are accepted within 30 days."},
                ],
                "abstained": False,
            },
        )
    )
    answer = ask(QUESTION, endpoint=server.url + "/ground")
    assert answer.answer == "Standard shipping takes 3 to 5 business days [1]. Express is next-day."  # [3] names nothing
    assert [c.index for c in answer.citations] == [1]  # [2] was never marked in the text
    start, end = answer.citations[0].answer_spans[0]
    assert answer.answer[start:end] == "[1]" and answer.groundedness == 0.5
    server.script((200, {"text": "Shipping is fast [4].", "citations": [{"index": 1, "text": "x"}], "abstained": False}))
    refused = ask(QUESTION, endpoint=server.url + "/ground")
    assert refused.refused and refused.reason == "no_citation"


def test_a_failed_provider_is_named_in_the_answer_of_the_one_after_it(server, monkeypatch):
    from fakes import chat_completion, reply
    from sourcerer.synthesis.providers import OpenAIChat

    server.script((500, {"error": "down"}), (500, {"error": "down"}), (200, chat_completion(reply("3 to 5 days [1].", [1]))))
    first = OpenAIChat(model="first", endpoint=server.url + "/v1/chat/completions", api_key="k")
    second = OpenAIChat(model="second", endpoint=server.url + "/v1/chat/completions", api_key="k")
    answer = ask(
        QUESTION, passages=[{"text": "Standard shipping takes 3 to 5 business days.", "source": "Shipping"}], chat=[first, second]
    )
    assert (
        answer.provider == "openai:second (fallback)" and answer.trace.stage("synthesize").detail["provider"] == answer.provider
    )
