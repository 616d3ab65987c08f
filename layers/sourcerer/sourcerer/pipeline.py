"""`ask()` / `aask()`: retrieve, synthesise, enforce citations, verify — or refuse with a reason."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, Literal

from sourcerer.citations import enforce, groundedness
from sourcerer.errors import (
    ConfigurationError,
    InvalidRequest,
    MalformedReply,
    ProviderError,
    TransientProviderError,
    VerificationUnavailable,
)
from sourcerer.grounding import ask_endpoint
from sourcerer.history import rewrite_follow_up, rewrite_with_llm, validate_history
from sourcerer.injection import as_plain_text, only_instructions
from sourcerer.models import MAX_QUESTION_CHARS, Answer, Passage, Trace, TraceEntry
from sourcerer.reading import confirming_reader, load_reader
from sourcerer.retrieval.base import TracedRetriever, call_retriever, unfloored
from sourcerer.retrieval.embedders import local_embedder, with_known
from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR, by_best_sentence, hybrid_retriever, on_what_they_state, scored_among
from sourcerer.settings import get_settings
from sourcerer.streaming import Clock, DraftGate, OnEvent, Stream, may_stream_early
from sourcerer.structured import FieldAsker, json_schema, leaves
from sourcerer.synthesis.chain import relevance_reading, resolve_chain, synthesize
from sourcerer.synthesis.providers import ChatProvider
from sourcerer.synthesis.scope import quoted_sentences, reckons, scope_notes
from sourcerer.text import as_written, focus_terms, names_all, terms
from sourcerer.verify import (
    Judge,
    LocalJudge,
    apply_vetoes,
    choose_judge,
    faithfulness_of,
    leaning_on_instructions,
    local_judge,
    pick_quotes,
    prune,
    split_claims,
    with_relevance,
    without_gaps,
)

Verify = bool | Literal["strict", "partial"]
VERIFY_MODES: tuple[Any, ...] = (False, True, "strict", "partial")


DEFAULT_MIN_SCORE = 0.2


def retrieval_floor(min_score: float | None, providers: Sequence[ChatProvider], extractive_last: bool) -> float:
    """The retrieval score under which a question is refused before synthesis. A caller's `min_score` always
    holds. Otherwise, where the reading model decides (the extractive synthesiser with the reader), there is no
    floor: the reader reads the passages a paraphrase retrieves with low scores, and refuses what they do not
    answer; a floor before it dropped answerable paraphrases no threshold after it could recover. An LLM, or
    the cheaper models without the reader, keep the floor of 0.2."""
    if min_score is not None:
        return min_score
    return 0.0 if not providers and extractive_last and load_reader() is not None else DEFAULT_MIN_SCORE


async def _judged(chosen: Judge, claims: Any, grounded: Sequence[Passage], deadline: float, each: bool = False) -> Any:
    """A judge's verdicts; an LLM judge gets `SOURCERER_JUDGE_DEADLINE_S`, then counts as failed (the local judge
    takes over unless the caller chose the judge). `each`: the local judge rules claim by claim (partial answers;
    an LLM judge rules per claim anyway)."""
    if isinstance(chosen, LocalJudge):
        return await chosen.judge(claims, grounded, each=each)
    try:
        return await asyncio.wait_for(chosen.judge(claims, grounded), timeout=deadline)
    except TimeoutError as exc:
        raise TransientProviderError(f"{chosen.name}: no verdict within {deadline:g} s") from exc


async def aask(
    question: str,
    *,
    passages: Iterable[Any] | os.PathLike[str] | None = None,
    retriever: Callable[..., Any] | None = None,
    endpoint: str | None = None,
    k: int = 5,
    min_score: float | None = None,
    verify: Verify = False,
    history: Sequence[dict] | None = None,
    chat: Any = None,
    judge: Any = None,
    min_groundedness: float | None = None,
    on_event: OnEvent | None = None,
    schema: Any = None,
) -> Answer:
    """Answer `question` from passages, a retriever or a grounding endpoint — with enforced citations — or
    refuse with a reason. See `sourcerer.ask` for the parameters; `on_event` receives the events of a streamed
    answer (see `astream`)."""
    settings = get_settings()  # read once, at the library's composition root, and handed to the stages
    trace = Trace()
    stream = Stream(on_event) if on_event is not None else None
    clock = Clock(trace, stream)
    if verify not in VERIFY_MODES:
        raise ConfigurationError("verify must be False, True, 'strict' or 'partial'")
    for name, value in (("min_score", min_score), ("min_groundedness", min_groundedness)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
            raise ConfigurationError(f"{name} must be a number from 0 to 1, not {value!r}")
    wanted = leaves(json_schema(schema)) if schema is not None else None  # a bad schema fails before any work
    if wanted is not None and on_event is not None:
        raise ConfigurationError("a structured answer (schema=) is not streamed: use ask() or aask()")
    if not isinstance(question, str) or not question.strip():
        return clock.finish(Answer.refusal("no_question"))
    if len(question) > MAX_QUESTION_CHARS:  # the API's bound on `q`: 140,000 characters took 22 s to answer
        raise InvalidRequest(f"the question is {len(question):,} characters long: at most {MAX_QUESTION_CHARS:,}")
    question = question.strip()
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return clock.finish(Answer.refusal("bad_k"))
    turns = validate_history(history)
    if isinstance(passages, os.PathLike):  # read and chunked as `sourcerer ask --passages` reads it
        from sourcerer.passage_files import load_passages  # the parsers: loaded only where files are read
        passages = load_passages(passages)
    if sum(given is not None for given in (passages, retriever, endpoint)) > 1:  # one was silently ignored
        raise ConfigurationError("ground the answer on one of passages=, retriever= or endpoint=, not several")
    if passages is None and retriever is None:
        endpoint = endpoint or settings.grounding_url
        if not endpoint:
            return clock.finish(Answer.refusal("no_grounding"))
        if verify:
            raise VerificationUnavailable(
                "verification needs the passage text, which a grounding endpoint does not return; "
                "use passages= or retriever=, or verify=False"
            )
        started = time.perf_counter()
        answer, _ = await ask_endpoint(endpoint, question, turns)
        clock.stage("endpoint", started, detail={"endpoint": endpoint})
        return clock.finish(answer)

    via: Literal["passages", "retriever"] = "retriever" if retriever is not None else "passages"
    providers, extractive_last = resolve_chain(chat, settings)
    floor = retrieval_floor(min_score, providers, extractive_last)
    # under the default floor, an extractive answer from the best sentences stands where the reader (loaded then) confirms it
    may_confirm = floor > 0 and min_score is None and not providers and extractive_last
    if retriever is None:
        # Hybrid when an embedder is available (paraphrases, other languages), BM25 otherwise. Where the reader decides
        # (no floor), a passage sharing no word with the question is read however low its similarity: a question in
        # another language shares none, and sits under the semantic floor (bench/results/crosslingual.md)
        retriever = hybrid_retriever(passages or [], semantic_floor=0.0 if floor <= 0 else SEMANTIC_FLOOR)
    elif floor <= 0:  # an index's hybrid search likewise, on a copy: the caller's retriever keeps its floor for its next question
        retriever = unfloored(retriever) or retriever

    query = question
    focus: tuple[str, ...] = ()  # the terms a follow-up's new topic adds: an extractive answer comes from a passage naming them
    if turns:
        started = time.perf_counter()
        usage: dict[str, float] = {}
        how = "rule"
        rewrite = rewrite_follow_up(question, turns)  # the rule's (microseconds); a model's query replaces it
        query, focus = rewrite.query, rewrite.focus
        if providers:
            try:
                query, usage = await rewrite_with_llm(question, turns, providers[0])
                how, focus = providers[0].name, ()
            except ProviderError:
                pass  # the rule's rewrite stands
        clock.stage("rewrite", started, units=usage, detail={"query": query, "by": how, **({"focus": list(focus)} if focus else {})})
    # a follow-up the rule rewrote is asked in the rewrite's words, which the reader misreads: "What is the meals limit?"
    # (a new topic in the previous question's frame), "How long do I have? cancel my policy" (the previous topic's
    # words appended). The sentence models decide its answer and judge its relevance, with the reader on as without it
    by_rule = bool(turns) and how == "rule" and query != question

    started = time.perf_counter()
    hits = (await call_retriever(retriever, query, k))[:k]
    if hits and all(h.score is None for h in hits):
        hits = scored_among(query, hits)
        trace.notes.append("the retriever gave no scores: its passages are scored among themselves, as passages= are")
    # no passage shares a word with the question nor clears the semantic floor ("¿Hay impresora?" against "Se puede
    # imprimir…"): the nearest are read by their best sentence, and an answer from them stands where the reader confirms it
    if nothing_near := not hits and may_confirm and (nearest := unfloored(retriever)) is not None and confirming_reader() is not None:
        hits = (await call_retriever(nearest, query, k))[:k]  # unconfirmed, nothing supports an answer still: `not_in_sources`
    retrieve_detail: dict[str, Any] = {"query": query, "via": via, **({"nearest": True} if nothing_near else {})}
    if isinstance(retriever, TracedRetriever) and retriever.last_trace:
        retrieve_detail.update(retriever.last_trace)
        if "fallback" in retriever.last_trace:
            trace.notes.append(retriever.last_trace["fallback"])
    best = max((h.score for h in hits if h.score is not None), default=None)
    retrieve_detail["best_score"] = best
    clock.stage("retrieve", started, units={"hits": len(hits)}, detail=retrieve_detail)
    for name, ms in (retrieve_detail.get("stages") or {}).items():  # what the index did inside retrieve
        trace.stages.append(TraceEntry(stage=name, ms=ms, detail={"within": "retrieve"}))
    waiting = sum(1 for h in hits if getattr(h, "pending", False))
    if waiting:  # `with_known`: their vectors are the background embedder's to compute, not this request's
        trace.notes.append(f"{waiting} passage(s) still wait for their vectors: the answer is weighed on words alone")
    # a passage that only addresses the reader or the model ("SYSTEM: answer yes ...") is no evidence: it is
    # set aside before anything weighs it, so its words cannot lift the rest over a threshold
    addressing = [h for h in hits if only_instructions(h)]
    if addressing:
        hits = [h for h in hits if h not in addressing]
        best = max((h.score for h in hits if h.score is not None), default=None)
        trace.notes.append(f"{len(addressing)} passage(s) that only give instructions were set aside (source text is data)")
    # and one that gives an instruction among what it states is scored on what it states (`on_what_they_state`)
    if (stated := on_what_they_state(query, hits, with_known(local_embedder(), hits))) is not hits:
        weighed = sum(before is not after for before, after in zip(hits, stated, strict=True))
        trace.notes.append(f"{weighed} passage(s) giving an instruction among facts scored on what they state (source text is data)")
        hits, best = stated, max((h.score for h in stated if h.score is not None), default=None)
    if stream is not None:
        stream.retrieve(hits)
    if wanted is not None:  # each field is answered on its own (sourcerer.structured)
        started = time.perf_counter()
        ask_field = FieldAsker(aask, retriever, k, min_score, floor, verify, judge, providers, extractive_last)
        answer, units = await ask_field.all(question, json_schema(schema), wanted, [h for h in hits if (h.score or 0.0) >= floor])
        trace.notes.extend(ask_field.notes)
        clock.stage("structure", started, units=units, detail={"provider": answer.provider})
        answer.via = via
        return clock.finish(answer)
    if not hits:
        return clock.finish(Answer.refusal("not_in_sources", via=via))
    confirming = confirming_reader() if may_confirm and best is not None and best < floor else None
    if confirming is not None:  # scored by their best sentences, the passages may clear the floor (`by_best_sentence`)
        hits = by_best_sentence(query, hits, with_known(local_embedder(), hits))  # their sentences' vectors, stored at ingest
        best = max((h.score for h in hits if h.score is not None), default=None)
    refuse_under_floor = Answer.refusal("not_in_sources", via=via) if nothing_near else Answer.refusal("below_threshold", via=via, passages=hits)
    if best is not None and best < floor:
        return clock.finish(refuse_under_floor)
    grounded = [h for h in hits if h.score is None or h.score >= floor]

    if focus and not providers:
        # "And express shipping?": a passage that never names express (nor has it in its title) answers about
        # something else, however many words it shares (the standard shipping rule), so it is no candidate.
        # (Kept instead as the runner-up an answer must beat, it made the multi-turn benchmark worse in every mode.)
        naming = [h for h in grounded if names_all(focus, {*focus_terms(h.text), *terms(h.source or "")})]
        if len(naming) < len(grounded):
            trace.notes.append(
                f"the follow-up asks about {as_written(focus, question)}: {len(grounded) - len(naming)} passage(s) that never name it "
                "set aside"
            )
        if not naming:
            return clock.finish(Answer.refusal("unsupported", via=via, passages=grounded))
        grounded = naming
    started = time.perf_counter()
    # With history, the extractive synthesiser needs the standalone query (it has no conversation memory);
    # an LLM gets the original follow-up plus the conversation.
    # a streamed answer shows an LLM's sentences as they come only where nothing decided later can take them back
    early = stream is not None and verify in (False, True) and min_groundedness is None and may_stream_early(grounded)
    gate = DraftGate(stream, grounded) if early and stream is not None else None
    draft, notes = await synthesize(
        query if turns and not providers else question, grounded, providers, extractive_last, turns, gate, settings, focus,
        # under the floor the reader confirms the sentence models' own answer (its bar was fitted on theirs): a
        # sentence it picked itself would pass its own reading ("Messt ihr auch den Blutzucker?": the blood pressure)
        reader_decides=not by_rule and confirming is None,
    )
    trace.notes.extend(notes)
    if draft.detail.get("decided_by") == "lexical model":
        trace.notes.append(
            "no reading model here (SOURCERER_EMBEDDER=none, or the local extra is not installed): the lexical model "
            "answers only what a passage states in the question's own words, and refuses the rest"
        )
    trace.notes.extend(scope_notes(draft.detail))
    clock.stage("synthesize", started, units=draft.usage, detail={"provider": draft.provider, **draft.detail})
    if not draft.provider.startswith("extractive"):
        draft.answer = as_plain_text(draft.answer)  # a model's markup and invisible controls never reach a client
    common = {"via": via, "provider": draft.provider, "extractive": draft.provider.startswith("extractive"), "passages": grounded}
    if draft.refused:
        return clock.finish(Answer.refusal("unsupported", **common))
    if confirming is not None:  # the reader confirms the answer from under the floor, or it is none
        started = time.perf_counter()
        quoted, headings = quoted_sentences(grounded, draft.spans)
        read, bar = confirming.confirms(query, quoted, headings)
        reckoned = reckons(query, quoted)  # what the reader does not reckon with: an age in a range, a day in a week
        clock.stage("confirm", started, detail={"read": round(read, 4), "bar": bar, "reckoned": reckoned})
        verdict = "confirms" if read >= bar else "does not confirm"
        trace.notes.append(f"the passages score under the retrieval floor: the reader {verdict} the answer ({read:.3f}, bar {bar:.3f})")
        if read < bar and reckoned:
            trace.notes.append(f"the answer states {reckoned}: it stands")
        elif read < bar:
            return clock.finish(refuse_under_floor)

    started = time.perf_counter()
    # Pin each citation to its sentences: the extractive synthesiser knows them, a model's answer is matched.
    quotes = draft.spans or pick_quotes(draft.answer, grounded)
    obeyed = leaning_on_instructions(draft.answer, grounded) if not draft.spans else set()
    if obeyed:  # the model cited a sentence that gives orders: that is obedience, not support
        draft.citations = [n for n in draft.citations if n not in obeyed]
        trace.notes.append(f"citation(s) {sorted(obeyed)} stood on source text that gives instructions: dropped")
    clock.stage(
        "localize", started, units={"quoted": float(len(quotes))}, detail={"by": "synthesiser" if draft.spans else "claims"}
    )
    started = time.perf_counter()
    enforced = enforce(draft.answer, draft.citations, grounded, quotes)
    clock.stage("cite", started, units={"citations": len(enforced.citations)}, detail={"dropped_markers": enforced.dropped})
    if not enforced.citations:
        return clock.finish(Answer.refusal("no_citation", **common))
    answer = Answer(
        answer=enforced.answer, refused=False, citations=enforced.citations, groundedness=groundedness(enforced.answer), **common
    )
    if min_groundedness is not None and (answer.groundedness or 0.0) < min_groundedness:
        trace.draft = answer.answer
        trace.notes.append(f"groundedness {answer.groundedness} is under min_groundedness {min_groundedness}")
        return clock.finish(Answer.refusal("no_citation", **common))

    if verify:
        started = time.perf_counter()
        chosen = choose_judge(judge, providers)
        claims = split_claims(answer.answer)
        try:
            verdicts = await _judged(chosen, claims, grounded, settings.judge_deadline_s, each=verify == "partial")
        except (ProviderError, MalformedReply) as exc:
            if judge is not None:
                raise
            trace.notes.append(f"{chosen.name} judge failed, local judge used: {exc}")
            chosen = local_judge()
            verdicts = await chosen.judge(claims, grounded, each=verify == "partial")
        if not isinstance(chosen, LocalJudge):  # a model cannot pass numbers or negations the source contradicts
            verdicts = apply_vetoes(verdicts, claims, grounded)
        judged = faithfulness_of(verdicts, chosen.name)
        # the reader judges relevance wherever it can run, as it picks the answer's sentence: by default too, where the
        # sentence models decide whether to answer (their own reading refused 0.38 of the true-but-irrelevant answers
        # of bench/relevance.py, the reader's 0.68); not for a follow-up the rule rewrote (above)
        reader = None if by_rule else confirming_reader()
        if verify == "partial":
            # relevance is read on what the answer keeps: a supported claim must also answer the question
            kept = [c for c, v in zip(claims, verdicts, strict=True) if v.supported]
            answer.faithfulness = with_relevance(judged, relevance_reading(query, grounded, kept, settings, reader, draft.analysis))
            answer.faithfulness.removed = [v for v in verdicts if not v.supported]
        else:
            answer.faithfulness = with_relevance(judged, relevance_reading(query, grounded, claims, settings, reader, draft.analysis))
        clock.stage(
            "verify",
            started,
            units={"claims": len(claims), **getattr(chosen, "usage", {})},
            detail={"judge": chosen.name, "score": answer.faithfulness.score, "removed": len(answer.faithfulness.removed)},
        )
        if verify == "strict" and not answer.faithfulness.faithful:
            return clock.finish(_unfaithful(answer, common, trace))
        if verify == "partial":
            f = answer.faithfulness
            if len(f.removed) == len(claims) or f.relevant is False:
                return clock.finish(_unfaithful(answer, common, trace))
            if f.removed:
                trace.draft = answer.answer
                trace.notes.append(f"partial: {len(f.removed)} of {len(claims)} claims removed (marked in the answer)")
                pruned = enforce(prune(answer.answer, claims, verdicts), [c.index for c in answer.citations], grounded, quotes)
                answer.answer, answer.citations = pruned.answer, pruned.citations
                answer.groundedness = groundedness(without_gaps(pruned.answer))
    return clock.finish(answer)


def _unfaithful(answer: Answer, common: dict[str, Any], trace: Trace) -> Answer:
    """The refusal of a verified answer: `off_topic` when every claim held but none answers the question, else
    `unfaithful`; the refused draft stays in the trace."""
    trace.draft = answer.answer
    f = answer.faithfulness
    off_topic = f is not None and f.relevant is False and not f.unsupported
    refusal = Answer.refusal("off_topic" if off_topic else "unfaithful", **common)
    refusal.faithfulness = f
    return refusal


async def astream(question: str, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
    """`aask` as a stream of events (`sourcerer.streaming`): `retrieve`, `citation`, `delta`, `verdict`, `reset`,
    and last `done`, whose `answer` is what `aask` returns for the same request. An LLM's answer is shown while it
    is written where the rules of a whole answer can be checked on a prefix; strict and partial verification show
    each claim only after its verdict."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    task = asyncio.ensure_future(aask(question, on_event=queue.put_nowait, **kwargs))
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():  # the work ended with nothing left to say: an exception, raised here
                getter.cancel()
                task.result()
                if queue.empty():
                    break
                continue
            event = getter.result()
            yield event
            if event["event"] == "done":
                break
        await task
    finally:
        if not task.done():  # the consumer stopped early: stop the work too
            task.cancel()


def ask(question: str, **kwargs: Any) -> Answer:
    """Answer `question` with enforced citations, or refuse with a reason.

    Grounding (one of): `passages` (dicts with `text` and `source`, or `Passage` objects, searched with hybrid BM25
    + embeddings; or a `pathlib.Path` to a `.jsonl`, a document or a folder, read as `sourcerer ask --passages` reads it),
    `retriever` (any callable `(question, k)`, sync or async, returning passages with scores in [0, 1]),
    `endpoint` (a grounding endpoint URL; default `SOURCERER_GROUNDING_URL`).

    `k` hits are retrieved; a best score under `min_score` is refused as `below_threshold` (default: 0.2, or no
    floor where the reading model decides). `verify=True` adds
    claim-level `faithfulness`; `verify="strict"` refuses an unfaithful answer (`unfaithful`); `verify="partial"`
    keeps the supported claims, replaces each unsupported one with a marked gap (`[removed: why]`, listed in
    `faithfulness.removed`), and refuses (`unfaithful`) only when nothing is left. `history` is
    a list of `{"role", "text"}` turns. `chat` picks the synthesiser (default from the environment, with the
    extractive synthesiser last); `judge` picks the verifier (`"local"`, `"llm"` or a judge object).
    `min_groundedness` refuses (`no_citation`) an answer whose share of cited sentences (`Answer.groundedness`)
    is under it.
    """
    coroutine = aask(question, **kwargs)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # Called from inside an event loop (a notebook, an async app): run on a private loop in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


__all__ = ["aask", "ask", "astream"]
