"""The extractive synthesiser: answers with the source sentences that best answer the question.

It needs no model server. Every sentence of the top passages gets features — **coverage** (the IDF-weighted
share of the question's terms it holds), **answer type** (whether it holds a new value of the kind the
question asks for: a number for "how many", a time for "when", a name or role for "who", in several
languages), its passage's **context** and retrieval rank, and with the bundled e5 model the calibrated
**similarity** of sentence and passage to the question. A learned sentence model ranks them; the best
sentence answers and a second joins it when it scores close to the first. A heading, a plain-text title or a
question (an FAQ's own) is never a candidate: its words count for its passage's context (`states_nothing`). A
line that completes a lead-in ("Do not take ibuprofen if you:" over "- are allergic to aspirin") is quoted with
it, and a lead-in chosen alone with its lines (`sentences.lead_in`).

Whether to answer at all is a separate, learned decision (`synthesis.answerability`): the answerability model
looks at the best sentence, its margin over the others, the question terms no passage holds, retrieval
scores and agreement between passages. Under its operating point the synthesiser declines and the answer is
refused as `unsupported` — an honest "not in the sources" rather than the least-bad sentence. Without the
embedding model (`SOURCERER_EMBEDDER=none`, or the `local` extra not installed) the lexical models run, trained
for that feature set; the trace's `features` says which ran. Without the reader, an answer from a passage in
another language than the question is refused: the sentence models read words, and across languages a shared
word is chance.

Why it is long: the features, the two decisions and the answer's shape read the same scored sentences; apart,
each would re-derive them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from sourcerer.assertions import is_assertion
from sourcerer.citations import strip_markers
from sourcerer.injection import is_instruction, stated_text, without_invisibles
from sourcerer.language import crosses_languages
from sourcerer.models import CharSpan, Passage
from sourcerer.people import groups_named
from sourcerer.reading import Reader, under_heading
from sourcerer.retrieval.embedders import CachedEmbedder, calibrated_similarities, with_known
from sourcerer.retrieval.keyword import idf as bm25_idf
from sourcerer.sentences import ANSWER_LABEL, is_question, list_run, names_steps, row_cells, states_nothing
from sourcerer.settings import PICKED_FROM, READER_SENTENCES
from sourcerer.support import said_with_negation
from sourcerer.synthesis.answerability import AnswerModels, answer_features, load_answer_models, logit, sigmoid
from sourcerer.synthesis.days import days_named, for_other_days, months_named, says_when
from sourcerer.synthesis.draft import Draft
from sourcerer.synthesis.scope import (
    ASKED_FREQUENCY,
    CLOCK,
    CLOCK_SAID,
    CONTACT_VALUES,
    DOSED,
    FREQUENCY_SAID,
    PRICE_WORDS,
    TIME_UNIT,
    answer_kind,
    answer_said_elsewhere,
    answer_scope,
    answer_swaps_name,
    answers_another_question,
    asked_value,
    asks_yes_or_no,
    asks_yes_or_no_any_script,
    fits_quantity,
    groups_aged,
    holds_asked_number,
    holds_asked_pair,
    holds_value,
    is_german,
    missing_value,
    other_kind,
    other_subject,
    says_free,
    source_texts,
    states_quantity_of,
    swapped_name,
    unstemmed_language,
    without_quantities,
)
from sourcerer.synthesis.unnamed import PRONOUN_TERMS, answer_misses_thing, content_pairs
from sourcerer.text import (
    CJK_LETTER,
    FAMILY_LETTERS,
    HIRAGANA,
    digit_numbers,
    family,
    focus_terms,
    names_all,
    normalize,
    passage_terms,
    terms,
)

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_TIME_WORDS = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|march|april|may|june|july|aug(ust)?|sept?(ember)?|oct(ober)?|nov(ember)?|"
    r"dec(ember)?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|weekdays?|weekends?|"
    r"century|decade|daily|weekly|monthly|yearly|annually|morning|evening|night|noon|midnight|"
    r"lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|janvier|fevrier|mars|avril|mai|juin|juillet|aout|"
    r"septembre|octobre|novembre|decembre|(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|vormittag|"
    r"nachmittag|abend|morgen)s?|januar|"
    r"februar|marz|juni|juli|oktober|dezember|lunes|martes|miercoles|jueves|viernes|sabado|domingo|enero|"
    r"febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
    r"segunda|terca|quarta|quinta|sexta|janeiro|fevereiro|marco|maio|junho|julho)\b"
    r"|الاثنين|الثلاثاء|الاربعاء|الخميس|الجمعه|السبت|الاحد|يناير|فبراير|مارس|ابريل|مايو|يونيو|يوليو|اغسطس|سبتمبر|"
    r"اكتوبر|نوفمبر|ديسمبر|صباحا|مساء|يوميا|اسبوعيا|شهريا|"
    r"星期|周[一二三四五六日]|[0-9一二三四五六七八九十]+[月日号点]|年|上午|下午|每天|每周|每月"
)
_NUMBER_WORD = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"hundred|thousand|million|billion|dozen|several|half|once|twice|"
    r"un|une|deux|trois|quatre|cinq|sept|huit|neuf|dix|douze|quinze|vingt|trente|cent|mille|"
    r"ein|eine|einen|zwei|drei|vier|funf|sechs|sieben|acht|neun|zehn|zwolf|zwanzig|dreissig|hundert|tausend|"
    r"uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|doce|quince|veinte|treinta|cien|mil|"
    r"um|duas|quatro)\b"
    r"|واحد|اثنان|اثنين|ثلاث|اربع|خمس|ست|سبع|ثماني|تسع|عشر|مائه|الف|"
    r"[一二两三四五六七八九十百千万]"
)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z\-]+")
# Who answers a "who" question in a policy or handbook: usually a role, not a proper name.
_ROLES = re.compile(
    r"\b(lead|leads|manager|managers|team|owner|officer|director|head|admin|administrator|supervisor|department|"
    r"committee|engineer|engineers|staff|employee|employees|customer|customers|board|desk|agent|agents|"
    r"responsable|equipe|directeur|directrice|chef|leiter|leiterin|team|abteilung|vorgesetzte|gerente|"
    r"jefe|equipo|departamento|supervisor)\b"
    r"|مدير|فريق|قسم|مسؤول|رئيس|موظف|经理|团队|部门|负责人|主管|员工"
)

_QUESTION_FORMS: list[tuple[str, re.Pattern[str]]] = [
    (
        "number",
        re.compile(
            r"\bhow (many|much|long|old|far|big|large|tall|high|often|fast|soon)\b|\bwhat (percentage|percent|number|"
            r"amount|size|limit|price|fee|cost)\b|\bcombien\b|\bquel(le)? (est le|est la)? ?(prix|montant|nombre|"
            r"duree|delai|limite)\b|\bwie (viel|viele|lange|oft|hoch|alt|gross|weit)\b|\bcuant[oa]s?\b|"
            r"\bquant[oa]s?\b|كم|多少|几|多久|多长"
        ),
    ),
    (
        "time",
        re.compile(
            r"\bwhen\b|\bwhat (year|date|day|days|month|time|century|decade)\b|\bwhich (year|date|day|days|"
            r"century)\b|\bquand\b|\bwann\b|\bcuando\b|\bquando\b|\ba quelle heure\b|\bwelche[nm]? (tag|tagen|"
            r"jahr)\b|متي|متى|什么时候|何时|哪天|哪一天|哪年|几点"
        ),
    ),
    (
        "person",
        re.compile(
            r"^who\b|\bwho (is|was|were|are|did|does|has|had|can|must|should|approves|decides|signs)\b|\bwhose\b|"
            r"\bwhom\b|^qui\b|\bqui (doit|peut|approuve|valide|signe|est)\b|\bwer\b|\bquien(es)?\b|^quem\b|"
            r"^من |من الذي|من يوافق|谁"
        ),
    ),
    (
        "place",
        re.compile(
            r"^where\b|\bwhere (is|was|are|were|did|does|do|can|should)\b|\bwhat (city|country|state|place)\b|"
            r"\bin which (city|country|state)\b|\bwo\b|\bdonde\b|\bonde\b|أين|اين|哪里|在哪|何处"
        ),
    ),
]


def answer_type(question: str) -> str | None:
    """What a question asks for: number, time, person, place, or None when its form does not tell.

    Knows the question words of English, French, German, Spanish, Portuguese, Arabic and Chinese; accents
    are folded first, so "periode" and "période" read the same.
    """
    q = normalize(question.strip())
    for kind, pattern in _QUESTION_FORMS:
        if pattern.search(q):
            return kind
    return None


def type_match(kind: str | None, sentence: str, question: str) -> float:
    """1.0 when the sentence holds a new value of the asked-for type, 0.0 when it holds none, 0.5 when the
    question's form does not tell (or the script has no capital letters to find names by)."""
    if kind is None:
        return 0.5
    folded = normalize(sentence)
    if kind == "number":
        new = digit_numbers(sentence) - digit_numbers(question)
        # what costs nothing is an amount: "Combien coûte l'installation ?" is answered "L'installation est gratuite."
        free = asked_value(question) == "money" and holds_value("money", sentence)
        return 1.0 if new or free or _NUMBER_WORD.search(folded) else 0.0
    if kind == "time":
        new_year = set(_YEAR.findall(sentence)) - set(_YEAR.findall(question))
        return 1.0 if new_year or CLOCK.search(sentence) or _TIME_WORDS.search(folded) else 0.0
    if kind == "person" and _ROLES.search(folded):
        return 1.0
    if not re.search(r"[A-Za-z]", sentence):
        return 0.5  # Arabic, Chinese...: no capitals to find names by
    known = set(normalize(question).split())
    names = [w for w in _CAPITALISED.findall(sentence) if normalize(w) not in known]
    return 1.0 if names else 0.0


@dataclass
class ScoredSentence:
    passage: int  # 0-based index into the passages
    start: int
    end: int
    text: str
    features: dict[str, float]
    score: float  # the sentence model's probability that this sentence answers
    # the same, with its chunk's heading read as part of it ("Yes, for a flat fee." under "Do you ship to Canada?"),
    # for the relevance check (`synthesis.chain.relevance_reading`); None where no heading adds a question word
    headed: float | None = None
    # the question's word this sentence swaps for another, where a sentence near it keeps it ("express" for the
    # standard shipping rule, asked how long express shipping takes): about another kind, never the answer
    other_kind: str | None = None
    # which of its passage's headings, titles or questions it stands under (0: none): a second sentence of an answer
    # comes from the same one, never from the next FAQ item of the passage
    section: int = 0
    heading: str = ""  # the last of them (else the heading its chunk opens with): the reader reads the sentence after it
    # whether the only words of the question it holds name nothing: pronouns the index keeps ("es", "il"), a Chinese
    # question's asking words ("提供", provided): no second sentence
    names_nothing_asked: bool = False

    @property
    def under_heading(self) -> float:
        return self.score if self.headed is None else self.headed


@dataclass
class Analysis:
    """Everything the two decisions look at, for one question over its passages."""

    feature_set: str
    question: str = ""
    sentences: list[ScoredSentence] = field(default_factory=list)
    passages: list[dict[str, float]] = field(default_factory=list)
    answer: dict[str, float] = field(default_factory=dict)
    answerability: float = 0.0
    set_aside: int = 0  # sentences that address the reader or the model: never candidates
    off_focus: int = 0  # sentences that never name a follow-up's new topic, where others do: never candidates
    # the FAQ question whose replies were put first, as the one asked in other words (`_asked_question_first`)
    asked_question: str | None = None
    sources: list[Passage] = field(default_factory=list)  # the passages the sentences' offsets point into
    # per source, each sentence that completes a lead-in to that lead-in (`Passage.lead_ins`), read once per question
    leads: list[dict[tuple[int, int], tuple[int, int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.leads:
            self.leads = [passage.lead_ins() for passage in self.sources]


@dataclass
class ExtractiveSettings:
    max_passages: int = 5
    max_sentences: int = 2
    max_list_items: int = 10  # a list the question asks for whole is quoted whole up to this long, else its best line
    read: int = READER_SENTENCES  # sentences the reading model reads, the cheap model's best first
    pick_from: int = PICKED_FROM  # where the sentence models decide: the best sentences the reader picks among
    second_ratio: float | None = None  # a second sentence joins at this share of the best one's probability (None: the model's)
    min_answerability: float | None = None  # None: the shipped model's operating point (`ask()` passes SOURCERER_MIN_ANSWERABILITY)
    veto: float | None = None  # None: the reader's `veto` operating point (`ask()` passes SOURCERER_READER_VETO; 0: never)


class ExtractiveSynthesizer:
    """Selects and cites source sentences. `embedder` adds semantic features (the bundled e5 by default);
    without one the lexical models decide. `reader`: the reading model decides whether to answer and with which
    sentence; else `picker`: the sentence models decide whether, and the reading model picks which among their
    best (`ExtractiveSettings.pick_from`)."""

    name = "extractive"

    def __init__(
        self,
        embedder: CachedEmbedder | None = None,
        settings: ExtractiveSettings | None = None,
        models: dict[str, AnswerModels] | None = None,
        reader: Reader | None = None,
        picker: Reader | None = None,
    ) -> None:
        self.embedder = embedder
        self.settings = settings or ExtractiveSettings()
        self.models = models or load_answer_models()
        self.reader = reader
        self.picker = picker

    def threshold(self, feature_set: str) -> float:
        if self.settings.min_answerability is not None:
            return self.settings.min_answerability
        return self.models[feature_set].answerability.threshold

    # --- features ---------------------------------------------------------------------------------------

    def analyse(self, question: str, passages: Sequence[Passage], focus: Sequence[str] = ()) -> Analysis:
        """Score every sentence and the question as a whole (see the module docstring). `focus`: the terms a
        follow-up's new topic brings (`history.Rewrite.focus`); a sentence that never names them, where another
        does, is no candidate."""
        s = self.settings
        passages = list(passages[: s.max_passages])
        pool: list[tuple[int, int, int, str]] = []
        # what a passage is about: the heading an indexed chunk opens with, and any heading, title or question among
        # its sentences; and what each sentence stands under: the last of those before it (an FAQ's answer under
        # its question, where a passage holds several)
        headings = [set(passage_terms(p.heading)) for p in passages]
        # per pooled sentence: the words of what it stands under, and (how many headings, titles or questions of
        # its passage stand before it, the last of them or else the chunk's heading)
        heading_terms: list[set[str]] = []
        lead_terms: list[set[str]] = []  # per pooled sentence: the words of the lead-in it completes, if any
        sections: list[tuple[int, str]] = []
        set_aside = 0
        leads = [passage.lead_ins() for passage in passages]
        for pi, passage in enumerate(passages):
            over, section = set(headings[pi]), (0, passage.heading)  # a copy: `headings[pi]` grows below
            for start, end in passage.sentence_offsets():
                text = passage.text[start:end]
                if is_instruction(text):  # text that addresses the model is never an answer
                    set_aside += 1
                elif states_nothing(passage.text, start, end):  # a heading, a title, an FAQ's own question
                    over, section = set(passage_terms(text)), (section[0] + 1, text)
                    headings[pi].update(over)  # context for its passage, never the answer
                else:
                    pool.append((pi, start, end, text))
                    heading_terms.append(over)
                    lead = leads[pi].get((start, end))
                    said_after = passage.text[lead[0] : lead[1]] if lead else ""
                    # an FAQ's question is no lead-in the answer says (`_draft`), nor lends its words
                    lead_terms.append(set() if not said_after or is_question(said_after) else set(passage_terms(said_after)))
                    sections.append(section)
        off_focus = 0
        if focus:
            # "And personal laptops?" after a question on personal phones: the passage on personal devices names
            # laptops, and its sentence on phones shared the most words; a sentence about the new topic answers,
            # or one that stands under a heading or lead-in naming it, or in a document whose title does
            def names_focus(i: int) -> bool:
                pi, *_, text = pool[i]
                return names_all(focus, focus_terms(text) | heading_terms[i] | lead_terms[i] | set(terms(passages[pi].source or "")))

            keep = [i for i in range(len(pool)) if names_focus(i)]
            if keep:
                off_focus = len(pool) - len(keep)
                pool, heading_terms, lead_terms, sections = (
                    [column[i] for i in keep] for column in (pool, heading_terms, lead_terms, sections)
                )
        if not pool:
            return Analysis(feature_set="lexical", question=question, set_aside=set_aside)
        sent_terms = [set(passage_terms(text)) for *_, text in pool]
        q_terms = list(dict.fromkeys(terms(question)))
        # a word the sources write with another ending, in a language the index does not stem (German among them):
        # "Bettdecke" for "Bettdecken", "rembourser" for "remboursés" (in English it would make "producer" "produced")
        if unstemmed_language(question):
            vocabulary = set().union(*sent_terms, *headings)
            q_terms = list(dict.fromkeys(_as_inflected(t, vocabulary) for t in q_terms))
            if is_german(question):  # "Hochwasserschäden" over "Schäden durch Hochwasser": the compound's parts
                q_terms = list(dict.fromkeys(part for t in q_terms for part in _compound_parts(t, vocabulary)))
        q_set = set(q_terms)
        cjk = CJK_LETTER.search(question) is not None
        # a Chinese question's words that name what it asks about (a Japanese one's verbs hold hiragana: `cjk_content`),
        # and the names it writes in Latin letters ("Döbereiner生产哪种酸？")
        chinese_content = set()
        if cjk and not HIRAGANA.search(question):
            chinese_content = content_pairs(question) | {t for t in q_set if t.isalpha() and not CJK_LETTER.search(t)}
        # the word after "how" asks ("How long ...?", "Wie lange", "Combien de temps"): a heading that shares it ("How
        # long we keep it") shares the question's form, not what it asks about
        asking = set(terms(" ".join(_HOW_WORD.findall(normalize(question)))))
        doc_freq = Counter(t for st in sent_terms for t in st)
        n = len(pool)

        def idf(t: str) -> float:  # the one BM25 IDF, over the sentences considered
            return bm25_idf(n, doc_freq.get(t, 0))

        total = sum(idf(t) for t in q_terms) or 1.0

        def share(words: set[str]) -> float:  # IDF-weighted share of the question's terms among `words`
            return sum(idf(t) for t in q_terms if t in words) / total

        terms_by_passage = [
            headings[i].union(*(st for (pi, *_), st in zip(pool, sent_terms, strict=True) if pi == i)) for i in range(len(passages))
        ]
        everywhere = set().union(*terms_by_passage) if terms_by_passage else set()
        missing = sum(idf(t) for t in q_terms if t not in everywhere) / total if q_terms else 1.0
        sentence_cos, passage_cos = self._cosines(question, [text for *_, text in pool], passages)
        feature_set = "semantic" if sentence_cos is not None else "lexical"
        passage_rows = []
        for i, passage in enumerate(passages):
            row = {
                "context": share(terms_by_passage[i]),
                # the rarest question term the passage lacks: "the Enterprise plan" over a passage on the Pro plan
                "missing_peak": max((idf(t) for t in q_terms if t not in terms_by_passage[i]), default=0.0) / total,
                "retrieval": float(passage.score) if passage.score is not None else 0.0,
            }
            if passage_cos is not None:
                row["passage_similarity"] = passage_cos[i]
            passage_rows.append(row)
        kind = answer_type(question)
        model = self.models[feature_set]

        def read_with(words: set[str], own: set[str], features: dict[str, float]) -> float | None:
            """The sentence model's logit for a sentence read with `words` (what it stands under, the lead-in it
            completes) as its own, or None where they hold no question word the sentence lacks."""
            if not (words - own) & (q_set - asking):
                return None
            read = share(own | words)
            return model.sentence.logit(features | {"coverage": read, "coverage_squared": read * read, "type_coverage": features["type"] * read})

        scored, logits = [], []
        previous_passage = -1
        for i, (pi, start, end, text) in enumerate(pool):
            coverage = share(sent_terms[i])
            t_score = type_match(kind, text, question)
            features = {
                "passage": float(pi),
                "coverage": coverage,
                "coverage_squared": coverage * coverage,
                "type": t_score,
                "type_coverage": t_score * coverage,
                "novelty": len(sent_terms[i] - q_set) / max(1, len(sent_terms[i])),
                "type_known": 0.0 if kind is None else 1.0,
                "context": passage_rows[pi]["context"],
                "passage_rank": 1.0 / (1 + pi),
                "retrieval": passage_rows[pi]["retrieval"],
                # a passage's lead sentence; a table's first row is none (the order of rows says nothing)
                "first": 1.0 if pi != previous_passage and row_cells(text) is None else 0.0,
                "log_length": math.log1p(len(sent_terms[i])),
            }
            previous_passage = pi
            if sentence_cos is not None and passage_cos is not None:
                features["similarity"] = sentence_cos[i]
                features["passage_similarity"] = passage_cos[pi]
                features["similarity_over_passage"] = sentence_cos[i] - passage_cos[pi]
                features["type_similarity"] = t_score * sentence_cos[i]
            logit = model.sentence.logit(features)
            # whether any sentence answers reads each as the answer would say it, after the lead-in it completes:
            # "Open Orders and choose the item." answers "How do I return an item?" under "How to return an item"
            # and alone reads as no answer (only its logit: the answerability model weighs the best sentence's
            # coverage against the highest, and words lent that way read as less answerable)
            said = read_with(lead_terms[i], sent_terms[i], features)
            logits.append(logit if said is None else said)
            under = read_with(heading_terms[i], sent_terms[i], features)  # the heading holds question words it lacks
            headed = None if under is None else sigmoid(under)
            section, heading = sections[i]
            held = q_set & sent_terms[i]
            names_nothing = bool(held) and (held <= PRONOUN_TERMS or bool(chinese_content) and not held & chinese_content)
            scored.append(
                ScoredSentence(pi, start, end, text, features, sigmoid(logit), headed, section=section, heading=heading, names_nothing_asked=names_nothing)
            )
        answer = answer_features([x.features for x in scored], logits, passage_rows, missing, len(q_terms))
        ranked, asked_question = self._asked_question_first(question, sorted(scored, key=_rank_key), passages)
        ranked = _as_read_plainly(question, ranked)
        analysis = Analysis(
            feature_set=feature_set,
            question=question,
            sentences=ranked,
            asked_question=asked_question,
            passages=passage_rows,
            answer=answer,
            answerability=model.answerability.probability(answer),
            set_aside=set_aside,
            off_focus=off_focus,
            sources=passages,
            leads=leads,
        )
        return analysis

    def _cosines(
        self, question: str, sentences: list[str], passages: Sequence[Passage]
    ) -> tuple[list[float], list[float]] | tuple[None, None]:
        """Calibrated cosines of the question to each sentence and each passage, or (None, None) without a model."""
        embedder = with_known(self.embedder, passages)  # the vectors stored at ingest: no model run for them
        # a passage is read for what it states (`stated_text`): an instruction in it lifts nothing (`on_what_they_state`)
        cosines = calibrated_similarities(embedder, question, sentences + [stated_text(p) for p in passages]) if sentences else None
        if cosines is None:
            return None, None
        return cosines[: len(sentences)], cosines[len(sentences) :]

    def _asked_question_first(
        self, question: str, ranked: list[ScoredSentence], passages: Sequence[Passage]
    ) -> tuple[list[ScoredSentence], str | None]:
        """The ranking with the replies to the FAQ question closest in meaning to the question asked put first,
        when the best sentence replies to another FAQ question, that one is closer by `ASKED_QUESTION_MARGIN`
        (calibrated similarity), and the best sentence shares no word with the question but those of the FAQ
        question it replies to: "Can I rename my account?" shares "account" with the steps under "How do I delete
        my account?" and none of its words with "No. Usernames are permanent, ..." under "Can I change my
        username?", and was answered with the steps to delete it. An FAQ's own questions are what a person asks in
        other words (0.88 against 0.71 here), where a reply's words are not. A reply that holds a word of the
        question its own FAQ question lacks speaks to it in its own words, and stays: "PayPal" under "What payment
        methods do you accept?" answers "Can I pay with PayPal?", which reads closer to "Can I pay on delivery?"
        (0.83 against 0.64). The sentence models only: the reader reads each reply under its question and decides
        itself. The FAQ's questions are embedded only when the rest holds (about 16 ms each the first time).
        Returns the ranking and the FAQ question put first, if any."""
        best = ranked[0] if ranked else None
        if best is None or self.reader is not None or not is_question(best.heading):
            return ranked, None
        if (set(terms(question)) & set(passage_terms(best.text))) - set(passage_terms(best.heading)):
            return ranked, None
        questions = list(dict.fromkeys(s.heading for s in ranked if is_question(s.heading)))
        matches = calibrated_similarities(with_known(self.embedder, passages), question, questions) if len(questions) > 1 else None
        if not matches:
            return ranked, None
        match = dict(zip(questions, matches, strict=True))
        closest = max(questions, key=match.__getitem__)
        if match[closest] - match[best.heading] < ASKED_QUESTION_MARGIN:
            return ranked, None
        return [s for s in ranked if s.heading == closest] + [s for s in ranked if s.heading != closest], closest

    # --- the answer -------------------------------------------------------------------------------------

    def synthesize(
        self, question: str, passages: Sequence[Passage], focus: Sequence[str] = (), reader_decides: bool = True
    ) -> Draft:
        """The answer, or a refusal. `reader_decides=False`: the sentence models decide, and pick the sentence,
        even where the reader is on (a follow-up asked in a rule rewrite's words, "What is the meals limit?", which
        the reader read as asking what "The daily meal allowance is 60 dollars." does not say: p = 0.06;
        bench/results/multiturn.md)."""
        analysis = self.analyse(question, passages, focus)
        draft = self._answer(question, analysis, reader_decides)
        if not draft.refused:
            read = passages[: self.settings.max_passages]
            refusal = _plainly_no_answer(question, read, draft.spans, focus)
            if refusal is not None:
                kept = {k: v for k, v in draft.detail.items() if k != "sentences"}  # a refusal quotes no sentences
                draft = _declined(self.name, kept | refusal)
            # the sentence models decided that the passages answer; which of their best sentences answers is read
            # (the FAQ set's answerable answered right 0.772 -> 0.797, bench/results/reader_pick.md), and the sentence
            # picked must pass the same plain reading: the reader prefers a sentence that holds the value asked for,
            # which the models' best refused for lacking ("How much are arcade tokens?": "A game costs £7.50"). Not
            # a follow-up in a rule rewrite's words, which the reader misreads
            elif reader_decides and self.reader is None and (pick := self._picked(question, analysis)) is not None:
                first, version, (best_read, first_read) = pick
                picked = self._answer(question, analysis, first=first)
                if not picked.refused and _plainly_no_answer(question, read, picked.spans, focus) is None:
                    draft = picked
                    # how the reader read their best and its pick
                    draft.detail |= {"picked_by": f"reader:{version}", "picked_read": [round(best_read, 4), round(first_read, 4)]}
            if not draft.refused and reader_decides and self.reader is None and self.picker is not None:
                draft = self._vetoed(question, analysis, draft)
        draft.analysis = analysis  # verification's relevance check reads the same ranking
        if analysis.set_aside:  # in the trace: what was not considered as an answer, and why
            draft.detail["instructions_set_aside"] = analysis.set_aside
        if analysis.off_focus:
            draft.detail["off_focus_set_aside"] = analysis.off_focus
        if analysis.asked_question:
            draft.detail["asked_faq_question"] = analysis.asked_question
        other_kinds = sorted({s.other_kind for s in analysis.sentences if s.other_kind})
        if other_kinds:
            draft.detail["other_kind_set_aside"] = other_kinds
        return draft

    def _answer(
        self, question: str, analysis: Analysis, reader_decides: bool = True, first: ScoredSentence | None = None
    ) -> Draft:
        if reader_decides and self.reader is not None and analysis.sentences:
            return self._read_and_answer(question, analysis)
        threshold = self.threshold(analysis.feature_set)
        detail = {
            "answerability": round(analysis.answerability, 4),
            "min_answerability": threshold,
            "features": analysis.feature_set,
            "decided_by": "lexical model" if analysis.feature_set == "lexical" else "sentence model",
        }
        if not analysis.sentences or analysis.answerability < threshold:
            return _declined(self.name, detail)
        ranked = [s for s in analysis.sentences if not answers_another_question(question, s.text, s.heading)]
        # the models decided on the best sentence: a reply to another FAQ question ("No." under the Sunday question,
        # asked of Saturdays) is a refusal, not a reason to answer with the next one
        if not ranked or ranked[0] is not analysis.sentences[0]:
            return _declined(self.name, detail | {"decided_by": "named scope"})
        if first is not None:  # the reader's pick among the best (`synthesize`)
            ranked = [first, *(s for s in ranked if s is not first)]
        # The sentence models read words, and a question in another language than its answer shares them by chance
        # ("Is there a dress code?" answered with "Saisissez le code au dos de la carte."): without the reader,
        # such a question is refused at retrieval anyway unless a word it shares draws the passage in. Both the
        # passage and the sentence must be in another language: one passage may hold an FAQ in two
        if crosses_languages(question, ranked[0].text) is not None:  # the sentence first: the shorter read
            crossing = crosses_languages(question, analysis.sources[ranked[0].passage].text)
            if crossing is not None:
                return _declined(self.name, detail | {"decided_by": "languages", "languages": asdict(crossing)})
        second_ratio = self.settings.second_ratio
        if second_ratio is None:
            second_ratio = self.models[analysis.feature_set].second_ratio
        listed, more = self._whole_list(ranked[0], analysis)
        if len(listed) > 1:  # a list the question asks for whole
            return self._draft(listed, detail, analysis, more=more)
        # the sentence the best leans on is said with it, and takes no second sentence's place
        leaned = _leaned_on(ranked[0], analysis)
        chosen, asked = [ranked[0], *leaned], set(terms(question))
        sources = source_texts(analysis.sources)
        # to a yes-or-no question, a second sentence that holds no word of it the first lacks adds another rule, not
        # the answer: "Can I store customer data on my personal laptop?" got "Personal laptops may not be used to
        # store customer data." and "You may read work email on a personal phone ...", which reads as a yes
        yes_no, first_holds = asks_yes_or_no(question), asked & set(passage_terms(ranked[0].text))
        for candidate in ranked[1:]:  # a second sentence continues the first one's passage and topic
            if yes_no and asked & set(passage_terms(candidate.text)) <= first_holds:
                continue
            if len(chosen) >= self.settings.max_sentences + len(leaned):
                break
            same_topic = (
                (candidate.passage, candidate.section) == (ranked[0].passage, ranked[0].section)
                and candidate.features["coverage"] > 0
                # "¿A qué hora es el check-in?": "Es obligatorio presentar un documento de identidad …" shares its "es"
                and not candidate.names_nothing_asked
                and not _another_row(candidate, asked)
                and candidate.other_kind is None
                # "Until when does the breakfast club run?": the after-school club's hours do not follow the
                # breakfast club's
                and other_kind(question, candidate.text, ranked[0].text) is None
                # "... enfant de 30 kg ?": the dose for "plus de 50 kg" does not follow the one for "27 à 50 kg"
                and fits_quantity(question, candidate.text) is not False
                # "How much is the Team plan?": the Starter plan's price does not follow the Team plan's
                and swapped_name(question, sources, candidate.text) is None
                # "What time do you open at the weekend?": the hours from Monday to Friday do not follow the weekend's
                and not for_other_days(question, candidate.text)
                # "Muss meine Katze gegen Tollwut geimpft sein?": the dogs' vaccines do not follow the cats'
                and other_subject(question, candidate.text, ranked[0].text) is None
                # "Welcome to the review of the March failover drill." follows nothing: a greeting says no answer
                and is_assertion(candidate.text)
            )
            close = candidate.score >= second_ratio * ranked[0].score
            if same_topic and close and normalize(candidate.text) not in {normalize(c.text) for c in chosen}:
                chosen.append(candidate)
        return self._draft(chosen, detail, analysis)

    def _read_and_answer(self, question: str, analysis: Analysis) -> Draft:
        """The reading model reads the cheap model's best sentences with the question. The answer is the sentence
        with the highest sum of the two models' logits, and whether to answer at all is the reader's decision
        model (`bench/reader_decision.py`) over the reader's best probability, its margin and the answerability
        model's probability: the reader catches a sentence that only shares the question's words, the cheaper
        model one that plainly says the asked-for fact in them."""
        assert self.reader is not None
        candidates = [
            s
            for s in analysis.sentences
            if s.other_kind is None and not answers_another_question(question, s.text, s.heading, by_words=False)
        ][: self.settings.read]
        if not candidates:  # every sentence is about another kind, or replies to another FAQ question
            return _declined(self.name, {"answerability": 0.0, "features": analysis.feature_set, "decided_by": "named scope"})
        read, order = _read_in_order(self.reader, question, candidates, analysis)
        decision = self.reader.decision
        ranked_read = sorted(read, reverse=True)
        values = {
            "reader_best": logit(ranked_read[0]),
            "reader_margin": ranked_read[0] - ranked_read[1] if len(ranked_read) > 1 else ranked_read[0],
            "answerability": logit(analysis.answerability),
        }
        probability = decision.probability(values) if decision is not None else ranked_read[0]
        threshold, crossing = self.settings.min_answerability, None
        if threshold is None:
            threshold = decision.threshold if decision is not None else self.reader.threshold("answer")
            # a question in another language than the passage that would answer it is read less surely: its own,
            # stricter operating point where one is fitted (`bench/reader_crosslingual.py`)
            if "cross_lingual" in self.reader.operating_points:
                crossing = crosses_languages(question, analysis.sources[candidates[order[0]].passage].text)
            if crossing is not None:
                threshold = self.reader.threshold("cross_lingual")
        detail = {
            "answerability": round(probability, 4),
            "min_answerability": threshold,
            "features": analysis.feature_set,
            "decided_by": f"reader:{self.reader.version}",
            "read": len(candidates),
            "reader_best": round(ranked_read[0], 4),
        }
        if crossing is not None:
            detail["languages"] = asdict(crossing)
        if probability < threshold:
            return _declined(self.name, detail)
        chosen, more = self._whole_list(candidates[order[0]], analysis)
        if len(chosen) > 1:  # a list the question asks for whole
            return self._draft(chosen, detail, analysis, more=more)
        leaned = _leaned_on(chosen[0], analysis)
        chosen += leaned
        asked = set(terms(question))
        for i in order[1:]:  # a second sentence of the same passage that the reader also finds answering
            if len(chosen) >= self.settings.max_sentences + len(leaned):
                break
            c = candidates[i]
            if (c.passage, c.section) == (chosen[0].passage, chosen[0].section) and read[i] >= 0.5 and not _another_row(c, asked) and normalize(c.text) not in {normalize(x.text) for x in chosen}:
                chosen.append(c)
        return self._draft(chosen, detail, analysis)

    def _vetoed(self, question: str, analysis: Analysis, draft: Draft) -> Draft:
        """The sentence models' answer, or a refusal where the reader reads none of its sentences as answering the
        question: under its `veto` operating point (`bench/reader_veto.py`), the least reading that keeps 99% of the
        default path's right answers on XQuAD's design articles. "Can I borrow a laptop?" was answered "Adults can
        borrow up to 12 items at a time", "Is it cheaper during the day?" with the opening hours. The sentences are
        read as the pick and strict verification read them (the reader remembers the pairs), and an answer the
        plain readings settle is not read (`settled_relevance`)."""
        assert self.picker is not None
        given, unused = split_quoted(analysis, draft.spans)
        if not given:
            return draft
        read = settled_relevance(question, given, unused)
        if read is None:
            read = max(self.picker.answers(question, [as_read(s, analysis) for s in given]))
        bar = self.settings.veto if self.settings.veto is not None else self.picker.threshold("veto", 0.0)
        draft.detail["answer_read"] = round(read, 4)
        if read >= bar:
            return draft
        kept = {k: v for k, v in draft.detail.items() if k != "sentences"}  # a refusal quotes no sentences
        return _declined(self.name, kept | {"decided_by": "reader veto", "veto": bar})

    def _picked(self, question: str, analysis: Analysis) -> tuple[ScoredSentence, str, tuple[float, float]] | None:
        """The sentence the picker reads as the answer among the sentence models' best, where it is not their
        first, the picker's version, and how it read their best and its pick (one about another kind, or replying
        to another FAQ question, is no candidate)."""
        if self.picker is None:
            return None
        candidates = [  # in the question's language: the reader reads a pair across languages less surely
            s
            for s in analysis.sentences[: self.settings.pick_from]
            if s.other_kind is None
            and not answers_another_question(question, s.text, s.heading)
            and crosses_languages(question, s.text) is None
        ]
        if len(candidates) < 2:
            return None
        read, order = _read_in_order(self.picker, question, candidates, analysis)
        first = candidates[order[0]]
        if first is analysis.sentences[0]:
            return None
        # a pick the reader reads hardly better than the models' best is its misreading as often as theirs ("房租多少钱？":
        # the deposit read at 0.70 against the rent's 0.48): it must read it better by a margin
        best_read = next((p for p, c in zip(read, candidates, strict=True) if c is analysis.sentences[0]), 0.0)
        if read[order[0]] - best_read < PICK_MARGIN:
            return None
        # the plain readings of what the question asks keep the pick first, or it lacks what they put first (the day,
        # the number, the kind asked: "Wann habt ihr am Wochenende geöffnet?" picked the weekdays' hours)
        ranked = _as_read_plainly(question, [first, *(s for s in analysis.sentences if s is not first)])
        return (first, self.picker.version, (best_read, read[order[0]])) if ranked[0] is first else None

    def _whole_list(self, best: ScoredSentence, analysis: Analysis) -> tuple[list[ScoredSentence], bool]:
        """The lines of the list `best` is one of, when the question asks for the list: "What should I bring on my
        first day?" over the items under "What to bring on your first day" holds no word of any item and all of
        the heading's. A question that names an item ("Do I need ID?") gets that item. A list longer than
        `max_list_items` gives its first lines, and True: more follow (it once gave its best line alone, "A photo
        ID. [1]", as if that were all to bring)."""
        if best.features["coverage"] > 0 or best.features["context"] == 0:
            return [best], False
        same = sorted((s for s in analysis.sentences if s.passage == best.passage), key=lambda s: s.start)
        run = list_run(analysis.sources[best.passage].text, [(s.start, s.end) for s in same], same.index(best))
        return [same[i] for i in run[: self.settings.max_list_items]], len(run) > self.settings.max_list_items

    def _draft(self, chosen: list[ScoredSentence], detail: dict, analysis: Analysis, more: bool = False) -> Draft:
        """The answer: each chosen sentence quoted and cited, after the lead-in it completes (`sentences.lead_in`):
        "Do not take ibuprofen if you: are allergic to aspirin. [1]", never the line alone, which says nothing or
        the opposite. A lead-in chosen alone, or a line of it that holds no word of the question its lead-in lacks
        while the lead-in holds one ("How do I reset my password?" over "To reset your password:" and its steps),
        is said with all its lines
        (up to `max_list_items`; "Do not take ibuprofen if you:" answers nothing, one step is no procedure), joined
        by semicolons, as one claim the judge reads against the lead-in and its lines together."""
        sources, asked = analysis.sources, set(terms(analysis.question))
        pieces: list[tuple[int, int, int]] = []  # (passage, start, end) of each sentence the answer quotes
        leads = {pi: analysis.leads[pi] for pi in {c.passage for c in chosen}}  # entries replaced below, never changed

        def asks_the_lead_in(c: ScoredSentence) -> bool:  # the question asks what the lead-in opens, not this one line
            opening = leads[c.passage].get((c.start, c.end))
            text = sources[c.passage].text
            opened = asked & set(passage_terms(text[opening[0] : opening[1]])) if opening is not None else set()
            return bool(opened) and asked & set(passage_terms(c.text)) <= opened

        # A procedure's heading ("How to take this medicine") leads in its lines only where the answer says the
        # procedure whole, and only the best sentence says that: its lines are sentences of their own ("Do not give
        # to children under 10 years."), two of them joined under it read as one claim of both, and a second
        # sentence ("You can request a copy of your data at any time.", after "We reply within 30 days.") is no
        # question of how it is done
        def asks_whole(place: int, c: ScoredSentence) -> bool:
            lead = leads[c.passage].get((c.start, c.end))
            return lead is not None and asks_the_lead_in(c) and (place == 0 or not names_steps(sources[c.passage].text[lead[0] : lead[1]]))

        asked_whole = {(c.passage, leads[c.passage][(c.start, c.end)]) for place, c in enumerate(chosen) if asks_whole(place, c)}
        for pi, passage_leads in leads.items():
            text = sources[pi].text
            leads[pi] = {
                line: lead for line, lead in passage_leads.items() if (pi, lead) in asked_whole or not names_steps(text[lead[0] : lead[1]])
            }
        picked = {(c.passage, c.start, c.end) for c in chosen}
        # lead-ins with more lines than an answer says (`max_list_items`): it once said such a lead-in alone, "We
        # accept any of these documents as proof of address:. [1]"
        cut: set[tuple[int, tuple[int, int]]] = set()
        rank: dict[tuple[int, int, int], int] = {}  # each quoted sentence's place: the chosen sentence it says
        for place, c in enumerate(chosen):
            span = (c.start, c.end)
            if asks_the_lead_in(c):
                span = leads[c.passage][span]
            own = sorted(line for line, lead in leads[c.passage].items() if lead == span)
            if span == (c.start, c.end) and any((c.passage, *line) in picked for line in own):
                continue  # said with its chosen line
            said = [(c.passage, *line) for line in own[: self.settings.max_list_items]] or [(c.passage, c.start, c.end)]
            if len(own) > self.settings.max_list_items:  # its first lines, and a mark that more follow
                cut.add((c.passage, span))
            pieces += said
            for piece in said:
                rank.setdefault(piece, place)
        # The best sentence first: "Who approves claims over $500?" once got "Submit expense claims within 30 days.
        # [1] Claims over $500 need approval from your manager. [1]", source order. Source order where the best
        # sentence leans on the one before it ("It ships the next day."); lines of one lead-in are said together
        # after it: "The following are never reimbursed: traffic fines; minibar items. [1]"
        if _leans_back(chosen[0].text):
            rank = dict.fromkeys(rank, 0)
        # a lead-in's lines go together, in source order, at the place of the first chosen of them
        def group(p: tuple[int, int, int]) -> tuple[int, int, int]:  # a line stands for its lead-in
            return (p[0], *leads[p[0]].get((p[1], p[2]), (p[1], p[2])))

        first: dict[tuple[int, int, int], int] = {}
        for p, r in rank.items():
            first[group(p)] = min(first.get(group(p), r), r)
        groups: list[tuple[int, tuple[int, int] | None, list[tuple[int, int]]]] = []  # (passage, lead-in, lines)
        for passage, start, end in sorted(dict.fromkeys(pieces), key=lambda p: (p[0], first[group(p)], p[1])):
            opening = leads[passage].get((start, end))
            if opening is not None and groups and groups[-1][:2] == (passage, opening):
                groups[-1][2].append((start, end))
            else:
                groups.append((passage, opening, [(start, end)]))
        parts: list[str] = []
        quotes: dict[int, list[CharSpan]] = {}
        for place, (passage, opening, said) in enumerate(groups):
            number, text = passage + 1, sources[passage].text
            quoted = [as_quoted(text[start:end]).strip() for start, end in said]
            # a mark that more lines follow: a lead-in's, or the list's after its last line said (`more`)
            follow = ["…"] if (passage, opening) in cut or (more and place == len(groups) - 1) else []
            rows = any(row_cells(q) is not None for q in quoted)  # table rows, whose cells take the semicolons
            # sentences of one paragraph under a procedure's heading ("... choose Delete account; Your data is erased
            # within 14 days." read as one run-on)
            one_paragraph = not any("\n" in text[before[1] : after[0]] for before, after in zip(said, said[1:], strict=False))
            if len(quoted) > 1 and (rows or one_paragraph):  # each keeps its stop
                sentence = " ".join([*(_ensure_stop(q) for q in quoted), *follow])
            else:  # lines: a list's items, a procedure's steps, joined as one claim under their lead-in
                lines = [q.rstrip(".;,。；，、") for q in quoted] + follow
                sentence = _ensure_stop("; ".join(lines) if len(lines) > 1 else quoted[0].rstrip(";,；，、"))
            lead_text = as_quoted(text[opening[0] : opening[1]]).strip().lstrip("#").strip() if opening is not None else ""
            if opening is not None and not is_question(lead_text):  # an FAQ's question over its steps goes unsaid
                sentence = f"{lead_text} {sentence}" if lead_text.endswith((":", "：")) else f"{lead_text}: {sentence}"
                quotes.setdefault(number, []).append(CharSpan(start=opening[0], end=opening[1]))
            parts.append(f"{sentence} [{number}]")
            quotes.setdefault(number, []).extend(CharSpan(start=start, end=end) for start, end in said)
        quotes = {n: sorted({(q.start, q.end): q for q in spans}.values(), key=lambda q: q.start) for n, spans in quotes.items()}
        return Draft(
            answer=" ".join(parts),
            citations=sorted(quotes),
            refused=False,
            provider=self.name,
            spans=quotes,
            detail={**detail, "sentences": len(dict.fromkeys(pieces))},
        )


_HOW_WORD = re.compile(
    r"\b(?:how|wie|combien de|cuanto) (long|much|many|often|far|old|soon|big|large|fast|early|late|lange|viel|viele|oft|"
    r"alt|weit|temps|tiempo)\b"
)


# what joins the parts of a German compound ("Versicherung-s-summe"), and the shortest part read as one
_LINKS = ("", "s", "n", "en", "es", "er")
COMPOUND_PART = 4


def _compound_parts(term: str, vocabulary: set[str]) -> tuple[str, ...]:
    """A German question's compound, as the two words the sources write apart ("hochwasserschaden" -> "hochwasser",
    "schaden" where they say "Schäden durch Hochwasser"); the term itself where they hold it, or not both parts."""
    if term in vocabulary or len(term) < 2 * COMPOUND_PART:
        return (term,)
    for cut in range(COMPOUND_PART, len(term) - COMPOUND_PART + 1):
        head, rest = term[:cut], term[cut:]
        for link in _LINKS:
            if head in vocabulary and rest.startswith(link) and len(rest) - len(link) >= COMPOUND_PART and rest[len(link) :] in vocabulary:
                return (head, rest[len(link) :])
    return (term,)


INFLECTION_LETTERS = 2  # the letters an ending may add to a term, or take from it, for the two to be one word
# a Spanish, Portuguese or Italian verb and the noun its participle makes: "llegar" and "llegada", "salir" and
# "salida", "entrar" and "entrada"; a French one and its noun in -ation, as the index keeps it: "réserver" and
# "reservat" (réservation) (the endings differ, so neither starts the other)
_INFINITIVE = re.compile(r"(?<=\w{3})(?:ar|er|ir)$")
_PARTICIPLE_NOUN = re.compile(r"(?<=\w{3})(?:(?:ad|id)[ao]s?|at)$")


def _as_inflected(term: str, vocabulary: set[str]) -> str:
    """A question's term as the sources write it with another ending, where they never write it as it is: the
    index stems English only, so "bettdeck" (Bettdecke) is "bettdecken" (Bettdecken), "rembourser" is "rembours"
    (remboursés) and "llegar" is "llegada". Both are of `FAMILY_LETTERS` letters or more, and one starts the other
    with `INFLECTION_LETTERS` more at most, or one is the verb the other's participle noun comes from; the one such
    term, the term itself otherwise."""
    if term in vocabulary or len(term) < FAMILY_LETTERS or not term.isascii() or not term.isalpha():
        return term
    candidates = [v for v in vocabulary if len(v) >= FAMILY_LETTERS]
    # another ending first: "declarer" is "declar" (déclaré) where the sources say "declarat" (déclaration) too
    near = [v for v in candidates if _inflected(term, v)] or [v for v in candidates if _derived(term, v)]
    return near[0] if len(near) == 1 else term


def _inflected(term: str, other: str) -> bool:
    return abs(len(other) - len(term)) <= INFLECTION_LETTERS and (other.startswith(term) or term.startswith(other))


def _derived(term: str, other: str) -> bool:
    """Whether one term is a verb and the other the noun its participle makes (`_PARTICIPLE_NOUN`)."""
    verb, noun = (term, other) if _INFINITIVE.search(term) else (other, term)
    return bool(_INFINITIVE.search(verb) and _PARTICIPLE_NOUN.search(noun)) and _INFINITIVE.sub("", verb) == _PARTICIPLE_NOUN.sub("", noun)


def _rank_key(s: ScoredSentence) -> tuple[float, int, int]:  # the sentence models' ranking, ties in source order
    return (-s.under_heading, s.passage, s.start)


LIMIT_REACH = 5  # how far down the ranking a sentence stating a limit is looked for
NUMBER_REACH = 5  # how far down the ranking a sentence holding the question's number is looked for
KIND_REACH = 3  # how far down the ranking sentences are compared for the kind they are about
# How much closer in meaning (calibrated similarity) another FAQ question must be to the question asked than the
# one the best sentence replies to, for its replies to go first (`ExtractiveSynthesizer._asked_question_first`)
ASKED_QUESTION_MARGIN = 0.15


def asked_kind_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the best sentence set after the others when it is about another kind than the one asked
    (`other_kind`, by `scope.other_kind`) and one of the next best (`KIND_REACH`) keeps the asked kind: the words of
    "How long does express shipping take?" tie between the standard and the express shipping rules, and the
    standard one, which says how long, ranked first. Only the best is checked: checking every pair of the best
    few changed 29 answers of XQuAD en's held-out questions and lost six."""
    best = ranked[0] if ranked else None
    if best is None:
        return ranked
    best.other_kind = next((kind for rival in ranked[1:KIND_REACH] if (kind := other_kind(question, best.text, rival.text))), None)
    if best.other_kind is not None:
        return [*ranked[1:], best]
    # the best says the thing without the asked kind, and one of the next in its section says the pair ("visitor
    # permits" under "Refunds"); in another section it says the pair of something else ("apply for a residents' permit")
    section = (best.passage, best.section)
    return _first(ranked, next((r for r in ranked[1:KIND_REACH] if (r.passage, r.section) == section and holds_asked_pair(question, best.text, r.text)), None))


CONTENT_REACH = 3  # how far down the ranking a sentence holding a Chinese or Japanese question's thing is looked for


def asked_content_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`CONTENT_REACH`) that holds a pair of letters naming what a
    Chinese or Japanese question asks about (`unnamed.cjk_content`) put first, when the best holds none: "提供毛巾吗？"
    (do you provide towels?) over a gym's notes was answered "提供免费储物柜和淋浴。" (lockers and showers are
    provided: it shares only 提供, an asking word), while "毛巾需要自带，……" stood second."""
    if not CJK_LETTER.search(question) or _JAPANESE_TOPIC.match(question):  # a Japanese topic: `asked_topic_first`
        return ranked
    content = content_pairs(question)
    return _first_holding(ranked, CONTENT_REACH, lambda text: bool(content & set(terms(text))))


def asked_subject_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`KIND_REACH`) put first whose subject the question asks about,
    when the best says the same of another (`scope.other_subject`): "Muss meine Katze gegen Tollwut geimpft sein?"
    was answered with the dogs' vaccines, while the cats' stood next. A question asking yes or no only: one asking
    for something names what it asks for ("¿Qué campo …?" asks for a field, and a sentence on related fields went
    first)."""
    if not ranked or not asks_yes_or_no(question):
        return ranked
    return _first(ranked, next((r for r in ranked[1:KIND_REACH] if other_subject(question, ranked[0].text, r.text)), None))


def asked_polarity_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`KIND_REACH`) that says a word the question negates with a
    negation too put first, when the best says it only without: "What is not covered by the warranty?" was answered
    "The warranty covers defects in materials and workmanship", which holds every word of the question but its "not",
    while "Damage from drops, water, or unauthorised repairs is not covered." ranked third. A question asking yes or
    no is left alone: "Is water damage covered?" is answered by a "not covered" as well as by a "covered". A case
    without something the question asks of ("Puis-je venir sans rendez-vous ?" over a clinic's page was answered "Les
    rendez-vous se prennent en ligne …", while "Les consultations sans rendez-vous ont lieu le samedi matin" stood
    second) is answered by the sentence that says it, yes or no."""
    if len(ranked) > 1 and (without := _WITHOUT.search(normalize(question))):
        case = re.compile(rf"\b{without['without']}\s+(?:\w+\s+)?{re.escape(without['thing'])}\b")
        return _first_holding(ranked, KIND_REACH, lambda text: bool(case.search(normalize(text))))
    if len(ranked) < 2 or asks_yes_or_no(question):
        return ranked
    negative, positive = said_with_negation(question)
    asked = negative - positive
    if not asked:
        return ranked
    said_negative, said_positive = said_with_negation(ranked[0].text)
    if not asked & (said_positive - said_negative):
        return ranked
    return _first(ranked, next((s for s in ranked[1:KIND_REACH] if asked & said_with_negation(s.text)[0]), None))


# a case without something, with the word after the article ("sans rendez-vous", "without a receipt"), folded
_WITHOUT = re.compile(
    r"\b(?P<without>without|sans|ohne|sin|sem|senza)\s+(?:(?:a|an|the|un|une|le|la|les|ein|eine|einen|el|los|las)\s+)?(?P<thing>[\w'-]+)"
)
GROUP_REACH = 5  # how far down the ranking a sentence naming the question's group of people is looked for


BACKGROUND_GROUP = 3  # the sentences naming a group that make it what the rules are about, not which rule answers


def asked_group_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`GROUP_REACH`) that names the group of people the question asks
    about (`people`) put first, when the best names none of it: "小孩可以进病房吗？" (may kids enter the ward?) over a
    hospital's visiting rules was answered "病房内禁止吸烟和饮酒。" (its words: 病房, 进), while "十二岁以下儿童不得进入
    病房。" (children under twelve) stood second. A group's words stand for one another ("小孩" and "儿童"). The
    sentence must share another word with the question: "Grants total 88% of Harvard's aid for undergraduate
    students" names students and says nothing of what students from families earning less than $60,000 pay. An
    age says who is a child, an adult or a senior: "Para menores de 14 años cuesta 40 euros." answers "¿Cuánto cuesta
    una limpieza para un niño de 10 años?" (and "Sí, atendemos a niños a partir de los 3 años." was put before it).
    Where the group is what most rules are about (`BACKGROUND_GROUP` sentences or more name it), it must share as
    many as the best does (by their families): "Comment inscrire mon enfant à la cantine ?" over a school canteen's
    rules is answered by "L'inscription à la cantine se fait en ligne …", not by "… l'enfant peut être exclu de la
    cantine pendant une semaine."."""
    named = groups_named(question)
    if not named or not ranked:
        return ranked
    matter = {family(t) for t in terms(question)} - {family(t) for word in named.values() for t in terms(word)}

    def shared(text: str) -> int:
        return len(matter & {family(t) for t in terms(text)})

    def says_group(text: str) -> bool:
        return bool(set(named) & (set(groups_named(text)) | groups_aged(text)))

    background = sum(says_group(s.text) for s in ranked) >= BACKGROUND_GROUP
    least = max(1, shared(ranked[0].text)) if background else 1

    def names_group(text: str) -> bool:
        return says_group(text) and shared(text) >= least

    return _first_holding(ranked, GROUP_REACH, names_group)


# A question that asks for a limit, the most that may be done or had ("What's the most paracetamol I can take in a
# single day?", "Wie viel darf ich höchstens nehmen?", "ما أقصى كمية", "一天最多"), and the words that state one ("Do
# not exceed 4000 mg", "darf nicht überschritten werden", "لا تتجاوز", "不得超过", or the limit named: "ATM每日取款限额为2万元。"
# was put after "账户日均余额超过3000元可免年费。" for "ATM每天最多能取多少钱？"); read on folded text.
_ASKED_LIMIT = re.compile(
    r"\b(?:maximum|at most|upper limit|the most\b[^?]{0,40}\b(?:can|may|could|should|allowed)|au maximum|le maximum|"
    r"au plus|hochstens|maximal\w*|hochst\w*|como maximo|la maxima|el maximo|dosis maxima)\b|اقصي|الحد الاقصي|最多|最大|上限|至多"
)
_LIMIT_SAID = re.compile(
    r"\b(?:exceed\w*|more than|maximum|at most|up to|no more|depass\w*|plus de|au maximum|jusqu'a|au plus|"
    r"uberschr\w*|mehr als|hochstens|maximal\w*|bis zu|superar|supere|supera|superen|exceder|exceda|mas de|maxim[oa]|"
    r"hasta|limit\w*|limite\w*|\w*grenze)\b|hochst|تتجاوز|يتجاوز|تجاوز|اكثر من|اقصي|超过|最多|上限|最大|至多|限额|限度|限制|額度|额度|限度額"
)


def asked_limit_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`LIMIT_REACH`) that states a limit put first, when the question
    asks for one and the best states none: "What's the most paracetamol I can take in a single day?" was answered
    "Adults may take 500 mg to 1000 mg of paracetamol every four to six hours." (the usual dose, every word of the
    question), while "Do not exceed 4000 mg in 24 hours." stood second. A leaflet's usual dose given for its
    maximum is the kind of wrong answer the product exists to prevent."""
    return _first_stating(question, ranked, _ASKED_LIMIT, _LIMIT_SAID, LIMIT_REACH)


# A question whether something is given back ("Can I get my deposit back?", "Bekomme ich Geld zurück …?", "¿Me devuelven
# la fianza?", "Puis-je être remboursé ?"), and a sentence that says what is refunded or returned; read on folded text
_ASKED_REFUND = re.compile(
    r"\b(?:get|have|money)\b[\w' ]{0,30}\bback\b|\brefund\w*|\breimburs\w*|\brembours\w*|\breembols\w*|\bdevuelv\w*|"
    r"\bdevolu\w*|\berstatt\w*|\bzuruck\b|استرداد|يسترد|استرجاع|退款|退还|退钱|返金|払い戻"
)
_REFUND_SAID = re.compile(
    r"\b(?:refund\w*|reimburs\w*|repaid|returned|given back|money back|rembours\w*|restitu\w*|reembols\w*|devuelv\w*|"
    r"devolu\w*|erstatt\w*|zuruckgezahlt|zuruckerstattet)|استرداد|يسترد|يُسترد|استرجاع|退款|退还|退回|返金|払い戻|返還"
)
REFUND_REACH = 3  # how far down the ranking a sentence saying what is refunded is looked for
# the words that ask for the refund, not for the thing refunded (folded)
_REFUND_WORD = re.compile(r"get|have|money|back|refund\w*|reimburs\w*|rembours\w*|reembols\w*|devuelv\w*|devolu\w*|erstatt\w*|zuruck")


def asked_refund_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`REFUND_REACH`) that says what is refunded or returned put first,
    when the question asks whether something is given back and the best says nothing of it: "Can I get my deposit
    back?" over a party venue's terms was answered "A £50 deposit secures your date; the balance is paid on the
    day.", while "The deposit is refunded if you cancel at least 14 days before." stood next. It must say so of a
    thing the question names: "Les lunettes sont remboursées …" is no answer to "Les couronnes sont-elles
    remboursées ?"."""
    if not _ASKED_REFUND.search(normalize(question)):
        return ranked
    asked = _words_of(" ".join(w for w in re.findall(r"\w+", normalize(question)) if not _REFUND_WORD.fullmatch(w)))

    def refunds(text: str) -> bool:
        return bool(_REFUND_SAID.search(normalize(text)) and asked & _words_of(text))

    # nor of another kind of it: "Annual plans are refunded …" is no answer to "Can I get a refund on a monthly plan?"
    return _first_holding(ranked, REFUND_REACH, refunds, eligible=lambda s: s.other_kind is None)


FREQUENCY_REACH = 5  # how far down the ranking a sentence stating a frequency is looked for


def asked_frequency_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`FREQUENCY_REACH`) that states a frequency put first, when the
    question asks how often and the best states none: "Wie oft darf ich Ibuprofen nehmen?" over a leaflet was
    answered "Nehmen Sie Ibuprofen nicht ein, wenn Sie allergisch gegen Ibuprofen sind ..." (its words: Ibuprofen,
    nehmen), while "Erwachsene ... nehmen 1 Tablette, bei Bedarf alle 6 bis 8 Stunden." stood second."""
    return _first_stating(question, ranked, ASKED_FREQUENCY, FREQUENCY_SAID, FREQUENCY_REACH)


# A question that asks how many of a thing that is no time nor money ("How many books can I borrow?", "Wie viele
# Bücher ...?", "Combien de livres ...?", "¿Cuántos créditos ...?"), and a count a sentence states: a number not of
# time ("30 items"; not "four weeks"), or no limit at all; a number of times ("twice", "3 times") only where times
# are asked. Read on folded text
_TIMES = r"(?:times|fois|mal|veces)"
# what is counted: its first word, and no time nor money within its next four words ("How many paid holiday days",
# "combien de temps")
_ASKED_COUNT = re.compile(
    rf"\b(?:how many|combien d[e']|wie viele|cuant[oa]s)\s*(?!(?:[a-z'-]+\s+){{0,3}}(?:{TIME_UNIT}|temps|tiempo|zeit|"
    r"dollars?|euros?|pounds?|francs?|money|argent|geld|dinero)\b)(?P<thing>[a-z]+)"
)
_COUNT_NUMBER = (
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|deux|"
    r"trois|quatre|cinq|six|sept|huit|neuf|dix|douze|quinze|vingt|trente|zwei|drei|vier|funf|sechs|sieben|acht|neun|zehn|"
    r"zwolf|zwanzig|dreissig|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|doce|quince|veinte|treinta)\b"
)
_NO_LIMIT = (
    r"\b(?:dozens?|several|hundreds?|thousands?|millions?|billions?|unlimited|no limit|as many|illimite\w*|plusieurs|"
    r"centaines|milliers|autant|unbegrenzt\w*|mehrere|hunderte|tausende|beliebig|ilimitad\w*|vari[oa]s|cientos|miles|"
    r"tant[oa]s|none|zero|aucune?|keine?|ningun[oa]?)\b"
)
_COUNT_SAID = re.compile(rf"{_COUNT_NUMBER}(?!\s*(?:[-–]|to|a|bis|y)?\s*(?:\d+\s*)?(?:{TIME_UNIT}|{_TIMES})\b)|{_NO_LIMIT}")
_TIMES_SAID = re.compile(rf"{_COUNT_NUMBER}\s*{_TIMES}\b|\b(?:once|twice|thrice)\b|{_NO_LIMIT}")
COUNT_REACH = 5  # how far down the ranking a sentence stating a count is looked for
# how many people, in Chinese and Japanese ("一次可以去几个人？", "何人まで"), and a count of people ("2名", "两人", "3人まで")
_ASKED_PEOPLE_CJK = re.compile("几个人|几位|几名|多少人(?!口)|何人|何名")
_PEOPLE_SAID_CJK = re.compile("[0-9０-９一二两三四五六七八九十百千万]+\\s*(?:名|位|人|个人)")
# how many people, in the other languages (folded), and a count of them: a number before the people it counts ("groups
# of 2 to 6 players", "400 ضيف"), not one after them, which is their age ("Players under 16 must be accompanied …")
_PEOPLE_NOUNS = (
    r"people|persons|players|guests|participants|visitors|adults|children|kids|members|passengers|students|attendees|"
    r"personnes|joueurs|invites|visiteurs|adultes|enfants|membres|passagers|eleves|personas|jugadores|"
    r"invitados|participantes|visitantes|adultos|ninos|miembros|pasajeros|alumnos|personen|leute|spieler|gaste|"
    r"teilnehmer|besucher|erwachsene|kinder|mitglieder|fahrgaste|schuler"
)
_ASKED_PEOPLE = re.compile(rf"\b(?:how many|combien d[e']|cuant[ao]s|wie viele?)\s*(?:{_PEOPLE_NOUNS})\b|كم\s+(?:عدد\s+)?(?:شخص|ضيف|فرد|الاشخاص|الضيوف)")
_PEOPLE_SAID = re.compile(rf"{_COUNT_NUMBER}\s+(?:\w+\s+)?(?:{_PEOPLE_NOUNS})\b|\d[\d,]*\s*(?:لـ\s*)?(?:شخص|اشخاص|ضيف|ضيوف|فرد|افراد)")


def asked_count_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`COUNT_REACH`) that states a count put first, when the question
    asks how many of a thing and the best states none: "How many books can I borrow?" over a library's rules was
    answered "Books can be borrowed for four weeks." (its words, and a number of weeks), while "Each card may have at
    most 30 items on loan at the same time." stood third, after "Loans can be renewed twice"."""
    if _ASKED_PEOPLE_CJK.search(question):  # "一次可以去几个人？" was answered with "重症监护室每天只允许探视一次…"
        return _first_holding(ranked, COUNT_REACH, lambda text: bool(_PEOPLE_SAID_CJK.search(text)))
    if _ASKED_PEOPLE.search(normalize(question)):  # "How many people can play?": an age is no count of them
        return _first_holding(ranked, COUNT_REACH, lambda text: bool(_PEOPLE_SAID.search(normalize(text))))
    asked = _ASKED_COUNT.search(normalize(question))
    if asked is None:
        return ranked
    said = _TIMES_SAID if re.fullmatch(_TIMES, asked["thing"]) else _COUNT_SAID
    return _first_holding(ranked, COUNT_REACH, lambda text: bool(said.search(normalize(text))))


# A question that asks for a time of day ("What time is breakfast?", "À quelle heure ouvre ...?", "Um wie viel Uhr
# ...?", "¿A qué hora ...?", "几点", "何時"); read on folded text (the time of day a sentence states: `scope.CLOCK_SAID`)
_ASKED_CLOCK = re.compile(
    r"\b(?:what time|at what time|a quelle heure|(?:um|bis|ab) wie ?viel uhr|a que hora|hasta que hora|desde que hora|"
    r"opening (?:hours|times)|(?:business|office) hours|heures d'ouverture|horaires d'ouverture|offnungszeiten|"
    r"horarios? de apertura|horaires|horarios?)\b|几点|何時|营业时间|開館時間|営業時間"
)
CLOCK_REACH = 5  # how far down the ranking a sentence stating a time of day is looked for
# a time of day said by how long before or after something it is: "Les portes ouvrent 30 minutes avant le début."
# answers "À quelle heure ouvrent les portes ?" (folded)
_CLOCK_OR_RELATIVE = re.compile(
    rf"{CLOCK_SAID.pattern}|\b(?:\d+|an?|one|half an|une|eine|una)\s*(?:minutes?|mins?|hours?|heures?|minuten|stunden?|"
    r"minutos?|horas?)\s+(?:before|prior to|after|avant|apres|vor|nach|antes|despues)\b|\d+\s*分(?:钟)?前"
)


def asked_clock_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`CLOCK_REACH`) that states a time of day put first, when the
    question asks for one and the best states none: "What time is breakfast?" over a hotel's FAQ was answered
    "Breakfast is included in all rates except Room Only.", while "It is served from 7am to 10:30am in the Harbour
    Restaurant." stood second (said now after the sentence it leans on)."""
    return _first_stating(question, ranked, _ASKED_CLOCK, _CLOCK_OR_RELATIVE, CLOCK_REACH)


DAY_REACH = 5  # how far down the ranking a sentence for the asked day is looked for


def asked_day_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`DAY_REACH`) that covers a day the question names put first, when
    the best names only other days (`days.days_named`): "Are you open on weekends?" over a gym's hours was answered
    "From Monday to Friday we are open from 6:00 to 22:00.", "À quelle heure ouvrez-vous le week-end ?" and
    "周末几点开门？" alike, while the sentence for Saturdays and Sundays stood next. Where none does, the best stays:
    "Monday to Saturday" answers whether it opens on Sundays. A yes or a no asked of a day or a month, where the best
    says no days or months, is answered by the first that says which (`days.says_when`): "¿Abrís en noviembre?" over a
    sailing school's page was refused with "Las reservas se confirman con un pago de 50 euros, …" first, while "La
    escuela abre de abril a octubre, …" stood next (exploratory batch 11)."""
    if len(ranked) < 2:
        return ranked
    if for_other_days(question, ranked[0].text):
        asked = days_named(question)
        return _first(ranked, next((s for s in ranked[1:DAY_REACH] if days_named(s.text) & asked), None))
    if asks_yes_or_no(question) and not days_named(ranked[0].text) and not months_named(ranked[0].text):
        return _first(ranked, next((s for s in ranked[1:DAY_REACH] if says_when(question, s.text)), None))
    return ranked


WHEN_REACH = 3  # how far down the ranking a sentence stating a time is looked for, for a question asking when
# a question that opens asking when ("When …?", "Bis wann …?", "¿Cuándo …?"; not "what … when they fastened …"), or
# asks for a time of day or a day anywhere; folded
_ASKS_WHEN = re.compile(
    r"^\W*(?:(?:since|until|till|from|bis|ab|seit|depuis|jusqu'a|a partir de|desde|hasta)\s+)?(?:when|wann|quand|cuando|quando)\b|"
    r"\b(?:what time|what day|which day|a quelle heure|a que hora|um wie ?viel uhr|an welchem tag)\b|متى|什么时候|何时|哪天|几点|いつ|何時"
)


def asked_when_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`WHEN_REACH`) that states a time (`type_match`) and shares a word
    of the question the best does not put first, when the question asks when and the best states no time: "Wann
    finden Kastrationen statt?" over a vet's notes was answered "Impfungen und Routineuntersuchungen finden nur nach
    Terminvereinbarung statt." (its words: finden, statt), while "Kastrationen werden dienstags und freitags
    vormittags durchgeführt; …" stood second. A time said of none of the question's things is no answer."""
    if len(ranked) < 2 or not _ASKS_WHEN.search(normalize(question)) or _states_time(ranked[0].text, question):
        return ranked
    asked, best = _words_of(question), _words_of(ranked[0].text)
    return _first(ranked, next((s for s in ranked[1:WHEN_REACH] if _states_time(s.text, question) and (asked & _words_of(s.text)) - best), None))


def _states_time(sentence: str, question: str) -> bool:
    """Whether a sentence states a time (`type_match`), "may" read as the verb it is as often as the month, or a time
    of day as the sentence models' features do not ("bis 18 Uhr", "by 6pm": `CLOCK_SAID`)."""
    return bool(type_match("time", re.sub(r"\bmay\b", "", sentence), question)) or bool(CLOCK_SAID.search(normalize(sentence)))


# the topic a Japanese question opens with ("夕食は何時までですか？"): two or more letters before は, no asking word
_KANA_KANJI = "\u3400-\u9fff\u30a0-\u30ff\u3040-\u309f"  # a character class's ranges: kanji, katakana, hiragana
_JAPANESE_TOPIC = re.compile(rf"^\s*(?P<topic>[{_KANA_KANJI}]{{2,12}}?)は(?!.*は)")
_JAPANESE_ASKING = re.compile("何|いつ|どこ|だれ|誰|どの|どう|いくら|どれ")
TOPIC_REACH = 5  # how far down the ranking a sentence opening with the question's topic is looked for
TOPIC_LEAD = 4  # the letters a sentence may put before the topic: "土曜日と" in "土曜日と日曜日は", "毎週" in "毎週月曜日は"


def asked_topic_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`TOPIC_REACH`) that opens with the Japanese question's topic put
    first, when the best does not name it: "夕食は何時までですか？" (until when is dinner?) over a ryokan's page was
    answered "チェックインは15時から19時までです。" (its character pairs: 時ま, まで, です), while "夕食は18時から20時まで、
    お部屋で…" stood fourth."""
    match = _JAPANESE_TOPIC.match(question)
    if not ranked or match is None or _JAPANESE_ASKING.search(match["topic"]) or match["topic"] in ranked[0].text:
        return ranked
    # a sentence about the topic marks it so ("夕食は", "夕食が", "夕食の"), maybe after a few letters that join
    # another topic to it or say how often ("土曜日と日曜日は", "毎週月曜日は"); a title before Wikipedia's text does
    # not ("オランダ [SEP] ...": JSQuAD, where sentences leave out a topic already named and the best often does)
    about = re.compile(rf"[{_KANA_KANJI}]{{0,{TOPIC_LEAD}}}?" + re.escape(match["topic"]) + "(?:は|が|も|の|では|には|、)")
    return _first(ranked, next((s for s in ranked[1:TOPIC_REACH] if about.match(s.text.lstrip())), None))


def named_procedure_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the best line under a procedure's heading put first, when the question asks how to do
    what that heading names, every word of it: "How should I take this medicine?" over a leaflet whose "How to
    take this medicine" section ranked third, and was answered with "Talk to a doctor at once if you take too much
    of this medicine" (every word of the question, another section). The answer then says the procedure whole
    (`_draft`). A question with a word the heading lacks ("How do I take it if I am pregnant?") is left alone."""
    if not ranked or not names_steps(question):
        return ranked
    return _first(ranked, next((s for s in ranked if asks_procedure(question, s.heading)), None))


# the pronoun a how-question puts before its verb, which a heading's infinitive lacks: "¿Cómo se toma el
# ibuprofeno?" asks what "Cómo tomar ibuprofeno" names, "Comment se connecter ?" what "Comment se connecter" does
_CLITICS = frozenset("se me te nos os lo la le les sich mich dich".split())


def asks_procedure(question: str, heading: str) -> bool:
    """Whether `question` asks how to do what `heading`, a procedure's heading, names, every word of it by its
    family ("How should I take this medicine?" and "How to take this medicine"), a short verb by its other forms
    ("toma" is "tomar"), its pronoun aside ("se")."""
    if not heading or not names_steps(heading) or not names_steps(question):
        return False
    named = {family(t) for t in passage_terms(heading)}
    asked = {family(t) for t in passage_terms(question) if t not in _CLITICS}
    return all(word in named or (len(word) >= 4 and any(other.startswith(word) for other in named)) for word in asked)


def split_quoted(analysis: Analysis, quoted: Mapping[int, Sequence[CharSpan]]) -> tuple[list[ScoredSentence], list[ScoredSentence]]:
    """The ranked sentences an answer quotes (`quoted`: its spans by passage number; a quote can hold several
    sentences, a lead-in with all its lines), and the others."""

    def used(s: ScoredSentence) -> bool:
        return any(span.start <= s.start and s.end <= span.end for span in quoted.get(s.passage + 1, []))

    return [s for s in analysis.sentences if used(s)], [s for s in analysis.sentences if not used(s)]


def settled_relevance(question: str, given: Sequence[ScoredSentence], unused: Sequence[ScoredSentence]) -> float | None:
    """Whether an answer quoting `given` answers the question, where the plain readings settle it without the
    reader (1.0 or 0.0; None: read it). The procedure the question names, by its heading, answers it
    (`named_procedure_first`), whatever its lines score read one by one ("¿Cómo se toma el ibuprofeno?" read its
    dosing lines at p = 0.01). An answer that quotes only sentences about another kind than the one asked is true
    and about something else. The thing the question names by its number, named by the answer and by no other
    sentence (`unused`), is answered: "What does error 429 mean?" by "... the API returns HTTP 429 with a
    Retry-After header." (the reader reads such a label as no answer, p = 0.016). A number that says when is no
    thing asked about (`circumstances=False`). And a rule that speaks to the circumstance the question gives, which
    the reader reads as no answer where the answer is left to infer: the range of the weight, age, height or time it
    states ("My dog weighs 30 kg, is that OK?": "... a maximum weight of 25 kg each."), the months of the one a yes or
    no names ("Can I have a bonfire in December?": "Bonfires are allowed only between 1 November and 31 March"; not
    "Qu'est-ce qui bloque le port de Marseille à partir du 21 juin ?", asked of events), or that the
    thing whose price it asks costs nothing ("How much is the car park?": "The car park is free for visitors.")."""
    if any(asks_procedure(question, s.heading) for s in given):
        return 1.0
    if given and all(s.other_kind for s in given):
        return 0.0
    if any(holds_asked_number(question, s.text, circumstances=False) for s in given) and not any(
        holds_asked_number(question, s.text, circumstances=False) for s in unused
    ):
        return 1.0
    if any(states_quantity_of(question, s.text) for s in given):
        return 1.0
    if asks_yes_or_no(question) and months_named(question) and any(months_named(s.text) for s in given):
        return 1.0
    if asked_value(question) in ("money", "amount", "charge") and any(says_free(s.text) for s in given):
        return 1.0
    return None


def asked_value_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`KIND_REACH`) that holds the contact value the question asks
    for (a phone number, an e-mail address, a website: `scope.asked_value`) put first, when the best holds none:
    "What is your phone number?" matched "Send your order number to refunds@acme.com" by its "number", and was
    refused for lacking one (`scope.missing_value`) while "Call us on 0800 123 456" stood third. An amount is looked
    for only in the sentence right after the best, in its section: the price of something else is a near-miss, not
    the answer, but "インフルエンザの予防接種は10月から1月まで行っています。料金は大人3,500円…" gives the price of what
    the best is about (Japanese leaves out a topic already said)."""
    kind = asked_value(question)
    if kind in ("money", "charge") and ranked and not holds_value(kind, ranked[0].text):
        following = _beside(ranked[0], ranked, after=True)
        # whether a thing is paid for or included is said by its price too, where the sentence names the thing: "Is
        # breakfast included?" was answered "Breakfast is served from 6:30am to 10am …", while "Breakfast costs 18
        # euros per person." came right after it ("El registro es gratuito …" is no answer to "¿Tengo que pagar la
        # gasolina?")
        named = kind == "money" or (following is not None and bool(set(passage_terms(question)) & set(passage_terms(following.text))))
        return _first(ranked, following if following in ranked[1:KIND_REACH] and holds_value(kind, following.text) and named else None)
    if kind not in CONTACT_VALUES:
        return ranked
    return _first_holding(ranked, KIND_REACH, lambda text: holds_value(kind, text))


def asked_priced_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`KIND_REACH`) that names what the question prices and states an
    amount put first, when the best does not do both: "Was kostet der Einführungskurs?" over a climbing hall's FAQ
    was answered "Eine Tageskarte kostet 14 Euro …" (it shares only "kostet"), while "Zum Toprope-Klettern brauchen
    Sie einen Sicherungsschein oder unseren Einführungskurs (35 Euro)." stood third; "How much is a night at the
    weekend?" with "At weekends the minimum stay is two nights." (no amount)."""
    if asked_value(question) not in ("money", "amount"):  # "How much is a night at the weekend?" asks a price too
        return ranked
    priced = _words_of(question) - _PRICE_FAMILIES
    return _first_holding(ranked, KIND_REACH, lambda text: bool(priced & _words_of(text)) and holds_value("money", text))


def _beside(sentence: ScoredSentence, sentences: list[ScoredSentence], *, after: bool) -> ScoredSentence | None:
    """The sentence right after (or before) `sentence` in its passage, among `sentences`, where it stands in the
    same section; None where `sentence` ends (or opens) one."""
    same = [s for s in sentences if s.passage == sentence.passage]
    if after:
        nearest = min((s for s in same if s.start >= sentence.end), key=lambda s: s.start, default=None)
    else:
        nearest = max((s for s in same if s.end <= sentence.start), key=lambda s: s.end, default=None)
    return nearest if nearest is not None and nearest.section == sentence.section else None


def asked_number_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`NUMBER_REACH`) that holds a number the question writes with
    digits put first, when the best holds none of them: "What does error 429 mean?" was answered "A 401 response
    means the key is missing or invalid." (every word but the number), while "When you exceed the limit the API
    returns HTTP 429 with a Retry-After header." stood fourth. A short number must stand beside a word it stands
    beside in the question (`scope.same_thing`): "8 tablets" is no answer to "Can I give it to my 8 year old?"."""
    return _first_holding(ranked, NUMBER_REACH, lambda text: holds_asked_number(question, text))


def asked_range_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`NUMBER_REACH`) whose stated range holds the weight or age the
    question states put first, when the best states ranges of it that do not (`scope.fits_quantity`): "Quelle est la
    dose pour un enfant de 30 kg ?" over a paracetamol leaflet was answered first with the dose for "plus de 50 kg",
    while "Enfants de 27 à 50 kg : 1 comprimé par prise" stood second. The one put first shares a word with the
    best, numbers and units aside: it is about the same thing. "My bags were delayed 5 hours, can I claim?" is
    answered by "If your bags are delayed more than 12 hours …" (the rule, which does not apply here), not by the
    police report due "within 24 hours" of a theft, whose range holds 5 hours. Where the best states no range, an
    age or a weight the question states is looked for too: "Is my 10 year old cat's claim reduced?" over a pet
    insurance summary was answered "… we reimburse you within 10 working days." (its 10), while "For pets aged 9 and
    over, you also pay 20% of the remaining claim." stood third. A rule for people of an age holding the asked one
    needs no word of the best: "Darf mein 4-jähriger Sohn mitfahren?" over a ticket's rules was answered "Die
    Mitnahme von Personen ist nicht im Ticket enthalten.", while "Kinder unter 6 Jahren fahren kostenlos mit." stood
    second."""
    if len(ranked) < 2:
        return ranked
    fits = fits_quantity(question, ranked[0].text)
    if fits is True:
        return ranked
    kinds = DOSED if fits is None else None  # the best states no range: an age or a weight only
    best = _words_of(ranked[0].text)

    def about(sentence: ScoredSentence) -> bool:
        return bool(best & _words_of(sentence.text)) or (fits is None and bool(groups_named(sentence.text)))

    held = [s for s in ranked[1:NUMBER_REACH] if fits_quantity(question, s.text, kinds) and about(s)]
    if not held and fits is None and asks_yes_or_no_any_script(question):
        # asked yes or no, a range that leaves the age out answers it: "十五岁的孩子可以报儿童班吗？" (may my fifteen-year-old
        # join the children's class?) is answered "儿童游泳班适合五至十二岁，…" (for five to twelve), which stood second
        held = [s for s in ranked[1:NUMBER_REACH] if fits_quantity(question, s.text, DOSED) is False and about(s)]
    return _first(ranked, held[0] if held else None)


def _words_of(text: str) -> set[str]:
    """The families of the words `text` says, its numbers and the quantities it states left out."""
    return {family(t) for t in passage_terms(without_quantities(text)) if not t[0].isdigit()}


_PRICE_FAMILIES = frozenset(_words_of(" ".join(PRICE_WORDS)))  # the words that ask a price, as `_words_of` reads them


def _first_stating(question: str, ranked: list[ScoredSentence], asks: re.Pattern[str], states: re.Pattern[str], reach: int) -> list[ScoredSentence]:
    """The ranking with the first of the next best (up to `reach`) whose folded text `states` what the folded question
    `asks` for (a limit, a frequency) put first, when the question asks for it and the best states none."""
    if not asks.search(normalize(question)):
        return ranked
    return _first_holding(ranked, reach, lambda text: bool(states.search(normalize(text))))


def _first_holding(
    ranked: list[ScoredSentence], reach: int, holds: Callable[[str], bool], *, eligible: Callable[[ScoredSentence], bool] = lambda s: True
) -> list[ScoredSentence]:
    """The ranking with the first `eligible` of the next best (up to `reach`) whose text `holds` what is asked put
    first, when the best's does not; as it was otherwise."""
    if len(ranked) < 2 or holds(ranked[0].text):
        return ranked
    return _first(ranked, next((s for s in ranked[1:reach] if eligible(s) and holds(s.text)), None))


def _as_read_plainly(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking after the plain readings of what the question asks (`READINGS`), each on the ranking the one
    before left."""
    for reading in READINGS:
        ranked = reading(question, ranked)
    return ranked


def _first(ranked: list[ScoredSentence], sentence: ScoredSentence | None) -> list[ScoredSentence]:
    """The ranking with `sentence` put first and the rest in their order; as it was for None."""
    return ranked if sentence is None or sentence is ranked[0] else [sentence, *(s for s in ranked if s is not sentence)]


DURATION_REACH = 3  # how far down the ranking a sentence stating the length of time asked is looked for


def asked_duration_first(question: str, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """The ranking with the first of the next best (`DURATION_REACH`) that states a length of time (or of distance,
    for "How long is …": `scope.asked_value`) put first, when the question asks for one, the best states none and
    the other holds every word of the question the best holds (by their families): "كم يستغرق التحويل الدولي؟" (how
    long does an international transfer take?) over a bank's fees was answered first with the transfer's price, and
    "تصل التحويلات الدولية خلال يومين إلى خمسة أيام عمل." second. One without them is about something else: "Refunds
    take 5 days" is no answer to how long shipping takes, unless it is the sentence right after the best, which goes
    on about the same thing: "Eine Pause ist für mindestens einen und höchstens sechs Monate möglich." after "…
    kann die Mitgliedschaft gegen Nachweis pausiert werden." answers "Wie lange?" (how long may I pause it)."""
    kind = asked_value(question)
    if kind not in ("duration", "length") or len(ranked) < 2 or holds_value(kind, ranked[0].text):
        return ranked
    asked = {family(t) for t in terms(question) if not HIRAGANA.search(t)}  # a pair with hiragana names nothing asked

    def held(sentence: ScoredSentence) -> set[str]:
        return asked & {family(t) for t in terms(sentence.text)}

    def goes_on(sentence: ScoredSentence) -> bool:  # the next sentence of the best's passage, under its heading
        first = ranked[0]
        return (
            sentence.passage == first.passage
            and sentence.section == first.section
            and sentence.start >= first.end
            and not any(s.passage == first.passage and first.end <= s.start < sentence.start for s in ranked)
        )

    best = held(ranked[0])
    return _first(
        ranked, next((s for s in ranked[1:DURATION_REACH] if holds_value(kind, s.text) and (held(s) >= best or goes_on(s))), None)
    )


# The rankings' plain readings of the question, in order (see each): the asked kind, the asked subject, a negation,
# a group of people, a limit, what is refunded, a frequency, a length of time, a count, a time of day, a day of the
# week, a time asked when, a Japanese topic, a named procedure, an asked contact value, an asked number, a weight or
# age in a range
READINGS = (
    asked_content_first,
    asked_kind_first,
    asked_subject_first,
    asked_polarity_first,
    asked_group_first,
    asked_limit_first,
    asked_refund_first,
    asked_frequency_first,
    asked_duration_first,
    asked_count_first,
    asked_clock_first,
    asked_day_first,
    asked_when_first,
    asked_topic_first,
    named_procedure_first,
    asked_value_first,
    asked_priced_first,
    asked_number_first,
    asked_range_first,
)


def _another_row(sentence: ScoredSentence, asked: set[str]) -> bool:
    """A table row whose cells hold no word of the question (by its first five letters: "child" is in "Children 6
    to 12"): its column names are in every row of its table, so "Plan: Starter; Price per month: $19." shares
    "plan" with a question on the Pro plan and says nothing of it."""
    cells = row_cells(sentence.text)
    return cells is not None and not {family(t) for t in asked} & {family(t) for t in passage_terms(" ".join(cells))}


def _declined(provider: str, detail: dict) -> Draft:
    no_answer = "The sources do not contain an answer to this question."
    return Draft(answer=no_answer, citations=[], refused=True, provider=provider, detail=detail)


def as_quoted(sentence: str) -> str:
    """A source sentence as it may appear in an answer: its own citation markers (`[2]` in a paper: they would read
    as ours), invisible control characters (they could reorder what is shown) and an FAQ's answer label ("A:
    Refunds take 5 days") are dropped. The quote spans still point at the sentence as stored."""
    return ANSWER_LABEL.sub("", strip_markers(without_invisibles(sentence)), count=1)


# Words that open a sentence leaning on the one before it: "It ships the next day.", "After that, ..."
_LEANING = frozenset(
    "it its this that these those they their them he she his her such then after also however il elle ils elles "
    "ce cet cette ces cela leur leurs puis ensuite er sie es dies diese dieser dieses dann danach ello ella ellos "
    "ellas esto este esta estos estas luego despues".split()
)


def _leaned_on(best: ScoredSentence, analysis: Analysis) -> list[ScoredSentence]:
    """The sentence before `best` in its passage and section, when `best` leans on it: "Il varie de 0,50 € à 4,20 €
    de l'heure." said alone does not say what varies; "Le tarif horaire dépend des revenus du foyer …" before it
    does. The answer says both, in source order. A line after its lead-in is said with that instead ("Do not give
    it to children if: They have chickenpox.")."""
    if not _leans_back(best.text) or (best.start, best.end) in analysis.leads[best.passage]:
        return []
    before = _beside(best, analysis.sentences, after=False)
    return [before] if before is not None else []


# an impersonal "it" leans on nothing: "Il est interdit de fumer dans la salle." (it is forbidden to smoke) was said
# after the sentence before it ("Le ménage est à la charge du locataire."), that one first; folded
_IMPERSONAL = re.compile(
    r"(?:il|it)\s+(?:est|is|n'est|isn't|etait|was)\s+(?:(?:pas|not|tout|strictly|strictement)\s+)?\w+\s+(?:de|d'|to)\b|"
    r"il\s+(?:faut|y\s+a|n'y\s+a)\b|es\s+gibt\b"
)


def _leans_back(sentence: str) -> bool:
    folded = normalize(sentence)
    words = folded.split()
    return bool(words) and words[0].strip(",;:") in _LEANING and not _IMPERSONAL.match(folded)


def _with_lead_in(sentence: ScoredSentence, text: str, leads: dict[tuple[int, int], tuple[int, int]]) -> str:
    """The sentence after the lead-in it completes in its passage's `text`, if any (`leads`: `Passage.lead_ins`)."""
    lead = leads.get((sentence.start, sentence.end))
    return sentence.text if lead is None else f"{text[lead[0] : lead[1]]} {sentence.text}"


# how much better (in probability) the reader must read its pick than the sentence models' best: the curve is in
# bench/results/reader_pick.md (XQuAD design half)
PICK_MARGIN = 0.25


def _plainly_no_answer(question: str, read: Sequence[Passage], spans: Sequence[CharSpan], focus: Sequence[str]) -> dict | None:
    """Why an answer is plainly none, by readings no threshold moves (`synthesis.scope`): it is about other names
    than the one asked for, or lacks the value asked for (a phone number, an amount); None where it stands."""
    if (mismatch := answer_scope(question, read, spans)) is not None:
        return {"decided_by": "named scope", "named_scope": asdict(mismatch)}
    if (mismatch := answer_kind(question, read, spans)) is not None:
        return {"decided_by": "asked kind", "missing_kind": asdict(mismatch)}
    if (mismatch := answer_swaps_name(question, read, spans)) is not None:
        return {"decided_by": "named kind", "other_named_kind": asdict(mismatch)}
    # a follow-up that swaps the topic asks about its focus ("And personal laptops?" after "Can I read work
    # email on a personal phone?"): the words it carries from the previous question are not what it asks
    if not focus and (mismatch := answer_said_elsewhere(question, read, spans)) is not None:
        return {"decided_by": "said elsewhere", "said_elsewhere": asdict(mismatch)}
    if (value := missing_value(question, read, spans)) is not None:
        return {"decided_by": "asked value", "missing_value": value}
    if (unnamed := answer_misses_thing(question, read, spans)) is not None:
        return {"decided_by": "unnamed thing", "unnamed_thing": asdict(unnamed)}
    return None


def _read_in_order(reader: Reader, question: str, candidates: list[ScoredSentence], analysis: Analysis) -> tuple[list[float], list[int]]:
    """The reader's probability that each candidate answers, and the candidates' order by the sum of its logit and
    the sentence model's (weighted by `Reader.sentence_mix`), best first."""
    # each sentence after what it stands under, the heading its indexed chunk opens with or the question before
    # it: "Yes, for a flat fee." answers under "Do you ship to Canada?"; a sentence under neither reads alone;
    # a line after the lead-in it completes, as the answer says it ("To return an item: Sign in and open ...")
    headed = [as_read(c, analysis) for c in candidates]
    read = reader.answers(question, headed)
    combined = [logit(p) + reader.sentence_mix * logit(c.score) for c, p in zip(candidates, read, strict=True)]
    return read, sorted(range(len(candidates)), key=lambda i: -combined[i])


def as_read(sentence: ScoredSentence, analysis: Analysis) -> str:
    """What the reader reads of a candidate: the sentence after its lead-in, under its heading; the heading once
    where it is the lead-in ("How to return an item" over its steps)."""
    line = _with_lead_in(sentence, analysis.sources[sentence.passage].text, analysis.leads[sentence.passage])
    return line if sentence.heading and line.startswith(sentence.heading) else under_heading(sentence.heading, line)


def _ensure_stop(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?。！？؟…\"”'’)" else text + "."
