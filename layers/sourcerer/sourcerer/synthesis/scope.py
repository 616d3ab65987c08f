"""Named scope: a question that names something the sources never mention is not answered about something else.

"What is the meal allowance in Japan?" over a travel policy that gives the allowance for Europe and the United
States: every word but *Japan* is there, the sentence models read the Europe/US rule as the answer (0.95), and
the answer would be true, cited, and about another country. The check is plain reading, not a score: the
question names *Japan* (a capitalised word that does not open a sentence), no passage nor its title mentions it,
and the sentence chosen as the answer is about other names (*Europe*, *United States*). Then the sources do not
answer the question, and the extractive synthesiser refuses (`unsupported`), saying which name was missing.

A name counts as mentioned when a passage holds any word of it by its first five letters ("Californian" by
"California"), one edit away ("Zeria" by "Zeira", "ARPNET" by "ARPANET"), or as an acronym either way ("UMC" by
"United Methodist Church", "United States" by "US" or "USA"), but not by a common word of another compound: "the
Business plan" is not mentioned by "next business day" in sources that speak of plans. Measured on XQuAD en with
the gold paragraph among five (`bench/scope.py`): it refuses 0.3% of the answerable sets of held-out articles and
26% of the same-topic sets that do not hold the answer. Questions in German, where every noun is capitalised, and in scripts other than Latin are
not checked.

The **asked kind** (`other_kind`) is the same reading for the words that say which kind of a thing is asked about:
"How long does express shipping take?" is not answered with "Standard shipping takes 3 to 5 business days" when
the sources also say "Express shipping arrives the next business day" (`extractive.asked_kind_first`); and a kind no source mentions ("How long does
international shipping take?") is not answered about another (`missing_kind`: "Standard shipping takes..."). The **asked value** (`missing_value`): a question asking what a phone number,
e-mail address or website is, what something costs or pays, how long or how often, or how many of a thing there are,
gets no answer from sentences that hold none.
A **reply** (`answers_another_question`): "Yes." under an FAQ's question answers that question, not another one
that shares its words.

Why it is long: the checks read a question's names, kinds and words with the same helpers (`name_runs`,
`_Vocabulary`, `word_pairs`, the Latin-script and German tests, the asking words), in Latin script and, for kinds, in
Chinese characters; apart, each would import the others' private parts.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from sourcerer.injection import stated_sentences, stated_text
from sourcerer.models import CharSpan, Passage
from sourcerer.people import groups_mentioned, groups_named, labels_named, sexes_named
from sourcerer.sentences import ANSWER_LABEL, QUESTION_LABEL, is_question, row_cells, states_nothing
from sourcerer.synthesis.days import WEEK, day_words, days_named, holidays_named, months_named, says_when
from sourcerer.text import (
    AGAINST_WORDS,
    CJK_LETTER,
    DEFINITE_ARTICLES,
    ELISION,
    FAMILY_LETTERS,
    FOR_WORDS,
    STOPWORDS,
    digit_numbers,
    family,
    normalize,
    numbers,
    numbers_at,
    terms,
)

_WORD = re.compile(r"[^\W\d_](?:[^\W_]|['’-])*", re.UNICODE)  # "Super_Bowl_50", a title, is two words
# Letters of the scripts that write names with capitals the way the check reads them (Latin); a question with other
# letters (Chinese, Arabic, Cyrillic...) is not checked: its names are often written in another script than the
# sources' ("NFL" for 国家橄榄球联盟), and a Latin word inside it does not open a sentence even when it starts one.
_NOT_LATIN = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f]")
# a stop and the space after it (not a title's: "Mr. Studd"), or the space before a Spanish opening mark ("… en
# 1985, ¿Cuánto …")
_SENTENCE_BREAK = re.compile(
    r"(?<=[.!?:;])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bProf\.)\s+|\s+(?=[¿¡])"
)
_OPENING_MARKS = "¿¡\"'“«‘( "
_POSSESSIVE = re.compile(r"['’]s$")
_ASKING = frozenset("who what when where which why how whom whose".split())
# A question with more of these words than of the other languages' below is German: its nouns are capitalised, so a
# capital does not make a name. Words both spell ("was", "des") count for both.
_GERMAN = frozenset(
    "der die das den dem des ein eine einen einem einer und ist sind was wie wer wann warum welche welcher welches wo "
    "für fur mit bei von zu zum zur vom nicht ich du sie wir gibt kann muss wird werden hat haben bis auch oder "
    "es ab im auf aus nach welchem welchen dürfen darf können müssen soll sollen sollte mich mir mein meine meinen "
    "wenn noch nur kein keine keinen viele oft lange gilt brauche bekomme sich ihre ihren wurde würde "
    # the past and pronouns of Wikipedia's questions ("In welchem Jahr starb König Sho Toku?", "Was tat Goldman, als
    # er ...?"), and "in", which both languages spell
    "in war waren ging starb tat als er sein seine seinen seiner ihm ihn dass über uber unter durch gegen ohne um wen "
    "wem wessen wofür wofur wonach wovon womit woher wohin "
    "am beim vor seit während wahrend "
    # the plural "you" a customer asks a business with ("Habt ihr sonntags geöffnet?")
    "ihr euch euer eure euren eurem habt seid".split()
)
# French "du" is German "du" (you): "Pouvez-vous donner du paracétamol à mon enfant ?" read as German, by that word
# alone, so French pronouns and prepositions count too
_OTHER = frozenset(
    "the a an and is are was were what when where who which how why do does did of to in on for with at by from "
    "le la les des un une et est sont que qui quoi quand comment pour avec dans à au aux je vous il elle on nous mon "
    "ma mes el los las del y es son qué cuándo cómo para con por en o".split()
)


# what says a thing of every place (read on folded text: accents and case gone)
_EVERYWHERE = re.compile(
    r"\b(?:world-?wide|international\w*|globally|every ?where|any ?where|all (?:countries|regions|destinations)|"
    r"(?:every|any) (?:country|region|destination)|partout|monde entier|weltweit|(?:in )?alle(?:n)? lander|"
    r"todo el mundo|a nivel mundial|todos los paises|cualquier pais)\b"
)


@dataclass(frozen=True)
class ScopeMismatch:
    missing: list[str]  # names of the question that no passage mentions
    answer_names: list[str]  # names of the chosen sentences that the question does not use ("United States")


def name_runs(text: str) -> list[list[str]]:
    """Runs of capitalised words that do not open a sentence: [["Graham", "Twigg"], ["Japan"], ["UMC"]]."""
    return [
        run
        for sentence in _SENTENCE_BREAK.split(text)
        for run in _runs(
            _WORD.findall(sentence.lstrip(_OPENING_MARKS)),
            lambda i, w: i > 0 and len(w) >= 2 and w[0].isupper() and w.casefold() not in _NO_NAME and not _I_CONTRACTED.fullmatch(w),
        )
    ]


# what asks, and "OK", capitalised but no name: "My dog weighs 30 kg, is that OK?" was refused for naming "OK"
_NO_NAME = _ASKING | {"ok", "okay"}
# "I" with its verb, no name: "Do I need a doctor's note if I'm sick for one day?" was refused for naming "I'm"
_I_CONTRACTED = re.compile(r"I['’](?:m|ve|d|ll)")


# a letter of a script that is not Latin (Vietnamese, with its marks, is Latin)
_OTHER_SCRIPT = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_WORD_OR_NUMBER = re.compile(r"\d[\w.,'’-]*|" + _WORD.pattern)
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[ '’.&-]+[A-Za-z0-9]+)*")


def latin_runs(text: str) -> list[list[str]]:
    """The runs of words written in Latin letters inside a text in another script, two letters or more, split at
    spaces and hyphens: [["DVD"]] in "DVDは一人2点まで", [["NF", "kB"]] in "NF-kB是什么？"."""
    return [re.split(r"[ '’.&-]+", run) for run in _LATIN_RUN.findall(text) if sum(c.isalpha() for c in run) >= 2]


LATIN_LIKENESS = 0.8  # how alike (difflib's ratio) a Latin word of the question and one of a source must be to be one


def missing_latin_runs(question: str, sources: Sequence[str]) -> list[str]:
    """`missing_names` of a question in another script: what it writes in Latin letters that no source holds, as a
    word, inside one ("SO/TS" in "ISO/TS"), by its first letters ("NSFNET" over "NSF网络") or misspelt ("ableine" for
    "Abilene")."""
    folded = [text.casefold() for text in sources]
    known = source_vocabulary(sources)
    latin = {w.casefold() for text in sources for run in latin_runs(text) for w in run if len(w) >= 3}

    def held(run: list[str]) -> bool:
        word = "".join(run).casefold()
        return (
            known.mentions(run)
            or any(word in text for text in folded)
            or any(word.startswith(w) or difflib.SequenceMatcher(None, word, w).ratio() >= LATIN_LIKENESS for w in latin)
        )

    return [" ".join(run) for run in latin_runs(question) if not held(run)]


def _runs(words: list[str], keep: Callable[[int, str], bool]) -> list[list[str]]:
    """The runs of consecutive `words` that `keep` (given each word's position) keeps."""
    runs: list[list[str]] = []
    current: list[str] = []
    for i, word in enumerate(words):
        if keep(i, word):
            current.append(word)
            continue
        if current:
            runs.append(current)
        current = []
    return runs + [current] if current else runs


# where a German question goes or comes from, which names a place: "nach Italien", "in die Schweiz", "aus Polen"; not
# a noun of a genitive ("nach Ablauf der Frist", "nach Eingang der Rücksendung")
_GERMAN_PLACE = re.compile(
    r"\b(?:nach|aus|in die|in den)\s+(?P<place>[A-ZÄÖÜ][^\W\d_]+)(?![-\w])(?!\s+(?:der|des|dem|den|die|das|eines|einer)\b)"
)


def missing_names(question: str, sources: Sequence[str]) -> list[str]:
    """The names of `question` that no text of `sources` (passages and their titles) mentions. A question in another
    script names what it writes in Latin letters ("CDは何枚借りられますか？"). German capitalises every noun, so a German
    question names only the place it goes to or comes from, when it asks yes or no ("Darf ich mit dem Auto nach
    Italien fahren?" over a car rental's terms was answered "Ehepartner fahren kostenlos mit."); asking for
    something, "in die Hauptstadt" and "nach Ansicht von" were read as places on MLQA de."""
    if is_german(question) and not _NOT_LATIN.search(question):
        if not asks_yes_or_no(question):
            return []
        known = source_vocabulary(sources)
        return [m["place"] for m in _GERMAN_PLACE.finditer(question) if not known.mentions([m["place"]])]
    if not _names_by_capitals(question):
        return missing_latin_runs(question, sources) if _OTHER_SCRIPT.search(question) else []
    # a group of people is no name, capitalised or not: "Fahren Babys kostenlos?" (no German function word to tell it
    # German by) was refused for the name "Babys" beside "Kinder unter 6 Jahren fahren kostenlos."; `missing_group`
    # reads groups
    runs = [run for run in name_runs(question) if not all(groups_named(word) for word in run)]
    if not runs:
        return []
    known = source_vocabulary(sources)
    words = _WORD.findall(question)
    return [" ".join(run) for run in runs if not known.mentions(run, _word_after(words, run))]


def _word_after(words: list[str], run: list[str]) -> str | None:
    """The word after `run` in `words` when it is no stopword: "plan" in "the Business plan"."""
    start = _run_start(words, run)
    after = words[start + len(run)] if start is not None and start + len(run) < len(words) else None
    return after if after is not None and after.casefold() not in STOPWORDS else None


def _run_start(words: list[str], run: list[str]) -> int | None:
    """Where `run` first stands in `words`."""
    return next((i for i in range(len(words) - len(run) + 1) if words[i : i + len(run)] == run), None)


def _names_by_capitals(question: str) -> bool:
    """Whether the question writes its names as the checks read them, capitalised among words that are not: Latin
    script, and not German (whose every noun is capitalised)."""
    return not _NOT_LATIN.search(question) and not is_german(question)


def is_german(question: str) -> bool:
    return _leans(question, _GERMAN, _OTHER, str.casefold)


def _leans(question: str, these: frozenset[str], those: frozenset[str], fold: Callable[[str], str]) -> bool:
    """Whether `question` holds more words (folded by `fold`) of `these` than of `those`: which language it reads as."""
    words = [fold(w) for w in _WORD.findall(question)]
    return sum(w in these for w in words) > sum(w in those for w in words)


def scope_mismatch(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`missing_names` of the question, when the `answer` sentences are about other names, or say nothing of it to a
    question asking yes or no ("Do you collect my IP address?"); None when the question names nothing missing, or
    the answer to a question asking for something names nothing else (a missing name beside it is left to the
    answer models), or says a thing of every place ("We ship worldwide.")."""
    # a day is answered by the days an answer names (`days.days_named`): "From Monday to Friday …" says Tuesday's
    # hours, and "The museum is open Tuesday to Sunday …" that it is closed on Mondays
    missing = missing_names(question, sources)
    if any(days_named(name) for name in missing) and days_named(" ".join(answer)):
        missing = [name for name in missing if not days_named(name)]
    # and a month by the months an answer names: "between 1 November and 31 March" says whether bonfires are allowed
    # in December
    if len(months_named(" ".join(answer))) >= 2:
        missing = [name for name in missing if not months_named(name)]
    if not missing:
        return None
    asked = {_family(w) for w in _WORD.findall(question)}
    others = [" ".join(run) for sentence in answer for run in _answer_names(sentence) if any(_family(w) not in asked for w in run)]
    # an answer that names nothing answers a question asking yes or no about a name only by saying it of every place
    # ("We ship worldwide." to "Do you ship to Canada?"); one that says nothing of the name is none ("We collect your
    # name, e-mail address and billing details" to "Do you collect my IP address?"). So too for a question asking
    # about a thing the name, after its article, says which ("All plans include file versioning for 30 days." to "How
    # much storage does the Ultra plan include?"); a name in a circumstance may be one the answer holds for ("¿Puedo
    # volar en business a Londres?": "Los vuelos de menos de seis horas deben ser en clase turista."; "How do I book
    # flights for the Berlin offsite?": "Book flights through the company travel portal.")
    # and the thing a price is asked of, after any article: "¿Cuánto cuesta un GPS?" over a car hire's prices was
    # answered with the small car's
    priced = asked_value(question) in _PRICE_ASKED
    asks_of_name = asks_yes_or_no(question) or any(_after_article(question, name, indefinite=priced) for name in missing)
    if not others and (not asks_of_name or any(_EVERYWHERE.search(normalize(sentence)) for sentence in answer)):
        return None
    return ScopeMismatch(missing=missing, answer_names=list(dict.fromkeys(others)))


# prepositions that open a circumstance ("for the Berlin offsite", "en el hotel Ritz"); "of", "de", "von" tie a name
# to the thing asked about ("the price of the Ultra plan") and are not among them
_CIRCUMSTANTIAL = frozenset(
    "for to in at on during with from into by via about after before since until "
    "para por a en con desde hasta pour dans avec sur chez vers pendant fur nach bei mit zu im am an auf in".split()
)


# "of" and a definite article in one word: "le taux du PEL" is "the rate of the PEL"
_OF_THE = frozenset("du del".split())


def _after_article(question: str, name: str, *, indefinite: bool = False) -> bool:
    """Whether `name` stands after a definite article in `question` (or, `indefinite`, any article: `_ARTICLES`, as a
    price question names its thing), not inside a circumstance ("does the Ultra plan include", not "for the Berlin
    offsite")."""
    words = [w.casefold() for w in _WORD.findall(question)]
    first = name.split()[0].casefold()
    articles = _ARTICLES if indefinite else DEFINITE_ARTICLES
    return any(
        word == first
        and i > 0
        and (words[i - 1] in articles or words[i - 1] in _OF_THE)
        and (i < 2 or normalize(words[i - 2]) not in _CIRCUMSTANTIAL)
        for i, word in enumerate(words)
    )


# the words that put a name in a circumstance, or tie it to the thing asked about ("the price of the Ultra plan")
_GOVERNING = _CIRCUMSTANTIAL | frozenset("of de du des von del di da".split())


def swapped_name(question: str, sources: Sequence[str], sentence: str) -> ScopeMismatch | None:
    """The name of the question that `sentence` says another of, where the sources name two kinds or more of the
    thing and the question's is one of them: "How long are audit logs kept on the Team plan?" over plans named
    Starter, Team and Enterprise, and "Audit logs are retained for one year on the Enterprise plan." The sentence
    must say the other in the same place as the question says its own (after the same preposition, or as the
    subject of both) and hold no word of it: "Zhu Yuanzhang founded it after the Yuan dynasty collapsed" says
    nothing of the Ming dynasty in the place the question asks it ("Who founded the Ming dynasty?"). The kind may
    follow the thing ("le plafond de paiement de la carte Premier" against "... de la carte Classic"). Read where
    names are written with capitals (`_names_by_capitals`)."""
    if not _names_by_capitals(question):
        return None
    known = source_vocabulary(sources)
    words = _WORD.findall(question)
    said = _WORD.findall(_opening(sentence))
    said_families = {_family(w) for w in said}
    for run in name_runs(question):
        if any(_family(w) in said_families for w in run):
            continue
        start = _run_start(words, run)
        if start is None:  # never: `name_runs` reads the question's own words
            continue
        after = words[start + len(run)] if start + len(run) < len(words) else None
        before = words[start - 1] if start > 0 else None
        asked = tuple(_family(w) for w in run)
        for thing, name_first in ((after, True), (before, False)):  # "the Team plan", "la carte Premier"
            if thing is None or not thing[0].islower() or thing.casefold() in STOPWORDS:
                continue
            named = (known.names_before if name_first else known.names_after).get(_family(thing), set())
            if len(named) < 2 or asked not in named:
                continue
            place = _place(words, start if name_first else start - 1, subject=True)
            for other, at in _named_kinds(said, thing, named - {asked}, name_first=name_first):
                if _place(said, at, subject=at < SUBJECT_WORDS) == place:
                    phrase = [*run, thing] if name_first else [thing, *run]
                    return ScopeMismatch(missing=[" ".join(phrase)], answer_names=[other])
    return None


def _named_kinds(words: list[str], thing: str, kinds: set[tuple[str, ...]], *, name_first: bool) -> list[tuple[str, int]]:
    """The phrases of `words` that name one of `kinds` of `thing` ("Enterprise plan", "carte Classic"), each with
    the index it starts at."""
    found = []
    for i in range(len(words)):
        if _family(words[i]) != _family(thing):
            continue
        side = words[:i][::-1] if name_first else words[i + 1 :]
        run = list(itertools.takewhile(lambda w: w[0].isupper(), side))
        for size in range(len(run), 0, -1):
            kind = run[:size][::-1] if name_first else run[:size]
            if tuple(_family(w) for w in kind) in kinds:
                phrase = [*kind, words[i]] if name_first else [words[i], *kind]
                found.append((" ".join(phrase), i - size if name_first else i))
                break
    return found


def _place(words: list[str], start: int, *, subject: bool) -> str | None:
    """Where a phrase starting at `words[start]` stands: after which preposition (articles and possessives
    skipped), else as the subject when `subject` says it may be one, else nowhere that counts (None)."""
    i = start - 1
    while i >= 0 and normalize(words[i]) in _DETERMINERS:
        i -= 1
    if i >= 0 and normalize(words[i]) in _GOVERNING:
        return normalize(words[i])
    return "subject" if subject else None


# a reply that takes its meaning from the question it answers: "No.", "Yes, for a flat fee", "Non,", "Sí.", "Nein."
_REPLY = re.compile(r"^\W*(?:yes|no|oui|non|s[ií]|ja|nein|nee|sim|n[aã]o)\b\s*[.,!;:]", re.IGNORECASE)


def answers_another_question(question: str, sentence: str, heading: str, *, by_words: bool = True) -> bool:
    """Whether `sentence` is a reply to the FAQ question it stands under rather than to `question`: it opens with a
    yes or a no, and the two questions ask about different things, each with a name (`_names_other`) or, `by_words`,
    a word (`_asks_other`) the other lacks. "No. Deliveries run Monday to Saturday." under "Do you deliver on
    Sundays?" is no answer to "Do you deliver on Saturdays?": its "No" is the Sunday answer, however well the rest
    matches; nor is "Yes, until the order ships." under "Can I change the delivery address?" an answer to "Can I
    cancel the order?". The word check is for the sentence models, which read no sentence with its heading; the
    reading model does, and tells "Can you deliver my order to Canada?" from "Do you ship to Canada?" itself."""
    if not heading or not is_question(heading) or not _REPLY.match(ANSWER_LABEL.sub("", sentence, count=1)):
        return False
    return _names_other(question, heading) or (by_words and _asks_other(question, sentence, heading))


# Words that ask for something other than a yes or a no (English, French, German, Spanish, Portuguese; accents
# folded): "How much does delivery to Belgium cost?" takes its answer from the words of a reply, not its "Yes"
_ASKING_FOR = _ASKING | frozenset(
    "que quoi quand ou qui quel quelle quels quelles pourquoi comment "
    "combien was wann wo wer wen wem wessen welche welcher welches welchen welchem warum weshalb wieso wozu wofur "
    "woher wohin womit wogegen wonach wovon woran worauf woraus worin worum woruber wodurch wobei wie wieviel wieviele "
    "cuando donde quien quienes "
    # Vietnamese, its marks folded: nào (which), gì (what), ai (who), đâu (where), bao nhiêu (how many), bao giờ (when)
    "nao gi ai đau nhieu gio "
    "cual cuales como cuanto cuanta cuantos cuantas porque quando onde quem qual quais quanto quanta".split()
)


_ARABIC_YES_NO = re.compile(r"^\W*هل\b")


def asks_yes_or_no(question: str) -> bool:
    """Whether `question` asks for a yes or a no: in Latin script, no word that asks for something
    (`_ASKING_FOR`); in Arabic, one that opens with هل. Other scripts are not read this way (an Arabic question
    that asks what, when or how many, read as a yes or a no, lost the second sentences that held its answer)."""
    if _ARABIC_YES_NO.match(question):
        return True
    return not _NOT_LATIN.search(question) and _ASKING_FOR.isdisjoint(re.findall(r"\w+", normalize(question)))


# A Chinese question asking yes or no ("有篮球场吗？", "是否可以…", "能不能…"), a Japanese one ("ありますか？"), and
# the words that ask for something instead ("什么", "多少", "いつ", "いくら")
_CJK_YES_NO = re.compile(r"(?:吗|嗎|么)\s*[？?]?\s*$|是否|能否|可否|有没有|能不能|可不可以|会不会|是不是|要不要|か\s*[？?]\s*$")
CJK_ASKS_WHAT = re.compile(
    "什么|多少|几|哪|谁|怎么|怎样|如何|为什么|多久|多长|何|いつ|どこ|だれ|誰|どの|どう|いくら|どれ|どちら|なぜ|どんな"
)


def asks_yes_or_no_cjk(question: str) -> bool:
    """Whether a Chinese or Japanese question asks yes or no (`_CJK_YES_NO`), and for nothing else."""
    return bool(CJK_LETTER.search(question) and _CJK_YES_NO.search(question) and not CJK_ASKS_WHAT.search(question))


def asks_yes_or_no_any_script(question: str) -> bool:
    """Whether a question asks yes or no, in the scripts `asks_yes_or_no` reads or in Chinese or Japanese."""
    return asks_yes_or_no(question) or asks_yes_or_no_cjk(question)


def _asks_other(question: str, sentence: str, heading: str) -> bool:
    """Whether `question` and the FAQ question `heading` each hold a word (by its family: "deliver" is
    "delivery") that the other lacks: "Can I change my email address?" asks *email*, and lacks *delivery* of "Can
    I change the delivery address?", so a "Yes" under the latter answers another question. A question that only
    adds words ("Is it still possible to change the delivery address?") asks the same one. A question that asks
    for something (`_ASKING_FOR`) may find its words in the reply: "Combien coûte la livraison en Belgique ?" is
    answered by "Oui, la livraison coûte 9 €" under "Livrez-vous en Belgique ?". A yes-or-no question may not, as
    the reply's yes or no would answer it: "No, but you can cancel at any time." under "Can I pause my
    subscription?" holds *cancel*, and is no answer to "Can I cancel my subscription?". Words are index terms, so
    a question in Chinese or Japanese (read by character pairs) is not checked: its pairs differ between
    paraphrases of one question."""
    if CJK_LETTER.search(question):
        return False
    asked = {family(t) for t in terms(question)}
    headed = {family(t) for t in terms(QUESTION_LABEL.sub("", heading, count=1))}
    if not headed - asked:
        return False
    if asks_yes_or_no(question):
        return bool(asked - headed)  # yes or no: the reply's "No" would answer it
    return bool(asked - headed - {family(t) for t in terms(sentence)})


def _names_other(question: str, heading: str) -> bool:
    """Whether `question` and the FAQ question `heading` each name something (`name_runs`) the other does not."""
    if not _names_by_capitals(question):
        return False
    asked, headed = name_runs(question), name_runs(heading)
    if not asked or not headed:
        return False
    in_heading, in_question = _Vocabulary([heading]), _Vocabulary([question])
    return any(not in_heading.mentions(run) for run in asked) and any(not in_question.mentions(run) for run in headed)


def _answer_names(sentence: str) -> list[list[str]]:
    """`name_runs` of an answer sentence; in a table row, the capitalised words of every cell, the first one too
    (each cell opens after its column's name: "Plan: Equipo; Support: Email")."""
    cells = row_cells(sentence)
    if cells is None:
        return latin_runs(sentence) if _OTHER_SCRIPT.search(sentence) else name_runs(sentence)
    return [run for cell in cells for run in _runs(_WORD.findall(cell), lambda _, w: len(w) >= 2 and w[0].isupper())]


_MARKDOWN_TITLE = re.compile(r"^\s*#\s+(.+)$", re.MULTILINE)  # a Markdown document's title, its one "# " heading
_LABEL_PATH = " › "  # between the parts of a chunk's label: its file, the headings above it, its section (`store.parsers`)


def titles_of(texts: Sequence[str]) -> list[str]:
    """The titles among passages' texts and labels (`source_texts`): a Markdown document's "# " heading, or the file
    and headings a chunk's label names above its section ("rental.md › 房屋租赁合同主要条款 › 租金")."""
    return [*(title for text in texts for title in _MARKDOWN_TITLE.findall(text)), *(text.rpartition(_LABEL_PATH)[0] for text in texts)]


def source_texts(passages: Sequence[Passage]) -> list[str]:
    """What the checks read a name or a kind in: each passage's text (what it states: `stated_text`), its title and
    its file name."""
    return [t for p in passages for t in (stated_text(p), p.source, p.source_uri or "")]


def answer_scope(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> ScopeMismatch | None:
    """`scope_mismatch` of an extractive answer: the sentences it quotes (`quoted`: citation number -> spans), with
    the heading each stands under, over `passages`, their titles and file names. "Yes, for a flat fee." under "Do
    you ship to Canada?" is about Canada, and no answer to "Do you ship to Mexico?"."""
    sources = source_texts(passages)
    sentences, headings = quoted_sentences(passages, quoted)
    # a Title Case heading ("Travel Policy") capitalises for style, not names: it says nothing of Berlin
    return scope_mismatch(question, sources, sentences + [h for h in headings if not _title_case(h)])


def answer_swaps_name(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> ScopeMismatch | None:
    """`swapped_name` of a sentence an extractive answer quotes: its first (a later one is chosen only where it
    swaps none)."""
    sentences, _ = quoted_sentences(passages, quoted)
    sources = source_texts(passages)
    return next((swap for sentence in sentences if (swap := swapped_name(question, sources, sentence))), None)


def answer_said_elsewhere(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> ScopeMismatch | None:
    """`said_elsewhere` of an extractive answer's sentences, read with the headings they stand under ("A
    government-issued photo ID." under "What to bring on your first day" answers "Do I need a photo ID on my first
    day?")."""
    sentences, headings = quoted_sentences(passages, quoted)
    # what the sources say, and not what addresses the reader: a hostile passage's "es gibt eine lebenslange
    # Garantie" is no sentence that speaks of a lifetime warranty
    said = [sentence for p in passages for sentence in stated_sentences(p)]
    return said_elsewhere(question, said, sentences + headings)


def quoted_sentences(passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> tuple[list[str], list[str]]:
    """The sentences an extractive answer quotes (`quoted`: citation number -> spans), and the heading each
    stands under."""
    quotes = [(passages[n - 1], s.start, s.end) for n, spans in quoted.items() for s in spans]
    return [p.text[start:end] for p, start, end in quotes], [heading_over(p, start) for p, start, _ in quotes]


# --- the asked kind ------------------------------------------------------------------------------------------------

# punctuation ends a run of adjacent words; the marks written on letters do not (Arabic vowels: "المُتَبَرَّع")
_CLAUSE = re.compile(r"[^\w\s'’\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670-]+")
SUBJECT_WORDS = 4


def word_pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent index terms, in order, with no other word nor punctuation between them: ("express", "ship") in
    "Express shipping arrives...", none across "take to" ("to" is no index term)."""
    return set(_written_pairs(text))


# prepositions the index keeps as terms (they are words of names and of science), which are neither a kind nor a
# thing: "le vaccin contre le pneumocoque" pairs no "vaccin contre" against "la vaccination contre les papillomavirus"
PREPOSITIONS = frozenset("contre entre par selon vers chez gegen ohne durch zwischen contra sin sobre segun hacia".split())


def _written_pairs(text: str) -> dict[tuple[str, str], tuple[str, str]]:
    """`word_pairs`, each with the two words as `text` writes them: ("express", "ship") -> ("Express", "shipping")."""
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    for clause in _CLAUSE.split(text):
        words = [(w, [] if normalize(w) in PREPOSITIONS else terms(w)) for w in clause.split()]
        for (a, ta), (b, tb) in itertools.pairwise(words):
            if len(ta) == len(tb) == 1 and ta != tb:
                pairs.setdefault((ta[0], tb[0]), (a, b))
    return pairs


def other_kind(question: str, sentence: str, rival: str) -> str | None:
    """The word of the question that `sentence` swaps for another when `rival` keeps it: "How long does express
    shipping take?" asks with the pair "express shipping"; "Standard shipping takes 3 to 5 business days" holds
    "shipping" after "standard", a word the question never uses, and no "express", while "Express shipping arrives
    the next business day" holds the pair itself. Then the first is about another kind of shipping, and "express"
    is returned. Questions in other scripts than Latin are not checked (Arabic puts the kind after the thing, and
    Chinese and Japanese are indexed in character pairs)."""
    if _NOT_LATIN.search(question):
        return None
    if is_german(question):
        return _other_compound(question, sentence, rival)
    asked = set(terms(question))
    # what the sentence is about: its subject, in its first words ("Standard shipping takes..."); a later phrase
    # ("... developed for the high speed engine inventor") says something else of it. A kind opens it or follows a
    # word that says nothing ("The standard shipping"); after another word it is a verb: "Part-time employees
    # receive leave pro rata." holds no "receive" kind of leave
    opening = _subject(sentence)
    words = _WORD.findall(opening)
    modifying = {normalize(b) for a, b in itertools.pairwise(words) if normalize(a) in STOPWORDS} | {normalize(w) for w in words[:1]}
    subject = {pair for pair, (kind_word, _) in _written_pairs(opening).items() if normalize(kind_word) in modifying}
    rival_pairs = word_pairs(rival)
    for (kind, head), (kind_word, _) in _written_pairs(question).items():
        if not _holds_word(sentence, kind, kind_word) and (kind, head) in rival_pairs and any(h == head and k not in asked for k, h in subject):
            return kind
    return None


FRAME_WORDS = 2  # the words besides their subjects two sentences share for one to say of another what the other says


def other_subject(question: str, sentence: str, rival: str) -> str | None:
    """The subject of `rival` the question asks about, when `sentence` says the same of another: "Muss meine Katze
    gegen Tollwut geimpft sein?" over a boarding kennel's rules ranked "Hunde müssen gegen Staupe, Parvovirose und
    Tollwut geimpft sein." (its rabies) above "Katzen müssen gegen Katzenseuche und Katzenschnupfen geimpft sein.".
    A subject is a sentence's first index term; the two sentences share `FRAME_WORDS` others or more. Latin script."""
    if _NOT_LATIN.search(question):
        return None
    said, other = [family(t) for t in terms(sentence)], [family(t) for t in terms(rival)]
    subject, rival_subject = _opening_word(sentence), _opening_word(rival)
    if subject is None or rival_subject is None:
        return None
    # German writes a noun capitalised, and the subject asked about is one ("Katze", not "nehmen")
    german = is_german(question)
    asked = [family(t) for w in _WORD.findall(question) if not german or w[0].isupper() for t in terms(w)]
    if _among(subject, asked) or not _among(rival_subject, asked) or _among(rival_subject, said):
        return None
    if len(rival_subject) >= 4 and any(rival_subject in normalize(w) for w in _WORD.findall(sentence)):
        return None  # a compound that holds the asked one ("Kaltmiete" for "Miete") says it
    # the words besides the subjects, of four letters or more: German keeps "die", "bis", "zum" as index terms
    frame = {w for w in said if w != subject and len(w) >= 4 and w.isalpha() and _among(w, [o for o in other if o != rival_subject])}
    return rival_subject if len(frame) >= FRAME_WORDS else None


def _opening_word(sentence: str) -> str | None:
    """The family of a sentence's first word after its articles, its subject where it opens with one ("Hunde müssen
    …", "The Pro plan …"); None where that word is no index term ("Ohne ärztlichen Rat …", "If …")."""
    words = [normalize(w) for w in _WORD.findall(sentence)[:SUBJECT_WORDS]]
    while words and words[0] in _OPENING_ARTICLES:
        words.pop(0)
    said = terms(words[0]) if words and words[0] not in PREPOSITIONS | _CIRCUMSTANTIAL | _SUBJECT_PRONOUNS else []
    return family(said[0]) if len(said) == 1 else None


# a pronoun subject stands for the one before it ("Il peut, sur sa demande, être admis …" after "L'indigène musulman
# est français …"), no other subject (folded)
_SUBJECT_PRONOUNS = frozenset("it they he she this these il elle ils elles on er sie es el ella ellos ellas esto".split())


_OPENING_ARTICLES = frozenset("the a an le la les l un une des der die das den ein eine el los las una unos unas".split())


def _among(word: str, words: Sequence[str]) -> bool:
    """Whether `word` is one of `words`, by family or one the start of the other ("katz" of "Katze", "katze" of
    "Katzen")."""
    return any(w == word or (min(len(w), len(word)) >= 4 and (w.startswith(word) or word.startswith(w))) for w in words)


def holds_asked_pair(question: str, sentence: str, rival: str) -> bool:
    """Whether `rival` holds a pair of words the question asks with ("visitor permits"), where `sentence` holds
    the thing without its kind: "Can I get a refund on visitor permits?" over a council's permit rules ranked "If
    you no longer need your permit, you can get a refund …" (every other word of the question) above "Visitor
    permits cannot be refunded.", and the answer read as a yes. The kind opens the question or follows a word
    that says nothing ("on visitor permits"), as `other_kind` reads it. German writes the pair as one word, and
    its plural with an ending the index keeps ("Katze", "Katzen"): there `sentence` holds no noun of the question
    (capitalised, not its first word) and `rival` holds one, by its first letters: "Darf ich eine Katze halten?"
    over house rules got "Kleintiere wie Hamster und Fische dürfen ohne Genehmigung gehalten werden." before "Hunde
    und Katzen dürfen nur mit schriftlicher Zustimmung … gehalten werden.". Latin script only."""
    if _NOT_LATIN.search(question):
        return False
    if is_german(question):  # to a yes-or-no question: on Wikipedia's German (MLQA) the names moved answers
        if not asks_yes_or_no(question):
            return False
        nouns = [_compound_form(w) for w in _WORD.findall(question)[1:] if w[0].isupper() and len(w) >= FAMILY_LETTERS]
        # the best holds none of them: a sentence that names one of the question's things is about it
        return not any(_holds_noun(sentence, noun) for noun in nouns) and any(_holds_noun(rival, noun) for noun in nouns)
    words = [w.casefold() for w in _WORD.findall(question)]
    modifying = _after_nothing(words)
    said, rival_pairs = set(terms(sentence)), word_pairs(rival)
    return any(
        kind_word.casefold() in modifying
        and not head_word[0].isupper()  # a name's words ("Genghis Khan") are named scope's
        and head in said
        and not _holds_word(sentence, kind, kind_word)
        and (kind, head) in rival_pairs
        for (kind, head), (kind_word, head_word) in _written_pairs(question).items()
    )


COMPOUND_TAIL = 5  # the letters two German compounds must end in alike to be kinds of one thing ("-verkehr")
_COMPOUND_HEAD = 3  # and the letters each must hold before them ("Nah-", "Fern-")


def _other_compound(question: str, sentence: str, rival: str) -> str | None:
    """`other_kind` in German, which writes a kind and its thing as one word: "Was kostet die Fahrradkarte im
    Nahverkehr?" asks about the Nahverkehr; "Die Fahrradkarte für den Fernverkehr kostet 9,90 Euro." holds another
    compound of "-verkehr" and not it, while "Im Nahverkehr gelten die Regeln des jeweiligen Verkehrsverbunds."
    holds it. The word is returned."""
    said = {_compound_form(w) for w in _WORD.findall(sentence)}
    rivals = {_compound_form(w) for w in _WORD.findall(rival)}
    for word in _WORD.findall(question):
        asked = _compound_form(word)
        if not word[0].isupper() or asked in said or asked not in rivals:
            continue
        for other in said:
            tail = len(os.path.commonprefix([asked[::-1], other[::-1]]))
            if tail >= COMPOUND_TAIL and min(len(asked), len(other)) - tail >= _COMPOUND_HEAD:
                return word
    return None


def _after_nothing(words: list[str], nothing: frozenset[str] = STOPWORDS) -> set[str]:
    """The `words` (casefolded) that open the question or follow a word that says `nothing`: where a kind stands ("of
    bereavement leave", "the express shipping"); after another word it is more often a verb's object."""
    return {after for before, after in itertools.pairwise(words) if before in nothing} | set(words[:1])


def _holds_noun(text: str, noun: str) -> bool:
    """Whether `text` holds a word that is the German `noun` (as `_compound_form` writes it) or one of its forms."""
    return any(normalize(word).startswith(noun) for word in _WORD.findall(text))


def _compound_form(word: str) -> str:
    """A German noun without the ending of its genitive ("des Nahverkehrs") or plural ("Fahrradkarten")."""
    return re.sub(r"(?:e?s|e?n)$", "", normalize(word)) if len(word) > COMPOUND_TAIL + _COMPOUND_HEAD else normalize(word)


def _holds_word(text: str, term: str, written: str) -> bool:
    """Whether `text` holds a word indexed as `term` that is `written` or one of its forms ("express", "expressed"):
    "unused full months" holds the term of "monthly" but not the word, and says nothing of a monthly plan."""
    asked = normalize(written)
    return any(
        terms(word) == [term] and (w.startswith(asked) or asked.startswith(w)) for word in _WORD.findall(text) if (w := normalize(word))
    )


def missing_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The kind the question asks about, when no source mentions it and the answer is about another kind of the same
    thing that the sources tell apart from others: "How many days of bereavement leave do I get?" over a policy on
    annual, sick and parental leave. No source says "bereavement", and "Full-time employees receive 25 days of paid
    annual leave per year" is about annual leave: true, cited, and no answer. The sources must name two kinds or more
    of the thing ("annual leave", "sick leave"), so a word the question adds to a thing the sources name only one
    way ("my lost password" over "your account password") is left to the answer models. A capitalised kind is a
    name (`scope_mismatch` reads it). French, Spanish, Portuguese and Italian put the kind after the thing ("envío
    urgente"), and only their ordinals, which stand before it ("tercera matrícula"), are read: read in that order, it refused as many answerable sets as same-topic ones on
    held-out PIAF, SQuAD-es and MLQA es ("se llama", "ha evolucionado"), and read in the English order it took
    synonyms for kinds ("órgano legislativo" against "cuerpo legislativo"). Chinese and Japanese are read by their
    character pairs (`_missing_cjk_kind`), Arabic by its definite pairs (`_missing_arabic_kind`); other scripts are
    not read."""
    if CJK_LETTER.search(question):
        return _missing_cjk_kind(question, sources, answer) or _missing_katakana_kind(question, sources, answer) or _missing_kanji_kind(question, sources, answer)
    if _ARABIC_LETTER.search(question):
        return _missing_arabic_kind(question, sources, answer)
    if _NOT_LATIN.search(question):
        return None
    ordinals_only = _kind_after(question)  # an ordinal stands before its thing there too: "en tercera matrícula"
    if ordinals_only and (other := _missing_complement_kind(question, sources, answer)):
        return other
    asked = set(terms(question))
    known = source_vocabulary(sources)
    # the price of another kind is no answer however few kinds the sources name: "How much does late check-out
    # cost?" over a hotel FAQ whose only priced kind of check is "Early check-in costs 1,000 yen per hour."
    kinds_needed = 1 if asked_value(question) == "money" else 2
    kinds_of: dict[str, set[str]] = {}  # head term -> the kind terms the sources put before it
    for text in sources:
        for kind, head in word_pairs(text):
            kinds_of.setdefault(head, set()).add(kind)
    # what the answer is about: the pairs of its sentences' and headings' subjects ("Standard shipping takes..."), but
    # those of names ("Sky Box Office channels"); a later pair ("fossils thought to represent ctenophores") says
    # something else of it
    said: dict[tuple[str, str], tuple[str, str]] = {}
    for sentence in answer:
        for pair, (k_word, h_word) in _written_pairs(_subject(sentence)).items():
            if _WORD.fullmatch(k_word) and not h_word[0].isupper() and (k_word.islower() or _opening(sentence).startswith(k_word)):
                said.setdefault(pair, (k_word, h_word))
    words = [w.casefold() for w in _WORD.findall(question)]
    asking = {after for before, after in itertools.pairwise(words) if normalize(before) in _ASKING_FOR}  # "how many"
    # a kind stands after a word that says nothing ("of bereavement leave", "the express shipping") or opens the
    # question; after another word it is more often a verb's object ("Who first sent radio waves")
    modifying = _after_nothing(words, _FUNCTION_WORDS if ordinals_only else STOPWORDS)  # "en tercera matrícula"
    for (kind, head), (kind_word, head_word) in _written_pairs(question).items():
        folded = kind_word.casefold()
        if not _WORD.fullmatch(kind_word) or folded in asking or folded not in modifying or normalize(folded) in _ASKING_FOR:
            continue
        if ordinals_only and normalize(folded) not in _ORDINAL_WORDS:
            continue
        if head_word[0].isupper():
            continue  # part of a name: `scope_mismatch` reads names
        if {normalize(kind_word), normalize(head_word)} & _NO_THING or normalize(kind_word) in _MEASURES:
            continue  # "Besserte sich sein Zustand?": a verb and its pronoun; "the maximum upload": a measure of it
        same = [kind_word, *_SAME_KIND.get(folded, ())]
        if any(known.mentions([word]) for word in same) or len(kinds_of.get(head, set()) - {kind}) < kinds_needed:
            continue
        others = [f"{k_word} {h_word}" for (k, h), (k_word, h_word) in said.items() if h == head and k not in asked]
        if others:
            return ScopeMismatch(missing=[f"{kind_word} {head_word}"], answer_names=list(dict.fromkeys(others)))
    return None


# "de" and an article between a thing and its kind, as folded and split at an elision ("l'enlèvement d'un
# camping-car": "l", "enlevement", "d", "un", "camping-car")
_COMPLEMENT = frozenset("de du des del d di da do".split())
_COMPLEMENT_ARTICLES = frozenset("la le les l el los las lo un une una uno unos unas um uma".split())
_SPLIT_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def _complement_pairs(text: str) -> dict[tuple[str, str], str]:
    """The things a French, Spanish, Portuguese or Italian text names with their kind after "de" ("l'enlèvement
    d'une voiture", "el alquiler de una bicicleta"), as index terms, each with the words as written."""
    words = list(_SPLIT_WORD.finditer(re.sub("['’]", " ", text)))  # same length: the spans are the text's
    pairs: dict[tuple[str, str], str] = {}
    for at in range(1, len(words) - 1):
        if normalize(words[at].group()) not in _COMPLEMENT:
            continue
        thing, kind_at = words[at - 1], at + 1
        if normalize(words[kind_at].group()) in _COMPLEMENT_ARTICLES and kind_at + 1 < len(words):
            kind_at += 1
        kind = words[kind_at].group()
        if len(thing_terms := terms(thing.group())) == 1 and (kind_terms := terms(kind)) and not kind[0].isupper():
            pairs.setdefault((thing_terms[0], " ".join(kind_terms)), text[thing.start() : words[kind_at].end()])
    return pairs


def _missing_complement_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The kind a French, Spanish, Portuguese or Italian question names after "de", when no source mentions it and
    the answer gives the thing for another kind the sources name the same way: "Combien coûte l'enlèvement d'un
    camping-car ?" over a car pound's fees was answered "L'enlèvement d'une voiture coûte 150 €." (true, cited,
    and the price for another vehicle). As `missing_kind`: one other kind is enough for a price, two otherwise; a
    capitalised kind is a name, which named scope reads."""
    known = source_vocabulary(sources)
    kinds_needed = 1 if asked_value(question) == "money" else 2
    kinds_of: dict[str, set[str]] = {}
    for text in sources:
        for thing, kind in _complement_pairs(text):
            kinds_of.setdefault(thing, set()).add(kind)
    said = {pair: written for sentence in answer for pair, written in _complement_pairs(sentence).items()}
    for (thing, kind), written in _complement_pairs(question).items():
        kind_word = _SPLIT_WORD.findall(written)[-1]
        if known.mentions([kind_word]) or normalize(kind_word) in _FUNCTION_WORDS or len(kinds_of.get(thing, set()) - {kind}) < kinds_needed:
            continue
        others = [other for (t, k), other in said.items() if t == thing and k != kind]
        if others:
            return ScopeMismatch(missing=[written], answer_names=list(dict.fromkeys(others)))
    return None


# kind words that say the same ("And what does each extra kilometre cost?" over "Each additional kilometre costs 0.25
# EUR.", a car rental's terms): the one is no other kind than the other
_SAME_KIND = {"extra": ("additional", "further"), "additional": ("extra", "further"), "further": ("additional", "extra")}
# the ordinals of the languages that put other kinds after their thing (folded): "la tercera matrícula" over prices of
# the first and second is a kind no source names
_ORDINAL_WORDS = frozenset(
    "primer primera primero primeros primeras segundo segunda segundos segundas tercer tercera tercero terceros terceras "
    "cuarto cuarta quinto quinta premier premiere premiers premieres deuxieme second seconde troisieme quatrieme "
    "cinquieme primo prima secondo terzo terza quarto quarta primeiro primeira terceiro terceira".split()
)
_ARABIC_LETTER = re.compile(r"[\u0600-\u06ff]")
# relative pronouns (folded), which neither name a kind nor for whom a thing is: "العوامل التي", "pour laquelle"
_RELATIVES = frozenset(
    "which whom what whose laquelle lequel lesquels lesquelles qui quoi welche welcher welchem welchen was wen wem "
    "cual cuales que quien quienes الذي التي الذين اللذين اللتين اللاتي اللواتي اللتي اللذي اللذان اللتان".split()
)
ARABIC_KINDS = 2  # the kinds of a thing the sources must name before an Arabic question's other kind is missing


def _missing_arabic_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`missing_kind` in Arabic, which puts the kind after its thing, as an adjective ("الباقة العائلية", the family
    plan) or a noun ("باقة المؤسسات", the companies' plan): "كم سعر الباقة العائلية؟" over a price list of the basic and
    the premium plan (الباقة الأساسية, الباقة المميزة) was answered with the premium plan's price. No source says
    "العائلية" (nor a word of its root), the sources put `ARABIC_KINDS` kinds or more after "الباقة", and the
    answer's subject holds one the question does not."""
    asked = set(terms(question))
    held = _held_roots(sources)
    kinds_of: dict[str, set[str]] = {}  # thing term -> the kind terms the sources put after it
    for text in sources:
        for head, kind in word_pairs(text):
            kinds_of.setdefault(head, set()).add(kind)
    # what the answer is about: its subject's pairs, and those after "في" (in), which Arabic puts after the verb that
    # opens the sentence ("يحق لكل مسافر في الدرجة السياحية ...": in economy class); a pair elsewhere says something
    # else of the thing ("استمداد الحرارة المطلوبة", the heat required)
    said = {
        pair: written
        for sentence in answer
        for part in (_subject(sentence), *_IN_ARABIC.findall(sentence))
        for pair, written in _written_pairs(part).items()
        if _agree(*written)
    }
    words = question.split()
    chained = {after for before, after in itertools.pairwise(words) if before.startswith("ال")}
    for (head, kind), (head_word, kind_word) in _written_pairs(question).items():
        if not _agree(head_word, kind_word) or head_word in chained:
            continue  # "الظروف المناخية الباردة": the second of two adjectives, not a kind of the first
        if _held(kind, held) or len(kinds_of.get(head, set()) - {kind}) < ARABIC_KINDS:
            continue
        others = [" ".join(words) for (h, k), words in said.items() if h == head and k not in asked]
        if others:
            return ScopeMismatch(missing=[f"{head_word} {kind_word}"], answer_names=list(dict.fromkeys(others)))
    return None


_IN_ARABIC = re.compile(r"(?:^|\s)في\s+(\S+\s+\S+)")  # the two words after "في" (in)


def _held(term: str, roots: set[str]) -> bool:
    """Whether `roots` (`_held_roots`) hold the root of `term`; a root of one letter ("الأولى", first: "ل") says
    too little, and the term must be held whole."""
    root = _root(term)
    return root in roots if len(root) >= 2 else term in roots


def _root(word: str) -> str:
    """An Arabic word without the letters its patterns add: "خافض" and "مخفض" (lowering, reducing) are one root,
    خفض, and one kind written two ways; "المتبرع" (donated) is said by "تبرعت" (it donated)."""
    return word.translate(_PATTERN_LETTERS)


_PATTERN_LETTERS = str.maketrans("", "", "اويمتةى")


def _held_roots(sources: Sequence[str]) -> set[str]:
    """The roots (`_root`) of every index term of the sources, and the terms themselves."""
    return {form for text in sources for t in terms(text) for form in (t, _root(t))}


def _agree(head: str, kind: str) -> bool:
    """Whether two Arabic words are a thing and its kind as an adjective agrees with it, both definite ("الباقة
    العائلية"): two words otherwise are as often a verb and its object, or a thing and what is said of it. A relative
    pronoun ("العوامل التي", "اللتى" as ARCD spells it) is no kind."""
    return head.startswith("ال") and kind.startswith("ال") and normalize(kind) not in _RELATIVES


# characters that ask (几天 "how many days", 多少, 什么, 哪, 谁, 怎么; 何, 誰, どう): never a kind
_CJK_ASKING = frozenset("几多少什么哪谁誰怎何吗呢嗎")


def _missing_cjk_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`missing_kind` in Chinese and Japanese, which write a kind and its thing as one word of characters: "丧假有几
    天？" (bereavement leave) over a policy on 年假, 病假 and 婚假 (annual, sick and marriage leave). The pair 丧假 is
    in no source (its first character may be, in other words), the sources write two pairs or more that end in 假, and the answer holds one
    that the question does not (the heading 年假 over "全职员工每年享有15天带薪年假。"): it is about another kind. As
    words are not written apart, a pair counts only where a word starts: the text's start, after a character of
    another script or after a particle (`_PARTICLES`); "要提" of "年假要提前多久申请？" is no word. The question's
    pair must end one too: a name written in sounds ("伯尔尼大道") is no pair followed by a particle."""
    source_pairs = {t for text in sources for t in terms(text) if _han_pair(t)}
    source_letters = {c for text in sources for c in text if CJK_LETTER.match(c)}
    kinds_needed = 1 if asked_value(question) == "money" else 2  # as `missing_kind`: "企业版多少钱？" over 专业版's price
    said = [pair for sentence in answer for pair in opening_pairs(_subject(sentence), after_count=kinds_needed == 1)]
    asked_letters = set(question)
    titled = {c for title in titles_of(sources) for c in title}
    for pair in dict.fromkeys(opening_pairs(question, closed=True)):
        kind, head = pair
        # the kind's character may be in the sources in other words ("周卡", a weekly card, over 月卡, 季卡 and 年卡 and
        # "周一至周五"), but a pronoun or a particle makes no kind nor thing ("它是", it is; "在力", in force)
        if pair in source_pairs or _CJK_ASKING & set(pair) or kind in _CJK_PRONOUNS or _FOLLOWING & set(pair):
            continue
        # the letters of a title are what every source is about, no kind: "房租多少钱？" (the rent) over "# 房屋租赁合同
        # 主要条款" was refused for "月租金为4500元" (the monthly rent), read as another kind of 租
        if set(pair) <= titled:
            continue
        if len({p for p in source_pairs if p[1] == head and p[0] != kind}) < kinds_needed:
            continue
        others = [p for p in dict.fromkeys(said) if p[1] == head and p[0] not in asked_letters]
        if others:
            return ScopeMismatch(missing=[pair], answer_names=others)
    prefix = _missing_cjk_prefix(question, source_pairs, source_letters, said, kinds_needed)
    if prefix or kinds_needed > 1:  # a kind's first letters are read for a price only ("伯尔尼" against "科尔尼" is a name)
        return prefix
    return _other_first_letters(question, source_pairs, answer)


SHARED_REST = 3  # the letters after a word's first ones that its kind and the answer's share, for them to be one word's kinds


def _other_first_letters(question: str, source_pairs: set[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`_missing_cjk_kind` for a kind written as other first letters of one word: "男性专项套餐多少钱？" (the men's
    check-up package) over a health-check centre's 女性专项套餐 (the women's) was answered with its price, and
    "高校生の月謝はいくらですか？" (high-school pupils' fees) over a cram school's with 中学生の月謝 (middle-school pupils').
    The question's word opens with one letter or two whose last and the next are in no source as a pair (男性, 校生),
    or with two the sources never write before its の ("毛布の丸洗い", a blanket's washing, against "布団の丸洗い"), and
    a sentence of the answer opens a word with other letters before the same next ones (`SHARED_REST`). Read for a
    price only: a name written in sounds differs so too ("伯尔尼大道" against "科尔尼大道"), and a price of another
    kind is no answer however few kinds the sources name (`missing_kind`)."""
    for pair in dict.fromkeys(opening_pairs(question)):
        at = question.find(pair)
        for cut in (1, 2):
            kind, rest = question[at : at + cut], question[at + cut : at + cut + SHARED_REST]
            # or a kind of two before の and the thing: "毛布の丸洗い" (a blanket's washing) against "布団の丸洗い"
            joined = cut == 2 and rest[:1] == "の" and _HAN.match(rest[1:2] or " ")
            if len(rest) < SHARED_REST or not (_HAN.match(rest[0]) or joined):
                continue
            if (kind if joined else kind[-1] + rest[0]) in source_pairs:
                continue
            for sentence in answer:  # a price stands anywhere in its sentence ("…，小型犬绝育手术费用为八百元")
                start = sentence.find(rest) - cut
                if start < 0:
                    continue
                other = sentence[start : start + cut]
                opens = start == 0 or not _HAN.match(sentence[start - 1]) or sentence[start - 1] in _PARTICLES
                if other != kind and all(_HAN.match(c) for c in other) and opens:
                    return ScopeMismatch(missing=[_word_at(question, at)], answer_names=[_word_at(sentence, start)])
    return None


def _word_at(text: str, at: int) -> str:
    """The Chinese characters from `at` up to a particle, a word that asks, one that points or a count ("男性专项套餐"
    of "男性专项套餐多少钱？", "女士剪发" of "女士剪发每次80元", "小型犬绝育" of "小型犬绝育八百元")."""
    end = at + 1
    while end < len(text) and _HAN.match(text[end]) and text[end] not in _FOLLOWING | _POINTING | _COUNTS:
        end += 1
    return text[at:end]


_CJK_PRONOUNS = frozenset("我你您他她它")  # a person or a thing pointed at: never a kind
# characters that point at a thing or say when, never a kind of it: "当免疫系统..." (when the immune system), "该合同"
_POINTING = frozenset("当该这那此各每某本其另")


def _missing_cjk_prefix(question: str, source_pairs: set[str], source_letters: set[str], said: list[str], kinds_needed: int) -> ScopeMismatch | None:
    """`_missing_cjk_kind` for a kind written as one more character before a pair the sources name as a kind:
    "陪产假有几天？" (paternity leave) over a policy on 年假, 病假, 婚假 and 产假 was answered with the maternity leave
    rule, and "白金卡年费多少钱？" (the platinum card) over a card FAQ on 金卡 and 普卡 with the gold card's fee. The
    character (陪, 白) starts a word, is in no source and is no particle nor a word that points (`_POINTING`: "对教师",
    towards teachers; "该合同", that contract), the pair after it (产假, 金卡) is one of two kinds or more of its thing
    in the sources (one, for a price), and the answer's subject holds a kind of that thing (`_missing_cjk_kind` reads
    the sources' pairs and letters and the answer's pairs, and passes them on)."""
    for pair in dict.fromkeys(opening_pairs(question)):
        at = question.find(pair)
        inner = question[at + 1 : at + 3]
        kind = pair[0]
        if kind in source_letters or kind in _FOLLOWING or kind in _POINTING or not _han_pair(inner) or inner not in source_pairs:
            continue
        if inner[0] in _FOLLOWING:
            continue  # "除了朝鲜": a particle after the character, no kind and thing
        if len({p for p in source_pairs if p[1] == inner[1]}) < kinds_needed:
            continue
        others = [p for p in dict.fromkeys(said) if p[1] == inner[1]]
        if others:
            return ScopeMismatch(missing=[question[at : at + 3]], answer_names=others)
    return None


_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ff]{3,}")  # katakana, with the long-vowel mark ー


def _missing_katakana_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`missing_kind` for the kinds Japanese writes in katakana, with their thing in one run: "プレミアムプランの月額
    料金はいくらですか？" (the premium plan's monthly fee) over a price list of ベーシックプラン and スタンダードプラン
    was answered with the basic plan's fee. The run is in no source, nor is what it puts before the thing they share
    (プラン, the longest such ending); the sources put two kinds or more before that thing, and the answer's subject
    or heading holds one of them."""
    source_runs = {run for text in sources for run in _KATAKANA_RUN.findall(text)}
    said = [run for sentence in answer for run in _KATAKANA_RUN.findall(_subject(sentence))]
    for run in dict.fromkeys(_KATAKANA_RUN.findall(question)):
        if any(run in text for text in sources):
            continue
        for cut in range(1, len(run) - 1):  # the longest ending two sources share first
            kind, head = run[:cut], run[cut:]
            kinds = {other[: -len(head)] for other in source_runs if other.endswith(head) and len(other) > len(head)}
            if len(kinds - {kind}) < 2:
                continue
            if any(kind in text for text in sources):
                break
            others = [other for other in dict.fromkeys(said) if other.endswith(head) and other[: -len(head)] in kinds]
            if others:
                return ScopeMismatch(missing=[run], answer_names=others)
            break
    return None


# a kind in kanji before a thing in katakana, with or without の: "家族写真のプラン", "七五三プラン"
_KANJI_BEFORE_KATAKANA = re.compile(r"(?P<kind>[\u3400-\u9fff]{2,})の?(?P<head>[\u30a0-\u30ff]{2,})")


def _missing_kanji_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`_missing_katakana_kind` for a kind written in kanji: "家族写真のプランはありますか？" (a family photo plan?) over
    a studio's 七五三プラン and 成人式プラン was answered with the first. The kind is in no source, which put two
    kinds or more before that thing (one, for a price), and the answer's subject holds one of them."""
    kinds_needed = 1 if asked_value(question) == "money" else 2
    for asked in _KANJI_BEFORE_KATAKANA.finditer(question):
        kind, head = asked["kind"], asked["head"]
        if any(kind in text for text in sources):
            continue
        kinds = {m["kind"] for text in sources for m in _KANJI_BEFORE_KATAKANA.finditer(text) if m["head"] == head}
        if len(kinds) < kinds_needed:
            continue
        said = [m.group() for sentence in answer for m in _KANJI_BEFORE_KATAKANA.finditer(_subject(sentence)) if m["head"] == head]
        if said:
            return ScopeMismatch(missing=[asked.group()], answer_names=said)
    return None


SUBJECT_LETTERS = 8  # the subject of a Chinese or Japanese sentence: its first characters, about `SUBJECT_WORDS` words
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # Chinese characters (kanji): kana pairs are no words
_PARTICLES = frozenset("的了是在有和与及或请问对从给把被为のはがをにでともへや")
_FOLLOWING = _PARTICLES | _CJK_ASKING | frozenset("要可能需应该会都也还就才")


def _han_pair(term: str) -> bool:
    return len(term) == 2 and all(_HAN.match(c) for c in term)


# a count and its measure word stand before a thing, and a word starts after them: "一壶红茶" (a pot of black tea),
# "两张门票", "3杯咖啡"
_COUNTS = frozenset("一二两三四五六七八九十几每半")
_MEASURE_WORDS = frozenset("壶杯张个份碗瓶盒位间件套只条本台辆双副块节")


def opening_pairs(text: str, *, closed: bool = False, after_count: bool = False) -> list[str]:
    """The pairs of Chinese characters of `text` that stand where a word starts (see `_missing_cjk_kind`), and with
    `closed` where one ends too: at the text's end, before a character of another script, a particle or a word that
    asks or helps a verb ("产假有几天", "年假要"). With `after_count`, a count opens one too, a word whose first letter
    counts by ("十次卡", a ten-visit card; read in a price's answer only: "其中一个目的" holds no kind "个目")."""

    def opens(i: int) -> bool:
        if i == 0 or not _HAN.match(text[i - 1]) or text[i - 1] in _PARTICLES:
            return True
        if after_count and text[i - 1] in _COUNTS and text[i - 1] != "每":
            return True
        return text[i - 1] in _MEASURE_WORDS and i >= 2 and (text[i - 2] in _COUNTS or text[i - 2].isdigit())

    def closes(i: int) -> bool:
        return i + 2 >= len(text) or not _HAN.match(text[i + 2]) or text[i + 2] in _FOLLOWING

    return [text[i : i + 2] for i in range(len(text) - 1) if _han_pair(text[i : i + 2]) and opens(i) and (not closed or closes(i))]


# a question with more of these words than of English's below is in a language that puts a kind after its thing
_KIND_AFTER = frozenset(
    "le la les des du au aux un une et est sont que qui quoi quand comment pour avec dans sur vous nous "
    "el los las del al y es son cuando como para con por una unos unas hay puedo tienen hacen "
    "os as do da dos das um uma e sao quando voces il lo gli della di che sono".split()
)
_ENGLISH = frozenset("the a an and is are was were what when where who which how why do does did of to in on for with at by from can".split())


def _kind_after(question: str) -> bool:  # an elided word is itself: "d'un" is "un", "l'enlèvement" "enlèvement"
    return _leans(question, _KIND_AFTER, _ENGLISH, lambda word: ELISION.sub("", normalize(word).replace("’", "'")))


def unstemmed_language(question: str) -> bool:
    """Whether a question reads as German, French, Spanish, Portuguese or Italian, whose endings the index's English
    stemmer leaves apart ("Bettdecke" and "Bettdecken", "rembourser" and "remboursés"): by its function words, its
    accented letters, or a French verb asked with its subject ("Puis-je échanger mon billet ?")."""
    return is_german(question) or _kind_after(question) or bool(_NOT_ENGLISH_MARKS.search(question))


_NOT_ENGLISH_MARKS = re.compile(r"(?i)[àâçéèêëîïôûùüÿñœæßäö¿¡]|-(?:je|tu|il|elle|on|nous|vous|ils|elles)\b")


# words that ask for a measure of a thing, not a kind of it: "What is the maximum upload size?" over "File uploads
# larger than 10 MB must use the multipart upload endpoint" asks about every upload
_MEASURES = frozenset(
    "maximum minimum max min total average typical usual exact approximate overall "
    "highest lowest largest smallest biggest longest shortest greatest fewest".split()
)
# words that are no thing nor kind of one, in the languages the index does not drop them from ("sich", "se", "ha")
_NO_THING = _GERMAN | _OTHER | frozenset("sich se ha han hat habe hatte wurde wurden wird mehr plus mas muy tres sehr".split())


def _priced(question: str, said: list[str]) -> list[str]:
    """The sentences (and headings) of an answer that state its price, where the question asks one and any does: a
    price is said for the group the sentence holding it names ("Birthday party packages start at £14.95 per child"
    answers no "How much is a party for adults?", whatever the next sentence says of adults)."""
    priced = [text for text in said if holds_value("money", text)] if asked_value(question) in _PRICE_ASKED else []
    return priced or said


def answer_kind(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> ScopeMismatch | None:
    """`missing_kind` or `missing_number` of an extractive answer, as `answer_scope` reads its sentences and
    headings."""
    sources = source_texts(passages)
    sentences, headings = quoted_sentences(passages, quoted)
    said = sentences + headings
    return (
        missing_kind(question, sources, said)
        or missing_for_whom(question, sources, said)
        or missing_group(question, sources, _priced(question, said))
        or another_sex(question, sources, said)
        or another_way(question, sources, sentences)
        or another_side(question, sources, sentences)
        or missing_payment(question, sources, sentences)
        or missing_language(question, sources, said)
        or missing_condition(question, sources, sentences)
        or another_time(question, sources, sentences)
        or missing_day(question, sources, sentences)
        or days_not_of_delivery(question, sources, sentences)
        or missing_holiday(question, sources)
        or missing_home_service(question, sources)
        or another_occasion(question, sources, sentences)
        or missing_priced(question, sources, sentences)
        or another_listed(question, sources, sentences)
        or another_period(question, sources, sentences)
        or another_count(question, sources, sentences)
        or another_cjk_count(question, sources, sentences)
        or unit_of_unnamed_kind(question, sources, sentences)
        or missing_range(question, sources, sentences)
        or missing_number(question, sources, said)
        or another_numbered_kind(question, sources, said)
    )


# the groups an age says who is in ("under 12", "over 65"), and their ages
_GROUP_AGES = {"children": (0.0, 18.0), "adults": (18.0, 65.0), "seniors": (65.0, float("inf"))}
# a group whose rules another group follows where the sources name none of its own: seniors are adults ("Die
# Jahresgebühr beträgt 20 Euro für Erwachsene." answers what pensioners pay)
_WITHIN = {"seniors": "adults"}


def groups_aged(text: str) -> set[str]:
    """The groups (`_GROUP_AGES`) whose ages a range of ages `text` states reaches into: "over 16" says who is a
    child (16 and 17) and an adult; "aged 65 and over" says who is a senior, and nothing of children."""
    ranges = stated_ranges(text).get("age", [])
    return {group for group, (young, old) in _GROUP_AGES.items() if any(low < old and high > young for low, high in ranges)}
# the groups a rule must name to be said for them: sources silent on pregnancy say nothing of it, whatever the answer
_CONDITIONS = frozenset({"pregnant", "breastfeeding"})


def missing_group(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The group of people the question asks about (`people`), when no source mentions it and the answer is said
    for another group: "Wie viel Paracetamol dürfen Kinder nehmen?" over a leaflet whose only dose is
    "Erwachsene nehmen 500 bis 1000 mg Paracetamol alle sechs Stunden ein." was answered with it, as "Is parental
    leave available to contractors?" was with the leave of "the primary caregiver". The rule for adults is no
    answer for children. Pregnancy and breastfeeding are missing however the answer reads: "Can pregnant women take
    paracetamol?" was answered "Do not take with other products containing paracetamol.". Sources that state an age
    ("over 16", "unter 12 Jahren") say who is a child, an adult or a senior (`groups_aged`): "Adults and
    adolescents over 16: take one or two tablets" answers "Can children take it?", and "aged 65 and over" says nothing
    of children. Seniors follow the rule for adults where the sources have none of their own (`_WITHIN`)."""
    asked = groups_named(question)
    if not asked:
        return None
    known = _groups_known(sources)
    said = {group: word for sentence in answer for group, word in groups_named(sentence).items() if group not in asked}
    for group, word in asked.items():
        if group in known or _WITHIN.get(group) in known:
            if _said_for_another(group, said, answer):
                return ScopeMismatch(missing=[word], answer_names=list(said.values()))
            continue
        if said or group in _CONDITIONS or _sets_apart(group, known - set(asked), answer):
            return ScopeMismatch(missing=[word], answer_names=list(said.values()))
    return None


def another_sex(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """Women or men, where a question asks a thing for them, no source names them, and the answer says the thing for
    the other sex or for children only: "Do you cut women's hair?" over a barber's "A men's haircut costs £18, and a
    skin fade costs £22." was answered with it, then with "Children under 12 have their hair cut for £12.". What the
    sources say for no one (a price for "a cut") is left to the rest, as is a question that names both or neither, and
    an answer that says the thing is for the other sex only answers whether one may, as the group check reads it
    (`_ONLY`): "Kann ich als Mann am Dienstag kommen?" is answered "Dienstag ist Damensauna: An diesem Tag ist die
    Saunalandschaft nur für Frauen geöffnet." (a first version refused it: the exploratory benchmark's batch 9)."""
    asked = sexes_named(question)
    if len(asked) != 1 or _ONLY.search(normalize(" ".join(answer))):
        return None
    ((sex, word),) = asked.items()
    if any(sex in sexes_named(text) for text in sources):
        return _said_for_another_sex(question, sex, word, sources, answer)
    said = []
    # a question about children of theirs is answered by them: "Combien d'enfants a-t-il eu avec sa femme ?"
    for_children = "children" in groups_named(question)
    for sentence in answer:
        groups = groups_named(sentence)
        said += [named for other, named in sexes_named(sentence).items() if other != sex]
        if not for_children and "adults" not in groups and ("children" in groups or groups_aged(sentence) == {"children"}):
            said.append(groups.get("children") or _subject(sentence).strip())
    return ScopeMismatch(missing=[word], answer_names=list(dict.fromkeys(said))) if said else None


def _said_for_another_sex(question: str, sex: str, word: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`another_sex` where the sources name the sex asked, of other things: no clause of theirs names it beside a word
    of the thing asked (the question's words but the sex's, a price's and an asking word's), and a clause of the
    answer names the other sex beside one. "Combien coûte un ressemelage pour des chaussures de femme ?" over a
    cobbler's "La pose de talons pour femme coûte 12 euros, et un ressemelage complet de chaussures pour homme 45
    euros." was answered with it: the heels are a woman's, the resoling a man's."""
    thing = set(terms(question)) - set(terms(word)) - PRICE_WORDS - _ASKING_FOR
    if not thing:
        return None
    clauses = [clause for text in sources for clause in _CLAUSE_END.split(text)]
    if any(sex in sexes_named(clause) and thing & set(terms(clause)) for clause in clauses):
        return None
    said = [
        named
        for clause in (c for sentence in answer for c in _CLAUSE_END.split(sentence))
        if thing & set(terms(clause))
        for other, named in sexes_named(clause).items()
        if other != sex
    ]
    return ScopeMismatch(missing=[word], answer_names=list(dict.fromkeys(said))) if said else None


# the two ways a customer comes to have a thing, which a question asks one of: bought (or sold), and lent (hired,
# rented, borrowed); folded words, and Chinese and Japanese ones found inside a text. Not those that are as often
# something else: "sale" (French dirty, Spanish leaves), "location" (English place), "prête" (French ready), "貸" (in
# "貸切", reserved), "卖" (in "外卖", takeaway)
_WAYS = {
    "buy": "buy buys buying bought purchase purchases purchased sell sells selling sold "
    "acheter achete achetez achat achats vendre vend vends vendez vendons vendent vendu vendus vendue vendues "
    "kaufen kaufe kauft gekauft kauf verkaufen verkauft verkaufe verkauf "
    "comprar compra compran compro vender vende venden vendemos vendeis vendo "
    "شراء اشتري يشتري بيع تبيعون يباع للبيع نبيع",
    "lend": "rent rents rented renting rental rentals hire hires hired hiring borrow borrows borrowed borrowing lend lends "
    "lent loan loans louer loue louez louons louent loues louee louees preter pretes pretees emprunter emprunt "
    "leihen leihe leiht geliehen ausleihen ausgeliehen verleih verleihen verliehen mieten mietet gemietet "
    "alquilar alquila alquilan alquilamos alquiler alquileres prestar presta prestan prestamos prestado prestados "
    "استئجار تاجير ايجار للايجار استعاره اعاره",
}
_WAY_OF = {word: way for way, words in _WAYS.items() for word in words.split()} | {
    **dict.fromkeys("购买 买 出售 有售 有卖 販売 購入 買".split(), "buy"),
    **dict.fromkeys("租 借 レンタル 貸し出 貸出".split(), "lend"),
}


def _ways(text: str) -> dict[str, str]:
    """The ways `text` says a thing is had, each with its first word: bought or sold ("buy"), lent or hired ("lend")."""
    return labels_named(text, _WAY_OF)


# a question whether one must buy or hire a thing is answered by the other way: "Do I need to buy a violin straight
# away?" by "Students can borrow a violin for their first term free of charge." (folded)
_MUST = re.compile(r"\b(?:need|needs|have to|has to|must|required|mussen|muss|faut|dois|doit|tengo que|tiene que|hay que|necesito|necesita)\b|需要|必要|必须")


def another_way(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """A thing asked to be bought that the answer says is lent, or asked to be hired that it says is sold, when no
    source says the way asked of it: "Kann man Bademäntel kaufen?" over a sauna's "Bademäntel können für 5 Euro
    ausgeliehen werden" was answered with it, "Vendez-vous des tapis de yoga ?" with "Les tapis et les briques sont
    prêtés gratuitement.", "How much does chalk cost to buy?" with "… chalk bags are free to borrow". A source that
    says the way asked in a sentence sharing a word of the thing answers it, and so does the other way where the
    question asks whether one must (`_MUST`)."""
    return None if _MUST.search(normalize(question)) else _said_the_other(_ways, question, sources, answer)


# the two sides of a place a question asks a thing on: inside it (indoors, within the city) and outside it (folded;
# Chinese and Japanese words found inside a text). "Within", "innerhalb" and "dentro" say a place only where no
# number nor a unit of time follows them ("within 7 days", "dentro de una semana")
_SIDES = {
    "inside": "inside indoor indoors interieur interieure interieurs interieures drinnen innen innenbereich interior "
    "interiores داخل داخلي داخليه 室内 屋内 国内 市内 境内",
    "outside": "outside outdoor outdoors exterieur exterieure exterieurs exterieures dehors aussen draussen ausserhalb "
    "aussenbereich fuera exterior exteriores خارج خارجي خارجيه 室外 屋外 国外 海外 市外 境外",
}
_SIDE_OF = {word: side for side, words in _SIDES.items() for word in words.split()}
_WITHIN_PLACE = re.compile(r"\b(?P<word>within|innerhalb|dentro)\b(?P<after>(?:\s+\w+){0,3})")


def _sides(text: str) -> dict[str, str]:
    """The sides of a place `text` names, each with its first word: inside ("within the city", "داخل المدينة") or
    outside ("outside the city", "en dehors du centre-ville")."""
    found = labels_named(text, _SIDE_OF)
    for m in _WITHIN_PLACE.finditer(normalize(text)):
        after = m["after"].split()
        if not any(word[0].isdigit() or _TIME_WORD.match(word) or word in _NUMBER_WORDS or word in _ARTICLES_COUNTING for word in after):
            found.setdefault("inside", m["word"])
            break
    return found


def another_side(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """A thing asked outside a place that the answer says inside it, or the other way, when no source says the side
    asked of it: "Do you deliver outside the city?" over a florist's "Delivery within the city costs £6; …" was
    answered with it, "هل التوصيل متاح خارج المدينة؟" (is delivery outside the city available?) with a pharmacy's
    delivery "داخل المدينة" (exploratory batch 11). Only a yes or a no, or a price, is asked this way: "Fuera del norte
    de San Diego, ¿qué otra región …?" (besides the north) is answered "… algunos dentro de las regiones …" (a
    question of XQuAD es)."""
    if not (asks_yes_or_no_any_script(question) or asked_value(question) in _PRICE_ASKED):
        return None
    return _said_the_other(_sides, question, sources, answer)


# the ways to pay a question asks whether a business takes, read in a sentence that speaks of paying (folded;
# Chinese, Japanese and Arabic found inside a text): a card of any kind, a credit or a debit card (each a card), cash,
# a cheque, a phone's wallet, a bank transfer, payment on delivery. Not Arabic "نقد" alone, which opens "نقدم" (we
# offer), nor "مدى" (a debit card's name, and "over" a time) but after a card ("بطاقات مدى")
_PAYMENT_METHODS = {  # each a way to pay: its words in Latin letters (whole words), and in other scripts
    "credit card": (
        r"credit ?cards?|cartes? de credit|kreditkarte\w*|tarjetas? de credito|visa|mastercard|american express",
        "ائتمان|信用卡|クレジットカード",
    ),
    "debit card": (r"debit ?cards?|cartes? de debit|ec-?karte\w*|girocard|tarjetas? de debito", "بطاق\\w* مد[ىي]|借记卡|デビットカード"),
    "card": (r"cards?|cartes?(?: bancaires?)?|cb|karte|karten|kartenzahlung|tarjetas?", "بطاق|刷卡|银行卡|カード"),
    "cash": (r"cash|especes|liquide|bargeld\w*|in bar|bar(?= (?:oder|und|bezahl\w*|zahl\w*))|efectivo|metalico", "نقدا|النقد|نقدي|كاش|现金|現金"),
    "cheque": (r"cheques?|scheck\w*", "شيك|支票|小切手"),
    "phone wallet": (r"apple ?pay|google ?pay|paypal|paypay|alipay|wechat|bizum|twint", "آبل باي|ابل باي|支付宝|微信|電子マネー"),
    "bank transfer": (r"bank transfer|wire transfer|virement|uberweisung|transferencia", "تحويل بنكي|银行转账|振込|振り込み"),
    "on delivery": (r"on delivery|a la livraison|nachnahme|contra ?reembolso", "عند الاستلام|货到付款|代引き|着払い"),
}
_PAYMENT_METHOD = {method: re.compile(rf"(?<![\w-])(?:{latin})(?![\w-])|{other}") for method, (latin, other) in _PAYMENT_METHODS.items()}
_PAYING = re.compile(
    r"\b(?:pay\w*|paid|accept\w*|take|payer|paie\w*|paiement\w*|regl\w*|zahl\w*|bezahl\w*|akzeptier\w*|nehmen|pag\w*|acept\w*|"
    r"cobr\w*|fianza|deposit|caution|kaution)\b|\w*zahlung\b|الدفع|دفع|نقبل|تقبلون|يقبل|支付|付款|结账|刷卡|使え|支払|決済|利用"
)
_ONLY_SAID = re.compile(r"\b(?:only|just|solo|solamente|unicamente|seulement|uniquement|nur|ausschliesslich)\b|فقط|只|仅|のみ|だけ")


def _payment_methods(text: str) -> dict[str, str]:
    """The ways to pay `text` names where it speaks of paying, each with its words: "Bezahlen können Sie bar oder mit
    EC-Karte." names cash and a debit card."""
    folded = normalize(text)
    if not _PAYING.search(folded):
        return {}
    found = {method: _whole_word(folded, m) for method, pattern in _PAYMENT_METHOD.items() if (m := pattern.search(folded))}
    if "card" in found and ("credit card" in found or "debit card" in found):
        del found["card"]  # the card of "Kreditkarte", "tarjeta de crédito", "البطاقة الائتمانية": that kind
    return found


def _whole_word(text: str, match: re.Match[str]) -> str:
    """The word of `text` a match stands in, where words are spaced ("بطاق" of "وبالبطاقات")."""
    if CJK_LETTER.search(match.group()):
        return match.group()
    start, end = match.start(), match.end()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "-"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "-"):
        end += 1
    return text[start:end]


def _pays_by(named: set[str], asked: str) -> bool:
    """Whether sources naming the ways `named` take the way `asked`: a card of any kind is a card, and a card
    named of no kind may be either."""
    return asked in named or (asked == "card" and bool(named & {"credit card", "debit card"})) or (asked in {"credit card", "debit card"} and "card" in named)


def missing_payment(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The way to pay a question asks whether the business takes, when no source names it: refused where the sources
    name no way to pay ("Can I pay by card at the kiosk?" over a ferry's page was answered "… foot passengers simply
    buy a ticket at the kiosk.", "Kann ich vor Ort bar bezahlen?" with an escape room's booking rules), or where they
    name others and the answer does not say they are the only ones: "هل يمكن الدفع عن طريق آبل باي؟" (Apple Pay?) over
    a car wash's "يمكن الدفع نقدًا أو بالبطاقة البنكية." (cash or bank card), "¿Puedo pagar la fianza con tarjeta de
    débito?" over a credit card's deposit. "We only take card payments" answers "Can I pay cash?", and "現金とクレジット
    カードのみ" "電子マネーは使えますか？". A yes or a no asked of one way to pay only."""
    if not asks_yes_or_no_any_script(question):
        return None
    asked = _payment_methods(question)
    if len(asked) != 1:
        return None
    ((way, word),) = asked.items()
    named = {method for text in sources for sentence in _SENTENCE_BREAK.split(text) for method in _payment_methods(sentence)}
    if _pays_by(named, way):
        return None
    said = [words for sentence in answer for words in _payment_methods(sentence).values()]
    if named and any(_ONLY_SAID.search(normalize(sentence)) and _payment_methods(sentence) for sentence in answer):
        return None
    return ScopeMismatch(missing=[word], answer_names=said)


def _said_the_other(named: Callable[[str], dict[str, str]], question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The one of two (`named`: the ways a thing is had, the sides of a place) a question asks of a thing, when no
    source's sentence sharing a word of the thing says it and the answer says the other."""
    asked = named(question)
    if len(asked) != 1:
        return None
    ((one, word),) = asked.items()
    thing = set(terms(question)) - set(terms(word))
    for text in sources:
        if any(one in named(sentence) and thing & set(terms(sentence)) for sentence in _SENTENCE_BREAK.split(text)):
            return None
    said = [_subject(sentence).strip() for sentence in answer if one not in (others := named(sentence)) and others]
    return ScopeMismatch(missing=[word], answer_names=said) if said else None


def _sets_apart(group: str, known: set[str], answer: Sequence[str]) -> bool:
    """Whether sources silent on a group that is not everyone (children, seniors, students) set another of its kind
    apart (`known`: the groups they name, less those asked), so that what they say for no group is not said for it:
    "子供のカットはいくらですか？" (a child's cut) over a salon's prices, "A cut is ¥4,400 … Students pay ¥3,300 for a
    cut.", was answered with the first. Not where the answer states ages, which the asker holds theirs against
    ("16歳未満の方は入会できません。" answers whether a middle-school pupil may join)."""
    if group not in _SET_APART or not any({group, other} <= kinds for other in known for kinds in _CONTRASTED):
        return False
    text = normalize(" ".join(answer))
    return not groups_aged(text) and not _AGE_BOUND.search(text)


def _groups_known(sources: Sequence[str]) -> set[str]:
    """The groups the sources mention, or whose ages they state (`groups_aged`)."""
    return set(groups_mentioned(tuple(sources))) | {group for text in sources for group in groups_aged(text)}


def unknown_groups(question: str, sources: Sequence[str]) -> list[str]:
    """The words naming the groups of people `question` asks about that no source mentions, nor states the ages
    of, nor names the group whose rules they follow (`_WITHIN`): "Rentner" of "Gibt es Ermäßigung für Rentner?"
    over a course programme's discounts for pupils and students. The group followed must be named: "moins de 26
    ans" states who is a young adult, not that a rule is the adults' ("Les seniors ont-ils une réduction ?" was
    answered with the discount for groups of ten)."""
    known, named = _groups_known(sources), groups_mentioned(tuple(sources))
    return [word for group, word in groups_named(question).items() if group not in known and _WITHIN.get(group) not in named]


# groups of which a rule for one says nothing of the others
_CONTRASTED = (
    frozenset({"children", "adults", "seniors", "students", "pupils"}),
    frozenset({"employees", "contractors", "interns"}),
    frozenset({"tenants", "landlords"}),
    frozenset({"drivers", "passengers"}),
)
_SET_APART = frozenset({"children", "seniors", "students", "pupils"})  # the groups a rule for everyone need not be the rule of
# a rule said for one group only answers whether another may ("Swimming lessons are for children only." answers
# "Are there swimming lessons for adults?"); folded
_ONLY = re.compile(
    r"\b(?:only|exclusively|reserved|seulement|uniquement|exclusivement|reserve\w*|nur|ausschliesslich|vorbehalten|"
    r"solo|solamente|unicamente|exclusivamente|reservad\w*)\b|只|仅|のみ|だけ|فقط"
)


# a bound of ages with no unit, which `groups_aged` does not read ("visitors under 18 enter free"); folded
_AGE_BOUND = re.compile(
    r"\b(?P<word>under|over|below|above|moins de|plus de|unter|uber|ab|menores de|mayores de|menos de|mas de)\s+(?P<n>\d{1,2})\b"
)


def _bound_holds(group: str, text: str) -> bool:
    """Whether a bound of ages in `text` (`_AGE_BOUND`) may hold someone of `group`, whose age the asker holds against
    it: "visitors under 18" may hold a child, and "juniors under 18 pay half price" holds no senior ("Is there a
    discount for seniors?" was answered with it once "drivers over 21" told the sources' ages). A group with no ages
    (students) may be held by any bound."""
    ages = _GROUP_AGES.get(group)
    for bound in _AGE_BOUND.finditer(text):
        n = float(bound["n"])
        low, high = (n, float("inf")) if bound["word"] in _ABOVE else (0.0, n)
        if ages is None or (low < ages[1] and high > ages[0]):
            return True
    return False


def _said_for_another(group: str, said: dict[str, str], answer: Sequence[str]) -> bool:
    """Whether an answer is said for another group than the one asked, which the sources mention: "Y a-t-il des
    cours de natation pour adultes ?" over a pool's page that prices adults' tickets was answered "Des cours de
    natation pour enfants ont lieu le mercredi après-midi.". Not where the answer names the group asked, states an
    age that holds it or a bound of ages that may hold it (`_bound_holds`: "visitors under 18" for children), says
    the rule is for the other group only, or names a group whose rules the asked one follows (seniors, adults)."""
    contrasted = any({group, other} <= kinds for other in said for kinds in _CONTRASTED)
    if not contrasted or _WITHIN.get(group) in said:
        return False
    text = normalize(" ".join(answer))
    return group not in groups_named(text) and group not in groups_aged(text) and not _ONLY.search(text) and not _bound_holds(group, text)


# the languages a thing may be in (a tour, a menu, support), each with its names in the seven languages (folded, as
# `normalize` writes Arabic: "الانجليزيه"); a Latin-script name counts in a question only after "in", "en", "auf",
# "em" ("en inglés", "auf Englisch"): "German" and "French" name people and dishes too
_LANGUAGES = {
    language: frozenset(names.split())
    for language, names in {
        "english": "english anglais englisch ingles 英语 英文 英語 الانجليزيه",
        "french": "french francais franzosisch frances 法语 法文 フランス語 الفرنسيه",
        "german": "german allemand deutsch aleman 德语 德文 ドイツ語 الالمانيه",
        "spanish": "spanish espagnol spanisch espanol castellano 西班牙语 スペイン語 الاسبانيه",
        "arabic": "arabic arabe arabisch 阿拉伯语 アラビア語 العربيه",
        "chinese": "chinese chinois chinesisch chino mandarin 中文 汉语 中国語 الصينيه",
        "japanese": "japanese japonais japanisch japones 日语 日文 日本語 اليابانيه",
        "italian": "italian italien italienisch italiano 意大利语 イタリア語 الايطاليه",
        "portuguese": "portuguese portugais portugiesisch portugues 葡萄牙语 ポルトガル語 البرتغاليه",
        "russian": "russian russe russisch ruso 俄语 ロシア語 الروسيه",
        "urdu": "urdu ourdou 乌尔都语 ウルドゥー語 الارديه",
        "hindi": "hindi 印地语 ヒンディー語 الهنديه",
        "bengali": "bengali bengalisch 孟加拉语 ベンガル語 البنغاليه",
        "tagalog": "tagalog filipino 他加禄语 タガログ語 التاغالوغيه الفلبينيه",
        "persian": "persian farsi persan persisch persa 波斯语 ペルシャ語 الفارسيه",
        "turkish": "turkish turc turkisch turco 土耳其语 トルコ語 التركيه",
        "korean": "korean coreen koreanisch coreano 韩语 韩文 韓国語 الكوريه",
        "dutch": "dutch neerlandais niederlandisch neerlandes 荷兰语 オランダ語 الهولنديه",
        "polish": "polish polonais polnisch polaco 波兰语 ポーランド語 البولنديه",
        "vietnamese": "vietnamese vietnamien vietnamesisch vietnamita 越南语 ベトナム語 الفيتناميه",
        "thai": "thai thailandais thailandisch tailandes 泰语 タイ語 التايلانديه",
    }.items()
}
_IN_LANGUAGE = frozenset("in en auf em باللغه".split())  # "باللغة الإنجليزية": in the English language
_ARABIC_IN = re.compile("^بال")  # "بالإنجليزية": in English
AROUND_WORD = "?？؟!.,;:¿¡()\"'"


def languages_named(text: str, *, asked: bool = False) -> dict[str, str]:
    """The languages `text` names, each with the word that names it; where it is `asked` (a question), a Latin-script
    name only after "in" ("Is there a tour in English?", "¿Hay visitas guiadas en inglés?"), an Arabic one with "in"
    glued on ("بالإنجليزية")."""
    found: dict[str, str] = {}
    for language, names in _LANGUAGES.items():  # Chinese and Japanese names inside a text
        written_in = next((name for name in names if CJK_LETTER.search(name) and name in text), None)
        if written_in:
            found[language] = written_in
    words = text.split()
    for at, written in enumerate(words):
        word = normalize(written).strip(AROUND_WORD)
        bare = _ARABIC_IN.sub("ال", word)
        after_in = bare != word or (at and normalize(words[at - 1]) in _IN_LANGUAGE)
        if asked and not after_in:
            continue
        for language, names in _LANGUAGES.items():
            if bare in names:
                found.setdefault(language, written.strip(AROUND_WORD))
    return found


# a question asking what a word is in a language ("What is the Netherlands called in English?", "ما اسم هولندا
# بالانجليزية؟") asks for a name, which any sentence may give in whatever language it names; folded
_ASKS_A_WORD = re.compile(
    r"\b(?:called|name|named|mean|means|meaning|word|say|spell|spelled|spelt|translat\w*|nom|appelle\w*|signifi\w*|mot|"
    r"dit|nombre|llama\w*|dice|palabra|heisst|heißt|bedeute\w*|wort)\b|اسم|يسمى|تسمى|معنى|كلمه|叫|称|名|意思|呼ば|意味"
)


def missing_language(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The language a question asks a thing in, when no source names it and the answer names another: "¿Hay visitas
    guiadas en inglés?" over a museum's page was answered "Las visitas guiadas en español salen cada hora desde la
    taquilla.". A tour in Spanish is no tour in English. Asked yes or no, an answer naming no language says nothing of
    it either: "هل التدريب متاح باللغة الأردية؟" (is the training given in Urdu?) over a driving school's page was
    answered "التدريب متاح على سيارات أوتوماتيكية ويدوية." (on automatic and manual cars). Asked what ("What is it
    called in English?"), the answer's words may be in it."""
    asked = languages_named(question, asked=True)
    if not asked or _ASKS_A_WORD.search(normalize(question)):
        return None
    known = {language for text in sources for language in languages_named(text)}
    said = {language: word for text in answer for language, word in languages_named(text).items() if language not in asked}
    missing = [word for language, word in asked.items() if language not in known]
    return ScopeMismatch(missing=missing, answer_names=list(said.values())) if missing and (said or asks_yes_or_no(question)) else None


def _arabic_for_whom(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`missing_for_whom` in Arabic, which says for whom with "لل" glued to the word: "ما جرعة الباراسيتامول
    للأطفال؟" (the dose for children) over "الجرعة المعتادة من الباراسيتامول للبالغين هي 500 ملغ" (for adults). No
    source holds the word (nor one of its root, nor one spelt one letter apart: "للاظطراب" is "للاضطراب"), and an
    answer's sentence says "لل" of someone the question does not name after the same definite word ("الباراسيتامول");
    after another, "لل" is as often "to" ("تعرضوا للحوادث", exposed to accidents; "قابلة للتلف", liable to damage)."""
    asked_terms = set(terms(question))
    source_terms = {t for text in sources for t in terms(text)}
    held = _held_roots(sources)
    for before, word in itertools.pairwise(question.split()):
        whom, thing = terms(word), terms(before)
        if not word.startswith("لل") or not before.startswith("ال") or len(whom) != 1 or len(thing) != 1 or _held(whom[0], held):
            continue  # after a verb or an adjective ("وإتاحتها للجمهور", "قابلة للتلف") it says to what, not for whom
        if any(_one_edit(whom[0], t) for t in source_terms):
            continue
        for sentence in answer:
            for other_before, other in itertools.pairwise(sentence.split()):
                said = terms(other)
                if other.startswith("لل") and len(said) == 1 and said[0] not in asked_terms and terms(other_before) == thing:
                    return ScopeMismatch(missing=[f"{before} {word.strip('؟?.,')}"], answer_names=[f"{other_before} {other.strip('؟?.,')}"])
    return None


# a clause that says under what condition ("if a severe rash appears", "when I feel better", "si la fièvre persiste",
# "wenn das Fieber steigt", "cuando me sienta mejor"): a question's "when" that opens it asks a time instead
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|si|quand|lorsque|wenn|falls|cuando)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:.?!¿？]")


def _condition(text: str) -> str | None:
    """The first condition clause of `text`, from its word to the next punctuation; None without one."""
    for match in _CONDITION.finditer(text):
        if match.start() == len(text) - len(text.lstrip(_OPENING_MARKS)) and match.group().casefold() in ("when", "quand", "cuando"):
            continue  # "When does the store open?" asks a time
        end = _CLAUSE_END.search(text, match.end())
        return text[match.start() : end.start() if end else len(text)].strip()
    return None


def missing_condition(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """A condition the question asks under, when no source speaks of it and the answer says what to do under
    another: "Can I stop taking it when I feel better?" over an antibiotic leaflet was answered "If a severe rash
    appears, stop taking it and call your doctor.", true, cited, and about a rash. No source mentions feeling better
    (no word of the condition, as names are looked up), and the answer's sentence holds a condition of its own."""
    asked = _condition(question)
    clause = _WORD.findall(asked or "")
    words = [w for w in clause if terms(w)]
    if len(words) < 2 or (len(clause) > 1 and re.search(r"(?:ed|en|ing)$", clause[1])):
        return None  # "when acted upon", "if needed": a participle, no condition of its own
    known = source_vocabulary(sources)
    if any(known.mentions([w]) for w in words):
        return None
    others = [clause for sentence in answer if (clause := _condition(sentence))]
    return ScopeMismatch(missing=[asked or ""], answer_names=others[:1]) if others else None


# the words that put a rule before, during or after a span ("after the probation period", "während der Probezeit",
# "pendant la période d'essai", "después del periodo de prueba", "بعد فترة التجربة"), and the articles between them and
# its name; read on folded text
_TIME_RELATIONS = {
    "before": r"before|prior to|avant(?: la| le| l'| les)?|vor|antes del?|قبل",
    "during": r"during|throughout|pendant|durant|au cours d[eu']|wahrend|durante|خلال|اثناء",
    "after": r"after|following|apres|nach|despues del?|tras|بعد",
}
_RELATION_ARTICLES = r"(?:(?:the|a|an|your|la|le|les|l'|de la|du|des|der|die|das|dem|den|des|eines|einer|el|los|las|un|una)\s+|l')?"
_RELATED_SPAN = {
    when: re.compile(rf"(?:^|[^\w'])(?:{words})\s+{_RELATION_ARTICLES}([^\W\d_]{{4,}})") for when, words in _TIME_RELATIONS.items()
}
# a verb after the word is an event, no span ("before coming to power", "antes de llegar al poder")
_EVENT = re.compile(r"(?:ing|[aei]r)$")
RULE_OPENING = 6  # the words a sentence's rule is framed in: "Während der Probezeit gilt …", "During probation, …"


def _related_spans(text: str, *, opening: bool = False) -> dict[str, dict[str, str]]:
    """The spans `text` puts a rule before, during or after, each by its first word's index term and that word
    (folded): {"after": {"probezeit": "probezeit"}}; with `opening`, only in its first `RULE_OPENING` words (a
    span named later in a sentence is as often another event's: "… the first since the 2006 World Cup")."""
    folded = normalize(" ".join(_opening(text).split()[:RULE_OPENING]) if opening else text)
    return {
        when: {terms(name)[0]: name for name in pattern.findall(folded) if terms(name) and not _EVENT.search(name)}
        for when, pattern in _RELATED_SPAN.items()
    }


def missing_day(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The days a question asks about (`days.days_named`), when no source names one of them and the answer names
    no day and states no hours: "Do you deliver on weekends?" and "周末派送吗？" over a courier's terms that name no
    day were answered "Same-city parcels are usually delivered the same day or the next day.". A rule stated for no
    day says nothing of the weekend; one with hours ("Check-in is from 3pm", "24 hours a day") may be the rule of every
    day."""
    asked = days_named(question)
    # "daily" and "every day" ask how often, not of a day: "What is the maximum daily dose of ibuprofen?"
    if not asked or asked == WEEK or any(days_named(text) & asked for text in sources):
        return None
    if any(days_named(sentence) or HOURS_SAID.search(normalize(sentence)) for sentence in answer):
        return None
    return ScopeMismatch(missing=day_words(question), answer_names=[])


# delivering, which keeps days of its own (folded; Chinese and Japanese found inside a text). Not French "livre" nor
# "livres", books
_DELIVERS = re.compile(
    r"\b(?:deliver\w*|livr(?:ez|ons|ent|er|aisons?|ees?)|liefer\w*|entreg\w*|repart\w*)\b|توصيل|توصلون|يوصل|配送|送货|派送|配達"
)


def days_not_of_delivery(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The days a question asks whether things are delivered on, when the answer names days and says nothing of
    delivering: "Do you deliver on Sundays?" over a florist's page was answered "We are open Monday to Saturday from
    8am to 6pm, and on Sundays from 10am to 2pm.", and so were "Livrez-vous le dimanche ?" and "Liefert ihr auch am
    Wochenende?" with a bookshop's and a pharmacy's hours (exploratory batches 5 and 9). When a shop opens says
    nothing of when it delivers; a sentence naming both delivering and days answers it. An answer that names no day
    is `missing_day`'s."""
    asked = days_named(question)
    if not asked or asked == WEEK or not _DELIVERS.search(normalize(question)):
        return None
    if not any(days_named(sentence) for sentence in answer) or any(_DELIVERS.search(normalize(sentence)) and days_named(sentence) for sentence in answer):
        return None
    delivering = _DELIVERS.search(normalize(question))
    return ScopeMismatch(missing=[delivering.group() if delivering else "", *day_words(question)], answer_names=[_subject(answer[0]).strip()])


# a service at the customer's home, which a yes-or-no question asks whether the business comes to give (folded;
# Chinese, Japanese and Arabic found inside a text); a source offers it by those words, or by coming in a van
# ("mobile", "الغسيل المتنقل")
_AT_HOME = (
    r"\b(?:home|homes|my house|your house|house calls?|a domicile|chez (?:moi|vous|soi)|nach hause|zu hause|hausbesuch\w*|"
    r"a domicilio|en casa)\b(?![\s-]*(?:made|page|screen|work))|المنزل|منزل|المنازل|منازل|البيت|上门|到家|家里|自宅|出張|訪問"
)
_ASKED_AT_HOME = re.compile(_AT_HOME)
_OFFERED_AT_HOME = re.compile(_AT_HOME + r"|\bmobile\b|متنقل|\bdomicilio\b")


def missing_home_service(question: str, sources: Sequence[str]) -> ScopeMismatch | None:
    """A service at the asker's home, asked yes or no, when no source offers one: "¿Cortan el pelo a domicilio?" over a
    hair salon's prices, "¿Recogen la ropa a domicilio?" over a launderette's service by order, "能上门验光吗？" (can
    you test my eyes at home?) over an optician's free eye test and "可以上门看诊吗？" over a pet hospital's hours were
    answered (exploratory batches 1 to 7). What a business does on its premises says nothing of coming to you; sources
    that offer a visit, a delivery home or a mobile service say how it stands, and the answer is the other checks' to
    weigh."""
    if not asks_yes_or_no_any_script(question):
        return None
    asked = _ASKED_AT_HOME.search(normalize(question))
    if asked is None or any(_OFFERED_AT_HOME.search(normalize(text)) for text in sources):
        return None
    return ScopeMismatch(missing=[asked.group()], answer_names=[])


def missing_holiday(question: str, sources: Sequence[str]) -> ScopeMismatch | None:
    """The public holiday a question asks about (`days.holidays_named`), when no source names any: "What time does
    the pool open on bank holidays?" was answered with its weekday and weekend hours. A place's week says nothing of
    its holidays, which keep other hours as often as not; sources that name one ("closed on public holidays",
    "every day except Christmas Day") say how they stand, and the answer is the other checks' to weigh."""
    asked = holidays_named(question)
    if not asked or any(holidays_named(text) for text in sources):
        return None
    return ScopeMismatch(missing=asked, answer_names=[])


def another_time(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The span the question asks about a rule after (or before, or during), when the answer's rule is said for
    another time of it and never for the asked one: "Wie lange ist die Kündigungsfrist nach der Probezeit?" (FAQ
    de-01) was answered "Während der Probezeit gilt eine Kündigungsfrist von zwei Wochen.", the notice during it. The
    answer's time is read where a rule is framed, at its sentence's opening."""
    said = [_related_spans(sentence, opening=True) for sentence in answer]
    for when, spans in _related_spans(question).items():
        for span, written in spans.items():
            if any(span in spans_of[when] for spans_of in said):
                continue
            others = [f"{other} {named[span]}" for spans_of in said for other, named in spans_of.items() if other != when and span in named]
            if others:
                return ScopeMismatch(missing=[f"{when} {written}"], answer_names=others[:1])
    return None


# the words that frame a rule by its occasion ("Por matrimonio se conceden 15 días", "For a death in the family you
# get 3 days", "En cas de mariage …", "Bei Heirat …"), and the articles between them and the occasion; folded
_OCCASION = r"(?:por|for|pour|en cas d[e']|en caso de|in case of|bei|wegen)"
_OCCASION_SPAN = re.compile(rf"(?:^|[^\w']){_OCCASION}\s+{_RELATION_ARTICLES}([^\W\d_]{{4,}})")
_OCCASION_OPENS = re.compile(rf"{_OCCASION}\s")
# words after those that frame no occasion ("For instance", "Por ejemplo", "for many years", "por el mismo algoritmo",
# "Pour quelle raison")
_NO_OCCASION = frozenset(
    "instance example examples exemple beispiel ejemplo exemplo esempio next many more most each every this that these "
    "those some reason raison razon grund mismo misma mismos otro otra otros otras autre autres meme cela ceci "
    "quelle quel cuanto cuanta tanto".split()
)


def _occasions(text: str) -> list[str]:
    """The occasions `text` names after a word that frames one (folded), verbs and words of no occasion aside."""
    return [name for name in _OCCASION_SPAN.findall(normalize(text)) if terms(name) and not _EVENT.search(name) and name not in _NO_OCCASION]


def another_occasion(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The occasion a question asks a rule for, when no source mentions it and the answer's rule is framed by
    another at its sentence's opening: "¿Cuántos días hay por nacimiento de un hijo?" over a leave policy was
    answered "Por matrimonio se conceden 15 días naturales." (the days for a wedding). A rule framed by its occasion,
    the sentence opening with it, says nothing of another; one that opens otherwise ("Each employee has 23 days …",
    "Claims for delayed baggage must be submitted …") is left to the other checks."""
    asked = _occasions(question)
    if not asked:
        return None
    known = source_vocabulary(sources)
    missing = [name for name in asked if not known.mentions([name])]
    # the frame opens the sentence: "Claims for delayed baggage must be submitted …" is about a kind of claim
    openings = [_opening(sentence) for sentence in answer]
    framed = [name for text in openings if _OCCASION_OPENS.match(normalize(text)) for name in _occasions(text)[:1] if name not in asked]
    return ScopeMismatch(missing=missing[:1], answer_names=framed[:1]) if missing and framed else None


# the words that say for whom or what a thing is (`FOR_WORDS`), or against what: "the dose for children", "la dose pour
# les enfants", "die Dosis für Kinder", "la dosis para niños", "le vaccin contre la varicelle"; read on folded text,
# articles and possessives skipped
_DETERMINERS = frozenset(
    "the a an le la les l un une des der die das den dem des ein eine einen einem einer el los las unos unas "
    "my your his her its our their mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs mein meine meinen "
    "meinem meiner sein seine seinen ihr ihre ihren ihrem unser unsere mi mis tu tus su sus nuestro nuestra nuestros".split()
)

# a verb right after the word ("for imposing", "pour manger", "para determinar"), by its ending
_VERB_ENDING = {"for": re.compile(r"ing$"), "pour": re.compile(r"(?:er|ir|re)$"), "para": re.compile(r"(?:ar|er|ir)$")}


def _for_pairs(text: str, *, asked: bool = False) -> dict[tuple[str, str], tuple[str, str, str]]:
    """The pairs (thing, for whom) of `text` ("dose for adults": ("dose", "adult")), each with the thing, the word
    that says for whom and the one it is for as written. A name (capitalised, but in German) is left to named scope;
    with `asked`, the thing must follow a determiner ("What is the dose for children?"): "se utiliza para el cultivo"
    and "what did demand for grow" read a verb as the thing."""
    german = is_german(text)
    pairs: dict[tuple[str, str], tuple[str, str, str]] = {}
    for clause in _CLAUSE.split(text):
        words = clause.split()
        for i, word in enumerate(words[:-2]):
            if normalize(words[i + 1]) not in FOR_WORDS or (asked and (i == 0 or normalize(words[i - 1]) not in _DETERMINERS)):
                continue
            j = i + 2
            while j < len(words) - 1 and normalize(words[j]) in _DETERMINERS:
                j += 1
            whom = words[j]
            verb = _VERB_ENDING.get(normalize(words[i + 1]))
            if normalize(whom) in _RELATIVES or not _WORD.fullmatch(whom) or (whom[0].isupper() and not german) or (j == i + 2 and verb and verb.search(normalize(whom))):
                continue
            whom_terms = terms(whom)
            # in an answer the thing may stand before its adjective: "la dose habituelle pour les adultes"
            for thing in [word] if asked or i == 0 else [word, words[i - 1]]:
                thing_terms = terms(thing)
                if len(thing_terms) == 1 and len(whom_terms) == 1:
                    pairs.setdefault((thing_terms[0], whom_terms[0]), (thing, words[i + 1], whom))
    return pairs


def missing_for_whom(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The one a thing is asked for, when no source mentions them and the answer gives the thing for another: "What is
    the dose for children?" over a leaflet that says "The usual dose for adults is one capsule every eight hours" was
    answered with it (0.88). No source says "children", and the answer's sentence holds "dose for adults": the same
    thing for someone the question does not name. The same in French, German and Spanish ("pour", "für", "para")."""
    if _ARABIC_LETTER.search(question):
        return _arabic_for_whom(question, sources, answer)
    asked = _for_pairs(question, asked=True)
    if not asked:
        return None
    known = source_vocabulary(sources)
    question_terms = set(terms(question))
    said = {pair: written for sentence in answer for pair, written in _for_pairs(sentence).items()}
    # what a thing is against is missing only where the sources tell two or more apart for it (by its first five
    # letters: "le vaccin contre le pneumocoque", "la vaccination contre la grippe"): "ein Krieg gegen die Menschen in
    # Amerika" over the one "Krieg gegen die amerikanischen Revolutionäre" is the same war in other words (MLQA de)
    against: dict[str, set[str]] = {}
    if any(normalize(word) in AGAINST_WORDS for _, word, _ in asked.values()):
        for text in sources:
            for (thing, whom), (_, word, _) in _for_pairs(text).items():
                if normalize(word) in AGAINST_WORDS:
                    against.setdefault(thing[:5], set()).add(whom)
    for (thing, _), written in asked.items():
        if known.mentions([written[-1]]) or (normalize(written[1]) in AGAINST_WORDS and len(against.get(thing[:5], ())) < 2):
            continue
        others = [" ".join(words) for (t, w), words in said.items() if t == thing and w not in question_terms]
        if others:
            return ScopeMismatch(missing=[" ".join(written)], answer_names=list(dict.fromkeys(others)))
    return None


# the articles, definite and indefinite (folded), that name a thing in a question: "the", "la", "un", "einen"
_ARTICLES = DEFINITE_ARTICLES | frozenset("a an un une des una unos unas ein eine einen einem einer".split())
# the words that ask a price rather than name what is priced ("How much does ... cost?", "¿Cuánto cuesta ...?"), and
# those a price is given per ("a night", "por mes"), which name no thing either; folded
PRICE_WORDS = frozenset(
    "cost costs costing price prices priced fee fees charge charged charges pay paid much expensive cheap worth money "
    "amount coute coutent prix tarif tarifs montant cout frais payer paie paye kostet kosten preis preise gebuhr "
    "gebuhren teuer zahlen bezahlen zahle cuesta cuestan precio precios coste costo tarifa importe cobra cobran pagar "
    "pago vale valen dinero".split()
)
# the price of coming in, which a page's prices for its visitors state without naming it: "Was kostet der Eintritt für
# Erwachsene?" is answered "Erwachsene zahlen 26 Euro, …" (folded)
_ADMISSION = frozenset("admission admissions entry entrance entree eintritt eintrittspreis entrada ingreso".split())
_PRICED_PER = frozenset(
    "month months year years week weeks day days night nights hour hours person people mes meses ano anos semana "
    "semanas dia dias noche noches hora horas persona mois an ans annee semaine jour jours nuit nuits heure heures "
    "personne monat monate jahr jahre woche tag tage nacht stunde stunden".split()
)


# words the index keeps as terms that name no thing: "se guardan en otro país" asks nothing of a "guardan en"
_FUNCTION_WORDS = STOPWORDS | _GOVERNING | frozenset("en a y o e".split())
_SUBJECTS_AND_MODALS = frozenset(
    "i you we they he she it can could may might must should shall will would je tu il elle nous vous ils elles on "
    "peux peut pouvons pouvez peuvent dois doit ich du er sie wir ihr kann kannst konnen darf darfst durfen muss "
    "yo puedo puede podemos pueden debo debe".split()
)


def said_elsewhere(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The pair of words a yes-or-no question asks about ("single sign-on"), when the answer holds neither word and
    a source sentence holds the pair: "Does the Starter plan include single sign-on?" over a price list was answered
    "The Starter plan costs $12 per user per month and includes 10 GB of storage per user.", which says nothing of
    it, while the Team plan's sentence does. A paraphrase that keeps one word of the pair ("Is there a student
    discount?": "Students get 10% off.") answers it, as does a rule whose ages or weights hold the question's ("Les
    mineurs de moins de 14 ans doivent être accompagnés …" answers "Mon fils de 12 ans peut-il grimper seul ?", and
    the pair is in the rule for 14 to 17). Latin script only."""
    if not asks_yes_or_no(question) or _NOT_LATIN.search(question):
        return None
    if any(fits_quantity(question, sentence, DOSED) for sentence in answer):
        return None
    held = {t for sentence in answer for t in terms(sentence)}
    words = [normalize(w) for w in _WORD.findall(question)]
    # a verb and its object are no thing: "Can I read work email ...?" (after its subject, "I", or a modal)
    verbs = {after for before, after in itertools.pairwise(words) if before in _SUBJECTS_AND_MODALS}
    wanted = {
        pair: written
        for pair, written in _written_pairs(question).items()
        if not set(pair) & held and normalize(written[0]) not in verbs and not {normalize(w) for w in written} & _FUNCTION_WORDS
    }
    if not wanted:
        return None
    for text in sources:
        for sentence in _SENTENCE_BREAK.split(text):
            said = word_pairs(sentence)
            for pair, written in wanted.items():
                if pair in said:
                    return ScopeMismatch(missing=[" ".join(written)], answer_names=[_subject(answer[0]).strip()] if answer else [])
    return None


# the periods a price is said per (folded), and the words that say per one: "£40 a day", "10 euros al mes", "32 euros
# par jour", "20 Euro pro Stunde", "£25 per week"; and the adjectives that say it alone ("monthly", "annuel")
_PERIODS = {
    "hour": "hour hours heure heures stunde stunden hora horas",
    "day": "day days jour jours journee tag tage dia dias",
    "night": "night nights nuit nuits nacht nachte noche noches",
    "week": "week weeks semaine semaines woche wochen semana semanas",
    "month": "month months mois monat monate mes meses",
    "year": "year years an ans annee annees jahr jahre ano anos",
}
_PERIOD_OF = {word: period for period, words in _PERIODS.items() for word in words.split()}
_PERIODICALLY = {
    "hour": "hourly",
    "day": "daily quotidien quotidienne taglich diario diaria",
    "night": "nightly",
    "week": "weekly hebdomadaire wochentlich semanal",
    "month": "monthly mensuel mensuelle monatlich mensual",
    "year": "yearly annual annually annuel annuelle jahrlich anual",
}
_PERIODICAL_OF = {word: period for period, words in _PERIODICALLY.items() for word in words.split()}
_PER = r"(?:per|a|an|each|every|par|la|le|l'|a la|au|a l'|al|por|el|pro|im|am|je|in der|the)"
_PERIOD_SAID = re.compile(rf"(?<![\w'])(?P<said>{_PER}\s*(?P<period>{'|'.join(_PERIOD_OF)})|(?P<alone>{'|'.join(_PERIODICAL_OF)}))\b")
# after a period a price is per, nothing names a thing ("How much is a day pass?" asks the pass's price, "A day pass
# costs £8" states it)
_PERIOD_CLOSES = re.compile(r"\s*(?:$|[?？.,!;:)]|(?:for|pour|para|fur|with|avec|con|mit|and|et|y|und|or|ou|o|oder|if|si|wenn)\b)")
# but right after an amount, a period is what it is per, whatever follows: "à 65 € la journée repas compris"
_AFTER_AMOUNT = re.compile(r"(?:\d|[$€£¥]|\b(?:euros?|dollars?|pounds?))\s*$")


# half a day is a period of its own, wherever it is named ("El alquiler de medio día cuesta 40 euros" is no price for
# "todo el día"), and its "a day" no day (folded)
_HALF_DAY = re.compile(r"\b(?:half(?:\s+a|-)?\s*day|medio dia|media jornada|demi-?\s*journee|halbe[nr]?\s+tag|halbtag\w*)\b")


# half of a unit: of an hour, thirty minutes; of a year, six months; of a day, the period `_HALF_DAY` reads
_HALF = re.compile(
    r"\b(?:half(?:\s+an?|-)?\s*|halbe[nr]?\s+|demi-?\s*|medio\s+|media\s+)(?P<unit>hour|stunde|heure|hora|year|jahr|annee|ano|day|tag|journee|dia|jornada)\b"
)
_HALVES = {"hour": ("minute", 30.0), "year": ("month", 6.0)}


def _periods(text: str) -> dict[str, str]:
    """The periods `text` says a price per ("al mes": month), each with its words as written; not one a word naming a
    thing follows (see `_PERIOD_CLOSES`)."""
    folded = normalize(text)
    aligned = len(folded) == len(text)  # folding kept every letter in its place: the words can be shown as written
    out: dict[str, str] = {}
    for m in _HALF_DAY.finditer(folded):
        out.setdefault("half day", text[m.start() : m.end()] if aligned else m.group())
    folded = _HALF.sub(lambda m: " " * len(m.group()), _HALF_DAY.sub(lambda m: " " * len(m.group()), folded))
    for m in _PERIOD_SAID.finditer(folded):
        if not _PERIOD_CLOSES.match(folded, m.end()) and not _AFTER_AMOUNT.search(folded, 0, m.start()):
            continue
        period = _PERIOD_OF[m["period"]] if m["period"] else _PERIODICAL_OF[m["alone"]]
        out.setdefault(period, text[m.start() : m.end()] if aligned else m["said"])
    return out


_PRICE_ASKED = ("money", "amount")  # "How much does it cost …?", and "How much is …?", a price as often as not


# the counts from one to twenty written as words, in English, French, German and Spanish
_COUNT_NAMES = {
    "en": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty",
    "fr": "un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize dix-sept dix-huit dix-neuf vingt",
    "de": "ein zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn zwanzig",
    "es": "uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve veinte",
}
_SPELT_COUNTS = [(word, str(n)) for words in _COUNT_NAMES.values() for n, word in enumerate(words.split(), start=1)]
# a count from two on, as cased text writes it (not folded: French "très" is no Spanish "tres"); none that is another
# word too ("once", "neuf", "elf", "sept") nor an article ("un", "ein", "uno")
_COUNT_WORDS = {word: n for word, n in _SPELT_COUNTS if n != "1" and word not in {"once", "neuf", "elf", "sept"}}
# and in Arabic, as written and as `normalize` folds them ("ثمانية أشخاص", "خمسين شخصاً"): the tens, and the units in
# the forms that are no other word ("ست" is also a title, "عشر" part of "أحد عشر")
_ARABIC_COUNTS = {
    "اثنان اثنين اثنتان اثنتين": "2", "ثلاثة ثلاثه": "3", "أربعة اربعه": "4", "خمسة خمسه": "5", "ستة سته": "6", "سبعة سبعه": "7",
    "ثمانية ثمانيه": "8", "تسعة تسعه": "9", "عشرة عشره": "10", "عشرون عشرين": "20", "ثلاثون ثلاثين": "30",
    "أربعون أربعين اربعون اربعين": "40", "خمسون خمسين": "50", "ستون ستين": "60", "سبعون سبعين": "70", "ثمانون ثمانين": "80",
    "تسعون تسعين": "90", "مائة مئة مائه مئه": "100",
}
_COUNT_WORDS |= {word: n for words, n in _ARABIC_COUNTS.items() for word in words.split()}
_COUNT_WORD = re.compile(r"(?<![\w-])(?P<word>" + "|".join(sorted(_COUNT_WORDS, key=len, reverse=True)) + r")(?![\w-])")
# numbers written as words before a unit ("one day before", "une semaine", "zwei Tage", "dos años"), as digits
_NUMBER_WORDS = {normalize(word): n for word, n in _SPELT_COUNTS if int(n) <= 12} | dict.fromkeys(
    "une eine einen einem una".split(), "1"
)


def _counts_in_digits(text: str) -> str:
    """`text` with the counts it writes as words written in digits ("de tres habitaciones": "de 3 habitaciones")."""
    return _COUNT_WORD.sub(lambda m: _COUNT_WORDS[m["word"]], text.casefold())


# a length of time a price is for, folded: "for 30 minutes", "de 45 minutes", "d'une heure", "de dos horas", "a
# two-hour lesson", "an hour-long lesson"; half an hour, and the whole of a day (which is no count of hours: a day's
# hire is priced apart as often as not)
_LENGTH_UNITS = _PERIOD_OF | dict.fromkeys("minute minutes mins minuten minuto minutos".split(), "minute")
_ARTICLES_COUNTING = frozenset("a an un uno ein".split())
_LENGTH_COUNTS = _NUMBER_WORDS | dict.fromkeys(_ARTICLES_COUNTING, "1")
_LENGTH = re.compile(
    rf"(?<!\w)(?P<n>\d{{1,3}}(?:[.,]\d+)?|{'|'.join(sorted(_LENGTH_COUNTS, key=len, reverse=True))})(?:\s+|-)"
    rf"(?P<unit>{'|'.join(sorted(_LENGTH_UNITS, key=len, reverse=True))})(?!\w)"
)
_WHOLE_DAY = re.compile(
    r"\b(?:(?:whole|full|entire)[\s-]+day|all\s+day|ganzen\s+tag|ganztags?|toute\s+la\s+journee|journee\s+(?:entiere|complete)|"
    r"todo\s+el\s+dia|dia\s+(?:entero|completo))\b"
)
# a length that is no price's: a time before or after something ("5 Tage vor Anreise", "24 hours in advance"), one
# within which, or a bound ("within 7 days", "more than 2 hours"); folded
_NO_PRICED_LENGTH_AFTER = re.compile(
    r"\s*(?:before|after|prior|ahead|in advance|early|earlier|late|later|ago|notice|vor|nach|vorher|im voraus|fruher|spater|zu spat|"
    r"avant|apres|a l'avance|en avance|plus tot|plus tard|de retard|antes|despues|de antelacion|de anticipacion|de retraso|tarde)\b"
)
_NO_PRICED_LENGTH_BEFORE = re.compile(
    r"\b(?:within|in|after|up to|at least|less than|more than|under|over|every|innerhalb|nach|bis zu|mindestens|weniger als|"
    r"mehr als|alle|dans|en|apres|sous|jusqu'a|au moins|moins de|plus de|tous les|toutes les|dentro de|despues de|hasta|al menos|"
    r"menos de|mas de|cada)\s+$"
)
# nor an age: "pour un enfant de 8 ans", "a 10-year-old", "mit 12 Jahren"
_AGE_BEFORE = re.compile(r"\b(?:de|d'|von|of|aged?|mit|edad)\s*$")
_AGE_AFTER = re.compile(r"\s*-?(?:old|alt\w*|d'age|de edad)\b")
# nor, after an article, one a word naming a thing follows (`_PERIOD_CLOSES`), as after a period: "How much is a day
# pass?" asks no price for a day, nor its follow-up "What about meeting rooms?", rewritten "How much is a day meeting
# rooms?" (the multi-turn benchmark); but "an hour-long lesson" does
_LONG = re.compile(r"[\s-]*long\b")
_TIME_TERMS = frozenset(
    terms(" ".join([*_LENGTH_UNITS, *_PERIODICAL_OF, "half", "halbe", "demi", "media", "whole", "full", "ganzen"]))
)
Time = tuple[str, float | None]  # a unit of time and how many of it a price is for; None, per one of it ("per hour")


def _times_priced(text: str) -> dict[Time, str]:
    """The lengths and periods of time `text` states a price for, each with its words: "de 45 minutes" ("minute",
    45), "eine halbe Stunde" ("minute", 30), "half a year" ("month", 6), "pro Stunde" ("hour", None), "den ganzen
    Tag" ("day", 1). Whole hours are counted in hours, parts of one in minutes."""
    folded = normalize(text)
    written = (lambda m: text[m.start() : m.end()]) if len(folded) == len(text) else (lambda m: m.group())
    out: dict[Time, str] = {(period, None): words for period, words in _periods(text).items()}
    for m in _HALF.finditer(folded):
        if half := _HALVES.get(_LENGTH_UNITS.get(m["unit"], "day")):
            out.setdefault(half, written(m))
    for m in _WHOLE_DAY.finditer(folded):
        out.setdefault(("day", 1.0), written(m))
    folded = _WHOLE_DAY.sub(lambda m: " " * len(m.group()), _HALF.sub(lambda m: " " * len(m.group()), folded))
    for m in _LENGTH.finditer(folded):
        if _NO_PRICED_LENGTH_AFTER.match(folded, m.end()) or _NO_PRICED_LENGTH_BEFORE.search(
            folded[max(0, m.start() - 20) : m.start()]
        ):
            continue
        unit, n = _LENGTH_UNITS[m["unit"]], float(_LENGTH_COUNTS.get(m["n"], m["n"]).replace(",", "."))
        if unit == "year" and (_AGE_BEFORE.search(folded, 0, m.start()) or _AGE_AFTER.match(folded, m.end())):
            continue
        if m["n"] in _ARTICLES_COUNTING and not _PERIOD_CLOSES.match(folded, m.end()) and not _LONG.match(folded, m.end()):
            continue
        if unit == "minute" and n % 60 == 0:
            unit, n = "hour", n / 60
        elif unit == "hour" and n != int(n):
            unit, n = "minute", n * 60
        out.setdefault((unit, n), written(m))
    return out


def _covers(said: Time, asked: Time) -> bool:
    """Whether a price for `said` is one for `asked`: the same length, or a price per one of its unit for a whole
    count of it ("£15 per hour" for three hours, not for half of one)."""
    (unit, n), (asked_unit, asked_n) = said, asked
    return unit == asked_unit and (
        n == asked_n or n is None and (asked_n is None or asked_n == int(asked_n)) or asked_n is None and n == 1
    )


_CLAUSE_BREAK = re.compile(r"[,;:.!?]\s+")


def _priced_parts(text: str) -> list[str]:
    """The parts of `text` that each state a price, each with the clauses before it that state none: "Une leçon
    collective d'une heure coûte 28 €, et une leçon particulière de 45 minutes coûte 45 €." is two."""
    parts, pending = [], ""
    for clause in _CLAUSE_BREAK.split(text):
        pending = f"{pending}, {clause}" if pending else clause
        if holds_value("money", clause):
            parts.append(pending)
            pending = ""
    if pending and parts:
        parts[-1] += ", " + pending
    return parts


def _times_priced_for(thing: set[str], texts: Sequence[str]) -> dict[Time, str]:
    """The lengths and periods `texts` price the thing for: those of the priced parts (`_priced_parts`) that name
    the most of its words, or of every priced part where none names one."""
    parts = [part for text in texts for part in _priced_parts(text)]
    shared = [len(thing & set(terms(part))) for part in parts]
    return {
        time: words
        for part, n in zip(parts, shared, strict=True)
        if n == max(shared)
        for time, words in _times_priced(part).items()
    }


def another_period(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The period a question asks a price per, or the length of time it asks one for, when no source prices the
    thing for it and the answer prices it for another: "¿Cuánto cuesta una taquilla al año?" over a coworking space's
    "Hay taquillas disponibles por 10 euros al mes." was answered with the monthly price, "Combien coûte la location
    à la semaine ?" over a ski hire's daily prices with the adult's day; "Combien coûte une leçon particulière d'une
    heure ?" with "…, et une leçon particulière de 45 minutes coûte 45 €." (exploratory batch 11), "Was kostet ein
    Ruderboot für den ganzen Tag?" with "Ein Ruderboot kostet 15 Euro pro Stunde, …". A price per year may be another
    than twelve months' (a discount, a deposit); the sources do not say it. Latin script only."""
    if asked_value(question) not in _PRICE_ASKED or _NOT_LATIN.search(question):
        return None
    asked = _times_priced(question)
    if not asked:
        return None
    thing = set(terms(question)) - PRICE_WORDS - _ASKING_FOR - _TIME_TERMS
    held = _times_priced_for(thing, sources)
    said = _times_priced_for(thing, answer)
    for time, words in asked.items():
        if said and not any(_covers(other, time) for other in [*held, *said]):
            return ScopeMismatch(missing=[words], answer_names=list(dict.fromkeys(said.values())))
    return None


def _latin_or_arabic(question: str) -> bool:
    """Whether `question` is written in Latin letters or Arabic ones only (the counts and lists read)."""
    return not _NOT_LATIN.search(_ARABIC_LETTER.sub("", question))


def another_count(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The count a question asks a price for, when no source states it beside the same word and the answer's
    prices stand beside another count of it: "¿Cuánto cuesta una mudanza de un piso de tres habitaciones?" over a
    removals firm's "Una mudanza local de un piso de dos habitaciones cuesta desde 450 euros." was answered with it,
    "Combien coûte une chambre pour quatre ?" with the room for two. Counts are read in digits and as words from two
    to twenty (English, French, Spanish, German), each by the word after it or the one before, whatever their length
    ("How much do 500 business cards cost?" against "250 cards cost £35", not against "orders over 500 pages"). An
    hour, a day or a kilo is a count too where the answer states no range of it to read it against (`fits_quantity`):
    "Was kostet ein Welpenkurs mit zehn Stunden?" was answered "Ein Welpenkurs umfasst sechs Stunden und kostet 120
    Euro.", "Combien coûte le forfait avec 30 heures ?" with the package of 20 hours. In Arabic too, its counts read
    in digits and as words (`_ARABIC_COUNTS`): "كم سعر كعكة تكفي خمسين شخصاً؟" (a cake for fifty) was answered with the
    cakes for eight and twenty."""
    if asked_value(question) not in _PRICE_ASKED or not _latin_or_arabic(question):
        return None
    if any(fits_quantity(question, sentence) or fits_amount(question, sentence) for sentence in answer):
        return None
    # hours, days, kilos: the answer's ranges of them read them (`missing_range`), where it states any
    ranged = {kind for sentence in answer for kind in stated_ranges(sentence)}
    quantities = {m["n"] for m in _QUANTITY.finditer(_folded_numbers(_counts_in_digits(question))) if _unit_kind(m["unit"]) in ranged}
    # the thing counted may take two words: "500 business cards" counts cards
    asked = {n: beside for n, beside in _counted(_unpriced(question), ranges=False, after=2).items() if n not in quantities}
    if not asked:
        return None
    written = [_counted(_unpriced(text)) for text in sources]
    for n, beside in asked.items():
        if any(n in w and beside & w[n] for w in written):  # held beside the same word: "three digits" is no identifier here
            continue
        for sentence in answer:
            if not holds_value("money", sentence):
                continue
            others = [m for m, words in _counted(_unpriced(sentence), ranges=False).items() if m != n and beside & words]
            if others:
                return ScopeMismatch(missing=[_count_written(question, n)], answer_names=[_count_written(sentence, others[0])])
    return None


# a count of a thing in Chinese or Japanese: a number in digits or characters and the word it counts by ("二十节",
# "10次", "五公里内", "十回券"), and a bound after it ("以上", "以内", "内"); not money (元, 円), which is the price. A
# rate per one ("每小时收费6元") states the price of one: "停车一小时多少钱？" asks it
_HAN_DIGITS = {"每": 1, "〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_HAN_UNITS = {"十": 10, "百": 100, "千": 1000}
_HAN_NUMERAL = r"[〇零一二两三四五六七八九十百千]+"  # a number in characters, as `_han_number` reads it
_CJK_COUNT = re.compile(
    rf"(?P<n>\d+|每|{_HAN_NUMERAL})\s*"
    r"(?P<unit>个小时|小时|時間|个月|か月|ヶ月|公里|キロ|节|次|张|件|位|人|晚|泊|天|日間|周|週間|年|回|枚|台|本|杯|份|套|堂|平方米|平米|斤)"
    r"(?P<bound>以上|以内|以下|未満|内)?"
)


def _han_number(text: str) -> int:
    """A number written in digits or Chinese characters ("二十" 20, "两千四百" 2400, "十" 10)."""
    if text.isdigit():
        return int(text)
    total, digit = 0, None
    for char in text:
        if char in _HAN_UNITS:
            total += (1 if digit is None else digit) * _HAN_UNITS[char]
            digit = None
        else:
            digit = _HAN_DIGITS[char]
    return total + (digit or 0)


def _cjk_counts(text: str) -> list[tuple[int, str, str | None, str]]:
    """The counts `text` states, each as (number, the word it counts by, its bound or None, as written)."""
    return [(_han_number(m["n"]), m["unit"], m["bound"], m.group()) for m in _CJK_COUNT.finditer(text)]


def another_cjk_count(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """`another_count` in Chinese and Japanese: the count a question asks a price for, by the word it counts with,
    when no source states it and the answer's priced sentence states another count of that word, or a bound that
    does not hold it: "私教课二十节多少钱？" (twenty personal-training sessions) over a gym's "私教课每节课二百元，十节课
    套餐一千八百元。" was answered with the ten-session package, "十公里接送多少钱？" (a pick-up 10 km away) with "五公里内
    收费20元" (within 5 km)."""
    if not CJK_LETTER.search(question) or asked_value(question) not in _PRICE_ASKED:
        return None
    # a time, weight or height the answer states a range of is the ranges' to read ("开车前12小时" against "不足24小时")
    if set(asked_quantities(question)) & {kind for sentence in answer for kind in stated_ranges(sentence)}:
        return None
    held = {(n, unit) for text in sources for n, unit, bound, _ in _cjk_counts(text) if bound is None}
    for n, unit, bound, written in _cjk_counts(question):
        if bound is not None or (n, unit) in held or (unit == "年" and n >= 1000):  # "2015年" is when, no count
            continue
        for sentence in answer:
            if not holds_value("money", sentence):
                continue
            said = [(m, b, as_said) for m, u, b, as_said in _cjk_counts(sentence) if u == unit]
            if any((b == "以上" and n >= m) or (b in ("以内", "以下", "内") and n <= m) for m, b, _ in said):
                return None  # a bound that holds it answers it
            # a rate per one is no other count: it prices any ("住三晚多少钱？" by "每晚三百元")
            if others := [as_said for m, b, as_said in said if (m != n or b is not None) and not as_said.startswith("每")]:
                return ScopeMismatch(missing=[written], answer_names=others[:2])
    return None


# "for" before a count, which the index drops as a function word: "une chambre pour quatre", "a table for 6"
_FOR_COUNT = re.compile(r"\b(?:for|pour|para|für|fur)\s+(?P<n>\d{1,2})\b")


def _counted(text: str, *, ranges: bool = True, after: int = 1) -> dict[str, set[str]]:
    """`numbered` with the counts written as words read too, and "for" before one as its label."""
    digits = _counts_in_digits(text)
    counted = numbered(digits, ranges=ranges, after=after)
    for m in _FOR_COUNT.finditer(digits):
        if m["n"] in counted:
            counted[m["n"]].add("<for")
    return counted


def _unpriced(text: str) -> str:
    """`text` (casefolded) without its amounts of money: an amount is no count of a thing, whatever its currency shares
    with a price ("How much is shipping for a £30 order?" is answered "Shipping costs £4.95.")."""
    return _ASKED_AMOUNT.sub(" ", text.casefold())


def _count_written(text: str, n: str) -> str:
    """The count `n` as `text` writes it, with the word after it ("tres habitaciones")."""
    for m in re.finditer(r"(?P<count>[^\W_]+)(?=(?P<after>\s+[^\W\d_]+)?)", text):
        if _counts_in_digits(m["count"]) == n:
            return m["count"] + (m["after"] or "")
    return n


# what stands after a thing without naming a kind of it (folded): "un coche con …", "la chambre pour …", "y", "et"
_SORTING_WORDS = frozenset("con sin para por pour avec sans sur en a y e o ou et que qui".split())


def missing_priced(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The thing a question asks the price of, when no source holds a word of it and the answer gives a price:
    "¿Cuánto cuesta la toalla?" over a gym's fees was answered "La matrícula de inscripción cuesta 25 euros",
    true, cited, and the price of something else. The thing is what an article names, and every word of it must
    be missing; names are left to named scope; German reads a source's compound as holding its last word ("Miete"
    in "Nettokaltmieten"). Arabic names its thing right after the word for price (`_missing_arabic_priced`); other
    scripts are not read."""
    if asked_value(question) not in _PRICE_ASKED:  # "How much is a wedding shoot?" asks a price as often as not
        return None
    priced = [sentence for sentence in answer if holds_value("money", sentence)]
    if not priced:
        return None  # an answer without an amount is `missing_value`'s
    if _ARABIC_LETTER.search(question):
        return _missing_arabic_priced(question, sources, priced)
    if CJK_LETTER.search(question):
        return _missing_cjk_priced(question, sources, priced)
    if _NOT_LATIN.search(question):
        return None
    # the thing is what an article names ("la toalla", "an extra checked bag"): "¿Cuánto pago si quiero recibirlo
    # mañana?" (FAQ es-02, express delivery in other words) names none, "sa sœur" (PIAF) is whose money, and "the
    # original Fast and the Furious film" (MLQA en) is a name's, which named scope reads
    german = is_german(question)  # where every noun is capitalised, "ein Navi" is a thing ("Was kostet ein Navi?")
    names = set() if german else {w for run in name_runs(question) for w in run}
    words = _WORD_OR_NUMBER.findall(question)  # "a 2-year-old" is a number's, not a thing's
    thing: list[str] = []
    first_phrase: list[str] = []
    for i, word in enumerate(words[:-1]):
        if normalize(word) not in _ARTICLES:
            continue
        phrase = []
        for named in words[i + 1 :]:
            if named[0].isdigit() or not terms(named) or named in names or normalize(named) in PRICE_WORDS | _PRICED_PER | _ASKING_FOR | _ADMISSION:
                break
            phrase.append(named)
        if not (i + 1 + len(phrase) < len(words) and words[i + 1 + len(phrase)] in names):
            thing += phrase
            first_phrase = first_phrase or phrase
    if not thing:
        return None
    known = source_vocabulary(sources)
    compounds = {normalize(w) for w in known.words if len(w) > FAMILY_LETTERS} if german else set()

    def mentioned(word: str) -> bool:  # a compound ends in the word's family and an ending ("-mieten")
        family_of = _family(word)
        tail = re.compile(re.escape(family_of) + r"\w{0,3}$")
        return known.mentions([word]) or (len(family_of) >= FAMILY_LETTERS and any(tail.search(c) for c in compounds))

    # where a kind follows its thing, the first word of the first thing named is the thing: "¿Cuánto cuesta el carné
    # universitario?" over a university's fees, whose name holds "universitario", asks the price of a card they never
    # name. Elsewhere every word must be missing: "the highest price of oil" and "the new dong" say their thing
    # after words the sources lack ("highest"), or in another spelling ("đồng")
    if _kind_after(question) and not mentioned(first_phrase[0]):
        return ScopeMismatch(missing=[" ".join(first_phrase)], answer_names=[_subject(priced[0]).strip()])
    # and its kind right after it: "¿Cuánto cuesta un coche eléctrico?" over a car hire's "Un coche pequeño cuesta 35
    # euros al día …" asks the price of a kind no source names, and the answer prices another
    # (the same noun, with a plural's ending, before a word that is no preposition: "un lavado en la lavadora de 18
    # kg" names no other kind of "la lavadora grande")
    if _kind_after(question) and len(first_phrase) > 1 and not mentioned(first_phrase[1]):
        thing_word = normalize(first_phrase[0])
        for sentence in priced:
            words = re.findall(r"[^\W\d_]+|[^\w\s]", sentence)
            for before, after in itertools.pairwise(words):
                same = normalize(before) in (thing_word, thing_word + "s", thing_word + "es")
                if same and _WORD.fullmatch(after) and normalize(after) not in STOPWORDS | PREPOSITIONS | _COMPLEMENT | _SORTING_WORDS:
                    return ScopeMismatch(missing=[" ".join(first_phrase[:2])], answer_names=[f"{before} {after}"])
    if any(mentioned(word) for word in thing):
        return None
    return ScopeMismatch(missing=[" ".join(thing)], answer_names=[_subject(priced[0]).strip()])


# the words a Chinese or Japanese question asks a price with ("料金はいくらですか", "多少钱", "费用是多少")
_CJK_PRICE_WORDS = re.compile("料金|費用|値段|価格|代金|いくら|多少钱|多少錢|什么价|价格|价钱|费用|收费|多少|钱|錢")


def _missing_cjk_priced(question: str, sources: Sequence[str], priced: Sequence[str]) -> ScopeMismatch | None:
    """`missing_priced` in Chinese and Japanese: the thing is the Chinese characters right before the word that asks
    the price (`_CJK_PRICE_WORDS`), and it is missing when the sources hold none of its pairs: "矯正の料金は
    いくらですか？" (orthodontics) over a dentist's prices of whitening and cleaning was answered with the whitening's
    price. One pair held is enough for the thing to be the sources' ("一壶红茶多少钱？" names the black tea they price), as
    is a letter of it in a priced sentence or a title ("房租多少钱？", the rent, over "月租金为4500元")."""
    price = _CJK_PRICE_WORDS.search(question)
    if not price:
        return None
    # the thing stands right before the word for price, or before a particle that joins them ("矯正の料金", "教材費は
    # いくら"); a verb before it names none ("想明天收到要多付多少钱？", to get it tomorrow, what more do I pay?)
    end = price.start()
    while end and question[end - 1] in "のは的":
        end -= 1
    start = end
    while start and _HAN.match(question[start - 1]) and question[start - 1] not in _FOLLOWING | _POINTING | _COUNTS | _MEASURE_WORDS:
        start -= 1
    thing = [question[at : at + 2] for at in range(start, end - 1)]
    held = {t for text in sources for t in terms(text) if _han_pair(t)}
    # a letter of it in a priced sentence says it in other words ("房租", the rent, is "月租金为4500元"), and the letters
    # of a title are what every source is about
    said = {c for text in [*priced, *titles_of(sources)] for c in text}
    word = question[start:end]
    # another of its kind, priced in its place: "中学生の料金はいくらですか？" (a middle-school pupil) was answered with
    # "小学生は大人料金の70％" (exploratory batch 13): the same word but its first letter, where no source writes its
    # opening pair ("大型犬洗澡" is priced in "…，大型犬120元") and that letter opens the word (not "犬洗澡" inside
    # "小型犬洗澡", for "猫洗澡")
    siblings = [
        text[at - 1 : at + len(word) - 1]
        for text in priced
        for at in range(1, len(text) - len(word) + 2)
        if len(word) >= 3
        and text[at : at + len(word) - 1] == word[1:]
        and _HAN.match(text[at - 1])
        and text[at - 1] != word[0]
        and not (at >= 2 and _HAN.match(text[at - 2]))
    ]
    if siblings and not any(word[:2] in text for text in sources):
        return ScopeMismatch(missing=[word], answer_names=siblings[:2])
    if not thing or any(pair in held or set(pair) & said for pair in thing):
        return None
    return ScopeMismatch(missing=[word], answer_names=[_subject(priced[0]).strip()])


# the words for a price or a cost, which Arabic puts before the thing priced ("كم سعر تقويم الأسنان؟", the price of
# orthodontics), in folded form
_ARABIC_PRICE = re.compile(r"(?:^|\s)(?:سعر|تكلفه|ثمن|رسوم|يكلف|تكلف)\s+(\S+)(?:\s+(\S+))?")


# where a sentence lists things: commas, "and"/"or" in the five Latin-script languages, and Arabic's "و" written onto
# the article of the next ("الخبز العربي والصامولي والكعك")
_LISTED_TERMS = 3  # the most index terms a thing in a list holds ("الخبز العربي", "a bucket of 50 balls")
_LIST_BREAK = re.compile(r"\s*[,،;、]\s*|\s+(?:and|or|und|oder|et|ou|y|o|e)\s+|\s+و(?=ال)")


def _ungendered(term: str) -> str:
    """An index term without the vowel that ends a Spanish, French or Italian noun's gender: "gata" and "gato" (the
    stemmer keeps them apart) are one animal priced."""
    return term[:-1] if len(term) > 3 and term[-1] in "oae" else term


def another_listed(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The thing a question asks the price of, which a source lists beside others while no source's price names it,
    when the answer prices those others: "كم سعر كيس الصامولي؟" (a bag of samouli rolls) over a bakery's "نخبز الخبز
    العربي والصامولي والكعك طازجاً كل صباح." and "سعر ربطة الخبز العربي ريالان، وسعر كيس الكعك بالسمسم خمسة ريالات." was
    answered with the bread's and the ka'ak's prices (exploratory batch 12), "¿Cuánto cuesta esterilizar a un conejo?"
    over a vet's "perros, gatos, conejos y hurones" with the spaying of a cat and a dog (batch 13). Things listed
    together are of a kind, and the price of one is no price of another. A thing no source names is
    `missing_priced`'s; Latin script and Arabic."""
    if asked_value(question) not in _PRICE_ASKED or not _latin_or_arabic(question):
        return None
    priced = [sentence for sentence in answer if holds_value("money", sentence)]
    if not priced:
        return None
    said = {_ungendered(t) for sentence in priced for t in terms(sentence)}
    sentences = [sentence for text in sources for sentence in _SENTENCE_BREAK.split(text)]
    prices = [set(terms(sentence)) for sentence in sentences if holds_value("money", sentence)]
    asked = set(terms(question))
    thing = asked - PRICE_WORDS - _ASKING_FOR - _TIME_TERMS - said
    for term in sorted(t for t in thing if len(t) > 2 and t not in STOPWORDS):
        if any(term in price for price in prices):
            continue  # a source prices it
        for sentence in sentences:
            items = [set(terms(item)) for item in _LIST_BREAK.split(sentence)]
            # a thing listed is a few words ("الصامولي", "Gitarre"), not a clause between commas
            if not any(term in item and len(item) <= _LISTED_TERMS for item in items):
                continue
            # the others listed with it, two or more of which the answer prices by words the question does not hold
            others = [{_ungendered(t) for t in item - asked} for item in items if term not in item]
            if sum(bool(item & said) for item in others) >= 2:
                return ScopeMismatch(missing=[term], answer_names=[_subject(priced[0]).strip()])
    return None


def _missing_arabic_priced(question: str, sources: Sequence[str], priced: Sequence[str]) -> ScopeMismatch | None:
    """`missing_priced` in Arabic: the thing is the word after the word for price, missing when no source holds it
    nor its root, or the two words after it, one naming a thing the sources price and the other its kind, in either
    order ("تقويم الأسنان", orthodontics of the teeth; "باقة المؤسسات", the plan of companies). The second is missing when no source holds the kind nor its root (`_held`, or inside
    a word of theirs: "البوم" in "الألبوم") while they pair the thing with another word: "كم سعر تقويم الأسنان؟" over
    a dental clinic's prices of cleaning and whitening of the teeth was answered "تبييض الأسنان يكلف 1200 ريال.",
    and "كم تكلفة باقة المؤسسات؟" (FAQ ar-11) with the professional plan's price. As `missing_kind` reads a price,
    one other kind is enough."""
    asked = _ARABIC_PRICE.search(normalize(question))
    first = terms(asked.group(1)) if asked else []
    if len(first) != 1:
        return None
    roots = _held_roots(sources)
    folded = normalize(" ".join(sources))

    def held(word: str, term: str) -> bool:
        return _held(term, roots) or word.removeprefix("ال") in folded

    if not asked.group(2):  # one word: the thing itself, which no source holds nor its root ("كم رسوم الأشعة؟", the
        # X-ray's fee, over a clinic that prices only the consultation: "رسوم الكشف 250 جنيهاً.")
        if held(asked.group(1), first[0]):
            return None
        return ScopeMismatch(missing=[asked.group(1).strip(AROUND_WORD)], answer_names=[_subject(priced[0]).strip()])
    second = terms(asked.group(2))
    if len(second) != 1:
        return None

    pairs = {pair for text in sources for pair in word_pairs(text)}
    if held(asked.group(2), second[0]) and not held(asked.group(1), first[0]):
        others = {before for before, after in pairs if after == second[0]} - set(first)
    elif held(asked.group(1), first[0]) and not held(asked.group(2), second[0]):
        others = {after for before, after in pairs if before == first[0]} - set(second)
    else:
        return None
    if not others:
        return None
    return ScopeMismatch(missing=[f"{asked.group(1)} {asked.group(2).strip(AROUND_WORD)}"], answer_names=[_subject(priced[0]).strip()])


# --- the asked number ----------------------------------------------------------------------------------------------

# a number after these asks about a range, not one thing: "What changed after 1945?" is answered "In 1946, ..."; "and"
# or "or" only after a number, or its unit ("between 2 and 3", "2 pm and 5 pm"), not after a thing counted: "two
# adults and three children" counts both
_RANGE_BEFORE = re.compile(
    r"(?:\b(?:before|after|since|until|till|by|over|under|than|within|above|below|beyond|from|to|between|"
    r"avant|apres|depuis|jusqu'?(?:a|au|en)?|entre|vor|nach|seit|bis|uber|unter|zwischen|antes|despues|desde|hasta|mas|menos)"
    r"|\d(?:\s*[^\W\d_]{1,3}\.?)?\s+(?:and|or)|قبل|بعد|منذ|حتى|من|الى|إلى|و|(?<=\d)\s*[-–—])\s*$"
)
# ... and before these, in Chinese and Japanese: "1945年以后", "2000年前"
_RANGE_AFTER = re.compile(r"^\s*\S{0,2}?(?:以[前后後上下内]|之[前后後]|前|后|後|まで|から|以降)")
# a number after these says when or where ("in 2007", "en 2007", "im Jahr 2007", "في عام 2007", "在2007年")
_CIRCUMSTANCE_BEFORE = re.compile(
    r"(?:\b(?:in|on|at|during|en|dans|au|aux|im|am|um|em|no|na|durante|del ano|de l'annee|(?:in|im) jahr[e]?|en el ano)"
    r"|في|في عام|في سنة|عام|سنة|在|于)\s*$"
)
# ... and the first end of one: "aged 10 to 15", "10-15", "de 10 à 15", "10 bis 15", "entre 10 y 15"
_RANGE_TO = re.compile(r"\s*(?:to|and|or|-|–|—|a|bis|y|e|al|au)\s*\d")
# an ordinal, which sources as often write in words: "the 10th series" over "the tenth series"
_ORDINAL = re.compile(r"(?:st|nd|rd|th|er|re|e|eme|o|a|º|ª)\b")


def asked_numbers(text: str, *, ranges: bool = True) -> set[str]:
    """The numbers `text` writes with digits ("What does a 404 mean?": 404); without `ranges`, not those that stand
    as one end of a range ("after 1945", "up to 23 kg", "aged 10 to 15", "1945年以后") nor ordinals ("the 10th
    series"): they name no one thing."""
    return set(numbered(text, ranges=ranges))


def numbered(text: str, *, ranges: bool = True, circumstances: bool = True, before: int | None = None, after: int = 1) -> dict[str, set[str]]:
    """`asked_numbers`, each with the index terms next to it ("error 429 means": {"<error", ">mean"}; `after` terms
    after it: "500 business cards" counts cards); without `circumstances`, not those that say when or where the thing
    asked about is ("the producer of Transformers in 2007"); with `before`, only those that start before that offset
    (a sentence's subject)."""
    folded = normalize(text)
    out: dict[str, set[str]] = {}
    for number, at in numbers_at(folded):
        if before is not None and at.start() >= before:
            break
        if not circumstances and _CIRCUMSTANCE_BEFORE.search(folded[: at.start()]):
            continue
        if ranges or not _ends_range(folded, at):
            label = [f"<{t}" for t in terms(folded[max(0, at.start() - 30) : at.start()])[-1:] if not t[0].isdigit()]
            if _CURRENCY_BEFORE.search(folded[: at.start()]):  # "a £10 admin fee": an amount, whatever word is before it
                label = ["<" + folded[: at.start()].rstrip()[-1]]
            unit = [f">{t}" for t in terms(folded[at.end() : at.end() + 30])[:after] if not t[0].isdigit()]
            out.setdefault(number, set()).update(label + unit)
    return out


_CURRENCY_BEFORE = re.compile(r"[$£€¥₹]\s?$")
IDENTIFIER_DIGITS = 3  # a number this long names one thing (a status code, a year, a model); a shorter one counts


def same_thing(number: str, beside: set[str], other: str, other_beside: set[str], *, by_unit: bool = True) -> bool:
    """Whether two numbers (each with the terms beside it, "<" the one before, ">" the one after: `numbered`) name
    the same kind of thing: both long enough to be identifiers, or a word beside them in common: the label before
    ("step 3" and "Step 5"), or `by_unit` the unit after ("50 GB" and "100 GB"); not "my 8 year old" and "8
    tablets"."""
    if len(number) >= IDENTIFIER_DIGITS and len(other) >= IDENTIFIER_DIGITS:
        return True
    shared = beside & other_beside
    return bool(shared if by_unit else {t for t in shared if t.startswith("<")})


def _ends_range(folded: str, at: re.Match[str]) -> bool:
    """Whether the number `at` stands as one end of a range, or is an ordinal (see `asked_numbers`)."""
    before, after = folded[: at.start()], folded[at.end() :]
    return bool(_RANGE_BEFORE.search(before) or _RANGE_AFTER.search(after) or _RANGE_TO.match(after) or _ORDINAL.match(after))


def holds_asked_number(question: str, text: str, *, circumstances: bool = True) -> bool:
    """Whether `text` holds a number the question asks about as the same thing (`same_thing`, a short one by its
    label, as a quantity's unit is no thing: "10 days of paid sick leave" is no answer to "Can I carry over 10
    days?"): "HTTP 429" for "What does error 429 mean?", not "8 tablets" for "Can I give it to my 8 year old?";
    without `circumstances`, not one that says when or where (see `numbered`)."""
    asked = numbered(question, circumstances=circumstances)
    if not asked:
        return False
    held = numbered(text)
    return any(n in held and same_thing(n, beside, n, held[n], by_unit=False) for n, beside in asked.items())


# a kind named by a number and capitals written as one ("3D", "4K", "5G"); sizes and weights ("10GB", "5KG") are
# amounts a limit holds, no kinds
_NUMBERED_KIND = re.compile(r"(?<![\w.,])\d{1,2}(?P<letters>[A-Z]{1,2})(?![\w.,])")
_AMOUNT_LETTERS = frozenset("B KB MB GB TB KG MG CM MM KM M L ML".split())


def another_numbered_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """A kind the question names by a number and capitals ("4D") that no source holds, where they name others
    written so ("3D"): "有 4D 影厅吗？" (is there a 4D screen?) over a cinema's notes on 3D and IMAX screenings was
    answered "影厅内禁止吸烟……" (no smoking in the screens), a sentence about every screen. Whatever answers, the
    sources say nothing of that kind."""
    held = [m for text in sources for m in _NUMBERED_KIND.finditer(text)]
    for asked in _NUMBERED_KIND.finditer(question):
        letters = asked["letters"]
        if letters in _AMOUNT_LETTERS or any(asked.group() == m.group() for m in held):
            continue
        if others := [m.group() for m in held if m["letters"] == letters]:
            said = [m.group() for sentence in answer for m in _NUMBERED_KIND.finditer(sentence)]
            return ScopeMismatch(missing=[asked.group()], answer_names=said or list(dict.fromkeys(others)))
    return None


def missing_number(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The numbers the question asks about that no source holds, when the answer's subject (its first words, or
    first characters in Chinese and Japanese) holds another of the same kind (`same_thing`): "What does a 404
    mean?" over an API page that explains 401, 403 and 503 was answered "A 401 response means the key is missing or
    invalid." (0.90: every word but the number), an answer about another status. A number written in words in the
    sources is not matched, and the answer must then name another number to be refused; a short number counts as
    held only where a source writes it as the same thing ("$2" holds no "2 TB"). One end of a range names
    no one thing: "What changed after 1945?" may be answered "In 1946, ...", "Is a 20 kg suitcase allowed?" by "Bags
    up to 23 kg are free", and "How many tablets can a 12 year old take?" by "Children aged 10 to 15 years: ..."."""
    if any(fits_quantity(question, sentence) or fits_amount(question, sentence) for sentence in answer):
        return None  # "ein Kind mit 20 kg" is answered by "Kinder ab 16 kg", "a £700 claim" by "Claims over £500"
    asked = numbered(question, ranges=False)
    held = {n for text in sources for n in digit_numbers(text)}
    # a short number is held where a source writes it as the same thing: "$2" holds no "2 TB"
    written = [numbered(text) for text in sources] if any(len(n) < IDENTIFIER_DIGITS for n in asked) else []
    missing = {
        n: beside
        for n, beside in asked.items()
        if n not in held
        or (len(n) < IDENTIFIER_DIGITS and not any(n in w and same_thing(n, beside, n, w[n]) for w in written))
    }
    if not missing:
        return None
    every = asked_numbers(question)
    others = [
        m
        for sentence in answer
        for m, beside in sorted(numbered(_opening(sentence), ranges=False, before=len(_subject(sentence))).items())
        if m not in every and any(same_thing(n, words, m, beside) for n, words in missing.items())
    ]
    return ScopeMismatch(missing=sorted(missing), answer_names=list(dict.fromkeys(others))) if others else None


# an amount of money as written ("£700", "$1,500", "€4.20", "150 euros"), and a bound of one ("over £500", "up to
# $250", "moins de 20 €"), on folded text
# an amount of money: a currency's sign or name beside a number ("£30", "45 euros", "50 ريالا", Arabic's riyals,
# dirhams, dinars, pounds and dollars in any of their forms)
_AMOUNT = (
    r"(?:[$€£¥]\s?(?P<n>\d[\d,]*(?:\.\d+)?)|(?P<m>\d[\d,]*(?:[.,]\d+)?)\s?"
    r"(?:€|(?:euros?|dollars?|pounds?)\b|(?:ريال|درهم|دراهم|دينار|جنيه|دولار)\w*))"
)
_ASKED_AMOUNT = re.compile(_AMOUNT)


def _money(match: re.Match[str]) -> float:
    number = match["n"] or match["m"]
    return float(re.sub(r",(?=\d{3}\b)", "", number).replace(",", "."))


def fits_amount(question: str, text: str) -> bool:
    """Whether a bound of money `text` states holds an amount the question states: "Who approves a £700 claim?" is
    answered by "Claims over £500 need approval from your director." (a sum, not a number no source holds)."""
    asked = [_money(m) for m in _ASKED_AMOUNT.finditer(normalize(question))]
    if not asked:
        return False
    for bound in _MONEY_BOUND.finditer(normalize(text)):
        n, above = _money(bound), bound["word"] in _ABOVE
        if any(a >= n if above else a <= n for a in asked):
            return True
    return False


# --- a weight or an age within a stated range ----------------------------------------------------------------------

# the units a dose is given by, folded: a weight or an age ("30 kg", "8 ans", "a 12 year old", "10 Jahre", "15 años")
_BODY_UNIT = (
    r"(?P<unit>kg|kilos?|kilogram\w*|years?|year-old|ans|jahre[n]?|jahrig\w*|anos|lbs?|pounds|岁|周岁|歳|公斤|千克|"
    r"سنه|سنوات|سنين|عام|اعوام|كغ|كجم|كيلوغرام|كيلو|cm|centimet\w*|厘米|公分|سم|m|metres?|meters?|metros?|米|متر|"
    r"hours?|hrs?|h|heures?|stunden|horas?|小时|時間|ساعه|ساعات|days?|jours?|tag(?:e|en)?|dias?|天|日間|يوم|ايام|"
    r"weeks?|semaines?|wochen|semanas?|周|週間|اسبوع|اسابيع)(?![a-z])"
)
_NUMBER = r"\d{1,3}(?:[.,]\d+)?"
_QUANTITY = re.compile(rf"(?<![\d.,])(?P<n>{_NUMBER})(?:\s*|-)" + _BODY_UNIT)
# a stated range or bound of such a unit: "27 à 50 kg", "10 to 15 years", "de 10 a 15 años", "10-15 Jahre", "10至15公斤",
# "من 6 إلى 12 سنة", "7歳～14歳", "1.2米至1.5米"; "plus de 50 kg", "over 12 years", "unter 40 kg", "ab 12 Jahren", "أكثر من 12
# سنة", "12岁以上", "7歳未満", "超过1.5米"
_RANGE = re.compile(
    rf"(?P<low>{_NUMBER})\s*(?:(?:kg|歳|岁|公斤|米|cm|m)\s*)?(?:a|à|to|-|–|bis|und|y|and|et|al|至|到|~|～|〜|から|الي|حتي)\s*(?P<high>{_NUMBER})\s*"
    + _BODY_UNIT
)
_ABOVE_WORDS = (
    "plus de|more than|over|above|older than|heavier than|taller than|at least|au moins|mindestens|uber|ab|mas de|mayores de|"
    "اكثر من|اكبر من|فوق|大于|超过|高于|no less than|mehr als|alter als|schwerer als"
)
_BOUND = re.compile(
    rf"(?:\b|(?<=\s)|^|(?<=[\u3400-\u9fff]))(?P<word>{_ABOVE_WORDS}|moins de|less than|under|below|younger than|lighter than|shorter than|unter|menos de|"
    rf"menores de|jusqu'a|up to|bis zu|hasta|اقل من|اصغر من|دون|تحت|小于|不满|未满|低于|不足|within|dans les|innerhalb von|weniger als|junger als|leichter als|"
    rf"dentro de|en los|خلال)\s*(?P<n>{_NUMBER})\s*"
    + _BODY_UNIT
)
_BOUND_AFTER = re.compile(rf"(?P<n>{_NUMBER})\s*" + _BODY_UNIT + r"\s*(?:及)?(?P<word>以上|以下|未満|以内)")
_ABOVE = frozenset(_ABOVE_WORDS.split("|")) | {"以上"}
# a deadline before something: "up to 24 hours before arrival", "bis 30 Tage vor Anreise" hold every time that far
# before it or more ("Was kostet eine Stornierung 10 Tage vor Anreise?" was answered "Bis 30 Tage vor Anreise ist
# die Stornierung kostenlos.")
_DEADLINE = re.compile(
    rf"\b(?:up to|until|bis zu|bis|jusqu'a|hasta|no later than)\s*(?P<n>{_NUMBER})\s*{_BODY_UNIT}\s*(?:before|prior to|vor|avant|antes)\b"
)
_MONEY_BOUND = re.compile(
    rf"\b(?P<word>{_ABOVE_WORDS}|less than|under|below|up to|no more than|moins de|jusqu'a|unter|bis zu|weniger als|menos de|"
    rf"hasta)\s*{_AMOUNT}"
)
_WEIGHTS = frozenset("kg kilo kilos lb lbs pounds 公斤 千克 كغ كجم كيلوغرام كيلو".split())
_METRES = frozenset("m metre metres meter meters metro metros 米 متر".split())
_HEIGHTS = _METRES | frozenset("cm 厘米 公分 سم".split())
TALLEST = 3.0  # metres: a larger number of them is a distance, not how tall someone is
# a time before or after something ("开车前3天", "cancel 5 days before arrival"), in hours: days and weeks
_HOURS = {
    **dict.fromkeys("hour hours hr hrs h heure heures stunden hora horas 小时 時間 ساعه ساعات".split(), 1),
    **dict.fromkeys("day days jour jours tag tage tagen dia dias 天 日間 يوم ايام".split(), 24),
    **dict.fromkeys("week weeks semaine semaines wochen semana semanas 周 週間 اسبوع اسابيع".split(), 168),
}


def _unit_kind(unit: str) -> str:
    if unit in _HEIGHTS or unit.startswith("centimet"):
        return "height"
    if unit in _HOURS:
        return "time"
    return "weight" if unit in _WEIGHTS or unit.startswith("kilogram") else "age"


def _amount(number: str, unit: str) -> float | None:
    """The number in the unit its kind is compared in (a height in centimetres, a time in hours), or None for
    metres too many to be a height ("500 m")."""
    value = float(number.replace(",", "."))
    if unit in _METRES:
        return round(value * 100, 3) if value < TALLEST else None
    return value * _HOURS.get(unit, 1)


_UNIT_WORDS = {"weight": "kg", "age": "years", "height": "cm", "time": "hours"}
_SPELT_NUMBER = re.compile(r"\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")(?=[\s-]+" + _BODY_UNIT + ")")
# an age its unit is left out of, after the children, drivers or riders it is said of: "Children under 4 stay free",
# "Children aged 4 to 12 pay €25", "enfants de moins de 6", "Kinder unter 6", "only by drivers over 21"
_PEOPLE_AGED = (
    r"\b(?:children|child|kids|infants|babies|enfants?|kinder|ninos?|ninas?|drivers|riders|climbers|jumpers|players|"
    r"conducteurs|fahrer|conductores)\s+"
)
_NOT_A_UNIT = r"(?!\s*(?:[.,]\d)?\s*(?:(?:kg|cm|m|lbs?|pounds|kilos?)\b|%))\b"  # "under 14 m" is a height; "under 14 must" an age
_AGED_RANGE = re.compile(
    _PEOPLE_AGED + r"(?:aged\s+|ages\s+|de\s+|von\s+|entre\s+)?(?P<low>\d{1,2})\s*(?:to|-|–|a|à|bis|y|and|et)\s*(?P<high>\d{1,2})" + _NOT_A_UNIT
)
_AGED_AND_OVER = re.compile(r"(?:\b(?:aged|ages|age|be)\s+)(?P<n>\d{1,3})\s+(?:and|or)\s+(?:over|older|above|up)\b")
_AGED_BOUND = re.compile(
    _PEOPLE_AGED + r"(?:de\s+)?(?P<word>under|over|below|above|moins de|plus de|unter|uber|ab|bis|menores de|mayores de|de menos de|de mas de)"
    r"\s+(?P<n>\d{1,2})" + _NOT_A_UNIT
)


# German writes an age as one word with its number ("für Zwölfjährige", "meinem vierzehnjährigen Sohn"): up to twenty
_GERMAN_AGES = {normalize(word): str(n) for n, word in enumerate(_COUNT_NAMES["de"].split(), start=1)}
_GERMAN_AGED = re.compile(r"\b(?P<word>" + "|".join(sorted(_GERMAN_AGES, key=len, reverse=True)) + r")(?=jahrig)")


# Chinese and Japanese write an age, a weight or a time in characters as often as in digits ("十三岁", "两岁", "一至十二岁",
# "三岁以下", "十歳"): each number before a unit, or before a range's other end and its unit, as digits
_HAN_QUANTITY = re.compile(
    rf"{_HAN_NUMERAL}(?=\s*(?:(?:至|到|~|～|〜|から)\s*(?:{_HAN_NUMERAL}|\d+)\s*)?(?:周岁|岁|歳|公斤|千克|厘米|公分|小时|時間|天|日間|週間))"
)


def _folded_numbers(text: str) -> str:
    """`text` folded (`normalize`), its numbers written as words before a unit (or in a German age, "zwölfjährig",
    or in Chinese characters, "十三岁") written as digits."""
    folded = _GERMAN_AGED.sub(lambda m: _GERMAN_AGES[m["word"]] + "-", normalize(text))
    folded = _HAN_QUANTITY.sub(lambda m: str(_han_number(m.group())), folded)
    return _SPELT_NUMBER.sub(lambda m: _NUMBER_WORDS[m["word"]], folded)


def asked_quantities(question: str) -> dict[str, float]:
    """The weight, age or height a question states ("pour un enfant de 30 kg": {"weight": 30}, "5岁儿童", "عمره 8
    سنوات", "1.3米的儿童": {"height": 130}); not one that ends a range ("plus de 30 kg", "after 5 years", "12岁以上")."""
    folded = _folded_numbers(question)
    out: dict[str, float] = {}
    for m in _QUANTITY.finditer(folded):
        bounded = _BOUND.search(folded[max(0, m.start() - 20) : m.end()]) or _BOUND_AFTER.match(folded, m.start()) or _RANGE_AFTER.search(folded[m.end() :])
        amount = _amount(m["n"], m["unit"])
        if amount is not None and not _RANGE_BEFORE.search(folded[: m.start()]) and not bounded:
            out.setdefault(_unit_kind(m["unit"]), amount)
    return out


def without_quantities(text: str) -> str:
    """`text` folded, the weights, ages, heights and times it states left out: what it says them of."""
    return _QUANTITY.sub(" ", _folded_numbers(text))


def stated_ranges(text: str) -> dict[str, list[tuple[float, float]]]:
    """The ranges and bounds of weight, age or height `text` states ("27 à 50 kg": {"weight": [(27, 50)]}; "plus de
    50 kg": (50, inf))."""
    folded = _folded_numbers(text)
    out: dict[str, list[tuple[float, float]]] = {}
    for m in _RANGE.finditer(folded):
        low, high = _amount(m["low"], m["unit"]), _amount(m["high"], m["unit"])
        if low is not None and high is not None:
            out.setdefault(_unit_kind(m["unit"]), []).append((low, high))
    deadlines = list(_DEADLINE.finditer(folded))
    for m in deadlines:
        if (n := _amount(m["n"], m["unit"])) is not None:
            out.setdefault(_unit_kind(m["unit"]), []).append((n, float("inf")))
    for m in itertools.chain(_BOUND.finditer(folded), _BOUND_AFTER.finditer(folded)):
        n = _amount(m["n"], m["unit"])
        if n is not None and not any(d.start() <= m.start() < d.end() for d in deadlines):
            out.setdefault(_unit_kind(m["unit"]), []).append((n, float("inf")) if m["word"] in _ABOVE else (0.0, n))
    if "age" not in out:  # "Children under 4 stay free": the children's ages, unit left out
        for m in _AGED_RANGE.finditer(folded):
            out.setdefault("age", []).append((float(m["low"]), float(m["high"])))
        for m in _AGED_AND_OVER.finditer(folded):  # "For pets aged 9 and over"
            out.setdefault("age", []).append((float(m["n"]), float("inf")))
        for m in _AGED_BOUND.finditer(folded):
            n = float(m["n"])
            above = m["word"].removeprefix("de ") in _ABOVE  # "de más de" says what "más de" does
            out.setdefault("age", []).append((n, float("inf")) if above else (0.0, n))
    # one bound each way is one range: "48小时以上、不足8天" (48 to 192 hours), "over 6 and under 12 years"
    for kind, ranges in out.items():
        above = [low for low, high in ranges if high == float("inf")]
        below = [high for low, high in ranges if low == 0.0 and high < float("inf")]
        if len(ranges) == 2 and len(above) == len(below) == 1 and above[0] < below[0]:
            out[kind] = [(above[0], below[0])]
    return out


DOSED = frozenset({"weight", "age"})  # what a dose or a rule is given for; a height or a time says where it applies


def states_quantity_of(question: str, text: str) -> bool:
    """Whether `text` states a weight, age, height or time of a kind the question states one of ("My dog weighs
    30 kg": "... a maximum weight of 25 kg each."), or a range of one (`fits_quantity`: "Children under 4 ..."): a
    rule that speaks to the question's circumstance."""
    asked = asked_quantities(question)
    if not asked:
        return False
    return fits_quantity(question, text) is not None or any(
        _unit_kind(m["unit"]) in asked for m in _QUANTITY.finditer(_folded_numbers(text)) if _amount(m["n"], m["unit"]) is not None
    )


def fits_quantity(question: str, text: str, kinds: frozenset[str] | None = None) -> bool | None:
    """Whether a range `text` states holds the weight, age, height or time the question states (of `kinds`, where
    given): True, False (it states ranges of that unit, none holds it), or None (nothing to compare)."""
    asked = asked_quantities(question)
    if not asked:
        return None
    verdict = None
    ranges = stated_ranges(text)
    for kind, n in asked.items():
        if kind in ranges and (kinds is None or kind in kinds):
            if any(low <= n <= high for low, high in ranges[kind]):
                return True
            verdict = False
    return verdict


def reckons(question: str, answer: Sequence[str]) -> str | None:
    """What an answer's sentences state that answers the question by reckoning, which the reading model does not do,
    said for the trace; None where they state none. An age or a weight the question states that a range of theirs
    holds ("Was zahlt mein zehnjähriger Sohn?" is answered "… Kinder von 8 bis 13 Jahren 18 Euro.", which the reader
    read 0.45), and the days or months of a day or month it asks of (`days.says_when`: "Are you open on Mondays?",
    "We are open Tuesday to Saturday …", read 0.39). The pipeline lets such an answer from under the retrieval floor
    stand."""
    if any(fits_quantity(question, sentence, DOSED) for sentence in answer):
        return "a range of ages or weights that holds the question's"
    if asks_yes_or_no_any_script(question) and any(
        fits_quantity(question, sentence, DOSED) is False for sentence in answer
    ):
        return "a range of ages or weights that leaves out the question's, asked yes or no"
    if any(says_when(question, sentence) for sentence in answer):
        return "which days or months, of a day or month asked"
    return None


def missing_range(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """A weight or an age the question states that no range of the sources holds, when the answer states ranges of
    it: "Quelle est la dose pour un enfant de 15 kg ?" over a paracetamol leaflet that doses "plus de 50 kg" and "27
    à 50 kg" was answered with both, neither for 15 kg. A source whose range holds it, or an answer that states no
    range, is left to the rest. A height or a time out of every range is no such gap: "Cancellations within 48 hours
    are not refunded." answers a cancellation 5 days before, by saying when the rule does not apply; nor is an age
    or a weight a yes-or-no question asks of: "Can I bring my 6-year-old?" is answered "Children must be at least 8
    years old, …" (exploratory batch 11: it was refused)."""
    if asks_yes_or_no_any_script(question):
        return None
    fits = [fits_quantity(question, sentence, DOSED) for sentence in answer]
    if False not in fits or True in fits or any(fits_quantity(question, text, DOSED) for text in sources):
        return None
    asked = ", ".join(f"{n:g} {_UNIT_WORDS[kind]}" for kind, n in asked_quantities(question).items() if kind in DOSED)
    return ScopeMismatch(missing=[asked], answer_names=[_subject(sentence).strip() for sentence, fit in zip(answer, fits, strict=True) if fit is False][:2])


def _opening(sentence: str) -> str:
    """A sentence from its first word: "¿", quotes and brackets that open it dropped."""
    return sentence.strip().lstrip(_OPENING_MARKS)


def _subject(sentence: str) -> str:
    """What a sentence is about: its first `SUBJECT_WORDS` words, or `SUBJECT_LETTERS` characters of Chinese or
    Japanese, as `_opening` writes them (a number's neighbours are read past its end: "Storage: 100 GB")."""
    opening = _opening(sentence)
    if CJK_LETTER.search(opening[:SUBJECT_LETTERS]):
        return opening[:SUBJECT_LETTERS]
    words = re.match(rf"\s*(?:\S+\s+){{0,{SUBJECT_WORDS - 1}}}\S*", opening)
    return words.group() if words else opening


# --- the asked value ------------------------------------------------------------------------------------------------

# A question that asks *what* a contact value is ("What is the phone number of the emergency line?", "Quelle est
# l'adresse e-mail du support ?", "客服电话号码是多少？"): the value is a string of a known shape, and a sentence
# without one ("Enterprise customers can call the emergency line around the clock") is no answer, however many
# words it shares. The asking word must come within a few words before the value's name, so "What happens if I
# change my email address?" and "How do I update my phone number?" ask for no value.
_ASKING_WHAT = r"(?:\bwhat(?!\W+(?:happens|happened|if|about)\b)|\bwhich|\bquel(?:le)?s?|\bcu[aá]l(?:es)?|\bqu[eé]|\bwelche[rsnm]?|\bwie lautet|\bwie ist|ما|ماهو)"
_NEAR = r"(?:\W+\w+){0,4}?\W+"  # up to four words between the asking word and the value's name
_VALUE_NAMES = {
    "phone": r"(?:(?:phone|telephone|hotline|fax|mobile|contact) number|number (?:should|do|can|to|may) (?:i |we |you )?call|number (?:of|for|to call)\b.{0,30}\b(?:line|hotline|desk|support|office)"
    r"|num[eé]ro de (?:t[eé]l[eé]phone|portable|fax)|telefonnummer|rufnummer|n[uú]mero de (?:tel[eé]fono|fax|la l[ií]nea)"
    r"|رقم (?:هاتف|الهاتف|الجوال|التواصل))",
    # "What is the support email?" asks for one too, where nothing follows the word but what it is for
    "email": r"(?:e-?mail address|e-?mail(?=\s*[?？]|\s+(?:for|of|to)\b)|adresse (?:e-?mail|mail|[eé]lectronique)|e-mail-adresse|correo electr[oó]nico|direcci[oó]n de correo"
    r"|البريد الإلكتروني)",
    # "What ratings website ...?" asks for a site's name, not its address: only an address asks for one
    "url": r"(?:\burl\b|web ?site address|web address|adresse (?:du site|web)|direcci[oó]n web|webadresse|عنوان الموقع)",
}
VALUE_WORDS = {"phone": "a phone number", "email": "an e-mail address", "url": "a web address", "money": "an amount of money", "frequency": "a frequency", "duration": "a length of time", "length": "a length of time or distance", "charge": "whether it is paid for", "amount": "an amount", "count": "how many there are", "place": "the name of a place or language"}
_ASKED_VALUE = {kind: re.compile(_ASKING_WHAT + _NEAR + name, re.IGNORECASE) for kind, name in _VALUE_NAMES.items()}
_ASKED_VALUE_CJK = {  # no spaces: the value's name, then what is asked ("客服电话号码是多少？")
    "phone": re.compile("(?:电话号码|电话|热线号码|联系电话)(?:是多少|是什么|多少)"),
    "email": re.compile("(?:邮箱|电子邮件|邮件地址)(?:地址)?(?:是多少|是什么|是哪个)"),
    "url": re.compile("(?:网址|网站地址)(?:是多少|是什么|是哪个)"),
}
_VALUE_SHAPES = {
    "phone": re.compile(r"\+?\(?\d[\d ().\-/]{5,}\d"),
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "url": re.compile(r"https?://\S+|\bwww\.\S+|\b[\w-]+\.(?:com|org|net|io|co|app|dev|de|fr|es|uk|eu)\b", re.IGNORECASE),
}


# A question that asks what something costs or pays ("How much does express shipping cost?", "Quelle prime reçoit
# l'ingénieur d'astreinte ?", "Wie hoch ist die Zulage für Rufbereitschaft?", "值班有多少补贴？"; not "How much paid
# leave …?", which asks how long) is answered by an amount of money, or by "free"; "Express shipping arrives the next
# business day" and "The on-call engineer must acknowledge a page within 15 minutes" are no answer to it. Read on folded text (accents and Arabic letter forms).
_ASKED_MONEY = re.compile(
    r"\bhow much\b(?:\s+[\w'-]+){0,6}?\s+(?:cost|costs|pay|paid(?!\s+(?:leave|holidays?|vacations?|time off|sick|days?|weeks?|hours?|breaks?)\b)|charge|charged|price|fee|fees|earn|earns|earned|spend|spent|"
    r"salary|reimburs\w*)\b|\bhow much (?:extra )?(?:pay|money)\b|\bhow expensive\b|"
    r"\bwhat (?:does|do|did|will|would) (?:[\w'-]+ ){1,5}?cost\b|"
    r"\bwhat (?:is|are|was|were) the (?:\w+ )?(?:price|cost|fee|fees|salary|bonus|budget|stipend)\b|"
    r"\bcombien (?:coute\w*|paie|paye|gagne|facture)\b|\bcombien d'argent\b|\bquelle prime\b|"
    r"\bquel(?:le)? est (?:le|la) (?:prix|tarif|montant|cout|prime|salaire|indemnite|budget)\b|"
    r"\bwas kost(?:et|en|e)\b|\bwie teuer\b|\bwie viel (?:kostet|kosten|bezahl\w*|zahl\w*|verdien\w*|geld)\b|"
    r"\bwie hoch (?:ist|sind) (?:die|der|das) (?:\w+ )?(?:zulage|preis|gebuhr\w*|pramie|gehalt|kosten|pauschale|vergutung)\b|"
    r"\bcuanto (?:cuesta|cuestan|pago|pagan|se paga|se cobra|cobra\w*|gana\w*|vale\w*|dinero)\b|"
    r"\bcual es el (?:precio|coste|costo|importe|salario|presupuesto)\b|"
    r"كم سعر|كم تكلفه|كم ثمن|كم يكلف|كم تكلف|كم بدل|كم راتب|كم رسوم|ما سعر|ما تكلفه|ما رسوم|ما هو سعر|ما هي تكلفه|من بدل|"
    r"多少钱|什么价|价格是多少|费用是多少|多少费用|多少补贴|补贴多少|工资多少|多付多少|怎么收费|如何收费|收费标准|"
    r"いくら(?!か(?:[^か]|$)|でも|占)"
)
# A question that asks whether a thing is paid for ("Is parking free?", "Do I have to pay for the router?", "Les sorties
# scolaires sont-elles payantes ?", "¿Hay que pagar la cuna?", "Ist das WLAN kostenlos?", "补卡要钱吗？", "無料ですか",
# "هل الكشف مجاني؟") is answered by an amount, by what costs nothing, or by a sentence on paying or being included;
# "卡片丢失后请立即拨打客服电话95555挂失。" (call to report a lost card) is no answer to whether a new card costs money.
# Read on folded text.
_ASKED_CHARGE = re.compile(
    r"^\W*(?:is|are) (?:\w+ ){1,5}?free\b(?=\s*(?:\?|$|of charge|on|at|in|during|with|if|when|for|to (?!\w+ \w+ \w+)))|"
    r"\b(?:is (?:it|this|that) free|"
    r"(?:do|will|would|must|should) (?:i|we|you) (?:have to |need to )?pay\b|is there (?:a|any) (?:charge|fee|cost)\b|"
    r"(?:does|will) (?:it|this|that) cost (?:anything|extra|money|more)\b|(?:do|does) (?:you|they) charge\b|"
    r"est-ce (?:payant|gratuit)|(?:est|sont)-(?:il|elle|ils|elles) (?:payant|gratuit)e?s?\b|c'est (?:payant|gratuit)|"
    r"(?:faut-il|dois-je|doit-on) payer\b|(?:es|son) (?:gratis|gratuit[oa]s?)\b|(?:hay|tengo) que pagar\b|se paga\b|"
    r"(?:kostet|kosten) (?:das|es|sie) (?:etwas|extra)\b|(?:ist|sind) (?:\w+ ){1,5}?(?:kostenlos|kostenpflichtig|gratis)\b|"
    r"muss ich (?:\w+ ){0,5}?(?:be)?zahlen\b|"
    # whether it is included: "Is breakfast included?", "Le ménage est-il inclus ?", "¿Está incluido el desayuno?"
    r"(?:is|are) (?:\w+ ){1,5}?included\b(?=\s*(?:\?|$|in the (?:price|rate|fee|cost)))|"
    r"(?:est|sont)-(?:il|elle|ils|elles) (?:inclus|compris)e?s?\b|(?:esta|estan) incluid[oa]s?\b|"
    r"(?:ist|sind) (?:\w+ ){1,5}?(?:inbegriffen|inklusive)\b(?=\s*(?:\?|$)))|"
    r"要钱|收费吗|免费吗|要收费|要付费|花钱|無料ですか|有料ですか|(?:お金|料金)(?:は|が)かかり|هل [^؟?]{0,40}مجان|هل (?:هناك|توجد|يوجد) رسوم"
)
# ... and what says a thing is paid for or included, beside an amount or what costs nothing
_CHARGE_SAID = re.compile(r"\b(?:includ\w*|inclus\w*|compris|incluid\w*|incluy\w*|inbegriffen|enthalten|factur\w*|payant\w*|kostenpflichtig)\b|包含|包括|含まれ|شامل")

# what says a thing costs nothing, on folded text: an answer to its price ("How much is the car park?": "The car park is
# free for visitors.", which the reader reads as no price, p < 0.05)
_FREE = r"\bfree\b|\bgratuit\w*|\bkostenlos\w*|\bgratis\b|\bno charge\b|\bsans frais\b|\bsin coste\b|مجان|免\w{0,2}费|不收费|無料"
_COSTS_NOTHING = re.compile(_FREE)
# an amount (a currency's sign or name, or a sum too large to be anything else), or what costs nothing
_MONEY = re.compile(
    r"[$€£¥₹]|\b(?:usd|eur|gbp|chf|dkk|sek|dollars?|euros?|pounds?|cents?|pence|yen|yuan|francs?|riyals?|dirhams?|"
    r"rupees?|pesos?|sterling|lira|lire|pfund|kronen?|coronas?|couronnes?|đong|marks?|guineas?|shillings?|"
    r"millions?|milliards?|billions?|millones|millonen)\b|\b\d{1,2}p\b|\bnothing\b|\brien\b|\bnichts\b|\bnada\b|[%٪]\s*off\b|"
    r"دولار|يورو|ريال|درهم|دراهم|جنيه|دينار|دنانير|ليره|元|块钱|美元|欧元|英镑|日元|円|ドル|ユーロ|ポンド|ウォン|ルピー|フラン|" + _FREE
)


def says_free(text: str) -> bool:
    """Whether `text` says something costs nothing (read folded)."""
    return bool(_COSTS_NOTHING.search(normalize(text)))


# a number labelled as a price, as a table's row writes one ("price: 2.40", "Preis: 12,50")
_PRICED = re.compile(r"\b(?:price|cost|fee|amount|prix|cout|tarif|montant|preis|kosten|betrag|precio|coste|importe)\w*\s*[:=]\s*\d")
# a share is one of money in a sentence that says what is paid ("covered at 60% by the employer", "a credit of 10%
# of the monthly fee"); "We commit to 99.99% monthly uptime for the Business plan" is no price of that plan
_SHARE = re.compile(r"[%٪]|\bper ?cent\b|\bpour ?cent\b|\bprozent\b|\bpor ?ciento\b|بالمئه|بالمائه")
_PAID = re.compile(
    r"\b(?:fees?|prices?|costs?|due|pa(?:y|ys|id|yment|yable)|charge[sd]?|cover(?:s|ed)?|reimburs\w*|refund\w*|discount\w*|"
    r"rebate|salar(?:y|ies)|bonus\w*|premiums?|tax\w*|vat|interest|commissions?|credits?|deposits?|rent|fares?|tuition|"
    r"subsid\w*|allowances?|surcharges?|penalt\w*|fines?|wages?|pensions?|contribut\w*|"
    r"frais|prix|cout\w*|tarif\w*|paie\w*|paye\w*|paiement|rembours\w*|remise|reduction|prise? en charge|salaire|primes?|"
    r"taxes?|tva|interets?|cotisation\w*|loyer|amendes?|indemnit\w*|majoration|"
    r"gebuhr\w*|preis\w*|kosten\w*|fallig|zahl\w*|bezahl\w*|erstatt\w*|rabatt\w*|nachlass|gehalt|pramie|steuer\w*|zins\w*|"
    r"beitrag\w*|miete|zuschlag|ubernimmt|ubernommen|vergutung|zulage|"
    r"precios?|costes?|costos?|tarifas?|pag(?:o|a|an|ado|ada)s?|cobr\w*|reembols\w*|descuentos?|rebaja|salario|prima|"
    r"impuestos?|iva|interes(?:es)?|cuotas?|alquiler|recargo|multas?|subvencion\w*)\b|"
    r"رسوم|سعر|تكلف|خصم|فائد|يدفع|تدفع|دفع|بدل|راتب|ضريب|قسط|استرداد|عمول|"
    r"费|价|折|利息|报销|补贴|工资|税|佣金|退款|押金|租金|罚|料金|料が|料は|料を|費|価格|割引|金利|返金|手数料|給"
)

# a time of day ("10:30", "9h00"), and a time of day a sentence states ("7am", "10:30", "19 Uhr", "18h", "noon");
# read on folded text. Chinese and Japanese write a time against their letters ("周一至周五8:00至17:00"), which a
# word boundary does not part from it
CLOCK = re.compile(r"(?<![0-9A-Za-z])\d{1,2}[:h]\d{2}(?![0-9A-Za-z])")
CLOCK_SAID = re.compile(
    rf"\b\d{{1,2}}(?:[:.h]\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.|uhr|h)\b|{CLOCK.pattern}|\b(?:noon|midnight|midi|minuit|"
    r"mittag|mitternacht|mediodia|medianoche)\b|[0-9一二三四五六七八九十]+[点時]"
)
# hours a sentence states: a time of day ("7am", "19 Uhr", "10:30"), or all of them ("24 hours a day", "24/7",
# "around the clock"); folded
HOURS_SAID = re.compile(
    rf"{CLOCK_SAID.pattern}|\b\d{{1,2}}\.\d{{2}}\b|\b24\s*(?:/\s*7|hours?|h|heures|stunden|horas)\b|around the clock|rund um die uhr|jour et nuit"
)

# A question that asks how often ("How often can I take ibuprofen?", "Wie oft darf ich ...?", "À quelle fréquence",
# "Tous les combien ...?", "¿Cada cuánto ...?", "كم مرة في", "كل كم يوما", "多久(独自旅行)一次", "何回"; not how many times something
# happened), and the words that state a frequency ("every 6 hours", "alle 6 bis 8 Stunden", "toutes les", "twice a day",
# "cada ocho horas", "كل", "每", "毎"); read on folded text.
ASKED_FREQUENCY = re.compile(
    r"\b(?:how often|how many times (?:a|per|each)|how frequently|a quelle frequence|combien de fois par|"
    r"tous les combien|wie oft|wie haufig|in welchen abstanden|cada cuanto|con que frecuencia|cuantas veces (?:al|por))\b|"
    r"كم مره في|كل كم|(?:多久|多长时间)[^？?，,。]{0,8}?一次|"
    r"[日週月年]に?何回|どのくらいの頻度|どれくらいの頻度"
)
_EVERY_UNIT = r"(?:\d+|[a-z]+)(?:\s*(?:to|or|bis|oder|a|ou|y|o|-|–)\s*(?:\d+|[a-z]+))? (?:minutes?|hours?|days?|weeks?|months?|years?|heures|jours|semaines|mois|ans|minuten|stunden|tage[n]?|wochen|monate[n]?|jahre[n]?|minutos|horas|dias|semanas|meses|anos)"
FREQUENCY_SAID = re.compile(
    rf"\b(?:(?:every|each|toutes les|tous les|chaque|alle|jede[nrs]?|cada) (?:{_EVERY_UNIT}|day|week|month|year|hour|minute|morning|"
    r"evening|night|other|jour|semaine|annee|matin|soir|tag|woche|monat|jahr|stunde|dia|semana|mes|ano|hora)|once|twice|"
    r"einmal|zweimal|dreimal|viermal|funfmal|\d+ ?-?mal|"
    r"times (?:a|per|each)|per (?:day|week|month|year|hour)|daily|weekly|monthly|yearly|annually|hourly|fois par|"
    r"par (?:jour|semaine|mois|an)|taglich|wochentlich|monatlich|jahrlich|mal (?:am|pro|im|in der)|"
    r"pro (?:tag|woche|monat|jahr)|veces (?:al|por)|al (?:dia|mes|ano)|por (?:dia|semana|mes|ano)|diari\w*|semanal\w*|"
    r"mensual\w*|anual\w*)\b|كل (?:\d|\S+ (?:ساعات|ايام|اسابيع|اشهر)|يوم|اسبوع|شهر|سنه|ساعه)|مرات|مرتين|مره في|يوميا|"
    r"اسبوعيا|شهريا|每|毎|[0-9一二三四五六七八九十]+回"
)
# how often in a word, a share of cases, each time a thing happens: no frequency to put first (a rule "always" holds
# is no dose "every 6 hours"), but an answer to how often ("In about 20% of cases, further surgery is required.", "sur
# une base horaire", "Elle organisait souvent des réunions", "很少", "月2刊")
_HOW_OFTEN_WORDS = re.compile(
    r"\b(?:often|rarely|seldom|frequently|regularly|occasionally|sometimes|usually|always|whenever|each time|every time|"
    r"souvent|rarement|frequemment|regulierement|parfois|toujours|chaque fois|horaire|quotidien\w*|hebdomadaire\w*|"
    r"mensuel\w*|annuel\w*|oft|selten|haufig|regelmassig|manchmal|immer|jedes mal|a menudo|frecuentemente|"
    r"raramente|regularmente|a veces|siempre|cada vez|(?:a|an) (?:day|week|month|year))\b|[%٪] of (?:cases|patients)|"
    r"[0-9一二三四五六七八九十]+刊|很少|经常|常常|偶尔|总是|从不|有时|通常|時々|ときどき|たまに|めったに|いつも|"
    r"غالبا|نادرا|احيانا|دائما"
)

# A question that asks how long a thing takes or lasts ("How long does shipping take?", "Combien de temps dure une
# consultation ?", "Quelle est la durée de la garantie ?", "Wie lange dauert ...?", "¿Cuánto tarda ...?", "多长时间",
# "كم يستغرق"), and the words that state a length of time: a unit of time (`TIME_UNIT`; German compounds too:
# "Werktagen"), a span of years ("1756 to 1763"), since a year, until when ("until the end of the current
# Parliament"), at once ("immediately"), all of a span ("durant tout leur cycle de vie"); read on folded text.
# "How long is the warranty?" asks a length of time, "How long is the river?" one of distance, as "How long did John
# pass south?" (345 miles) and "How long do you keep my order history?" may: either answers them (`ASKED_LENGTH`),
# and "Out-of-warranty repairs cost a flat fee of 49 EUR" neither.
ASKED_DURATION = re.compile(
    r"\b(?:how long (?:does|do|did|will|would|should|can|could)\b[^?]*\b(?:take|takes|last|lasts)|"
    r"how long (?:until|till|before)|how soon|combien de temps|"
    r"quelle (?:est|sera|etait) la duree|wie lange|cuanto tiempo|cuanto (?:tarda|dura|demora)\w*|"
    r"cual (?:es|sera|era) la duracion|what is the duration)\b|多长时间|多久|كم يستغرق|كم تستغرق|كم مده|どのくらいの期間|何日間|何時間"
)
# open for business, not opening a thing ("How long does it take to open an account?")
_OPEN = re.compile(r"(?<!\bto )\bopen\b(?!\s+(?:a|an|the|my|your|our|it)\b)|\b(?:geoffnet|offen|ouverts?|ouvertes?|abiert[oa]s?)\b|営業|开门|开放|مفتوح")
ASKED_LENGTH = re.compile(
    r"\b(?:how long (?:is|are|was|were|do|does|did|will|would|should|can|could|must|may|has|have|had)|wie lang (?:ist|sind|war|waren))\b"
)
_DISTANCE_SAID = re.compile(
    r"\d\s*(?:km|m|cm|mm|ft|mi)\b|\b(?:kilomet\w*|met(?:er|re)s?|metros?|miles?|millas?|meilen|feet|foot|inch\w*|"
    r"yards?|pulgadas?|pouces?|pieds?|lang|long|longs?|largo|length|longueur|lange|longitud|"
    # a text's length: "How long must my password be?" is answered "… a password of at least 12 characters."
    r"characters?|chars|digits?|letters?|words?|pages?|caracteres?|chiffres?|lettres?|mots?|zeichen|stellen|ziffern|"
    r"buchstaben|worter|seiten|digitos?|letras?|palabras?|paginas?)\b|米|公里|英里|メートル|キロ|كم|متر|ميل|文字|字符|桁|احرف|حروف|خانات"
)
# the units of time (folded), in English, French, German and Spanish
TIME_UNIT = (
    r"(?:seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|secondes?|heures?|jours?|nuits?|semaines?|mois|"
    r"ans|annees?|sekunden|minuten|stunden|tage[n]?|nachte|wochen|monate[n]?|jahre[n]?|segundos?|minutos?|horas?|"
    r"dias?|noches?|semanas?|meses|anos?)"
)
_DURATION_SAID = re.compile(
    rf"\b(?:{TIME_UNIT}|decades?|centur(?:y|ies)|millenni\w*|lifetime|decennies?|siecles?|millenaires?|(?:un|\d+) an|"
    r"\w*(?:sekunden?|minuten?|stunden?|tag|tage|tagen|nachte?|wochen?|monat|monate|monaten|jahr|jahre|jahren|"
    r"jahrzehnt\w*|jahrhundert\w*)|mes|decadas?|siglos?|milenios?|"
    r"overnight|immediately|instantly|right away|immediatement|sofort|inmediatamente|"
    r"(?:until|till|since|jusqu'?(?:en|a|au)?|depuis|bis|seit|hasta|desde)\s+(?:\w+\s+){0,4}?\d{3,4}s?|until|till|"
    r"(?:durant|pendant) (?:tout|toute|tous|toutes)|throughout|around the clock|"
    r"jusqu'?(?:a|au|en)|bis (?:zum|zur|ende)|hasta (?:el|la|que|fin))\b|"
    r"\b1\d{3}\s*(?:-|–|to|and|a|et|bis|y|und)\s*(?:1\d{3}|20\d{2}|\d{2})\b|"
    r"[0-9一二三四五六七八九十两几数多半百千万亿]+\s*个?整?(?:工作|营业|自然|営業)?(?:分钟|小时|天|日|周|星期|个?月|年|秒|時間|日間|週間|か月|ヶ月|年間|分|世纪|世紀)|"
    r"整天|全天|终日|終日|一日中|"  # all day: "可玩一整天" says how long a ticket lasts
    # the day after, the same day: how long delivery takes ("加急配送次日送达", as "arrives the next day" says)
    r"立即|马上|当天|即日|次日|隔日|翌日|当日|明天|明日|دقيق|ساع|يوم|ايام|اسبوع|اسابيع|شهر|اشهر|سنه|سنوات|عام|اعوام"
)

# German names its weekdays, holidays and times of day as compounds of "Tag" ("Sonntag", "Feiertagen", "nachmittags"):
# a day, not a length of time ("Von Mittwoch bis Sonntag spielen wir von 12 bis 23 Uhr." says no game's length), as
# "Werktagen" in "in 3 Werktagen" is (folded)
_GERMAN_DAY = re.compile(
    r"\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag|feiertag|wochentag|geburtstag|"
    r"vormittag|nachmittag|mittag)(?:e|en|es|s)?\b"
)

# Arabic says which day and what time with its words for day and hour ("يومي الثلاثاء والخميس بين الساعة 10:00", on
# Tuesdays and Thursdays between 10:00 and 16:00; "ساعات العمل", opening hours): when, not how long (folded)
_ARABIC_WHEN = re.compile(r"\b(?:يوم|يومي|ايام)\s+(?:ال)?(?:سبت|احد|اثنين|ثلاثاء|اربعاء|خميس|جمعه)|الساعه\s*\d|ساعات (?:ال)?(?:عمل|دوام)")

# the values a sentence either holds or not, by their shape alone: the one that holds it answers a question asking
# for it (`extractive.asked_value_first`), and one that lacks it is no answer (an amount may be another thing's)
CONTACT_VALUES = frozenset({"phone", "email", "url"})


# "How much is a game?" asks a price as often as not, and "How much is the dose?" a quantity: an amount either way
_HOW_MUCH_IS = re.compile(r"\bhow much (?:is|are)\b")
# A question that asks how many of a thing there are ("How many drills happen per year?", "Combien d'élèves y a-t-il
# par cours ?", "¿Cuántos monitores hay?", "Wie viele Räume gibt es?"), read on folded text, with the three words after
# it (how many of a unit of time, or how many times, is no count of things: "How many days do I have to return an
# item?" is answered "within 30 days", "How many paid holiday days ...?" "at least 4 weeks")
_ASKED_COUNT = re.compile(r"\b(?:how many|combien d(?:e\s+|')|cuant[oa]s|wie viele)(?P<things>(?:\W{0,2}[^\W\d_]+){1,3})")
_TIME_WORD = re.compile(rf"^(?:{TIME_UNIT}|\w*(?:tag|tage|tagen|jahr|jahre|monat|monate|woche|wochen|nacht|nachte|stunde|stunden|minute|sekunde))$")  # "Urlaubstage"
_TIMES_WORD = frozenset("times fois veces mal male".split())
_LETTERS = re.compile(r"[^\W\d_]+")
# a number said of a measure, which counts no thing: a length of time, money, a distance or weight, a clock time or a
# size ("42 seconds", "£12", "5 km", "8 am", "14:00", "240 x 260"), read after it on folded text; a share counts ("How
# many people in Michigan live in the Upper Peninsula?": "just 3% of its total population")
_MEASURED_AFTER = re.compile(
    rf"(?:[.,]\d+)?\s*(?:{TIME_UNIT}\b|\w*(?:sekunden|minuten|stunden|tage|tagen|wochen|monaten?|jahren?)\b|"
    r"(?:am|pm|a\.m|p\.m|h|uhr|heures?)\b|:\d|x\s*\d|euros?\b|eur\b|dollars?\b|usd\b|pounds?\b|gbp\b|libras?\b|"
    r"kg\b|km\b|cm\b|mm\b|m\b|m2\b|miles?\b|kilo\w*|met(?:er|re|ro)s?\b)"
)
_SIZE_BEFORE = re.compile(r"\d\s*x\s*$")  # the second side of a size
# how many in words, on folded text: one ("We have one screen."), none, several, dozens, a number past twenty
# ("quarante espèces rares"), a share ("un tercio")
_COUNT_SAID = re.compile(
    r"\b(?:one|a single|none|several|a few|dozens?|hundreds?|thousands?|millions?|billions?|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety|hundred|thousand|un seul|une seule|aucune?|plusieurs|quelques|(?:dizaine|douzaine|vingtaine|"
    r"trentaine|quarantaine|cinquantaine|centaine)s?|milliers?|milliards?|trente|quarante|cinquante|soixante|cent|mille|"
    r"uno|un solo|una sola|ninguno|ninguna|varios|varias|algun[oa]s|decenas|docenas?|cientos|centenares|miles de|millon|"
    r"millones|treinta|cuarenta|cincuenta|sesenta|cien|ciento|mil|tercio|mitad|keine?r?|mehrere|einige|dutzend\w*|"
    r"hundert\w*|tausend\w*|millionen|dreissig|vierzig|funfzig|sechzig|einzige\w*|"
    r"unlimited|no limit|illimitee?s?|sans limite|ilimitad[oa]s?|sin limite|unbegrenzt\w*|unbeschrankt\w*|"  # "includes unlimited seats"
    r"(?:neuf|sept) (?!septembre)[^\W\d_]{3,})\b"  # before a noun, "neuf" and "sept" count ("neuf enfants"), as `_COUNT_WORDS` cannot read them
)
_HYPHEN_IN_WORD = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")  # "a ten-horsepower engine", "dix-sept"


def holds_count(text: str) -> bool:
    """Whether `text` says how many of a thing: a number not said of a measure (`_MEASURED_AFTER`) nor of money, nor
    a year, or how many in words (`_COUNT_SAID`): "We have four screens.", "up to six players", "several lakes",
    "81% of Americans"; not "completed in 42 seconds" nor "costs £18"."""
    folded = normalize(_counts_in_digits(_HYPHEN_IN_WORD.sub(" ", text)))
    for number, at in numbers_at(folded):
        before = folded[: at.start()]
        if _CURRENCY_BEFORE.search(before) or _SIZE_BEFORE.search(before) or _MEASURED_AFTER.match(folded, at.end()):
            continue
        if len(number) == 4 and number[:2] in ("19", "20"):  # a year says when
            continue
        return True
    return bool(_COUNT_SAID.search(folded))


# What a question counts units of time of: "How many sick days …?", "How many days of sick leave …?", "Combien de
# jours de RTT …?", "¿Cuántos días de permiso …?", "Wie viele Krankheitstage …?" (folded; German's compound read by
# its first part). Words that say how the days are counted or paid ("business", "ouvrables", "Werk-") are no kind.
_UNIT_KIND_BEFORE = re.compile(r"\bhow many (?P<said>(?P<kind>(?:[a-z][\w'-]* ){1,2}?)(?:" + TIME_UNIT + r"))\b")
_UNIT_KIND_AFTER = re.compile(
    r"\b(?:how many |combien de |combien d'|cuant[oa]s |wie viele )(?P<said>(?:" + TIME_UNIT + r") (?:of|de|d'|del|an) "
    r"(?:(?:paid|payes?|retribuid[oa]s) )?(?P<kind>[^\W\d_][\w-]*))"
)
_UNIT_KIND_COMPOUND = re.compile(r"\bwie viele (?P<said>(?P<kind>[^\W\d_]{3,}?)s?(?:tage|stunden|wochen|monate|jahre|nachte))\b")
_COUNTING_WORDS = frozenset(
    "business working calendar consecutive week school paid full extra additional whole total more ouvrables ouvres "
    "calendaires payes consecutifs laborables habiles naturales retribuidos seguidos werk arbeits kalender".split()
)


def unit_of_unnamed_kind(question: str, sources: Sequence[str], answer: Sequence[str]) -> ScopeMismatch | None:
    """The kind of a unit of time a question counts, when no source names it and the answer states a length of
    time: "How many vacation days do I get?" over the shop's policies was answered "Standard shipping takes 3 to 5
    business days", "How many sick days do employees get per year?" over a vacation policy with its vacation days,
    "¿Cuántos días de permiso hay por mudanza?" with "23 días laborables de vacaciones". The days are another
    thing's. `missing_kind` reads no word right after "how many" (that is the thing counted, "How many people …?"),
    and a kind of days is one. English, French, Spanish and German."""
    if _NOT_LATIN.search(question) or not any(holds_value("duration", sentence) for sentence in answer):
        return None
    folded = normalize(question)
    found = _UNIT_KIND_BEFORE.search(folded) or _UNIT_KIND_AFTER.search(folded) or _UNIT_KIND_COMPOUND.search(folded)
    if not found:
        return None
    kind = [w for w in found["kind"].split() if w not in STOPWORDS and w not in _COUNTING_WORDS and not w.isdigit()]
    known = source_vocabulary(sources)
    if kind and not any(known.mentions([word]) for word in kind):
        return ScopeMismatch(missing=[found["said"]], answer_names=[])  # "vacation days", "dias de permiso"
    return None


# A question asking which region, country, city, continent or language ("What region is the standby?", "Which
# countries do you ship to?") is answered by a name: a capitalised word past the sentence's first that names no day
# or month ("Ireland", "the Dutch Republic", "Afrikaans"), an acronym ("EU"), or a cloud region's code ("eu-west-1").
# English only: French and Spanish write languages in lower case
_ASKED_PLACE = re.compile(r"\b(?:what|which) (?:regions?|countr(?:y|ies)|cit(?:y|ies)|continents?|languages?)\b", re.IGNORECASE)
_REGION_CODE = re.compile(r"\b[a-z]{2}-[a-z]+-\d\b")
_CAPITALISED = re.compile(r"(?<=\s)[A-Z][\w'’.-]*")


def holds_place_name(text: str) -> bool:
    """Whether `text` names a place or language (`_ASKED_PLACE`): "The standby runs in Frankfurt." does, "During the
    March drill, the failover cutover from the primary region to the standby region completed in 42 seconds." not."""
    if _REGION_CODE.search(text):
        return True
    words = [m.group() for m in _CAPITALISED.finditer(text)]
    return any(not months_named(word) and not days_named(word) and not (word.isupper() and len(word) == 1) for word in words)


def asked_value(question: str) -> str | None:
    """The kind of value a question asks for ("phone", "email", "url", "frequency", "duration", "length", "money",
    "amount", "charge", "count", "place"), or None."""
    for kind, pattern in _ASKED_VALUE.items():
        if pattern.search(question) or _ASKED_VALUE_CJK[kind].search(question):
            return kind
    folded = normalize(question)
    if ASKED_FREQUENCY.search(folded):
        return "frequency"
    how_long = "duration" if ASKED_DURATION.search(folded) else "length" if ASKED_LENGTH.search(folded) else None
    if how_long:  # but "How long are you open on Saturdays?" asks the hours, which say from when until when
        return None if _OPEN.search(folded) else how_long
    if _ASKED_MONEY.search(folded):
        return "money"
    if _HOW_MUCH_IS.search(folded):
        return "amount"
    if _ASKED_PLACE.search(question):
        return "place"
    if count := _ASKED_COUNT.search(folded):
        things = _LETTERS.findall(count["things"])  # "homeoffice-tage": "homeoffice", "tage"
        # how many days or times is left to the answer models: a length of time as often as a count of days
        return None if things[0] in _TIMES_WORD or any(_TIME_WORD.match(t) for t in things) else "count"
    return "charge" if _ASKED_CHARGE.search(folded) else None


# a number written onto the letters before it names a size or a code, no amount: "We print posters up to A0 size"
# holds no price of a poster
_CODE = re.compile(r"\b[^\W\d_]+\d+\b")


def holds_value(kind: str, text: str) -> bool:
    """Whether `text` holds a value of that shape: a phone number has seven digits or more."""
    if kind == "duration":  # "cada seis meses" is how often, no length of time: "¿Cuánto tarda una limpieza?"
        return bool(_DURATION_SAID.search(_GERMAN_DAY.sub(" ", _ARABIC_WHEN.sub(" ", FREQUENCY_SAID.sub(" ", normalize(text))))))
    if kind == "length":
        return holds_value("duration", text) or bool(_DISTANCE_SAID.search(normalize(text)))
    if kind == "frequency":
        folded = normalize(text)
        return bool(FREQUENCY_SAID.search(folded) or _HOW_OFTEN_WORDS.search(folded))
    if kind == "charge":
        folded = normalize(text)
        return holds_value("money", text) or bool(_PAID.search(folded) or _CHARGE_SAID.search(folded))
    if kind == "count":
        return holds_count(text)
    if kind == "place":
        return holds_place_name(text)
    if kind == "amount":  # a number of anything, or that it costs nothing: "Grip socks are free."
        return bool(numbers(_CODE.sub(" ", text))) or holds_value("charge", text)
    if kind == "money":
        folded = normalize(text).replace("_", " ")  # a table's column "price_eur"
        return bool(_MONEY.search(folded) or _PRICED.search(folded) or (_SHARE.search(folded) and _PAID.search(folded)))
    return any(kind != "phone" or sum(c.isdigit() for c in m.group()) >= 7 for m in _VALUE_SHAPES[kind].finditer(text))


def missing_value(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> str | None:
    """The kind of value the question asks for (a contact value, an amount, how often, how long), when the sentences
    an extractive answer quotes hold none (nor the headings they stand under), or only sentences about another kind
    of the thing asked about (`other_kind`): "How much does standard shipping cost?" answered "Standard shipping
    takes 3 to 5 business days. Express shipping arrives the next day and costs $6." gives the price of express
    shipping. None when it asks for none or the answer holds one."""
    kind = asked_value(question)
    if kind is None:
        return None
    sentences, headings = quoted_sentences(passages, quoted)
    holders = [t for t in sentences + headings if holds_value(kind, t)]
    # the sentence keeping the asked kind may be one the answer does not quote: "How much does standard shipping
    # cost?" was answered with express shipping's price, standard shipping's rule standing in another passage
    rivals = list(dict.fromkeys(sentences + [sentence for p in passages for sentence in stated_sentences(p)])) if holders else []
    about_another = all(any(other_kind(question, held, rival) for rival in rivals if rival != held) for held in holders)
    if kind == "money" and holders and not about_another:
        about_another = _priced_apart(question, passages, quoted)
    return None if holders and not about_another else kind


def _priced_apart(question: str, passages: Sequence[Passage], quoted: dict[int, list[CharSpan]]) -> bool:
    """Whether the sentence of an answer that names most of what a price question asks about (the question's words
    the sources hold, but the words for price and asking) holds no amount, and every amount it quotes stands in a
    sentence naming less of it, under its heading, that does not follow that one: "Was kostet das Frühstück?"
    answered "Im Café können Sie frühstücken; das Frühstück wird bis 11 Uhr serviert. Eine Geburtstagstorte für 12
    Personen kostet 38 Euro." gives the breakfast's hours and a cake's price. A sentence that follows it may say
    the price with a pronoun ("The course runs for 8 weeks. It costs £80."), and one that speaks of the price without
    an amount may answer ("企画展の料金は展覧会ごとに異なります。", it varies). Words count by their first four letters
    ("lavar" is named by "Un lavado"); short Latin ones ("en", "la") name nothing."""
    # by their first letters, as the words are compared below: the index's English stemmer ends "Kinderkurs" and
    # "Kinderkurse" apart ("kinderkur", "kinderkurs")
    known = {t[:_PRICED_PREFIX] for text in source_texts(passages) for t in terms(text)}
    asked = [t for t in terms(question) if t[:_PRICED_PREFIX] in known and t not in PRICE_WORDS and t not in _ASKING_FOR]
    thing = {t[:_PRICED_PREFIX] for t in asked if len(t) >= 3 or not t.isascii()}
    quotes = [(passages[n - 1], span.start, span.end) for n, spans in quoted.items() for span in spans]

    def naming(quote: tuple[Passage, int, int]) -> int:
        passage, start, end = quote
        return len(thing & {t[:_PRICED_PREFIX] for t in terms(f"{heading_over(passage, start)} {passage.text[start:end]}")})

    priced = [q for q in quotes if holds_value("money", q[0].text[q[1] : q[2]])]
    unpriced = [q for q in quotes if q not in priced and not _PAID.search(normalize(q[0].text[q[1] : q[2]]))]
    if not thing or not priced or not unpriced:
        return False
    named = max(unpriced, key=naming)
    if naming(named) <= max(naming(q) for q in priced):
        return False
    following = min((start for start, _ in named[0].sentence_offsets() if start >= named[2]), default=None)
    return not any(q[0] is named[0] and q[1] == following and _price_of_previous(q[0].text[q[1] : q[2]]) for q in priced)


# a sentence that says the price of the one before it points back to it within its first words ("It costs £80.", "As
# part of this merger, … would have received $5 million"), or opens with a word for price or an amount ("Tarif : 80
# euros", "£60 for a couple"); one with a thing of its own ("普通门诊挂号费为二十元", the ordinary consultation's fee, after
# "夜间急诊需提前电话联系", night emergencies) prices that
_POINTS_BACK = re.compile(
    r"(?:^|\W)(?:it|its|they|their|this|that|these|those|il|elle|ils|elles|ce|cet|cette|ces|cela|ca|es|er|sie|dies|diese|"
    r"dieser|dieses|ello|esto|eso|este|esta|estos|estas|ese|esa|هو|هي|ذلك|هذا|هذه)(?!\w)|它|这|该|其|此|この|その|これ|それ"
)
_OPENS_WITH_PRICE = re.compile(
    r"\W*(?:(?:(?:the|le|la|el|der|die|das)\s+)?(?:price|prices|cost|costs|fee|fees|prix|tarif|tarifs|cout|precio|precios|"
    r"coste|tarifa|preis|preise|kosten|gebuhr|السعر|التكلفه|الرسوم)(?!\w)|[$£€¥]|\d|价格|费用|收费|料金|価格)"
)
POINTING_WORDS = 5  # the words of a sentence's opening that may point back to the one before it


def _price_of_previous(sentence: str) -> bool:
    """Whether a sentence says the price of the one before it (see `_POINTS_BACK`)."""
    folded = normalize(sentence)
    opening = " ".join(folded.split()[:POINTING_WORDS]) if not CJK_LETTER.search(folded[:4]) else folded[:SUBJECT_LETTERS]
    return bool(_OPENS_WITH_PRICE.match(folded) or _POINTS_BACK.search(opening))


_PRICED_PREFIX = 4


def scope_notes(detail: dict) -> list[str]:
    """What a synthesiser's scope checks found (its draft's `detail`), said for the trace's notes."""
    notes = []
    for key, asks in (("named_scope", "names"), ("missing_kind", "asks about")):  # `ScopeMismatch`es
        if mismatch := detail.get(key):
            about = f"is about {', '.join(mismatch['answer_names'])}" if mismatch["answer_names"] else "says nothing of it"
            notes.append(
                f"the question {asks} {', '.join(mismatch['missing'])}, which no passage mentions; the closest sentence {about}, "
                "so it is no answer"
            )
    if swap := detail.get("other_named_kind"):
        notes.append(
            f"the question asks about the {swap['missing'][0]}, and the closest sentence says it of the "
            f"{swap['answer_names'][0]} instead, so it is no answer"
        )
    if elsewhere := detail.get("said_elsewhere"):
        notes.append(
            f"the question asks about {elsewhere['missing'][0]}, and the closest sentence says nothing of it while another "
            "sentence of the sources does, of something else, so it is no answer"
        )
    if detail.get("decided_by") == "languages":
        pair = detail["languages"]
        notes.append(
            f"the closest sentence is in {pair['passage']} and the question in {pair['question']}: without the reading "
            "model (SOURCERER_READER=on) an answer across languages is refused, as the sentence models read words"
        )
    if detail.get("decided_by") == "reader veto":
        notes.append(
            f"the reading model reads the closest sentence as no answer to the question ({detail['answer_read']:.3f}, under "
            f"its veto bar {detail['veto']:.3f}; SOURCERER_READER_VETO)"
        )
    if value := detail.get("missing_value"):
        notes.append(
            f"the question asks for {VALUE_WORDS[value]}, and the closest sentences hold none (or only one said of another "
            "kind of what it asks about), so they are no answer"
        )
    return notes


def _title_case(text: str) -> bool:
    """More than half the words of three letters or more after the first capitalised ("Shipping FAQ" too), in a
    heading that asks nothing (a question is written as a sentence: "Livrez-vous en Belgique ?" names Belgique)."""
    if text.rstrip().endswith(("?", "？", "؟")):
        return False
    longer = [w for w in _WORD.findall(text)[1:] if len(w) >= 3]  # "in", "of", "to" stay small in Title Case
    return 2 * sum(1 for w in longer if w[0].isupper()) > len(longer) > 0


def heading_over(passage: Passage, start: int) -> str:
    """The heading the sentence at `start` stands under: the text an indexed chunk opens with before its first
    sentence (`store.chunking`), or the last heading, title or question before it in the passage."""
    over = passage.heading
    for s, e in passage.sentence_offsets():
        if s >= start:
            break
        if states_nothing(passage.text, s, e):
            over = passage.text[s:e]
    return over


def source_vocabulary(sources: Sequence[str]) -> _Vocabulary:
    """The `_Vocabulary` of `sources`, built once for all the checks that read one answer's passages (each took a
    millisecond to build it again)."""
    return _vocabulary_of(tuple(sources))


@lru_cache(maxsize=16)
def _vocabulary_of(sources: tuple[str, ...]) -> _Vocabulary:
    return _Vocabulary(sources)


ACRONYM_LETTERS = 6  # the longest acronym read from words written in lower case ("ICU", "SSO"; not a sentence's initials)


class _Vocabulary:
    """The words of the sources, as `scope_mismatch` looks names up in them."""

    def __init__(self, sources: Sequence[str]) -> None:
        split = [_WORD.findall(text) for text in sources]
        # a word in Latin letters inside another script's text is a word of its own: "DVD" in "DVDは一人2点まで"
        self.words = {w for words in split for w in words}
        self.words |= {w for text in sources if _OTHER_SCRIPT.search(text) for run in latin_runs(text) for w in run}
        # "acme-refunds.md" names Acme: a hyphenated word's parts count too
        self.families = {_family(part) for w in self.words for part in {w, *re.split(r"[-‐]", w)} if part}
        self.folded = {_POSSESSIVE.sub("", w.casefold()) for w in self.words if len(w) >= 4}
        # the words written as names (capitalised; every word of a text written without capitals, a file name), and
        # for each word the sources write in lower case, the words that follow it there ("business" -> {"day"})
        self.named: set[str] = set()
        self.followed_by: dict[str, set[str]] = {}
        for text, words in zip(sources, split, strict=True):
            uncased = text == text.lower()
            self.named.update(_family(w) for w in words if uncased or w[0].isupper())
            for word, after in itertools.pairwise(words if not uncased else ()):
                if word[0].islower():
                    self.followed_by.setdefault(_family(word), set()).add(_family(after))
        self._split = split
        # for each word the sources write in lower case after a name, the names they write before it: "fares" ->
        # {("economy", "light"), ("economy", "classic"), ("business",)}
        self.names_before: dict[str, set[tuple[str, ...]]] = {}
        for words in split:
            i = 0
            while i < len(words):
                j = i
                while j < len(words) and words[j][0].isupper():
                    j += 1
                # a capitalised article opens a sentence, not a name, as a heading before it does: "Plans The
                # Starter plan costs..." names the Starter plan
                name = list(itertools.takewhile(lambda w: w.casefold() not in STOPWORDS, reversed(words[i:j])))[::-1]
                if name and j < len(words) and words[j].casefold() not in STOPWORDS:
                    self.names_before.setdefault(_family(words[j]), set()).add(tuple(_family(w) for w in name))
                i = j + 1
        self._sources = sources

    @cached_property
    def acronyms(self) -> set[str]:
        """The initials of the sources' runs of capitalised words ("UMC"), and of their words written in lower case,
        three or more, stopwords not among them: "ICU" is the "intensive care unit", "SSO" "single sign-on". Read
        only for a question that writes a word in capitals."""
        runs = [run for words in self._split for run in _runs(words, lambda i, w: w[0].isupper())]
        runs += [run for words in self._split for run in _names_through_small_words(words)]
        acronyms = {"".join(w[0] for w in run[i:j]) for run in runs for i in range(len(run)) for j in range(i + 2, len(run) + 1)}
        for run in (run for words in self._split for run in _runs(words, lambda i, w: w.casefold() not in STOPWORDS)):
            initials = "".join(_initials(w) for w in run).upper()
            acronyms.update(initials[i:j] for i in range(len(initials)) for j in range(i + 3, min(i + ACRONYM_LETTERS, len(initials)) + 1))
        return acronyms

    @cached_property
    def names_after(self) -> dict[str, set[tuple[str, ...]]]:
        """The names the sources write after a word in lower case, in the languages that name a kind after the
        thing: "carte" -> {("classic",), ("premier",)}; within a sentence, whose first word is capitalised for no
        name."""
        names_after: dict[str, set[tuple[str, ...]]] = {}
        for text in self._sources:
            for sentence in _SENTENCE_BREAK.split(text):
                words = _WORD.findall(sentence)
                for i, word in enumerate(words[:-1]):
                    if not words[i + 1][0].isupper() or not word[0].islower() or word.casefold() in STOPWORDS:
                        continue
                    j = i + 1
                    while j < len(words) and words[j][0].isupper():
                        j += 1
                    names_after.setdefault(_family(word), set()).add(tuple(_family(w) for w in words[i + 1 : j]))
        return names_after

    def mentions(self, run: list[str], after: str | None = None) -> bool:
        """Whether the sources mention the name `run`, which the question writes before the word `after`."""
        if self._another_compound(run, after) or self._another_named_kind(run, after):
            return False
        if any(self._knows(word) for word in run):
            return True
        # "United States" written "US" or "USA" (its initials, or them and one more letter, in capitals)
        initials = "".join(w[0] for w in run)
        return len(run) > 1 and any(w.isupper() and w.startswith(initials) and len(w) <= len(initials) + 1 for w in self.words)

    def _knows(self, word: str) -> bool:
        """Whether the sources hold `word`: its family, its acronym, a word one letter apart (a misspelling), or each
        part of a hyphenated one ("Moon-Earth" where they write "the Earth and the Moon"). A misspelling keeps its
        first letter: "cours" is no "jours" ("Proposez-vous des cours de ski ?" over a ski hire open "tous les jours"
        was answered with its insurance)."""
        if _family(word) in self.families or (word.isupper() and word in self.acronyms):
            return True
        # an English plural in "-ies", which a family of five letters parts from its "-y" ("party", "parties")
        plural = word[:-1] + "ies" if word.endswith("y") else word[:-3] + "y" if word.endswith("ies") else None
        if plural is not None and _family(plural) in self.families:
            return True
        parts = [p for p in word.split("-") if p]
        if len(parts) > 1 and all(self._knows(p) for p in parts):
            return True
        folded = _POSSESSIVE.sub("", word.casefold())
        return len(word) >= FAMILY_LETTERS and any(w[0] == folded[0] and _one_edit(folded, w) for w in self.folded)

    def _another_named_kind(self, run: list[str], after: str | None) -> bool:
        """"Premium Economy fares" over sources that name their fares "Economy Light", "Economy Classic" and
        "Business": they name kinds of the thing, none is the question's, and a word of it ("Premium") is in no
        source. One word in common ("Economy") does not make it one of theirs. One kind named is enough where the
        name shares no word with it: "the Energiprojekt AB engine" over articles whose only named engine is the
        "Steam engine" (held-out XQuAD en; counted twice, as "The steam" and "Steam", before a capitalised article
        was dropped from a name); "Manda Bootis star" over "Lambda Boötis star" is more likely that one misspelt."""
        named = self.names_before.get(_family(after), set()) if after is not None else set()
        asked = tuple(_family(w) for w in run)
        if len(named) == 1 and {normalize(w) for w in asked} & {normalize(w) for w in next(iter(named))}:
            return False
        return bool(named) and asked not in named and not all(self._knows(w) for w in run)

    def _another_compound(self, run: list[str], after: str | None) -> bool:
        """"The Business plan" over sources whose only "business" is the common word of "next business day", while
        they do speak of plans: the name is another compound than the sources' word, and they do not mention it. A
        question capitalising a term the sources write in lower case ("the Cydippids", "the National Anthem") has no
        such word after it, or one the sources never use, and stays mentioned."""
        last = _family(run[-1])
        if after is None or any(_family(w) in self.named for w in run) or last not in self.followed_by:
            return False  # "Papaver Rhoeas flower" over "Papaver rhoeas": a word of it is written as a name
        return _family(after) in self.families and _family(after) not in self.followed_by[last]


def _names_through_small_words(words: list[str]) -> list[list[str]]:
    """The capitalised words of names that hold a small word between two of them: a name's initials leave it out
    ("Intergovernmental Panel on Climate Change" is IPCC, "Organisation des Nations Unies" ONU)."""

    def inside_name(i: int, word: str) -> bool:
        between = 0 < i < len(words) - 1 and words[i - 1][0].isupper() and words[i + 1][0].isupper()
        return word[0].isupper() or (between and word.casefold() in STOPWORDS)

    return [[w for w in run if w[0].isupper()] for run in _runs(words, inside_name) if any(not w[0].isupper() for w in run)]


def _initials(word: str) -> str:
    """The first letter of a word, of each part of a hyphenated one ("sign-on": "so")."""
    return "".join(part[0] for part in re.split(r"[-‐]", word) if part) if "-" in word or "‐" in word else word[0]


@lru_cache(maxsize=65536)  # the same words come back in every answer's passages: a quarter of a vocabulary's build
def _family(word: str) -> str:  # accents folded: "Devi" is "Devī", "My Son" is "Mỹ Sơn"
    # an acronym's plural is the acronym: "How long can I keep a DVD?" over "DVDs for one week" names the DVD
    return family(_POSSESSIVE.sub("", normalize(_ACRONYM_PLURAL.sub(r"\1", word))).strip("'’-"))


_ACRONYM_PLURAL = re.compile(r"^(\w*[A-Z]{2,})s$")


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` are one insertion, deletion, substitution or swap of neighbours apart (or equal)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    return a[i + 1 :] == b[i + 1 :] or swapped
