"""Streamed answers: `astream()` events under the rules of a whole answer — a marker is shown only when it is
valid, strict and partial verification show a claim only after its verdict, and the last event is the answer
`ask()` gives for the same request. LLM providers stream through fakes that speak their wire formats (OpenAI
server-sent events, Bedrock ConverseStream's AWS event stream)."""

import asyncio
import json

import boto3
import pytest
from fakes import (
    EVENT_STREAM,
    RETURNS,
    SHIPPING,
    SSE,
    chat_completion,
    chat_completion_stream,
    converse_stream,
    streamed_reply,
)
from sourcerer import ask, astream
from sourcerer.citations import inline_markers
from sourcerer.streaming import pieces
from sourcerer.synthesis.providers import BedrockChat

PASSAGES = [{"text": SHIPPING, "source": "Shipping Policy"}, {"text": RETURNS, "source": "Returns Policy"}]
QUESTION = "How long does shipping take, and what about returns?"
TWO = "Standard shipping takes 3 to 5 business days [1]. Returns are accepted within 30 days of delivery [2]."


def events_of(question, **kwargs):
    async def collect():
        return [event async for event in astream(question, **kwargs)]

    return asyncio.run(collect())


def same_answer(streamed, whole):
    """The final answer of a stream against `ask()`'s: equal but for the timings (and the stream's own stage)."""
    drop = {"trace"}
    assert streamed.model_dump(exclude=drop) == whole.model_dump(exclude=drop)
    assert [s.stage for s in streamed.trace.stages if s.stage != "stream"] == [s.stage for s in whole.trace.stages]


def check_rules(events):
    """What every stream must hold: deltas concatenate to the final text (after the last reset), every marker
    shown was announced first as a valid citation of the final answer, and `done` comes last, once."""
    assert [e["event"] for e in events].count("done") == 1 and events[-1]["event"] == "done"
    answer = events[-1]["answer"]
    final_citations = {c.index for c in answer.citations}
    last_reset = max((i for i, e in enumerate(events) if e["event"] == "reset"), default=-1)
    announced: set[int] = set()
    for event in events:
        if event["event"] == "reset":
            announced.clear()
        if event["event"] == "citation":
            announced.add(event["citation"].index)
        if event["event"] == "delta":
            for number in inline_markers(event["text"]):
                assert number in announced, f"marker [{number}] shown before its citation"
                assert number in final_citations or any(e["event"] == "reset" for e in events), f"invalid [{number}] shown"
    shown = "".join(e["text"] for e in events[last_reset + 1 :] if e["event"] == "delta")
    assert shown == answer.answer
    return answer


def test_an_extractive_answer_streams_retrieve_citation_text_done_and_ends_as_ask_does():
    events = events_of("How long does standard shipping take?", passages=PASSAGES, verify=True)
    assert [e["event"] for e in events] == ["retrieve", "verdict", "citation", "delta", "done"]
    assert [h.source for h in events[0]["hits"]][0] == "Shipping Policy"
    answer = check_rules(events)
    same_answer(answer, ask("How long does standard shipping take?", passages=PASSAGES, verify=True))
    stream_stage = answer.trace.stage("stream")
    assert stream_stage.detail["first_citation_ms"] is not None


def test_a_refusal_streams_its_message_and_done():
    events = events_of("Do you offer a lifetime warranty?", passages=PASSAGES)
    assert [e["event"] for e in events] == ["retrieve", "delta", "done"]
    assert events[-1]["answer"].refused and events[1]["text"] == events[-1]["answer"].answer
    assert [e["event"] for e in events_of("  ", passages=PASSAGES)] == ["delta", "done"]


def test_an_llm_answer_is_shown_sentence_by_sentence_while_the_model_writes(openai):
    openai.script((200, chat_completion_stream(streamed_reply(TWO, [1, 2])), SSE))
    events = events_of(QUESTION, passages=PASSAGES)
    kinds = [e["event"] for e in events]
    assert kinds == ["retrieve", "citation", "delta", "citation", "delta", "done"]
    assert [e["text"] for e in events if e["event"] == "delta"] == [
        "Standard shipping takes 3 to 5 business days [1].",
        " Returns are accepted within 30 days of delivery [2].",
    ]
    answer = check_rules(events)
    assert answer.trace.stage("synthesize").detail["streamed"] is True
    assert answer.trace.stage("synthesize").units == {"input_tokens": 120.0, "output_tokens": 30.0}
    assert openai.requests[-1]["body"]["stream"] is True
    # the same request, not streamed, gives the same answer
    openai.script((200, chat_completion(streamed_reply(TWO, [1, 2]))))
    same_answer(answer, ask(QUESTION, passages=PASSAGES))


def test_the_first_sentence_is_shown_before_the_model_has_finished(openai):
    openai.chunk_delay_s = 0.02
    openai.script((200, chat_completion_stream(streamed_reply(TWO + " " + TWO, [1, 2]), piece=5), SSE))

    async def first_delta_then_rest():
        stream = astream(QUESTION, passages=PASSAGES)
        async for event in stream:
            if event["event"] == "delta":
                requests_done = len(openai.requests)
                return event, requests_done, [e async for e in stream]
        raise AssertionError("no delta")

    first, _, rest = asyncio.run(first_delta_then_rest())
    answer = rest[-1]["answer"]
    stage = answer.trace.stage("stream").detail
    # ~60 chunks 20 ms apart: the first cited sentence came well before the reply ended
    assert stage["first_citation_ms"] < answer.trace.stage("synthesize").ms / 2
    assert first["text"].startswith("Standard shipping")


def test_invalid_markers_are_never_shown(openai):
    text = "Standard shipping takes 3 to 5 business days [1][7]. Returns are accepted within 30 days of delivery [2]."
    openai.script((200, chat_completion_stream(streamed_reply(text, [1]), piece=4), SSE))
    events = events_of(QUESTION, passages=PASSAGES)
    shown = "".join(e["text"] for e in events if e["event"] == "delta")
    assert "[7]" not in shown and "[2]" not in shown  # out of range, and not listed
    assert check_rules(events).answer == shown


def test_a_reply_that_lists_its_citations_last_is_shown_only_when_complete(openai):
    openai.script((200, chat_completion_stream(json.dumps({"answer": TWO, "citations": [1, 2], "refused": False})), SSE))
    events = events_of(QUESTION, passages=PASSAGES)
    answer = check_rules(events)
    assert answer.answer == TWO
    # nothing was shown while the model wrote: the first byte of text came with the final answer
    first_delta = next(i for i, e in enumerate(events) if e["event"] == "delta")
    assert all(e["event"] in ("retrieve",) for e in events[:first_delta - 1])


def test_a_model_that_refuses_shows_no_draft(openai):
    content = json.dumps({"refused": True, "citations": [], "answer": "The sources do not say. Shipping takes 2 days [1]."})
    openai.script((200, chat_completion_stream(content), SSE))
    events = events_of(QUESTION, passages=PASSAGES)
    assert events[-1]["answer"].reason == "unsupported"
    assert [e["text"] for e in events if e["event"] == "delta"] == [events[-1]["answer"].answer]


def test_strict_and_partial_show_each_claim_only_after_its_verdict(openai):
    mixed = "Standard shipping takes 3 to 5 business days [1]. Returns are accepted within 45 days [2]."
    for verify in ("strict", "partial"):
        # nothing is shown before the verdicts, so the reply is asked for whole
        openai.script((200, chat_completion(streamed_reply(mixed, [1, 2]))))
        events = events_of(QUESTION, passages=PASSAGES, verify=verify, judge="local")
        kinds = [e["event"] for e in events]
        assert kinds.index("verdict") < kinds.index("delta")  # nothing judged is shown before its verdict
        answer = check_rules(events)
        shown = "".join(e["text"] for e in events if e["event"] == "delta")
        assert "within 45 days" not in shown  # the rejected claim never reaches the client
        if verify == "partial":
            assert "[removed: number not in source: 45]" in shown and not answer.refused
        else:
            assert answer.reason == "unfaithful"


def test_a_stream_that_breaks_is_asked_again_whole_and_reset_only_if_it_differs(openai):
    openai.script((500, {"error": "overloaded"}), (200, chat_completion(streamed_reply(TWO, [1, 2]))))
    events = events_of(QUESTION, passages=PASSAGES)
    answer = check_rules(events)
    assert answer.answer == TWO and "reset" not in [e["event"] for e in events]
    assert [r["body"].get("stream") for r in openai.requests] == [True, None]


def test_bedrock_converse_stream(server):
    content = streamed_reply(TWO, [1, 2])
    server.script((200, converse_stream(content), EVENT_STREAM))
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=server.url,
        aws_access_key_id="x",
        aws_secret_access_key="y",
    )
    chat = BedrockChat(model="anthropic.claude-test", client=client)
    events = events_of(QUESTION, passages=PASSAGES, chat=chat)
    assert server.requests[-1]["path"] == "/model/anthropic.claude-test/converse-stream"
    answer = check_rules(events)
    assert [e["event"] for e in events].count("delta") == 2 and answer.answer == TWO
    assert answer.provider == "bedrock:anthropic.claude-test"
    assert answer.trace.stage("synthesize").units == {"input_tokens": 210.0, "output_tokens": 25.0}


def test_pieces_concatenate_to_the_text():
    for text in (TWO, "One. [1] Two [2]. Three", "", "No full stop [1]", "中文句子。[1]第二句。"):
        assert "".join(pieces(text)) == text


def test_a_consumer_that_stops_early_stops_the_work():
    async def first_only():
        async for event in astream("How long does standard shipping take?", passages=PASSAGES):
            return event["event"]

    assert asyncio.run(first_only()) == "retrieve"


def test_configuration_errors_raise_from_the_stream():
    from sourcerer.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        events_of("How long?", passages=PASSAGES, verify="sometimes")
