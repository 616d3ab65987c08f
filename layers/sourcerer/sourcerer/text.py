"""One Unicode-aware tokenizer for every lexical comparison in Sourcerer.

The keyword retriever, the SQLite and OpenSearch indexes, the extractive synthesiser and the local judge all
see text through `terms()`, so a word matches the same way everywhere:

* NFKC, then casefold (full-width forms, ligatures and case disappear);
* Latin accent folding (``café`` -> ``cafe``): combining marks U+0300–U+036F are dropped after NFD;
* Arabic: alef forms (أ إ آ ٱ) -> ا, alef maqsura ى -> ي, teh marbuta ة -> ه, harakat and tatweel removed,
  then Light10 light stemming (`arabic_stem`: و, the article and common suffixes), since Arabic glues them on;
* CJK (Han, kana, Hangul): overlapping character bigrams, since those scripts do not separate words;
* Thai, Lao, Khmer and Myanmar runs: character bigrams, for the same reason;
* everything else: words (letters and digits, decimals kept whole), English stopwords removed, a light
  English stemmer (plurals, -ing, -ed, -ly) applied to ASCII words.

Why it is long: every script's rules and the stemmers are one job, the terms every index and model compares;
split, two callers could tokenise one text two ways.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# Bumped whenever the terms of some text change; indexes store terms, so a new version re-tokenises what it
# changed (see `RETOKENIZE`): 2 added Arabic light stemming, 3 the nouns in -ancy and -ency ("pregnant"), 4 the
# silent e of a short stem after -ing or -ed ("vaping" is "vape").
TOKENIZER_VERSION = 4
# For each version, the texts whose terms it changed (an index re-tokenises only chunks that match).
RETOKENIZE = {
    2: re.compile("[\u0600-\u06ff]"),
    3: re.compile(r"(?i)[a-z]{3}(?:anc|enc)(?:y|ies)\b"),
    4: re.compile(r"(?i)\b[b-df-hj-np-tv-z][aeiou][b-df-hj-np-tvz](?:ing|ed)\b"),
}

# --- normalisation ----------------------------------------------------------------------------------

_ARABIC_MAP = str.maketrans(
    {
        "أ": "ا",
        "إ": "ا",
        "آ": "ا",
        "ٱ": "ا",
        "ى": "ي",
        "ة": "ه",
        "ـ": None,  # tatweel
    }
)
_ARABIC_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]")
_LATIN_MARKS = re.compile("[\u0300-\u036f]")
# marks that set the direction of text or a break, and show nothing: "\u200fمن ساعد ...؟" (a right-to-left mark, as
# text copied from a right-to-left page opens) read "من" as no asking word. The joiners a word is spelt with (Persian
# ZWNJ, U+200C, U+200D) stay.
_FORMAT_MARKS = re.compile("[\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c\ufeff]")


def normalize(text: str) -> str:
    """Fold text for matching: NFKC, casefold, direction marks, Latin accents and Arabic letter variants."""
    if text.isascii():  # nothing but case to fold: a word of a name is read this way for each answer's passages
        return text.casefold()
    text = _FORMAT_MARKS.sub("", unicodedata.normalize("NFKC", text).casefold())
    text = _ARABIC_DIACRITICS.sub("", text).translate(_ARABIC_MAP)
    decomposed = unicodedata.normalize("NFD", text)
    if decomposed != text:
        text = unicodedata.normalize("NFC", _LATIN_MARKS.sub("", decomposed))
    return text


# --- scripts ----------------------------------------------------------------------------------------

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # han
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"  # hangul
    "\u31f0-\u31ff\uff66-\uff9f"
)
CJK_LETTER = re.compile(f"[{_CJK}]")  # a letter of a script written without spaces between words
HIRAGANA = re.compile("[\u3040-\u309f]")  # a Japanese verb's ending or a particle, no word of a thing
_SEA = "\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f"  # thai, lao, khmer, myanmar
_TOKEN = re.compile(
    rf"(?P<cjk>[{_CJK}]+)|(?P<sea>[{_SEA}]+)|(?P<num>\d+(?:[.,:]\d+)*)|(?P<word>[^\W\d_{_CJK}{_SEA}]+(?:['’][^\W\d_]+)?)"
)


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


# --- English stopwords and stemming -----------------------------------------------------------------

STOPWORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves also may
might must shall s t can't don't won't isn't aren't wasn't weren't doesn't didn't hasn't haven't hadn't
there's it's what's let's i'm you're we're they're i've you've we've they've i'd you'd he'd she'd we'd
they'd i'll you'll he'll she'll we'll they'll whose yes etc via per
""".split()
    # French, German, Spanish, Portuguese and Italian function and question words, accents folded. Words that
    # are also English or scientific tokens are left out: "die", "son", "war", "plus", "dove", "il" (IL-6),
    # "er" and "es" (ER, ES cells), "nos" (NOS), "sem", "c" and "d" (vitamins).
    + """
le la les un une des du de au aux et ou est sont ce cet cette ces qui que quoi quel quelle quels quelles
quand comment combien pour sur dans avec sans elle ils elles nous vous je on ne leur leurs y qu est-ce
der das dem den des ein eine einer eines einem einen und oder ist sind wird werden wie wer wo wann warum
welche welcher welches fur mit von zu im beim bei auf aus nach uber unter ich du sie wir ihr nicht
kein keine gibt muss mussen kann konnen soll darf viel viele vielen
el los las lo una unos unas y o fue ser como cual cuales cuando donde quien quienes cuanto cuanta
cuantos cuantas para por del al su sus que le les puede debe hay puedo pueden tiene tienen tengo
um uma e ou sao qual quais quando onde quem quanto quanta para por com do da dos das na nas ao seu sua pode deve
lo gli uno sono quale quali quando quanto senza della dei delle nel nella
""".split()
    # common Arabic function words, in normalised form (alef and teh marbuta folded)
    + "في من علي الي عن ما ماذا هي هو هل التي الذي الذين ان او ثم قد كان كانت لا لم لن مع هذا هذه ذلك تلك كل بين عند".split()
)
# Definite articles (folded) in the languages the answer models read in Latin script: "the tenant", "los sábados"
DEFINITE_ARTICLES = frozenset("the le la les l el los las der die das den dem des il lo gli".split())
# The words that say what a thing is against, and with them what or whom it is for (folded): "le vaccin contre la
# varicelle", "the dose for children"; a follow-up says one for another ("Et pour la grippe ?" after "... contre le
# pneumocoque ?")
AGAINST_WORDS = frozenset("against contre gegen contra".split())
FOR_WORDS = frozenset("for pour fur para".split()) | AGAINST_WORDS
# Words whose meaning flips a claim; kept out of the stopword list where it matters (see `NEGATIONS`).
NEGATIONS = frozenset(
    "no not never none nobody nothing neither nor without cannot can't don't doesn't didn't isn't aren't "
    "wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't n't".split()
)


# Common derivational endings, folded before the inflectional ones (only on long words, keeping a stem of at least
# four letters): "regulation"/"regulate", "activity"/"active", "effectively"/"effective", "pregnancy"/"pregnant"
# ("Can I take it while pregnant?" shared no word with "Cetirizine is not recommended during pregnancy.").
_DERIVATIONAL = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("nesses", ""),
    ("ness", ""),
    ("ments", ""),
    ("ment", ""),
    ("ities", ""),
    ("ity", ""),
    ("ively", ""),
    ("ive", ""),
    ("ically", "ic"),
    ("ical", "ic"),
    ("fully", ""),
    ("ful", ""),
    ("ously", ""),
    ("ous", ""),
    ("ences", "ent"),
    ("ence", "ent"),
    ("ances", "ant"),
    ("ance", "ant"),
    ("ancies", "ant"),
    ("ancy", "ant"),
    ("encies", "ent"),
    ("ency", "ent"),
    ("izes", "ize"),
    ("ized", "ize"),
    ("izing", "ize"),
)
_NOT_DERIVED = frozenset({"currency", "currencies"})  # an ending above would make them another word: "current"


# Light10 (Larkey, Ballesteros and Connell, "Light Stemming for Arabic Information Retrieval", 2007), on normalised
# text (teh marbuta is ه there, so ية and ة are يه and ه); the article, alone or with a preposition on it ("بال", "لل")
ARABIC_ARTICLES = ("وال", "بال", "كال", "فال", "لل", "ال")
_AR_SUFFIXES = ("ها", "ان", "ات", "ون", "ين", "يه", "ه", "ي")


def arabic_stem(word: str) -> str:
    """Light10: drop a leading و when three letters remain, then one definite article when two remain, then
    each suffix of the list in order when two remain. "والمكتبات" and "مكتبه" both become "مكتب"."""
    if word.startswith("و") and len(word) >= 4:
        word = word[1:]
    for article in ARABIC_ARTICLES:
        if word.startswith(article) and len(word) - len(article) >= 2:
            word = word[len(article) :]
            break
    for suffix in _AR_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)]
    return word


# a stem of consonant, vowel, consonant (not w, x, y) lost its silent e to -ing or -ed, as Porter's stemmer restores
# it: "vaping", "vaped" and "vape" are one word ("Can I vape in my room?" shared none with "Smoking and vaping are not
# allowed anywhere in the building."), "named" and "name" too; "hopping" is "hop"
_SHORT_STEM = re.compile("[b-df-hj-np-tv-z][aeiou][b-df-hj-np-tvz]")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light, deterministic stemmer: for English, common derivational endings, plural, -ing, -ed and -ly; for
    Arabic, `arabic_stem`.

    It is deliberately conservative: it only has to map related forms of one word together, the same way for
    questions and passages. Other non-ASCII words are returned unchanged. Remembered: words repeat, and
    stemming was the largest cost of a keyword-only ingest.
    """
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if word and "\u0620" <= word[0] <= "\u064a":
        return arabic_stem(word)
    if not word.isascii() or len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if len(w) > 6 and w not in _NOT_DERIVED:
        for suffix, replacement in _DERIVATIONAL:
            if w.endswith(suffix) and len(w) - len(suffix) >= 4:
                w = w[: -len(suffix)] + replacement
                break
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
        elif _SHORT_STEM.fullmatch(w):
            w += "e"
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]
        elif w.endswith("i"):
            w = w[:-1] + "y"
        elif _SHORT_STEM.fullmatch(w):
            w += "e"
    elif w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


# --- tokens -----------------------------------------------------------------------------------------


ELISION = re.compile(r"^(?:l|d|j|n|s|c|m|t|qu|dell|all|nell|sull)'(?=\w)")  # "l'", "d'", "qu'" before a word


# On text that is ASCII after folding (most English), the same tokens as `_TOKEN` from ASCII classes: no
# script can match but digits and a-z (casefolded), and the pattern runs three times faster. `terms` keeps a
# loop per pattern: one loop unpacking either pattern's groups was a third slower.
_ASCII_TOKEN = re.compile(r"([0-9]+(?:[.,:][0-9]+)*)|([a-z]+(?:'[a-z]+)?)")


def terms(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """The index terms of `text` in order (see the module docstring for the rules). Ingest's hot loop: groups,
    not match objects, and words through a plain dict."""
    folded = normalize(text)
    words = _WORD_TERMS[keep_stopwords]
    out: list[str] = []
    if folded.isascii():
        for num, word in _ASCII_TOKEN.findall(folded):
            if word:
                term = words.get(word)  # one lookup: another thread may clear the dict at any moment
                if term is None:
                    term = _word_term(word, keep_stopwords)
                if term:
                    out.append(term)
            else:
                out.append(num.replace(",", "") if _THOUSANDS.fullmatch(num) else num)
        return out
    for cjk, sea, num, word in _TOKEN.findall(folded):
        if word:
            term = words.get(word)
            if term is None:
                term = _word_term(word, keep_stopwords)
            if term:
                out.append(term)
        elif num:
            out.append(num.replace(",", "") if _THOUSANDS.fullmatch(num) else num)
        else:
            out.extend(_bigrams(cjk or sea))
    return out


def as_written(wanted: Iterable[str], text: str) -> str:
    """Index terms as `text` writes them, for a message: "international" for "internat" in "And international?". A
    term no word of `text` gives (a Chinese character pair) stays as it is."""
    written: dict[str, str] = {}
    for word in re.findall(r"[^\W_][\w'’-]*", text):
        if len(found := terms(closed(word))) == 1:  # a run of Chinese gives several pairs: none is the run
            written.setdefault(found[0], word)
    return " ".join(written.get(term, term) for term in wanted)


_HYPHEN_INSIDE = re.compile(r"(?<=[^\W_])-(?=[^\W_])")


def closed(text: str) -> str:
    """`text` with its hyphenated words written closed ("e-books" -> "ebooks", "same-day" -> "sameday"). The index
    terms of a hyphenated word are its parts, less a letter or a stopword ("e", "same"): "What about e-books?"
    after a question on books asked of books, and "And same-day delivery?" of the days express shipping takes."""
    return _HYPHEN_INSIDE.sub("", text)


def focus_terms(text: str) -> set[str]:
    """The terms a follow-up's focus (`history.Rewrite.focus`, hyphenated words written `closed`) is looked for in:
    the index terms of `text` and those of its hyphenated words written closed."""
    found = set(passage_terms(text))
    return found | set(terms(closed(text))) if "-" in text else found


_THOUSANDS = re.compile(r"\d{1,3}(,\d{3})+")
# A word's term ("" for a stopword), by whether stopwords are kept: remembered, since words repeat across a
# corpus. Bounded: cleared when full, as a huge multilingual corpus would otherwise grow it without end.
_WORD_TERMS: dict[bool, dict[str, str]] = {False: {}, True: {}}
_WORD_TERMS_MAX = 200_000


def _word_term(token: str, keep_stopwords: bool) -> str:
    """A word's index term, or "" for a stopword, remembered in `_WORD_TERMS`."""
    word = token.replace("’", "'")
    if "'" in word:  # French and Italian l', d', qu'...: "d'essai" -> "essai"
        word = ELISION.sub("", word)
    term = "" if not keep_stopwords and word in STOPWORDS else stem(word)
    remembered = _WORD_TERMS[keep_stopwords]
    if len(remembered) >= _WORD_TERMS_MAX:
        remembered.clear()
    remembered[token] = term
    return term


@lru_cache(maxsize=8192)
def passage_terms(text: str) -> tuple[str, ...]:
    """`terms(text)`, remembered: passages and their sentences come back on every question asked over them
    (a fixed FAQ list handed to `ask()`), and tokenising them is most of a warm answer's time."""
    return tuple(terms(text))


# the first letters that tell a word's family past its endings: "Californian" and "California", "child" and
# "children", "Japan" and "Japanese" (named scope, and a table row's cells against the question)
FAMILY_LETTERS = 5


def family(word: str) -> str:
    return word[:FAMILY_LETTERS]


# what a comparative or superlative adds to its adjective ("long" -> "longer", "late" -> "latest", "big" ->
# "bigger", "early" -> "earlier", "lang" -> "länger"): the stemmer keeps them apart
_COMPARATIVE_ENDINGS = ("er", "est", "r", "st")


def _comparatives(term: str) -> set[str]:
    bases = {term, term + term[-1:]} | ({term[:-1] + "i"} if term.endswith("y") else set())
    return {base + ending for base in bases for ending in _COMPARATIVE_ENDINGS}


def names_all(wanted: Iterable[str], available: Iterable[str]) -> bool:
    """Whether a text whose index terms are `available` names every one of `wanted` (`names`): a follow-up's focus."""
    have = set(available)
    return all(names(term, have) for term in wanted)


def names(term: str, available: Iterable[str]) -> bool:
    """Whether a text whose index terms are `available` names `term`: the term itself or its comparative ("flights
    longer than six hours" names long). Stricter than a family: "internal" does not name "international"."""
    have = set(available)
    return term in have or bool(_comparatives(term) & have)


# --- facts a claim must not invent ------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "once": "1",
    "twice": "2",
    "half": "0.5",
    "dozen": "12",
}


def numbers(text: str) -> set[str]:
    """Numbers in `text`, as canonical strings (digits with thousands separators removed, number words)."""
    found = digit_numbers(text)
    for w in re.findall(r"[a-z]+", normalize(text)):
        if w in _NUMBER_WORDS:
            found.add(_NUMBER_WORDS[w])
    return found


def digit_numbers(text: str) -> set[str]:
    """Only the numbers written with digits (number words are too ambiguous to demand)."""
    return {number for number, _ in numbers_at(normalize(text))}


def _ascii_digits(token: str) -> str:
    """Every script's decimal digits (Arabic-Indic, Persian, Devanagari ...) as the same number in ASCII digits: "٤٠٤"
    is 404 ("الخطأ 404" is as often written), "२०१०" is 2010."""
    return token if token.isascii() else "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in token)


def numbers_at(folded: str) -> list[tuple[str, re.Match[str]]]:
    """Each number written with digits in `folded` (`normalize`d) text, as `digit_numbers` writes it ("1,500" is
    1500, "٤٠٤" is 404), with where it stands."""
    out = []
    for m in _NUMBER.finditer(folded):
        token = _ascii_digits(m.group())
        if _THOUSANDS.fullmatch(token):
            token = token.replace(",", "")
        out.append((token.rstrip(".,"), m))
    return out

