"""The extractive synthesiser: answers with the source sentences that best answer the question.

It needs no model server. Each sentence of the top passages is scored on

* **coverage** — the IDF-weighted share of the question's terms it contains (IDF over the candidate
  sentences, so words every sentence shares count for little);
* **similarity** — the calibrated cosine between the question and the sentence from the bundled e5 model,
  when installed (it carries paraphrase and cross-lingual matches that shared words miss);
* **answer type** — whether it holds the kind of thing the question asks for (a number for "how many", a
  year for "when", a name for "who") that the question itself does not already contain;
* **context** — how well its passage matched the question as a whole.

The best sentence answers; a second one joins it when it scores close to the first.

Whether to answer at all is a separate decision. The **answerability** score is the mean of the calibrated
similarity of the question to its best sentence and to its best passage (with the e5 model); without the
model it is the best sentence's coverage. Shared words alone cannot decide it: hard negatives share many words with
the question (on NoMIRACL, word overlap separates answerable from unanswerable with ROC AUC 0.54 only,
this score with 0.76). Under `min_answerability` the synthesiser declines and the answer is refused as
`unsupported` — an honest "not in the sources" rather than the least-bad sentence.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sourcerer import config
from sourcerer.models import CharSpan, Passage
from sourcerer.retrieval.embedders import CachedEmbedder
from sourcerer.synthesis.draft import Draft
from sourcerer.text import digit_numbers, normalize, sentence_spans, terms

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_MONTHS = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|march|april|may|june|july|aug(ust)?|sept?(ember)?|oct(ober)?|nov(ember)?|"
    r"dec(ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|century|decade)\b"
)
_NUMBER_WORD = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
    r"thousand|million|billion|dozen|several|half)\b"
)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z\-]+")


def answer_type(question: str) -> str | None:
    """What an English question asks for: number, time, person, place, or None when it cannot be told."""
    q = question.strip().casefold()
    if re.search(
        r"\bhow (many|much|long|old|far|big|large|tall|high|often|fast)\b|\bwhat (percentage|percent|number|amount)\b", q
    ):
        return "number"
    if re.search(r"\bwhen\b|\bwhat (year|date|day|month|time|century|decade)\b|\bwhich (year|date|century)\b", q):
        return "time"
    if re.search(r"^who\b|\bwho (is|was|were|are|did|does|has|had)\b|\bwhose\b|\bwhom\b", q):
        return "person"
    if re.search(
        r"^where\b|\bwhere (is|was|are|were|did|does)\b|\bwhat (city|country|state|place)\b|\bin which (city|country|state)\b", q
    ):
        return "place"
    return None


def type_match(kind: str | None, sentence: str, question: str) -> float:
    """1.0 when the sentence holds a new value of the asked-for type, 0.0 when it holds none."""
    if kind is None:
        return 0.5
    lowered = sentence.casefold()
    if kind == "number":
        new = digit_numbers(sentence) - digit_numbers(question)
        return 1.0 if new or _NUMBER_WORD.search(lowered) else 0.0
    if kind == "time":
        return 1.0 if (set(_YEAR.findall(sentence)) - set(_YEAR.findall(question))) or _MONTHS.search(lowered) else 0.0
    known = set(normalize(question).split())
    names = [w for w in _CAPITALISED.findall(sentence) if normalize(w) not in known]
    return 1.0 if names else 0.0


@dataclass
class ScoredSentence:
    passage: int  # 0-based index into the passages
    start: int
    end: int
    text: str
    coverage: float
    similarity: float
    type_score: float
    score: float


@dataclass
class ExtractiveSettings:
    max_passages: int = 5
    max_sentences: int = 2
    second_ratio: float = 0.6  # a second sentence joins when it scores at least this share of the best
    # Operating points chosen on NoMIRACL en (see bench/refusal.py): refuse about half of the unanswerable
    # questions with at most 15% false refusals.
    min_answerability: float = float(config.env("SOURCERER_MIN_ANSWERABILITY", "0.71") or 0.71)  # with the model
    min_answerability_lexical: float = 0.35  # without it
    w_coverage: float = 0.4
    w_similarity: float = 0.4
    w_type: float = 0.1
    w_context: float = 0.1


class ExtractiveSynthesizer:
    """Selects and cites source sentences. `embedder` adds semantic similarity (the bundled e5 by default)."""

    name = "extractive"

    def __init__(self, embedder: CachedEmbedder | None = None, settings: ExtractiveSettings | None = None) -> None:
        self.embedder = embedder
        self.settings = settings or ExtractiveSettings()

    def score_sentences(self, question: str, passages: Sequence[Passage]) -> list[ScoredSentence]:
        s = self.settings
        pool: list[tuple[int, int, int, str]] = []
        for pi, passage in enumerate(passages[: s.max_passages]):
            for start, end in sentence_spans(passage.text):
                pool.append((pi, start, end, passage.text[start:end]))
        if not pool:
            return []
        q_terms = list(dict.fromkeys(terms(question)))
        sent_terms = [set(terms(text)) for *_, text in pool]
        doc_freq = Counter(t for st in sent_terms for t in st)
        n = len(pool)

        def idf(t: str) -> float:
            return math.log(1.0 + (n - doc_freq.get(t, 0) + 0.5) / (doc_freq.get(t, 0) + 0.5))

        total = sum(idf(t) for t in q_terms) or 1.0
        coverage = [sum(idf(t) for t in q_terms if t in st) / total for st in sent_terms]
        passage_terms = [set(terms(p.text)) for p in passages[: s.max_passages]]
        context = [sum(idf(t) for t in q_terms if t in pt) / total for pt in passage_terms]
        similarity = self._similarities(question, [text for *_, text in pool])
        kind = answer_type(question)
        scored = []
        for i, (pi, start, end, text) in enumerate(pool):
            t_score = type_match(kind, text, question)
            sim = similarity[i] if similarity is not None else coverage[i]
            score = s.w_coverage * coverage[i] + s.w_similarity * sim + s.w_type * t_score + s.w_context * context[pi]
            scored.append(ScoredSentence(pi, start, end, text, coverage[i], sim, t_score, score))
        scored.sort(key=lambda x: (-x.score, x.passage, x.start))
        return scored

    def _cosines(self, question: str, texts: list[str]) -> np.ndarray | None:
        if self.embedder is None or not texts:
            return None
        try:
            query = self.embedder.embed([question], "query")[0]
            matrix = self.embedder.embed(texts, "passage")
        except Exception:  # noqa: BLE001 - similarity is an optional signal; lexical scoring still works
            return None
        return np.asarray(matrix @ query)

    def _similarities(self, question: str, texts: list[str]) -> list[float] | None:
        cosines = self._cosines(question, texts)
        if cosines is None or self.embedder is None:
            return None
        return [self.embedder.calibrate(float(c)) for c in cosines]

    def answerability(
        self, question: str, passages: Sequence[Passage], scored: list[ScoredSentence]
    ) -> tuple[float, float, dict[str, float]]:
        """(score, threshold, components): how likely the passages answer the question at all, the bar to
        clear, and what the score is made of (for the trace)."""
        s = self.settings
        if not scored:
            return 0.0, s.min_answerability, {}
        cosines = self._cosines(question, [p.text for p in passages[: s.max_passages]])
        if self.embedder is None or cosines is None:
            return max(x.coverage for x in scored), s.min_answerability_lexical, {}
        best_passage = self.embedder.calibrate(float(cosines.max()))
        best_sentence = max(x.similarity for x in scored)
        components = {"sentence_similarity": round(best_sentence, 4), "passage_similarity": round(best_passage, 4)}
        return (best_sentence + best_passage) / 2, s.min_answerability, components

    def synthesize(self, question: str, passages: Sequence[Passage]) -> Draft:
        s = self.settings
        scored = self.score_sentences(question, passages)
        answerable, threshold, components = self.answerability(question, passages, scored)
        if not scored or answerable < threshold:
            return Draft(
                answer="The sources do not contain an answer to this question.",
                citations=[],
                refused=True,
                provider=self.name,
                detail={"answerability": round(answerable, 4), "min_answerability": threshold, **components},
            )
        chosen = [scored[0]]
        for candidate in scored[1:]:
            if len(chosen) >= s.max_sentences:
                break
            if candidate.score >= s.second_ratio * scored[0].score and normalize(candidate.text) not in {
                normalize(c.text) for c in chosen
            }:
                chosen.append(candidate)
        # Keep source order within a passage so two sentences read naturally.
        chosen.sort(key=lambda c: (c.passage, c.start))
        parts, spans, cited = [], {}, []
        for c in chosen:
            number = c.passage + 1
            parts.append(f"{_ensure_stop(c.text)} [{number}]")
            if number not in spans:
                spans[number] = CharSpan(start=c.start, end=c.end)
            else:  # two sentences from one passage: cite the range covering both
                spans[number] = CharSpan(start=min(spans[number].start, c.start), end=max(spans[number].end, c.end))
            cited.append(number)
        return Draft(
            answer=" ".join(parts),
            citations=sorted(set(cited)),
            refused=False,
            provider=self.name,
            spans=spans,
            detail={
                "answerability": round(answerable, 4),
                "min_answerability": threshold,
                "sentences": len(chosen),
                **components,
            },
        )


def _ensure_stop(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?。！？؟…\"”'’)" else text + "."
