"""Every refusal reason, each reached the way a user reaches it. A refusal is an Answer, never an exception."""

import json

import pytest
from sourcerer import REFUSAL_REASONS, ask
from sourcerer.synthesis.providers import ChatReply


class ScriptedModel:
    """A chat provider object (the documented `chat=` extension point) that replies with fixed content."""

    name = "test:scripted"

    def __init__(self, content: str) -> None:
        self.content = content
        self.calls = 0

    async def complete(self, messages):
        self.calls += 1
        return ChatReply(content=self.content, usage={"input_tokens": 10, "output_tokens": 5})


def _reply(answer, citations, refused=False):
    return json.dumps({"answer": answer, "citations": citations, "refused": refused})


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_no_question(seed_passages, question):
    assert ask(question, passages=seed_passages).reason == "no_question"


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None])
def test_k_that_is_not_a_positive_integer_is_bad_k(seed_passages, k):
    answer = ask("How long does shipping take?", passages=seed_passages, k=k)
    assert answer.refused and answer.reason == "bad_k"


def test_nothing_to_ground_on_is_no_grounding():
    answer = ask("How long does shipping take?")
    assert answer.refused and answer.reason == "no_grounding"


def test_empty_passage_list_is_not_in_sources():
    assert ask("How long does shipping take?", passages=[]).reason == "not_in_sources"


def test_retriever_that_finds_nothing_is_not_in_sources():
    answer = ask("How long does shipping take?", retriever=lambda q, k: [])
    assert answer.reason == "not_in_sources" and answer.via == "retriever"


def test_weak_best_hit_is_below_threshold(seed_passages):
    answer = ask("How long does standard shipping take?", passages=seed_passages, min_score=0.95)
    assert answer.refused and answer.reason == "below_threshold"
    assert answer.trace.stage("retrieve").detail["best_score"] < 0.95


def test_model_answer_without_inline_marker_is_no_citation(seed_passages):
    model = ScriptedModel(_reply("Standard shipping takes 3 to 5 business days.", [1]))
    answer = ask("How long does standard shipping take?", passages=seed_passages, chat=model)
    assert answer.refused and answer.reason == "no_citation"
    assert answer.provider == "test:scripted"


def test_model_that_declines_is_unsupported(seed_passages):
    model = ScriptedModel(_reply("The sources do not say.", [], refused=True))
    answer = ask("How long does standard shipping take?", passages=seed_passages, chat=model)
    assert answer.refused and answer.reason == "unsupported"


def test_extractive_synthesiser_declines_when_no_sentence_answers(seed_passages):
    # "shipping" matches, so retrieval passes, but nothing says anything about international customs fees
    answer = ask("What customs fees apply to international shipping to Brazil?", passages=seed_passages, min_score=0.0)
    assert answer.refused and answer.reason == "unsupported"
    assert answer.extractive is True


def test_strict_verification_of_a_misquoting_model_is_unfaithful(seed_passages):
    model = ScriptedModel(_reply("Standard shipping takes 3 to 7 business days [1].", [1]))
    answer = ask("How long does standard shipping take?", passages=seed_passages, chat=model, verify="strict", judge="local")
    assert answer.refused and answer.reason == "unfaithful"
    assert answer.faithfulness.faithful is False
    assert answer.faithfulness.unsupported == ["Standard shipping takes 3 to 7 business days."]
    assert answer.trace.draft == "Standard shipping takes 3 to 7 business days [1]."


def test_every_documented_reason_is_covered_here():
    assert set(REFUSAL_REASONS) == {
        "no_question",
        "bad_k",
        "no_grounding",
        "not_in_sources",
        "below_threshold",
        "no_citation",
        "unsupported",
        "unfaithful",
        "off_topic",  # tests/unit/test_reader.py
    }


def test_the_answerability_model_sees_the_rarest_question_term_the_answering_passage_lacks():
    """A near miss names something the chosen passage does not ("the Enterprise plan" over the Pro plan's price):
    the answerability features carry that term's IDF share, and a question the passage covers carries none."""
    from sourcerer.models import Passage
    from sourcerer.synthesis.extractive import ExtractiveSynthesizer

    passages = [
        Passage(text="The Pro plan costs $49 per month per workspace and includes 10 seats.", source="pricing"),
        Passage(text="Enterprise customers can call the emergency line around the clock.", source="support"),
    ]
    synth = ExtractiveSynthesizer(embedder=None)
    near_miss = synth.analyse("What does the Enterprise plan cost?", passages).answer
    covered = synth.analyse("What does the Pro plan cost?", passages).answer
    assert near_miss["best_missing_peak"] > 0.2 and covered["best_missing_peak"] == 0.0
    assert covered["best_context"] == 1.0 > near_miss["best_context"]
