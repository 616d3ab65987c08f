"""Claim support: does a cited text support a claim, and which of its sentences does?

The local judge asks this for every claim, and citations of a model's answer use it to pick their `quote`.
Deterministic checks come first and veto on their own — a number or a quoted string the source does not
hold, a negation the best-matching sentence does not share. What is left is decided by a small learned
model (`data/claim_support.json`, trained by `bench/train/claim_support.py` on HaluEval QA and summary items
that no benchmark reports on) over features of how the claim's words, names, word pairs and — with the
bundled e5 model — meaning are found in the cited sentences. A faithful paraphrase keeps most word pairs and
names and stays close in meaning; a fabrication adds names, pairs or facts the source does not hold.

An answer of several claims is judged as a whole (`judge_answer`) by a second model over its claims' mean and
weakest support: each sentence of a faithful summary is only partly worded as its source, and asking each to pass
alone rejected most of them; a fabricated summary is less grounded throughout.

Why it is long: the vetoes, the features and both models are one judgement, trained together by one script; the
features must be computed here exactly as `bench/train/claim_support.py` computed them.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources

from sourcerer.injection import is_instruction
from sourcerer.language import crosses_languages
from sourcerer.models import Passage
from sourcerer.retrieval.embedders import CachedEmbedder, caches, calibrated_similarities
from sourcerer.sentences import has_lead_ins, lead_ins_apart, lead_ins_of, sentence_spans
from sourcerer.synthesis.answerability import LogisticModel
from sourcerer.text import (
    NEGATIONS,
    STOPWORDS,
    digit_numbers,
    normalize,
    numbers,
    stem,
    terms,
)

SUPPORT_FEATURES: dict[str, list[str]] = {
    "lexical": [
        "coverage",  # share of the claim's terms found anywhere in the cited text
        "sentence_coverage",  # ... found in its best sentence
        "window_coverage",  # ... found within two adjacent sentences
        "pair_coverage",  # share of the claim's adjacent term pairs found near each other in one sentence
        "sequence_coverage",  # longest run of the claim's terms found in one sentence in the same order (a compression)
        "missing_names",  # names (capitalised words) of the claim the text lacks
        "missing_name_share",
        "missing_relation",  # a relation word (before, more, first...) the best sentence lacks
        "missing_number_words",  # number words ("three") with no match among the text's numbers
        "negation_mismatch",  # the best-matching sentence and the claim differ in negation (not close enough to veto)
        "log_claim_terms",
    ],
}
SUPPORT_FEATURES["semantic"] = SUPPORT_FEATURES["lexical"] + [
    "similarity",  # the highest calibrated cosine of the claim to one of the sentences sharing most words with it
    "best_sentence_similarity",  # ... to the sentence sharing most words
]

# What the answer model reads of an answer's claims: the claim model's mean and weakest probability, the share of
# claims one sentence holds word for word, and the mean and weakest of each of these claim features.
_AGGREGATED = ["coverage", "sentence_coverage", "window_coverage", "pair_coverage", "sequence_coverage"]
ANSWER_SUPPORT_FEATURES: dict[str, list[str]] = {
    "lexical": ["mean_probability", "min_probability", "contained_share"] + [f"{k}_{n}" for n in _AGGREGATED for k in ("mean", "min")]
}
ANSWER_SUPPORT_FEATURES["semantic"] = ANSWER_SUPPORT_FEATURES["lexical"] + ["mean_similarity", "min_similarity"]

RELATION_WORDS = frozenset(
    "before after more less most least than first last earlier later older younger larger smaller bigger "
    "higher lower longer shorter both only same different".split()
)
RELATION_TERMS = frozenset(stem(w) for w in RELATION_WORDS)  # as the tokenizer emits them ("before" -> "befor")
_QUOTED = re.compile(r"[\"“«「『]([^\"”»」』]{2,})[\"”»」』]")
_NUMBER_WORDS = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|"
    r"million|billion)\b"
)


@dataclass
class SourceSentence:
    paragraph: int
    start: int  # offsets in the cited text
    end: int
    text: str
    term_list: list[str]  # checked terms in order (word order is a feature)
    terms: set[str]
    pairs: set[tuple[str, str]]

    @classmethod
    def of(cls, paragraph: int, start: int, end: int, text: str, lead: str = "") -> SourceSentence:
        """`lead`: the lead-in the sentence completes (`sentences.lead_in`), whose words it says too: "are allergic
        to aspirin" under "Do not take ibuprofen if you:" holds every word of "Do not take ibuprofen if you are
        allergic to aspirin"."""
        sentence_terms = checked_terms(f"{lead}\n{text}" if lead else text)
        return cls(paragraph, start, end, text, sentence_terms, set(sentence_terms), _pairs(sentence_terms))


@dataclass
class Support:
    """The verdict on one claim: supported or not, why, and the model's probability. `values` are the claim's
    features (empty when a check decided before the model: no content words, or a veto)."""

    supported: bool
    why: str
    probability: float
    values: dict[str, float] = field(default_factory=dict)
    feature_set: str = ""


def checked_terms(text: str) -> list[str]:
    """Content terms plus relation words (stopwords for search, but they decide a comparison)."""
    return list(dict.fromkeys(terms(text) + [t for t in terms(text, keep_stopwords=True) if t in RELATION_TERMS]))


def _pairs(term_list: Sequence[str], reach: int = 3) -> set[tuple[str, str]]:
    """Ordered pairs of terms at most `reach` apart: a relation between two words survives light rewording."""
    return {(a, b) for i, a in enumerate(term_list) for b in term_list[i + 1 : i + 1 + reach] if a != b}


LeadIns = dict[tuple[int, int], tuple[int, int]]  # a line's span -> the span of the lead-in it completes


@lru_cache(maxsize=64)
def source_sentences(source: str) -> tuple[SourceSentence, ...]:
    """Every sentence of the cited text with its terms and term pairs, computed once per cited text (the claims
    of one answer share it). A line under a lead-in holds the lead-in's words too, and a lead-in with several
    lines is also one sentence with all of them (`sentences.lead_in`)."""
    out = []
    offset = 0
    leads: LeadIns = {}
    if has_lead_ins(source):  # a lead-in can stand a blank line above its lines: found over the whole text
        leads = lead_ins_of(source, lead_ins_apart(source, sentence_spans(source)))
    for number, paragraph in enumerate(re.split(r"(\n\s*\n)", source)):
        if number % 2 == 0:
            for start, end in lead_ins_apart(paragraph, sentence_spans(paragraph)):
                if is_instruction(paragraph[start:end]):  # addresses the model: never support for a claim
                    continue
                lead = leads.get((offset + start, offset + end))
                opening = "" if lead is None else source[lead[0] : lead[1]]
                out.append(SourceSentence.of(number // 2, offset + start, offset + end, paragraph[start:end], opening))
        offset += len(paragraph)
    return tuple(_with_whole_lists(out, leads, source))


def cited_sentences(passage: Passage) -> tuple[list[SourceSentence], LeadIns]:
    """A cited passage's sentences as a claim is matched with them, and its lead-ins (`Passage.lead_ins`): a line
    with the lead-in it completes, and a lead-in with all its lines as one more sentence, as the judge reads them
    (`support.source_sentences`)."""
    leads = passage.lead_ins()
    sentences = [
        SourceSentence.of(0, a, b, passage.text[a:b], passage.text[slice(*leads[(a, b)])] if (a, b) in leads else "")
        for a, b in passage.sentence_offsets()
    ]
    return _with_whole_lists(sentences, leads, passage.text), leads


def _with_whole_lists(sentences: list[SourceSentence], leads: LeadIns, text: str) -> list[SourceSentence]:
    """`sentences` (in order) and, for each lead-in with several lines among them, one more sentence from the
    lead-in to its last line: what the extractive answer says when it gives several ("The following are never
    reimbursed: traffic fines; minibar items.")."""
    lines: dict[tuple[int, int], list[SourceSentence]] = {}
    for sentence in sentences:
        if (lead := leads.get((sentence.start, sentence.end))) is not None:
            lines.setdefault(lead, []).append(sentence)
    whole = [
        SourceSentence.of(under[0].paragraph, start, under[-1].end, text[start : under[-1].end])
        for (start, _), under in lines.items()
        if len(under) > 1
    ]
    return sentences + whole


@lru_cache(maxsize=64)
def _source_words(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """(every word of the cited text, stopwords kept; its numbers), once per cited text."""
    return frozenset(terms(source, keep_stopwords=True)), frozenset(numbers(source))


def names(claim: str) -> list[str]:
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


_TOKEN = re.compile(r"[\w'’]+|[.,;:!?()\[\]—–-]")
NEGATION_REACH = 4  # a negation word negates the next few words, up to punctuation or the end of its line


def negated_terms(text: str) -> tuple[set[str], set[str]]:
    """(terms said with a negation in front, terms said without): "lost six of their last eight" and "has
    never lost" differ on "lost" only, whatever else the sentence negates."""
    negative, positive = said_with_negation(text)
    return negative, positive - negative


def said_with_negation(text: str) -> tuple[set[str], set[str]]:
    """(terms said with a negation in front at least once, terms said without at least once)."""
    negative: set[str] = set()
    positive: set[str] = set()
    reach, last = 0, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if "\n" in text[last : match.start()]:
            reach = 0  # a line ends what it negates: "Do not drive if" over "you feel dizzy." negates driving only
        last = match.end()
        if not token[0].isalnum():
            reach = 0
            continue
        folded = token.casefold().replace("’", "'")
        if folded in NEGATIONS or folded.endswith("n't"):
            reach = NEGATION_REACH
            continue
        for term in terms(token):
            (negative if reach > 0 else positive).add(term)
        reach = max(0, reach - 1)
    return negative, positive


def contradicts(claim: str, sentence: str) -> bool:
    """Whether claim and sentence disagree on the polarity of a content term they share: one says it only with a
    negation, the other only without. A term said both ways is no disagreement: "No tome ibuprofeno si: es
    alérgico al ibuprofeno ..." negates taking ibuprofen and names the allergy to it, as its lines do."""
    claim_neg, claim_pos = said_with_negation(claim)
    sent_neg, sent_pos = said_with_negation(sentence)
    return bool((claim_neg - claim_pos) & (sent_pos - sent_neg)) or bool((sent_neg - sent_pos) & (claim_pos - claim_neg))


MODELS_FILE = "claim_support.json"
CONTAINED = "every word of the claim is in one cited sentence"  # the reason a claim passes by rule (`contained`)
SIMILARITY_CANDIDATES = 3  # sentences whose meaning is compared with a claim's
NEGATION_MATCH = 0.6  # share of the claim's terms a sentence must hold before its negation can veto the claim


@dataclass
class SupportModel:
    """The claim-support model of one feature set, its two operating points, and the answer model that judges
    an answer of several claims as a whole (None: each claim is judged alone)."""

    model: LogisticModel
    threshold_several: float  # per claim, in an answer of several claims
    answer: LogisticModel | None = None

    def threshold(self, claims_in_answer: int) -> float:
        return self.model.threshold if claims_in_answer <= 1 else self.threshold_several


@lru_cache(maxsize=1)
def load_support_models() -> dict[str, SupportModel]:
    raw = json.loads(resources.files("sourcerer").joinpath("data", MODELS_FILE).read_text(encoding="utf-8"))
    return {
        name: SupportModel(
            LogisticModel.from_json(entry["model"]),
            float(entry["threshold_several_claims"]),
            LogisticModel.from_json(entry["answer"]) if "answer" in entry else None,
        )
        for name, entry in raw["models"].items()
    }


@lru_cache(maxsize=1)
def support_models_version() -> str:
    """The shipped models' fingerprint: the local judge is named by it, so an audit asks a retrained judge afresh."""
    return hashlib.sha256(resources.files("sourcerer").joinpath("data", MODELS_FILE).read_bytes()).hexdigest()[:8]


def weighed(supports: Sequence[Support], answer: LogisticModel | None) -> float | None:
    """The answer model's probability for an answer's claim verdicts; None (nothing to weigh) with fewer than two
    claims with features, a vetoed claim (its verdict stands), or no answer model."""
    vetoed = any(not s.supported and not s.values for s in supports)
    if answer is None or vetoed or sum(1 for s in supports if s.values) < 2:
        return None
    return answer.probability(answer_support_features(supports))


def answer_support_features(supports: Sequence[Support]) -> dict[str, float]:
    """The answer model's features: the mean and the weakest of its claims' (each claim scored by the model)."""
    scored = [s for s in supports if s.values]
    out = {
        "mean_probability": sum(s.probability for s in scored) / len(scored),
        "min_probability": min(s.probability for s in scored),
        "contained_share": sum(1 for s in scored if contained(s.values)) / len(scored),
    }
    for name in _AGGREGATED + ["similarity"]:
        values = [s.values.get(name, 0.0) for s in scored]
        out[f"mean_{name}"] = sum(values) / len(values)
        out[f"min_{name}"] = min(values)
    return out


class ClaimSupport:
    """Scores claims against cited texts. `embedder` adds the semantic features (the bundled e5 model)."""

    def __init__(self, embedder: CachedEmbedder | None = None, models: dict[str, SupportModel] | None = None) -> None:
        self.embedder = embedder
        self.models = models or load_support_models()

    def veto(self, claim: str, source: str, sentences: Sequence[SourceSentence]) -> str | None:
        """The deterministic reasons a claim cannot be supported, or None."""
        missing = digit_numbers(claim) - _source_words(source)[1]
        if missing:
            return f"number not in source: {', '.join(sorted(missing))}"
        folded = normalize(source)
        for quote in _QUOTED.findall(claim):
            if normalize(quote).strip() not in folded:
                return f"quoted text not in source: {quote!r}"
        claim_terms = set(checked_terms(claim))
        close = [s for s in sentences if claim_terms and len(claim_terms & s.terms) / len(claim_terms) >= NEGATION_MATCH]
        # Only a sentence that says nearly the same thing can contradict by negation; with several such
        # sentences, one of the same polarity is enough.
        if close and all(contradicts(claim, s.text) for s in close):
            return "negation differs from the source"
        return None

    def features(
        self, claim: str, source: str, sentences: Sequence[SourceSentence], semantic: bool = True
    ) -> tuple[dict[str, float], str]:
        """(features, feature set) of one claim against its cited text; `semantic=False` stops before the model."""
        claim_terms = checked_terms(claim)
        wanted = set(claim_terms)
        source_terms = set().union(*(s.terms for s in sentences)) if sentences else set()
        n = max(1, len(wanted))
        best = best_sentence(claim_terms, sentences)
        window = 0.0
        for i, sentence in enumerate(sentences):
            joined = set().union(*(s.terms for s in sentences[i : i + 2] if s.paragraph == sentence.paragraph))
            window = max(window, len(wanted & joined) / n)
        claim_pairs = _pairs(claim_terms)
        found_pairs = set().union(*(s.pairs for s in sentences)) if sentences else set()
        claim_names = names(claim)
        source_words, source_numbers = _source_words(source)
        missing_names = [x for x in claim_names if not all(t in source_words for t in terms(x, keep_stopwords=True))]
        number_words = [w for w in _NUMBER_WORDS.findall(normalize(claim)) if numbers(w) - source_numbers]
        relations = wanted & RELATION_TERMS
        values = {
            "coverage": len(wanted & source_terms) / n,
            "sentence_coverage": len(wanted & best.terms) / n if best else 0.0,
            "window_coverage": window,
            "pair_coverage": len(claim_pairs & found_pairs) / len(claim_pairs) if claim_pairs else 1.0,
            "missing_names": float(len(missing_names)),
            "missing_name_share": len(missing_names) / len(claim_names) if claim_names else 0.0,
            "missing_relation": 1.0 if best is not None and relations - best.terms else 0.0,
            "missing_number_words": float(len(number_words)),
            "negation_mismatch": 1.0 if best is not None and contradicts(claim, best.text) else 0.0,
            "log_claim_terms": math.log1p(len(wanted)),
        }
        # Meaning and word order are compared with the few sentences that share most words with the claim: a
        # paraphrase keeps some of them, and embedding every sentence of a long source would cost more than the
        # whole answer.
        candidates = similarity_candidates(wanted, sentences)
        values["sequence_coverage"] = max((_common_subsequence(claim_terms, c.term_list) for c in candidates), default=0) / n
        if not semantic:
            return values, "lexical"
        cosines = calibrated_similarities(self.embedder, claim, [c.text for c in candidates])
        if cosines is None:
            return values, "lexical"
        values["similarity"] = max(cosines)
        values["best_sentence_similarity"] = cosines[0]
        return values, "semantic"

    def check(
        self,
        claim: str,
        source: str,
        sentences: Sequence[SourceSentence] | None = None,
        claims_in_answer: int = 1,
        weighed_later: bool = False,
    ) -> Support:
        """Whether `source` supports `claim`, with the reason. `claims_in_answer` picks the operating point (see
        `SupportModel`). A claim one cited sentence contains is decided before the model runs (an extractive
        answer's claims are its cited sentences: verifying them embeds nothing); `weighed_later` computes its
        features all the same, for an answer model that weighs it with claims that were not."""
        sentences = list(sentences) if sentences is not None else source_sentences(source)
        if not checked_terms(claim):
            return Support(True, "no content words to check", 1.0)
        vetoed = self.veto(claim, source, sentences)
        if vetoed:
            return Support(False, vetoed, 0.0)
        values, feature_set = self.features(claim, source, sentences, semantic=False)
        if contained(values):
            if weighed_later and self.embedder is not None:
                values, feature_set = self.features(claim, source, sentences)
            return Support(True, CONTAINED, 1.0, values, feature_set)
        if (pair := crosses_languages(claim, source)) is not None:
            # the claim models compare words, and e5 similarities across languages sit too low to tell: a claim
            # in another language than its source cannot be checked here, which is not to say it is false
            return Support(False, f"the claim is in another language ({pair.question}) than its source ({pair.passage}): "
                           "the local judge checks claims in their source's language; an LLM judge reads across languages", 0.0)
        if self.embedder is not None:
            values, feature_set = self.features(claim, source, sentences)
        chosen = self.models[feature_set]
        probability = chosen.model.probability(values)
        if probability >= chosen.threshold(claims_in_answer):
            return Support(True, f"supported (p={probability:.2f})", probability, values, feature_set)
        return Support(False, _why(claim, values, source), probability, values, feature_set)

    def judge_answer(self, claims: Sequence[tuple[str, str]]) -> list[Support]:
        """The verdicts on an answer's claims, each given as (claim, the text it cites). Several claims, none
        vetoed, are weighed together by the answer model, whose verdict is the answer's: claims doubted alone
        pass with a passed answer, and a rejected answer names its weakest claim if no claim failed alone."""
        self.embed_ahead(claims)
        supports = [self.check(claim, source, claims_in_answer=len(claims)) for claim, source in claims]
        if all(s.supported and (not s.values or contained(s.values)) for s in supports):
            return supports  # every claim restates one cited sentence: nothing to weigh, and no model run
        supports = [
            self.check(claim, source, claims_in_answer=len(claims), weighed_later=True) if s.values and contained(s.values) else s
            for s, (claim, source) in zip(supports, claims, strict=True)
        ]
        scored = [s for s in supports if s.values]
        model = self.models[scored[0].feature_set].answer if scored else None
        p = weighed(supports, model)
        if p is None or model is None:
            return supports  # a single claim, or a veto: nothing to weigh
        if p >= model.threshold:
            kept = f"supported with the answer as a whole (answer p={p:.2f}; this claim alone p={{:.2f}})"
            return [s if s.supported else replace(s, supported=True, why=kept.format(s.probability)) for s in supports]
        if all(s.supported for s in supports):
            i = min(range(len(supports)), key=lambda i: supports[i].probability)
            why = _why(claims[i][0], supports[i].values, claims[i][1])
            supports[i] = replace(supports[i], supported=False, why=f"the answer as a whole is not supported (answer p={p:.2f}); {why}")
        return supports

    def embed_ahead(self, claims: Sequence[tuple[str, str]]) -> None:
        """Embed, in one model call, every claim of an answer that the model will weigh, and in one more the
        sentences they are compared with that ingest did not store: the per-claim checks then read them from the
        embedder's cache, so verifying an answer of n claims costs at most two model calls, not up to 2n. Nothing
        runs when every claim restates a cited sentence (no claim needs the model) or the embedder keeps no cache."""
        embedder = self.embedder
        if embedder is None or not caches(embedder):
            return
        pending: list[tuple[str, str, list[SourceSentence]]] = []
        for claim, source in claims:
            sentences = source_sentences(source)
            if checked_terms(claim) and not self.veto(claim, source, sentences):
                pending.append((claim, source, sentences))
        if all(contained(self.features(claim, source, sentences, semantic=False)[0]) for claim, source, sentences in pending):
            return
        texts = [c.text for claim, _, sentences in pending for c in similarity_candidates(set(checked_terms(claim)), sentences)]
        try:
            embedder.embed(list(dict.fromkeys(claim for claim, *_ in pending)), "query")
            if texts:
                embedder.embed(list(dict.fromkeys(texts)), "passage")
        except Exception:  # noqa: BLE001 - the per-claim checks fall back as they always did
            return


def similarity_candidates(wanted: set[str], sentences: Sequence[SourceSentence]) -> list[SourceSentence]:
    """The few cited sentences sharing most words with a claim, the ones its meaning is compared with."""
    return sorted(sentences, key=lambda x: (-len(wanted & x.terms), x.start))[:SIMILARITY_CANDIDATES]


def contained(values: dict[str, float]) -> bool:
    """A claim whose every word (relation words included) one cited sentence holds, naming no name the source
    lacks, is supported without asking the model: it restates that sentence, at most shortened (the vetoes have
    already ruled out a changed number or negation)."""
    return values["sentence_coverage"] >= 1.0 and values["missing_names"] == 0


def _common_subsequence(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two term lists (claims and sentences are short)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def best_sentence(claim_terms: Sequence[str], sentences: Sequence[SourceSentence]) -> SourceSentence | None:
    """The cited sentence sharing most terms with the claim (its negation is compared with the claim's)."""
    wanted = set(claim_terms)
    best, best_overlap = None, -1
    for sentence in sentences:
        overlap = len(wanted & sentence.terms)
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best


def supporting_sentences(claim: str, sentences: Sequence[SourceSentence]) -> list[SourceSentence]:
    """The sentences a claim stands on: the best-matching one, plus its neighbour when that one adds claim
    terms the first lacks (a claim joining two adjacent sentences)."""
    claim_terms = set(checked_terms(claim)) | digit_numbers(claim)
    if not claim_terms or not sentences:
        return []
    scored = [(len(claim_terms & (s.terms | digit_numbers(s.text))), i) for i, s in enumerate(sentences)]
    overlap, index = max(scored, key=lambda x: (x[0], -x[1]))
    if overlap == 0:
        return []
    chosen = [sentences[index]]
    covered = claim_terms & (sentences[index].terms | digit_numbers(sentences[index].text))
    for neighbour in (index - 1, index + 1):
        if 0 <= neighbour < len(sentences) and sentences[neighbour].paragraph == sentences[index].paragraph:
            extra = (claim_terms & (sentences[neighbour].terms | digit_numbers(sentences[neighbour].text))) - covered
            if len(extra) >= 2:
                chosen.append(sentences[neighbour])
                break
    return sorted(chosen, key=lambda s: s.start)


def _why(claim: str, values: dict[str, float], source: str) -> str:
    """The reason a claim the model rejected is unsupported, by what it found missing."""
    if values["missing_names"]:
        source_words = set(terms(source, keep_stopwords=True))
        missing = [x for x in names(claim) if not all(t in source_words for t in terms(x, keep_stopwords=True))]
        return f"name not in source: {', '.join(missing[:3])}"
    if values["missing_number_words"]:
        return "number not in source"
    if values["missing_relation"]:
        best = best_sentence(checked_terms(claim), source_sentences(source))
        missing = sorted((set(checked_terms(claim)) & RELATION_TERMS) - (best.terms if best else set()))
        return f"relation not stated in the source: {', '.join(missing)}"
    source_terms = set(checked_terms(source))
    missing_terms = [t for t in checked_terms(claim) if t not in source_terms]
    if missing_terms:
        return f"words not in source: {', '.join(missing_terms[:6])}"
    return f"the claim joins facts the source states apart (word pairs found {values['pair_coverage']:.2f})"
