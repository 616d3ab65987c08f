"""Whether a question is asked in another language than the passage that would answer it.

The reading model reads such a pair less surely than one in a single language: on held-out MLQA, at the one
operating point, it answered the same-article paragraphs that lack the answer two to three times as often when
question and paragraph differ in language (`bench/reader_crosslingual.py`), so those answers are held to their
own, stricter operating point. The local judge reads the same for a claim against its source: its claim models
compare words, so a claim in another language than its source is one it cannot check, and says so.

The language is py3langid's (a naive Bayes over byte n-grams, its model inside the wheel, ~0.2 ms a text),
restricted to the languages the e5 encoder was trained on, so that a dialect label ("wuu" for a Chinese question)
does not read as another language. A passage is long enough to be read surely; a question is short, so it
crosses only when it has a few words that are not names, its own language is read with some confidence, and
py3langid gives the passage's language almost no chance for it (held-out MLQA,
`bench/results/reader_crosslingual.md`: 0.9% of same-language pairs, 93% of cross-language ones).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

# the languages of XLM-R's (and so multilingual-e5's) training data that py3langid knows
E5_LANGUAGES = (
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he hi hr hu hy id is "
    "it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no om or pa pl ps pt ro ru sa si sk sl so "
    "sq sr sv sw ta te th tl tr ug uk ur uz vi xh zh"
).split()
SURE = 0.9  # the least probability of a passage's language for it to count as known
PASSAGE_SAMPLE = 1000  # characters of a passage read for its language (enough, and the cost grows with length)
UNLIKELY = 0.05  # a question whose probability of being in the passage's language is below this is in another

# a question of fewer words says too little of its language ("VPN?", "WFH policy" read as Kurdish and Polish), and
# names say nothing of it ("Amy Jo Johnson" read as Polish, "President Richard Nixon" as Uzbek): it takes words
# not written capitalised; one in a script written without spaces says enough in a few characters
MIN_WORDS = 2
SURE_OF_QUESTION = 0.5  # the least probability of the question's own most likely language
_UNSPACED = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]+")

_lock = threading.Lock()  # the identifier is not documented as thread-safe; a call takes ~0.2 ms


@dataclass(frozen=True)
class LanguagePair:
    question: str
    passage: str


@lru_cache(maxsize=1)
def _identifier():
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:  # the `local` extra is not installed (the Lambda layer): no reader either
        return None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([code for code in E5_LANGUAGES if code in identifier.labels])
    return identifier


def crosses_languages(question: str, passage: str) -> LanguagePair | None:
    """The two languages when `question` is surely not in `passage`'s language, else None (the same language,
    a passage too short or mixed to tell, or no identifier installed)."""
    identifier = _identifier()
    if identifier is None or not passage.strip() or not _tells_its_language(question):
        return None
    with _lock:
        written, sure = identifier.classify(passage[:PASSAGE_SAMPLE])
        if sure < SURE:
            return None
        chances = identifier.rank(question)
    asked, likely = chances[0]
    if asked == written or likely < SURE_OF_QUESTION or dict(chances).get(written, 0.0) >= UNLIKELY:
        return None
    return LanguagePair(question=asked, passage=written)


def _tells_its_language(question: str) -> bool:
    uncapitalised = sum(1 for word in _WORD.findall(question) if not word[0].isupper())
    return uncapitalised >= MIN_WORDS or _UNSPACED.search(question) is not None
