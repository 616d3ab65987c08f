"""The synthesis chain: LLM providers in order, each within the LLM deadline, then the extractive synthesiser —
and, for a streamed answer, a provider that streams shows its reply while it writes (`sourcerer.streaming`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sourcerer.errors import ConfigurationError, MalformedReply, ProviderError
from sourcerer.models import Passage
from sourcerer.reading import Reader, confirming_reader, load_reader, relevance_bar, under_heading
from sourcerer.retrieval.embedders import local_embedder
from sourcerer.settings import Settings, get_settings
from sourcerer.streaming import DraftGate
from sourcerer.synthesis.answerability import load_answer_models
from sourcerer.synthesis.draft import Draft, read_draft
from sourcerer.synthesis.extractive import (
    Analysis,
    ExtractiveSettings,
    ExtractiveSynthesizer,
    as_read,
    settled_relevance,
    split_quoted,
)
from sourcerer.synthesis.prompt import build_messages
from sourcerer.synthesis.providers import (
    ChatProvider,
    StreamingChatProvider,
    ask_for_json,
    chat_chain_from_env,
    json_object,
    make_provider,
)
from sourcerer.synthesis.scope import CONTACT_VALUES, asked_value, heading_over, holds_asked_number, holds_value
from sourcerer.verify import Claim, RelevanceReading, claim_quotes, reader_relevance


def resolve_chain(chat: Any, settings: Settings) -> tuple[list[ChatProvider], bool]:
    """(LLM providers to try in order, whether the extractive synthesiser answers last)."""
    extractive_last = settings.extractive_fallback
    if chat is None:
        providers, extractive = chat_chain_from_env()
        return providers, extractive and extractive_last
    if chat == "extractive":
        return [], True
    if isinstance(chat, str):
        return [make_provider(chat)], extractive_last
    if isinstance(chat, (list, tuple)):
        return [make_provider(c) if isinstance(c, str) else c for c in chat], extractive_last
    if isinstance(chat, ChatProvider):
        return [chat], extractive_last
    raise ConfigurationError(f"chat must be None, 'extractive', a provider name or a provider object, not {chat!r}")


async def _synthesize_llm(provider: ChatProvider, messages: list[dict]) -> Draft:
    """One provider: transient errors retried inside `with_retries`; a malformed reply is retried once."""
    draft, usage, attempts = await ask_for_json(provider, messages, lambda data: read_draft(data, provider.name))
    draft.usage = usage
    draft.detail["attempts"] = attempts
    return draft


async def _synthesize_streaming(provider: StreamingChatProvider, messages: list[dict], gate: DraftGate) -> Draft:
    """One provider, streamed: the gate shows the reply's finished sentences while the model writes. A stream that
    fails or ends unreadable is asked again as a whole reply (with its retries); the stream then shows the final
    text after a reset if it differs from what was shown."""
    raw, usage = "", {}
    try:
        async for delta in provider.stream(messages):
            raw += delta.text
            for key, value in delta.usage.items():
                usage[key] = usage.get(key, 0.0) + value
            gate.feed(raw)
        draft = read_draft(json_object(raw), provider.name)
    except (ProviderError, MalformedReply):
        return await _synthesize_llm(provider, messages)
    draft.usage = usage
    draft.detail.update({"attempts": 1, "streamed": True})
    return draft


def extractive_synthesizer(settings: Settings) -> ExtractiveSynthesizer:
    """The extractive synthesiser as `ask()` runs it: the bundled models; the reader deciding when it is on, and
    picking the answering sentence wherever it can run (unless it is off)."""
    chosen = ExtractiveSettings(
        min_answerability=settings.min_answerability,
        read=settings.reader_sentences,
        pick_from=settings.reader_pick,
        veto=settings.reader_veto,
    )
    return ExtractiveSynthesizer(local_embedder(), chosen, reader=load_reader(), picker=confirming_reader())


def relevance_reading(
    question: str,
    passages: Sequence[Passage],
    claims: Sequence[Claim],
    settings: Settings,
    reader: Reader | None,
    analysis: Analysis | None = None,
) -> RelevanceReading | None:
    """Whether `claims` (an answer's, or the ones a partial answer keeps) answer `question`, for strict
    verification. The sentences they quote are set against the best one they do not quote, as synthesis ranks
    them (an extractive answer hands over the `analysis` synthesis ran): the answer must not fall far behind it.

    With the reader (wherever it can run, by default too: the pipeline passes `confirming_reader()`), the reader
    reads an LLM's claims and that one rival (one is enough: a second refused no more on the relevance benchmark
    and costs another read), and an extractive answer's sentences as synthesis read them, against none. Without
    it, the sentence model's own probabilities for the quoted sentences and the rival decide, at the operating
    points fitted for its feature set; None where none are fitted or no claim quotes a sentence."""
    if not claims:
        return None
    extractive = analysis is not None and analysis.question == question  # synthesis handed over its ranking
    if not extractive:
        analysis = extractive_synthesizer(settings).analyse(question, passages)
    given, unused = split_quoted(analysis, claim_quotes(claims, passages))
    point = load_answer_models()[analysis.feature_set].relevance
    settled = settled_relevance(question, given, unused)  # decided without reading, against no rival
    if settled is not None:
        bar = relevance_bar(reader) if reader is not None else point.get("bar")
        return None if bar is None else RelevanceReading(relevance=settled, rival=None, bar=bar, margin=float("inf"))
    # a sentence about another kind than the one asked is no better answer to beat (`extractive.asked_kind_first`),
    # nor one without the phone number, address or website asked for (`extractive.asked_value_first`), nor, when
    # the answer holds a number the question asks about, one without it (`extractive.asked_number_first`). A number
    # that says when is no thing asked about: "Transformers es una película ... de 2007" held the year of "¿Quién fue
    # el productor ejecutivo de la película Transformers en 2007?", and was kept against the producer's sentence
    value = asked_value(question)
    contact = value if value in CONTACT_VALUES else None
    if any(holds_asked_number(question, s.text, circumstances=False) for s in given):  # the others that hold it too
        unused = [s for s in unused if holds_asked_number(question, s.text, circumstances=False)]
    passed_over = [s for s in unused if s.other_kind is None and (contact is None or holds_value(contact, s.text))]
    if reader is not None and extractive and given:
        # an extractive answer's sentences, read as synthesis read them (the pairs its reads left remembered: its
        # claims' words differ, "... 2001–2007." for a title line), against no rival: it is the sentence the reader
        # read best among the models' best (it decided, or it picked), and a sentence they rank lower is no rival
        # worth a read (by default, over the exploratory sets, one refused one right answer and no wrong one)
        return reader_relevance(question, [as_read(s, analysis) for s in given], reader)
    if reader is not None:  # an LLM's claims, each under what its quoted sentence stands under, and the best sentence
        # it passes over
        return reader_relevance(question, [_under_heading(c, passages) for c in claims], reader, [s.text for s in passed_over[:1]])
    if "bar" not in point or not given:
        return None
    return RelevanceReading(  # each sentence read with its chunk's heading, as the reader reads it
        relevance=max(s.under_heading for s in given),
        rival=max((s.under_heading for s in passed_over), default=None),
        bar=point["bar"],
        margin=point.get("margin", float("inf")),
    )


def _under_heading(claim: Claim, passages: Sequence[Passage]) -> str:
    """The claim as read after what the sentence it quotes first stands under (`scope.heading_over`: the heading of
    the chunk, or an FAQ's question before it in the passage), as synthesis read it."""
    for number, spans in claim_quotes([claim], passages).items():
        return under_heading(heading_over(passages[number - 1], spans[0].start), claim.text)
    return claim.text


async def synthesize(
    question: str,
    passages: Sequence[Passage],
    providers: Sequence[ChatProvider],
    extractive_last: bool,
    history: Sequence[dict] | None = None,
    gate: DraftGate | None = None,
    settings: Settings | None = None,
    focus: Sequence[str] = (),
    reader_decides: bool = True,
) -> tuple[Draft, list[str]]:
    """Run the fallback chain. Returns the first usable draft and notes on the providers that failed. With a
    `gate` (a streamed answer), a provider that streams shows its reply while it writes. `focus`: a follow-up's
    new topic, which the extractive answer's sentences name; `reader_decides`: whether the reader may decide the
    extractive answer, or pick its sentence (not for a follow-up the rule rewrote, nor an answer it confirms)."""
    settings = settings or get_settings()
    notes: list[str] = []
    if providers:
        messages = build_messages(question, passages, history)
        deadline = asyncio.get_running_loop().time() + settings.llm_deadline_s
        for provider in providers:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                notes.append(f"{provider.name} skipped: the LLM deadline ({settings.llm_deadline_s:g} s) has passed")
                continue
            try:
                if gate is not None and isinstance(provider, StreamingChatProvider):
                    reply = _synthesize_streaming(provider, messages, gate)
                else:
                    reply = _synthesize_llm(provider, messages)
                draft = await asyncio.wait_for(reply, timeout=left)
                if notes:  # an earlier provider failed: say so where the provider is named
                    draft.provider = f"{draft.provider} (fallback)"
                return draft, notes
            except TimeoutError:
                notes.append(f"{provider.name} did not answer within the LLM deadline, next provider")
            except (ProviderError, MalformedReply) as exc:
                notes.append(f"{provider.name} failed, next provider: {exc}")
    if extractive_last:
        draft = extractive_synthesizer(settings).synthesize(question, passages, focus, reader_decides)
        if providers:  # every configured model failed or ran out of time
            draft.provider = "extractive fallback"
        return draft, notes
    raise ProviderError("every chat provider failed and the extractive fallback is disabled: " + "; ".join(notes))


__all__ = ["extractive_synthesizer", "relevance_reading", "resolve_chain", "synthesize"]
