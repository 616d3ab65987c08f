"""Claim-level verification: split an answer into claims and check each against the passages it cites.

Judges are pluggable (`Judge` protocol). `LocalJudge` needs no network; `LLMJudge` asks a chat model for one
JSON verdict per claim.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from sourcerer.citations import MARKER, split_grouped_markers, strip_markers
from sourcerer.models import CharSpan, ClaimVerdict, Faithfulness, Passage
from sourcerer.retrieval.embedders import CachedEmbedder
from sourcerer.synthesis.draft import MalformedReply
from sourcerer.synthesis.prompt import JUDGE_PROMPT, render_sources
from sourcerer.synthesis.providers import ChatProvider, with_retries
from sourcerer.text import NEGATIONS, STOPWORDS, digit_numbers, normalize, numbers, sentence_spans, stem, terms


@dataclass
class Claim:
    text: str
    citations: list[int]


def split_claims(answer: str) -> list[Claim]:
    """Sentences of the answer, markers stripped, each with the markers that back it.

    A marker standing alone after a full stop (`... States. [1]`) belongs to the sentence before it; a sentence
    without markers takes those of the next marked sentence in its paragraph (answers often cite once at
    the end), else none — and an uncited claim is unsupported.
    """
    answer = split_grouped_markers(answer)
    raw: list[tuple[str, list[int], int]] = []  # (text, markers, paragraph)
    for paragraph_no, paragraph in enumerate(re.split(r"\n\s*\n", answer)):
        for start, end in sentence_spans(paragraph):
            piece = paragraph[start:end]
            leading = re.match(r"^(\s*\[\d+\])+", piece)
            if leading and raw and raw[-1][2] == paragraph_no:
                # "... days. [1] Returns ..." : the [1] closes the previous sentence
                raw[-1][1].extend(int(n) for n in re.findall(r"\d+", leading.group()))
                piece = piece[leading.end() :]
            markers = [int(m.group(1)) for m in MARKER.finditer(piece)]
            text = strip_markers(piece)
            if not re.search(r"\w", text):
                if raw and raw[-1][2] == paragraph_no:
                    raw[-1][1].extend(markers)
                continue
            raw.append((text, markers, paragraph_no))
    claims = []
    for i, (text, markers, paragraph_no) in enumerate(raw):
        if not markers:
            later = next((m for t, m, p in raw[i + 1 :] if m and p == paragraph_no), [])
            markers = list(later)
        claims.append(Claim(text=text, citations=list(dict.fromkeys(markers))))
    return claims


def pick_quotes(answer: str, passages: Sequence[Passage]) -> dict[int, list[CharSpan]]:
    """For an answer written by a model: the sentence of each cited passage that best supports each claim
    citing it (most of the claim's terms, numbers and names; ties to the earlier sentence)."""
    quotes: dict[int, list[CharSpan]] = {}
    for claim in split_claims(answer):
        wanted = set(_checked_terms(claim.text)) | digit_numbers(claim.text)
        for number in claim.citations:
            if not 1 <= number <= len(passages) or not wanted:
                continue
            passage = passages[number - 1]
            offsets = [(seg.start, seg.end) for seg in passage.sentences or []] or sentence_spans(passage.text)
            best, best_score = None, 0.0
            for start, end in offsets:
                sentence = passage.text[start:end]
                have = set(_checked_terms(sentence)) | digit_numbers(sentence)
                score = len(wanted & have) / len(wanted)
                if score > best_score:
                    best, best_score = (start, end), score
            if best is not None:
                spans = quotes.setdefault(number, [])
                if all((s.start, s.end) != best for s in spans):
                    spans.append(CharSpan(start=best[0], end=best[1]))
    return quotes


@runtime_checkable
class Judge(Protocol):
    """Decides, claim by claim, whether the cited passages support it."""

    name: str

    async def judge(self, claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]: ...


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

_QUOTED = re.compile(r"[\"“«「『]([^\"”»」』]{2,})[\"”»」』]")


def _names(claim: str) -> list[str]:
    """Names in a claim: runs of capitalised words, except a plain first word (capitalised anyway)."""
    found = []
    for m in re.finditer(r"(?<!\w)[A-Z][\w\-'’]*(?:\s+[A-Z][\w\-'’]*)*", claim):  # not inside a word (kWh)
        parts = m.group().split()
        sentence_initial = m.start() == 0 or claim[: m.start()].rstrip().endswith((".", "!", "?", ":"))
        if sentence_initial and (parts[0].casefold() in STOPWORDS or parts[0][1:].islower()):
            parts = parts[1:]
        parts = [p for p in parts if p.casefold() not in STOPWORDS]
        if parts and any(len(p) > 1 for p in parts):
            found.append(" ".join(parts))
    return found


def _negated(text: str) -> bool:
    """Whether the text negates: a lower-case negation word outside quotes ("Not That Easy" is a title)."""
    unquoted = _QUOTED.sub(" ", text)
    for match in re.finditer(r"[\w'’]+", unquoted):
        word = match.group()
        if word[0].isupper() and match.start() > 0:
            continue
        folded = word.casefold().replace("’", "'")
        if folded in NEGATIONS or folded.endswith("n't"):
            return True
    return False


@dataclass
class LocalJudgeSettings:
    min_coverage: float = 1.0  # share of the claim's content terms found in the cited text
    min_window_coverage: float = 1.0  # ...found together in adjacent sentences (relations between facts)
    window: int = 1  # how many adjacent sentences a claim's facts may be spread over
    min_similarity: float = 0.95  # calibrated e5 similarity that accepts a paraphrase
    paraphrase_coverage: float = 0.8  # a paraphrase must still share this much with one sentence


class LocalJudge:
    """A judge that needs no network. A claim is supported by its cited passages when all hold:

    * every number and date in the claim appears in the cited text (digits; number words are canonicalised);
    * every quoted string and every name (capitalised word) appears in the cited text;
    * enough of the claim's content words (folded and stemmed) appear in the cited text;
    * the sentence that best matches the claim agrees with it on negation ("not", "never", ...);
    * when the words only partly match, the meaning does: the bundled embedding model must find a cited
      sentence close to the claim (when installed).
    """

    name = "local"

    def __init__(self, embedder: CachedEmbedder | None = None, settings: LocalJudgeSettings | None = None) -> None:
        self.embedder = embedder
        self.settings = settings or LocalJudgeSettings()

    async def judge(self, claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]:
        return [self.check(claim, passages) for claim in claims]

    def check(self, claim: Claim, passages: Sequence[Passage]) -> ClaimVerdict:
        cited = [passages[n - 1].text for n in claim.citations if 1 <= n <= len(passages)]
        if not cited:
            return ClaimVerdict(claim=claim.text, supported=False, citations=claim.citations, why="cites no source")
        supported, why, score = self.supports(claim.text, cited)
        return ClaimVerdict(claim=claim.text, supported=supported, citations=claim.citations, why=why, score=score)

    def supports(self, claim: str, sources: Sequence[str]) -> tuple[bool, str, float]:
        """(supported, reason, coverage) for one claim against the texts it cites."""
        source = "\n".join(sources)
        folded_source = normalize(source)
        # Numbers written with digits must appear in the source (as digits or words: "3" matches "three").
        # Number words in the claim are not demanded: "one of the" is rarely a numeric claim.
        digit_missing = digit_numbers(claim) - numbers(source)
        if digit_missing:
            return False, f"number not in source: {', '.join(sorted(digit_missing))}", 0.0
        for quote in _QUOTED.findall(claim):
            if normalize(quote).strip() not in folded_source:
                return False, f"quoted text not in source: {quote!r}", 0.0
        source_terms = set(terms(source, keep_stopwords=True))
        for name in _names(claim):
            name_terms = terms(name, keep_stopwords=True)
            if name_terms and not all(t in source_terms for t in name_terms):
                return False, f"name not in source: {name}", 0.0
        # Relation words (before, more, than, first...) are stopwords for search but decide a comparison.
        claim_terms = _checked_terms(claim)
        if not claim_terms:
            return True, "no content words to check", 1.0
        found = [t for t in claim_terms if t in source_terms]
        coverage = len(found) / len(claim_terms)
        sentences = _source_sentences(source)
        best_sentence = _best_sentence(terms(claim), sentences)
        if _negated(claim) != _negated(best_sentence):
            return False, "negation differs from the source", coverage
        window = _window_coverage(claim_terms, sentences, self.settings.window)
        if coverage >= self.settings.min_coverage and window >= self.settings.min_window_coverage:
            return True, "supported", coverage
        # Words only partly match: a paraphrase is supported when its meaning matches one cited sentence.
        if self.embedder is not None and window >= self.settings.paraphrase_coverage:
            similarity = self._similarity(claim, source)
            if similarity is not None and similarity >= self.settings.min_similarity:
                return True, f"paraphrase of the source (similarity {similarity:.2f})", coverage
        if coverage < self.settings.min_coverage:
            missing = [t for t in claim_terms if t not in source_terms]
            return False, f"words not in source: {', '.join(missing[:6])}", coverage
        return False, f"the claim joins facts the source states apart (sentence coverage {window:.2f})", coverage

    def _similarity(self, claim: str, source: str) -> float | None:
        assert self.embedder is not None
        sentences = [source[s:e] for s, e in sentence_spans(source)] or [source]
        try:
            claim_vec = self.embedder.embed([claim], "query")[0]
            matrix = self.embedder.embed(sentences, "passage")
        except Exception:  # noqa: BLE001 - similarity is optional; the lexical checks still stand
            return None
        return self.embedder.calibrate(float(np.max(matrix @ claim_vec)))


RELATION_WORDS = frozenset(
    "before after more less most least than first last earlier later older younger larger smaller bigger "
    "higher lower longer shorter both only same different".split()
)
RELATION_TERMS = frozenset(stem(w) for w in RELATION_WORDS)  # as the tokenizer emits them ("before" -> "befor")


def _checked_terms(text: str) -> list[str]:
    """Content terms plus relation words (stopwords for search, but they decide a comparison)."""
    return list(dict.fromkeys(terms(text) + [t for t in terms(text, keep_stopwords=True) if t in RELATION_TERMS]))


def _source_sentences(source: str) -> list[tuple[int, str, set[str]]]:
    """(paragraph number, sentence, its terms) for every sentence of the cited text, computed once per claim."""
    out = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", source)):
        for start, end in sentence_spans(paragraph):
            out.append((number, paragraph[start:end], set(_checked_terms(paragraph[start:end]))))
    return out


def _best_sentence(claim_terms: Sequence[str], sentences: Sequence[tuple[int, str, set[str]]]) -> str:
    """The cited sentence sharing most terms with the claim (its negation is compared with the claim's)."""
    wanted = set(claim_terms)
    best, best_overlap = "", -1
    for _, sentence, sentence_terms in sentences:
        overlap = len(wanted & sentence_terms)
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best


def _window_coverage(claim_terms: list[str], sentences: Sequence[tuple[int, str, set[str]]], width: int = 2) -> float:
    """Best share of the claim's terms found within `width` adjacent sentences of one paragraph.

    A claim can use words that all occur in the source and still state something the source does not, by
    joining facts about different things ("X is located in Y" when X and Y appear in unrelated sentences).
    """
    wanted = set(claim_terms)
    best = 0.0
    for i, (paragraph, _, _) in enumerate(sentences):
        window = set().union(*(t for p, _, t in sentences[i : i + width] if p == paragraph))
        best = max(best, len(wanted & window) / len(wanted))
        if best == 1.0:
            break
    return best


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
        for attempt in range(2):  # a malformed reply is retried once
            reply = await with_retries(self.provider, messages)
            self.usage = reply.usage
            try:
                return self._parse(reply.content, claims, passages)
            except MalformedReply:
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _parse(content: str, claims: Sequence[Claim], passages: Sequence[Passage]) -> list[ClaimVerdict]:
        text = content.strip()
        fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
        if fenced:
            text = fenced.group(1)
        try:
            data = json.loads(text)
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
