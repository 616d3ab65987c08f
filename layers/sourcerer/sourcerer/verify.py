"""Claim-level verification: split an answer into claims and check each against the passages it cites.

Judges are pluggable (`Judge` protocol). `LocalJudge` needs no network; `LLMJudge` asks a chat model for one
JSON verdict per claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sourcerer.assertions import is_assertion
from sourcerer.citations import MARKER, split_grouped_markers, strip_markers
from sourcerer.errors import ConfigurationError, MalformedReply
from sourcerer.injection import is_instruction
from sourcerer.models import CharSpan, ClaimVerdict, Faithfulness, Passage
from sourcerer.reading import Reader, load_reader, relevance_bar
from sourcerer.retrieval.embedders import CachedEmbedder, local_embedder, with_known
from sourcerer.sentences import sentence_spans, states_nothing
from sourcerer.support import (
    CONTAINED,
    ClaimSupport,
    LeadIns,
    SourceSentence,
    Support,
    checked_terms,
    cited_sentences,
    source_sentences,
    support_models_version,
    supporting_sentences,
)
from sourcerer.synthesis.answerability import logit
from sourcerer.synthesis.prompt import JUDGE_PROMPT, render_sources
from sourcerer.synthesis.providers import ChatProvider, ask_for_json, chat_chain_from_env
from sourcerer.text import digit_numbers


@dataclass
class Claim:
    text: str
    citations: list[int]
    start: int = 0  # [start, end) of the sentence and its markers in the answer (grouped markers split)
    end: int = 0


# A removed claim's place in a partial answer: `[removed: why]`. It is no marker (markers are digits only), and
# `split_claims` never reads one as a claim, so an audit re-judges only the claims that were kept.
GAP = re.compile(r"\[removed: [^\[\]]*\]")


def gap(why: str) -> str:
    """The marked gap that replaces an unsupported claim, saying why (brackets and sentence ends taken out of the
    reason, so the gap stays one bracketed piece that no sentence splitter cuts)."""
    reason = re.sub(r"[\[\]]", "", why or "not supported by the cited passage")
    reason = re.sub(r"[.!?。！？]+(\s|$)", r";\1", reason).strip(" ;") or "not supported by the cited passage"
    return f"[removed: {reason}]"


def without_gaps(answer: str) -> str:
    """The answer with its gaps blanked out (same length, so offsets still hold)."""
    return GAP.sub(lambda m: " " * len(m.group()), answer)


def split_claims(answer: str) -> list[Claim]:
    """Sentences of the answer, markers stripped, each with the markers that back it and where it stands.

    A marker standing alone after a full stop (`... States. [1]`) belongs to the sentence before it; a sentence
    without markers takes those of the next marked sentence in its paragraph (answers often cite once at
    the end), else none — and an uncited claim is unsupported. A partial answer's gaps are no claims.
    """
    answer = without_gaps(split_grouped_markers(answer))
    raw: list[list[Any]] = []  # [text, markers, paragraph, start, end, states nothing]
    breaks = [0, *(m.end() for m in re.finditer(r"\n\s*\n", answer))]
    ends = [*(m.start() for m in re.finditer(r"\n\s*\n", answer)), len(answer)]
    for paragraph_no, (p_start, p_end) in enumerate(zip(breaks, ends, strict=True)):
        paragraph = answer[p_start:p_end]
        for start, end in sentence_spans(paragraph):
            piece, at = paragraph[start:end], p_start + start
            leading = re.match(r"^(\s*\[\d+\])+", piece)
            if leading and raw and raw[-1][2] == paragraph_no:
                # "... days. [1] Returns ..." : the [1] closes the previous sentence
                raw[-1][1].extend(int(n) for n in re.findall(r"\d+", leading.group()))
                raw[-1][4] = at + leading.end()
                piece, at = piece[leading.end() :], at + leading.end()
            # a heading, a title ("Refunds" over the answer's first line) or a question states nothing to check
            nothing = states_nothing(paragraph, at - p_start, end)
            markers = [int(m.group(1)) for m in MARKER.finditer(piece)]
            text = strip_markers(piece)
            if not re.search(r"\w", text):
                if raw and raw[-1][2] == paragraph_no:
                    raw[-1][1].extend(markers)
                    raw[-1][4] = at + len(piece.rstrip())
                continue
            lead = len(piece) - len(piece.lstrip())
            raw.append([text, markers, paragraph_no, at + lead, at + len(piece.rstrip()), nothing])
    claims = []
    for i, (text, markers, paragraph_no, start, end, nothing) in enumerate(raw):
        if nothing or not is_assertion(text):
            continue  # a pleasantry or a sentence about the passage asserts nothing to check either
        if not markers:
            later = next((m for t, m, p, *_ in raw[i + 1 :] if m and p == paragraph_no), [])
            markers = list(later)
        claims.append(Claim(text=text, citations=list(dict.fromkeys(markers)), start=start, end=end))
    return claims


def prune(answer: str, claims: Sequence[Claim], verdicts: Sequence[ClaimVerdict]) -> str:
    """The partial answer: each claim the judge rejected replaced by its marked gap (`[removed: why]`), the rest
    of the text as it was. A kept claim that borrowed its markers from a later sentence gets them written out,
    since that sentence may be gone. `answer` is the enforced answer the claims were split from."""
    answer = split_grouped_markers(answer)
    out, at = [], 0
    for claim, verdict in zip(claims, verdicts, strict=True):
        piece = answer[claim.start : claim.end]
        if not verdict.supported:
            piece = gap(verdict.why)
        elif claim.citations and not MARKER.search(piece):
            end = re.search(r"[.!?。！？]*$", piece)
            cut = end.start() if end else len(piece)
            piece = piece[:cut].rstrip() + " " + "".join(f"[{n}]" for n in claim.citations) + piece[cut:]
        out += [answer[at : claim.start], piece]
        at = claim.end
    out.append(answer[at:])
    return "".join(out)


def _cited_sentences(claims: Sequence[Claim], passages: Sequence[Passage]) -> Iterator[tuple[Claim, int, list[SourceSentence], LeadIns]]:
    """Each claim with each passage it cites (in range) and its sentences and lead-ins, read once per passage."""
    read: dict[int, tuple[list[SourceSentence], LeadIns]] = {}
    for claim in claims:
        for number in claim.citations:
            if 1 <= number <= len(passages):
                read[number] = read.get(number) or cited_sentences(passages[number - 1])
                yield claim, number, *read[number]


def pick_quotes(answer: str, passages: Sequence[Passage]) -> dict[int, list[CharSpan]]:
    """For an answer written by a model: the sentences of each cited passage that support each claim citing it
    (the best-matching sentence, with its neighbour when the claim joins the two)."""
    return claim_quotes(split_claims(answer), passages)


def claim_quotes(claims: Sequence[Claim], passages: Sequence[Passage]) -> dict[int, list[CharSpan]]:
    """`pick_quotes` for claims already split (the ones a partial answer keeps)."""
    quotes: dict[int, list[CharSpan]] = {}
    for claim, number, sentences, leads in _cited_sentences(claims, passages):
        for sentence in supporting_sentences(claim.text, sentences):
            spans = quotes.setdefault(number, [])
            span = (sentence.start, sentence.end)
            for start, end in ([leads[span]] if span in leads else []) + [span]:  # a line with its lead-in ("We accept:")
                if all((s.start, s.end) != (start, end) for s in spans):
                    spans.append(CharSpan(start=start, end=end))
    return quotes


def leaning_on_instructions(answer: str, passages: Sequence[Passage]) -> set[int]:
    """The cited passages where a claim's support (its quoted sentences, or any sentence tied for its best
    match) is a sentence that addresses the reader or the model: such a claim repeats an order, it is not
    supported, whatever else the passage says."""
    leaning: set[int] = set()
    for claim, number, sentences, _ in _cited_sentences(split_claims(answer), passages):
        wanted = set(checked_terms(claim.text)) | digit_numbers(claim.text)
        if not wanted:
            continue
        overlaps = [len(wanted & (s.terms | digit_numbers(s.text))) for s in sentences]
        best = max(overlaps, default=0)
        tied = [s for o, s in zip(overlaps, sentences, strict=True) if best and o == best]
        if any(is_instruction(s.text) for s in [*tied, *supporting_sentences(claim.text, sentences)]):
            leaning.add(number)
    return leaning


@runtime_checkable
class Judge(Protocol):
    """Decides, claim by claim, whether the cited passages support it."""

    name: str

    async def judge(self, claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]: ...


@dataclass(frozen=True)
class RelevanceReading:
    """Whether an answer answers its question, as one model reads it: its probability for the answer's best claim
    (`relevance`), for the best sentence of the sources the answer does not quote (`rival`, None when not read),
    and the model's two operating points: the least probability an answer needs (`bar`), and how far in logits
    a rival may read above it (`margin`)."""

    relevance: float
    rival: float | None
    bar: float
    margin: float

    @property
    def off_topic(self) -> bool:
        """The answer reads under the bar, or more than `margin` logits under a sentence it passed over: the
        sources hold a better answer than the one given, so this one is not relevant, however true it is."""
        beaten = self.rival is not None and logit(self.rival) - logit(self.relevance) > self.margin
        return self.relevance < self.bar or beaten


def reader_relevance(question: str, answer: Sequence[str], reader: Reader, rivals: Sequence[str] = ()) -> RelevanceReading:
    """The reading model reads the question with each of the answer's claims or sentences (at least one): the answer
    is relevant when one answers it. `rivals`: the sentences of the sources the answer does not quote that a reader
    would read first (`synthesis.chain.relevance_reading`), read only at a fitted `relevance_margin`."""
    return RelevanceReading(
        relevance=max(reader.answers(question, list(answer))),
        rival=max(reader.answers(question, list(rivals)), default=None) if reader.reads_rivals else None,
        bar=relevance_bar(reader),
        margin=reader.threshold("relevance_margin", float("inf")),
    )


def with_relevance(faithfulness: Faithfulness, reading: RelevanceReading | None) -> Faithfulness:
    """The verdict with whether the answer answers the (standalone) question: a true sentence of the sources that
    answers another question is faithful to them and still no answer. No reading: the verdict as it was."""
    if reading is None:
        return faithfulness
    relevant = not reading.off_topic
    return faithfulness.model_copy(
        update={
            "relevant": relevant,
            "relevance": round(reading.relevance, 4),
            "rival": None if reading.rival is None else round(reading.rival, 4),
            "faithful": faithfulness.faithful and relevant,
        }
    )


def faithfulness_of(verdicts: Sequence[ClaimVerdict], judge: str) -> Faithfulness:
    total = len(verdicts)
    supported = sum(1 for v in verdicts if v.supported)
    return Faithfulness(
        faithful=total > 0 and supported == total,
        unsupported=[v.claim for v in verdicts if not v.supported],
        score=round(supported / total, 4) if total else 0.0,
        judge=judge,
        claims=list(verdicts),
    )


# --- local judge ------------------------------------------------------------------------------------


def claim_source(claim: str, cited: str) -> str | None:
    """What the claim head reads a claim against: the cited sentences that match it best, joined (None: none
    does). The judge's veto reads it so, and `bench/train/reader.py` writes the summary claims it trains on so."""
    sentences = supporting_sentences(claim, source_sentences(cited))
    return " ".join(s.text for s in sentences) if sentences else None


class LocalJudge:
    """A judge that needs no network: `sourcerer.support.ClaimSupport` on each claim against the text it cites —
    deterministic vetoes (numbers, quotes, negation) first, then the learned claim-support model (lexical, or
    with the bundled e5 model's similarities when `embedder` is given), and for an answer of several claims
    the answer model that weighs them together."""

    def __init__(
        self, embedder: CachedEmbedder | None = None, support: ClaimSupport | None = None, reader: Reader | None = None
    ) -> None:
        self.embedder = embedder
        self.support = support or ClaimSupport(embedder)
        self.reader = reader
        version = support_models_version() + (f"+{reader.version}" if reader is not None else "")
        self.name = f"local:{version}"  # by model, as an LLM judge is: a retrained one rules afresh

    async def judge(self, claims: Sequence[Claim], passages: Sequence[Passage], each: bool = False) -> list[ClaimVerdict]:
        """Every claim against the passages it cites; an answer of several claims is weighed as a whole
        (`ClaimSupport.judge_answer`), and then each claim the reading model rejects fails on its own, whatever
        the whole answer scored. A claim that cites nothing is unsupported, and so is the answer.

        `each=True` (partial answers, which keep or remove claim by claim) rules on every claim alone, at the bar
        a one-claim answer must clear: a claim passed "with the answer as a whole" would be kept beside the
        claims that carried it (`bench/partial.py` shows the curve and the other operating points)."""
        cited = [self._cited(claim, passages) for claim in claims]
        if each or not all(cited):
            return [
                self._read(claim, text, self.check(claim, passages, claims_in_answer=1 if each else len(claims)))
                if text
                else self.check(claim, passages)
                for claim, text in zip(claims, cited, strict=True)
            ]
        supports = self._support(passages).judge_answer([(c.text, text) for c, text in zip(claims, cited, strict=True)])
        return [self._read(claim, text, _verdict(claim, support)) for claim, text, support in zip(claims, cited, supports, strict=True)]

    def _read(self, claim: Claim, cited: str, verdict: ClaimVerdict) -> ClaimVerdict:
        """The reading model's veto: a passed claim whose best-matching cited sentences it reads as not supporting
        it is unsupported (under its held-out operating point `claim_veto`)."""
        if self.reader is None or "claim_veto" not in self.reader.operating_points:
            return verdict
        probability = self.claim_reading(claim.text, cited, verdict)
        if probability is None or probability >= self.reader.threshold("claim_veto"):
            return verdict
        return verdict.model_copy(
            update={"supported": False, "why": f"the reading model finds no support in the cited sentence (p = {probability:.2f})"}
        )

    def claim_reading(self, claim: str, cited: str, verdict: ClaimVerdict) -> float | None:
        """The claim head's reading of a claim the judge passed, against the cited sentences that match it best, as
        the veto reads it (`bench/claim_veto.py` measures the veto at every bar). None where there is nothing to
        veto: no reader, a claim the judge rejected, one that a cited sentence holds word for word (a restatement,
        passed by rule: the head reads a short quote of its sentence as no support), or no sentence matching it."""
        if self.reader is None or not verdict.supported or verdict.why == CONTAINED:
            return None
        source = claim_source(claim, cited)
        return self.reader.supports(claim, [source])[0] if source is not None else None

    def check(self, claim: Claim, passages: Sequence[Passage], claims_in_answer: int = 1) -> ClaimVerdict:
        """One claim alone (`claims_in_answer` picks the claim model's operating point)."""
        cited = self._cited(claim, passages)
        if not cited:
            return ClaimVerdict(claim=claim.text, supported=False, citations=claim.citations, why="cites no source")
        return _verdict(claim, self._support(passages).check(claim.text, cited, claims_in_answer=claims_in_answer))

    @staticmethod
    def _cited(claim: Claim, passages: Sequence[Passage]) -> str:
        return "\n\n".join(passages[n - 1].text for n in claim.citations if 1 <= n <= len(passages))

    def _support(self, passages: Sequence[Passage]) -> ClaimSupport:
        embedder = with_known(self.embedder, passages)  # sentence vectors stored at ingest, when the passages carry them
        return self.support if embedder is self.embedder else ClaimSupport(embedder, self.support.models)


def _verdict(claim: Claim, support: Support) -> ClaimVerdict:
    return ClaimVerdict(
        claim=claim.text,
        supported=support.supported,
        citations=claim.citations,
        why=support.why,
        score=round(support.probability, 4),
    )


def apply_vetoes(verdicts: list[ClaimVerdict], claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]:
    """Overrule a model judge where a deterministic check disagrees: a claim whose number, quote or negation the
    cited text does not hold is unsupported, whatever the model said ("3 to 7 days" against "3 to 5")."""
    support = ClaimSupport(None)
    out = []
    for verdict, claim in zip(verdicts, claims, strict=True):
        cited = "\n\n".join(passages[n - 1].text for n in claim.citations if 1 <= n <= len(passages))
        reason = support.veto(claim.text, cited, source_sentences(cited)) if verdict.supported and cited else None
        out.append(verdict.model_copy(update={"supported": False, "why": f"{reason} (local check)"}) if reason else verdict)
    return out


# --- LLM judge --------------------------------------------------------------------------------------


class LLMJudge:
    """Asks a chat model for one JSON verdict per claim, showing each claim only the sources it cites."""

    def __init__(self, provider: ChatProvider) -> None:
        self.provider = provider
        self.name = f"llm:{provider.name}"
        self.usage: dict[str, float] = {}

    async def judge(self, claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]:
        lines = []
        for i, claim in enumerate(claims, start=1):
            cited = ", ".join(str(n) for n in claim.citations) or "none"
            lines.append(f"Claim {i} (sources {cited}): {claim.text}")
        used = sorted({n for c in claims for n in c.citations if 1 <= n <= len(passages)})
        sources = render_sources([passages[n - 1] for n in used], numbers=used)
        messages = [
            {"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": f"Sources:\n\n{sources}\n\nClaims:\n" + "\n".join(lines)},
        ]
        verdicts, self.usage, _ = await ask_for_json(self.provider, messages, lambda data: self._read(data, claims, passages))
        return verdicts

    @staticmethod
    def _read(data: dict[str, Any], claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]:
        try:
            by_number = {int(v["claim"]): v for v in data["verdicts"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedReply(f"judge reply is not the verdict JSON: {exc}") from exc
        verdicts = []
        for i, claim in enumerate(claims, start=1):
            verdict = by_number.get(i, {})
            cites_real_source = any(1 <= n <= len(passages) for n in claim.citations)
            supported = bool(verdict.get("supported")) and cites_real_source
            why = str(verdict.get("why", "")) if verdict else "the judge gave no verdict"
            verdicts.append(ClaimVerdict(claim=claim.text, supported=supported, citations=claim.citations, why=why))
        return verdicts


def local_judge() -> LocalJudge:
    """The local judge with the bundled models: the e5 similarities and the reading model, where installed."""
    return LocalJudge(local_embedder(), reader=load_reader())


def choose_judge(judge: Any, providers: Sequence[ChatProvider]) -> Judge:
    """The judge `ask(verify=...)` and the audit use: `judge` as given ('local', 'llm' or a judge object), or by
    default the LLM judge when a chat provider is configured, else the local one."""
    if judge is None:
        return LLMJudge(providers[0]) if providers else local_judge()
    if judge == "local":
        return local_judge()
    if judge == "llm":
        if not providers:
            raise ConfigurationError("judge='llm' needs a chat provider: set SOURCERER_API_KEY or pass chat=")
        return LLMJudge(providers[0])
    if isinstance(judge, Judge):
        return judge
    raise ConfigurationError(f"judge must be None, 'local', 'llm' or a judge object, not {judge!r}")


def configured_judge() -> Judge:
    """The default judge of this process's settings (what the scheduled audit verifies with)."""
    providers, _ = chat_chain_from_env()
    return choose_judge(None, providers)
