"""Multi-turn: rewrite a follow-up into a standalone query for retrieval.

With an LLM configured, the model writes the standalone query. Without one, `standalone_query` does it by
rule, in two shapes of follow-up:

* **a new topic, same intent** ("And what about returns?", "and for express?", "et pour les cadres ?"): the
  previous question is kept and its topic — the last run of content words that are not the question's frame
  ("how long ... take", "combien ... dure") — is swapped for the new one: "How long does shipping take?" +
  "And what about returns?" -> "How long does returns take?". Appending the old topic's words instead would
  pull retrieval back to the old topic. Which run is the topic: one that shares a word with the new one ("the
  Pro plan" -> "the Team plan"), else what an attribute is *of* ("the maximum daily dose of paracetamol" + "And
  ibuprofen?" -> "... of ibuprofen?"), else the first. The verbs a run carries stay with the intent: a
  participle that ends it ("How long are audit logs retained?" + "And backups?" -> "How long are backups
  retained?") and a verb after a modal and its subject ("Who must review ...", "Can I return ..."). A topic
  written as a name swaps a name before a thing ("the Pro plan" + "And Enterprise?" -> "the Enterprise plan"), and
  one with a definite article the subject after the auxiliary ("How much notice does the landlord have to give?"
  + "And the tenant?" -> "... does the tenant have to give?"); a day swaps a day ("... los sábados?" + "¿Y los
  domingos?").
* **the same topic, a new intent** ("And does it take long?", "Who approves them?"): the follow-up is kept
  and the previous topic's words are added.

A new topic is also the rewrite's **focus** (`Rewrite.focus`): the index terms it brings that the previous
question lacked ("express" after "standard shipping"). An answer to "And express shipping?" must come from a
passage that names express; the standard shipping rule shares every other word and is still no answer.

Why it is long: the rule-based rewrite is one job, reading a follow-up against the previous question in seven
languages (word lists for each, and Chinese and Japanese without spaces); split, each half would need the other's
word lists and run readers.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sourcerer.errors import InvalidRequest, MalformedReply
from sourcerer.models import MAX_HISTORY_TURNS, MAX_TURN_CHARS
from sourcerer.people import names_people
from sourcerer.synthesis.prompt import REWRITE_PROMPT
from sourcerer.synthesis.providers import ChatProvider, ask_for_json
from sourcerer.synthesis.scope import asked_quantities
from sourcerer.text import (
    AGAINST_WORDS,
    CJK_LETTER,
    DEFINITE_ARTICLES,
    FOR_WORDS,
    HIRAGANA,
    closed,
    focus_terms,
    normalize,
    terms,
)

_WORD = re.compile(r"[\w'’-]+", re.UNICODE)

# Openers that announce "same question, other topic", in the languages the answer models know (Spanish "y", and,
# not French "Y a-t-il …?", is there …?).
_TOPIC_SHIFT = re.compile(
    r"^(?:(?:and|but|also|ok|okay|so)\s+)?(?:what|how)\s+about\s+|^(?:and|but)\s+(?:for|with|in|on|regarding)\s+|"
    r"^(?:what|how)\s+about\s+|^(?:and|but)\s+(?:the\s+)?|^(?:for|on|in|at)\s+|^regarding\s+|"
    r"^et\s+(?:pour|avec|en|concernant|quant\s+a)\s+|^et\s+|^quid\s+d[eu]?\s+|^(?:et\s+)?qu'en\s+est-il\s+d[eu]s?\s+|"
    r"^und\s+(?:fur|bei|mit|was\s+ist\s+mit)\s+|^und\s+|^was\s+ist\s+mit\s+|"
    r"^y\s+(?:para|con|en|que\s+hay\s+de|sobre)\s+|^y\s+(?!a-t-)|^(?:e|mas)\s+(?:para|com|sobre)\s+|^e\s+|"
    r"^وماذا\s+عن\s+|^ماذا\s+عن\s+|^وعن\s+|^و(?=\S)|"
    r"^那么?|^还有|^至于"
)
_TRAILING = re.compile(
    r"(?:\s*(?:then|too|as well|alors|aussi|dann|auch|entonces|también|tambien))?[\s?？!.。؟]*(?:呢|吗)?[\s?？!.。؟]*$"
)
_ARTICLE = re.compile(
    r"^(?:the|a|an|my|your|our|les?|la|l'|des?|du|der|die|das|dem|den|el|los|las|o|os|as)\s+|^l'", re.IGNORECASE
)
_ENGLISH_INDEFINITE = re.compile(r"\b(?:a|an)\s+$", re.IGNORECASE)
_INDEFINITE = re.compile(r"\b(?:a|an|une?|un[oa]|ein(?:e[mnrs]?)?)\s+$", re.IGNORECASE)
_INDEFINITE_ARTICLE = re.compile(r"^(?:a|an|une?|ein(?:e[mnrs]?)?|un[oa]s?)\s+", re.IGNORECASE)
# what asks in Chinese and Japanese: "那怎么退货？" and "还有，积分有效期多久？" are questions of their own
_CJK_ASKS = re.compile("多久|多长|怎么|怎样|如何|什么|多少|几|哪|谁|吗|是否|何|どう|いつ|どこ|いくら|ですか")
_CJK_INTENT = re.compile(
    "多长时间|多久|多少钱|多少|什么时候|何时|哪里|在哪|谁|怎么|如何|需要|是否|可以|几天|费用|"
    "いくら|何[時日冊点人回個枚歳]|いつ|どこ|どのくらい|料金|できますか"
)
# a Chinese or Japanese follow-up that is a topic alone, marked as one ("普卡呢？", "スタンダードプランは？"): what about it
_CJK_TOPIC_ALONE = re.compile(r"^(?P<topic>[^\s?？!！。]{1,12}?)(?:呢|は)\s*[?？]?\s*$")
_CJK_PRONOUNS = frozenset("这 那 这个 那个 这些 那些 它 它们 这样 那样 これ それ あれ この その あの".split())
# what such a topic asks of the previous one (its fee, price, time, opening hours), in Chinese and Japanese
_CJK_ATTRIBUTES = frozenset("料金 値段 費用 価格 時間 期間 营业时间 费用 价格 价钱 时间 期限 押金 保证金 手数料".split())
# a fee written onto a topic ("会员费"): what is asked of it, not part of its name
_CJK_FEE = re.compile("(?:费用|費用|费|費|价格|価格|价钱|料金|代金)$")
# the verbs that frame a question, not a thing it names (`_names_own_cjk_thing`)
_CJK_FRAME = frozenset("需要 可以 能否 是否 请问 請問 一下 大概 一般 必要 可能 大丈夫".split())
_CJK_RUN = re.compile(f"{CJK_LETTER.pattern}+")
# "in the case of" after such a topic, which names nothing: "無断キャンセルの場合は？", "退货的话呢？"
_CJK_IN_CASE = re.compile("(?:の場合|的情况|的话)$")
_HIRAGANA_ONLY = re.compile(f"(?:{HIRAGANA.pattern})+")  # a Japanese pair of kana alone: how a question asks ("ます")
_PRONOUNS = frozenset(
    "it they them this that these those its their il elle ils elles ce cela ca es sie er das ello ellos esto eso".split()
)
# Words that frame what is asked (the intent), not what it is asked about (the topic).
_INTENT = frozenset(
    """
how long much many often when who whom where which what why take takes took taking last lasts cost costs price
happen happens happened allowed allow permitted required require requires need needs needed get gets work works
mean means approve approves approved handle handles do does did make makes is are was were can could should must
will would has have had the a an be there time times date day days seconds minutes hours weeks months years
far soon fast advance ahead safe available mandatory necessary possible eligible valid open closed
combien quand qui ou comment quel quelle quels quelles temps dure durent coute coutent faut peut doit est sont
jours semaines mois ans heure heures minutes autorise autorisee autorises autorisees permis permise requis requise
disponible obligatoire necessaire ouvre ouvrent ferme ferment age fait font faire
wie lange viel viele wann wer wo welche welcher dauert kostet braucht muss kann ist sind
tag tage tagen wochen monate monaten jahre jahren uhr stunden minuten erlaubt gestattet erforderlich sicher verfugbar
notwendig offnet offnen schliesst schliessen
cuanto cuanta cuantos cuantas cuando quien donde como cual tarda dura cuesta puede debe es son
dias semanas meses anos hora horas minutos permitido permitida autorizado autorizada obligatorio seguro segura necesario
abre abren cierra cierran
quanto quanta quando quem onde como qual demora custa
condition conditions bedingung bedingungen voraussetzung voraussetzungen condicion condiciones
كم متي اين كيف من ما هل تستغرق يستغرق تكلف يكلف مده
""".split()
)
# Words that make a follow-up a question of its own ("and what happens if...?", "وكيف تُصرف المبالغ؟"), not just a
# new topic. Arabic "من" asks who but also means "from" ("ومن الرياض؟"), so it is not among them.
_FRAME = frozenset(
    """
what how when who whom where which why is are was were do does did can could should must will would happen happens
quand comment combien qui ou quel quelle est sont pourquoi wann wie wer wo welche ist sind warum wieviel wieviele
cuando como quien donde cual es son cuanto cuanta cuantos cuantas
quando onde qual
كيف متي كم ما ماذا هل اين لماذا اي
""".split()
)
# the prepositions of a place or a time, one of which a follow-up may swap for another ("on general wards" -> "in
# intensive care")
_PLACE = frozenset("in on at during dans sur en a au aux im am an auf bei durante".split())
# words that open a condition ("¿Y si no lo devuelvo?", "and if it is stolen?") or a time ("¿Y después del primer
# año?", "Et après trois mois ?") a follow-up puts on the previous question: no new topic, and its words need not be a
# passage's ("devuelvo" where the rule says "devolver", "el primer año" where it says "a partir del mes 13")
_IF = frozenset("if si wenn falls se".split())
_WHEN = frozenset("after before après apres avant nach vor während wahrend después despues antes ab from".split())
_FUNCTION = frozenset(
    """
of for to in on at by with from about per each every into the a an and or de la le les des du d l pour et en un une au aux sur avec par
my your our their his her its within before after during without since until between under over via
dans sous avant apres pendant depuis entre sans chez vers se
der die das den dem des ein eine einer fur mit von zu im am bei und innerhalb vor nach wahrend seit bis ohne zwischen
el los las del al para con por y en un una o dentro antes despues durante desde hasta sin bajo hacia
do da dos das no na para com e o a
""".split()
) | AGAINST_WORDS  # "Et contre la grippe ?"
# The words that tie an attribute to what it is of: "the maximum daily dose OF paracetamol", "le délai DE
# remboursement", "la période d'essai DES cadres". What follows is the thing the question is about.
_OF = frozenset("of de des du del von vom di".split())
# Verbs a question's topic run can carry: a participle that ends it ("How long are audit logs RETAINED?"), and a
# base verb after a modal or "do" with its subject ("Who must REVIEW ...", "Can I RETURN ...").
_PARTICIPLES = frozenset(
    "taken kept given paid sent held made done seen shown known sold bought written built spent chosen found left worth".split()
)
# Nouns that name what is asked of a thing, not the thing: "the API rate LIMIT", "the daily meal ALLOWANCE". At the
# end of a topic run they stay when the thing is swapped ("What about webhooks?" -> "What is the webhooks rate limit?").
ATTRIBUTES = frozenset(
    """
limit limits allowance dose dosage budget price prices cost fee fees rate deadline duration period policy amount
maximum minimum age size length number percentage discount penalty
limite plafond prix tarif montant dose budget delai duree frais taux
grenze preis kosten betrag budget frist dauer gebuhr
limite precio coste costo importe presupuesto plazo duracion tarifa tasa dosis
""".split()
)
_MODALS = frozenset("can could must should may might will would shall do does did".split())
_SUBJECTS = frozenset("i we you they he she one".split())
# modals that carry their subject, whose next word is a verb: "¿Puedo alquilar un violín?", "Puis-je louer un vélo ?"
_MODALS_WITH_SUBJECT = frozenset(
    "puedo podemos puede pueden debo debemos necesito puis-je peut-on peux-tu pouvons-nous pouvez-vous dois-je doit-on".split()
)
# a French verb with its subject after it, which asks ("puis-je", "a-t-il", "est-elle"): no topic
_WITH_SUBJECT = re.compile(r"-(?:t-)?(?:je|tu|il|elle|on|nous|vous|ils|elles)$")
# a German question asked with a modal (folded), which closes with its verb: "Kann ich eine Geige mieten?"
GERMAN_MODAL = re.compile(r"\W*(?:kann|konnen|darf|durfen|muss|mussen|soll|sollen)\b")
_GERMAN_MODAL_AND_SUBJECT = re.compile(GERMAN_MODAL.pattern + r"\s+(?:ich|wir|man|mein\w*|unser\w*)\b")
_ASKING_WHO = frozenset("who wer qui quien".split())
_ARTICLES = frozenset("the a an la le les l der die das dem den el los las un une uno una ein eine".split())
# days of the week, weekdays and weekends (folded), singular and plural, in the languages the answer models know, and
# the times of day a rule may differ at ("Und morgens um 8?" after "Darf ich mein Fahrrad mitnehmen?")
_DAYS = frozenset(
    """
morning mornings evening evenings night nights tonight matin matins soir soirs nuit nuits morgens abends nachts
mittags vormittags nachmittags noche noches madrugada
monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday
sundays weekday weekdays weekend weekends lundi lundis mardi mardis mercredi mercredis jeudi jeudis vendredi
vendredis samedi samedis dimanche dimanches week-end week-ends semaine montag montags dienstag dienstags mittwoch
mittwochs donnerstag donnerstags freitag freitags samstag samstags sonntag sonntags wochenende wochenenden werktags
werktag werktagen lunes martes miercoles jueves viernes sabado sabados domingo domingos semana finde
segunda terca quarta quinta sexta
""".split()
)
_BE = frozenset("is are was were est sont ist sind es son".split())
# the word that says whom a rule is for, by the language a follow-up opens in: "And students?" -> "for students"
_FOR_BY_OPENER = {"and": "for", "what": "for", "how": "for", "but": "for", "et": "pour", "und": "für", "y": "para"}
# "one" standing for the previous question's thing, after the kind a follow-up asks of: "And the Anytime one?"
_ONE = re.compile(r"\s+ones?$", re.IGNORECASE)


def validate_history(history: Sequence[dict] | None) -> list[dict]:
    """The conversation's last `MAX_HISTORY_TURNS` turns, each `{"role", "text"}`: a follow-up is read against what
    was said last, and each user turn before it is read in turn (1,000 turns exceeded Python's recursion limit)."""
    turns = []
    for turn in list(history or [])[-MAX_HISTORY_TURNS:]:
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            raise InvalidRequest('each history turn must be {"role": "user"|"assistant", "text": ...}')
        text = str(turn.get("text", turn.get("content", "")))
        if len(text) > MAX_TURN_CHARS:
            raise InvalidRequest(f"a history turn is {len(text):,} characters long: at most {MAX_TURN_CHARS:,}")
        turns.append({"role": turn["role"], "text": text})
    return turns


def _runs(question: str) -> list[list[re.Match[str]]]:
    """The previous question's content runs: consecutive words that are neither intent nor function words."""
    runs: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    for match in _WORD.finditer(question):
        word = normalize(match.group()).strip("'’-")
        if word and (word in _INTENT or word in _FUNCTION or _WITH_SUBJECT.search(word) or not terms(word)):
            if current:
                runs.append(current)
            current = []
        elif word:
            current.append(match)
    if current:
        runs.append(current)
    return runs


def _words_before(question: str, run: list[re.Match[str]]) -> list[str]:
    return [normalize(w) for w in _WORD.findall(question[: run[0].start()])]


def _word_before(question: str, run: list[re.Match[str]], article: Callable[[str], bool] | None = None) -> str | None:
    """The word that introduces a run, articles skipped: "for" in "for the API", "bei" in "bei einer Hochzeit".
    `article` says what is skipped (by default `_ARTICLE`, which counts "de" and "des" as articles, and the
    indefinite articles)."""
    skipped = article or (lambda w: bool(_ARTICLE.match(w + " ") or _INDEFINITE_ARTICLE.match(w + " ")))
    words = _words_before(question, run)
    while words and skipped(words[-1]):
        words.pop()
    return words[-1] if words else None


def _content_words(text: str) -> list[str]:
    """The words of `text` that say what it is about: not intent words, those with Arabic's "and" (و) or "for" (ل)
    glued on ("وكم", and how much; "لكم مدة؟", for how long?) included."""
    words = [w.strip("?？!.,;:؟") for w in normalize(text).split()]
    return [w for w in words if w not in _INTENT and not (w.startswith(("و", "ل")) and w[1:] in _INTENT) and terms(w)]


_HOW = re.compile(r"\b(?:how|wie|cuan)\s+(\S+)")  # the word after one is the measure asked: "How deep?", "Wie tief?"


def _named_words(text: str) -> list[str]:
    """The content words a follow-up names as what it asks about, not the measure it asks after "how": "How deep?"
    after "Can I go scuba diving?" asks how deep one may dive, and "deep", its focus, set aside the rule, which says
    "to a depth of 30 metres". Nor a word that says when ("Combien de temps avant ?" after "Faut-il commander les
    gâteaux à l'avance ?" asks how long before, and "avant", its focus, was in no passage: refused)."""
    measures = {m.strip("?？!.,;:؟") for m in _HOW.findall(normalize(text))}
    return [w for w in _content_words(text) if w not in measures and w not in _WHEN]


def _is_participle(word: str) -> bool:
    folded = normalize(word)
    return folded in _PARTICIPLES or (len(folded) > 4 and folded.endswith("ed") and not folded.endswith("eed"))


def _after_modal(question: str, run: list[re.Match[str]]) -> bool:
    """Whether a run opens right after a modal and its subject ("can I return", "who must review"): its first
    word is then a verb. Elsewhere a noun follows ("How long must parental leave ...", "Can sale items ...")."""
    before = _words_before(question, run)
    if before and before[-1] in _MODALS_WITH_SUBJECT:
        return True
    if len(before) < 2 or before[-2] not in _MODALS:
        return len(before) == 2 and before[0] in _ASKING_WHO and before[1] in _MODALS
    return before[-1] in _SUBJECTS


def _owner_word(question: str, run: list[re.Match[str]]) -> str | None:
    """The word before a run, articles skipped but not "de" or "des" ("la durée de la période", "des cadres")."""
    return _word_before(question, run, lambda w: w in _ARTICLES)


def _topic_words(question: str, run: list[re.Match[str]]) -> list[re.Match[str]]:
    """A content run without the verbs it carries (see `_PARTICIPLES`): the words a new topic replaces. A run that
    is only a verb ("rent" in "Can I rent a car?") has none."""
    words = list(run)
    if words and _after_modal(question, words):
        words = words[1:]
    last_word_of_question = run[-1].end() == len(question.rstrip(" ?？!.。؟"))
    before = _words_before(question, run)
    if last_word_of_question and before and _WITH_SUBJECT.search(before[-1]):
        return []  # what "Le casque est-il fourni ?" asks of the helmet, no topic
    # the subject of "does": "How many seats does the Team plan include?" ends with its verb, while "What uptime do
    # you guarantee on the Standard plan?" ends with a thing after its preposition
    does = _word_before(question, run) in {"do", "does", "did"}
    closing_verb = does or bool(_GERMAN_MODAL_AND_SUBJECT.match(normalize(question)))  # "Kann ich eine Geige mieten?"
    if words and (_is_participle(words[-1].group()) or (closing_verb and last_word_of_question and len(words) > 1)):
        words = words[:-1]  # "How long are audit logs retained?", "How many seats does the Team plan include?"
    return words


def _thing(run: list[re.Match[str]]) -> list[re.Match[str]]:
    """A topic run without the attribute nouns that end it: "API" of "the API rate limit"."""
    words = list(run)
    while len(words) > 1 and normalize(words[-1].group()) in ATTRIBUTES:
        words = words[:-1]
    return words


def says_day(text: str) -> bool:
    """Whether `text` names days of the week or times of day (`_DAYS`): opening hours are asked day by day."""
    return any(normalize(word) in _DAYS for word in _WORD.findall(text))


# a person's age as a question writes it beside the person: "de 2 ans", "10 year old", "16-jährigen", "de 3 años"
_AGE = re.compile(r"\d{1,3}(?:\s*|-)(?:years?|yrs?|ans|jahren?|j[äa]hrig\w*|años|anos)(?:[\s-]+olds?)?", re.IGNORECASE)
_AGE_AFTER = re.compile(r"\s+(?:(?:de|of|aged|von|con)\s+)?" + _AGE.pattern, re.IGNORECASE)
# the possessives of the languages read ("son" is a Spanish verb too: "¿Las taquillas son gratis?")
POSSESSIVES = frozenset(
    "my our your his her their mon ma mes ton ta tes sa ses notre nos votre vos leur leurs mein meine meinen meinem "
    "meiner unser unsere unseren unserem mi mis tu tus su sus nuestro nuestra nuestros nuestras".split()
)
# what may stand before a person: "my", "mon", "meinen", "mi", "a", "the"
_BEFORE_SOMEONE = _ARTICLES | POSSESSIVES


def _names_someone(text: str) -> bool:
    """Whether `text` names a person: people (`names_people`) or someone by age alone ("my 10 year old")."""
    return names_people(text) or "age" in asked_quantities(text)


def _someone_span(question: str) -> tuple[int, int] | None:
    """Where a question names a person, with the words before and the age around it ("Mon bébé de 2 ans", "my 10
    year old son", "meinen 16-jährigen Sohn"), or a person by age alone ("my 10 year old"); None where it names none."""
    people = [w for w in _WORD.finditer(question) if names_people(w.group())]
    ages = list(_AGE.finditer(question))
    if people:
        start, end = people[0].span()
        if after := _AGE_AFTER.match(question, end):
            end = after.end()
        if before := [a for a in ages if a.end() <= start and not question[a.end() : start].strip()]:
            start = before[-1].start()
    elif ages:
        start, end = ages[0].span()
    else:
        return None
    while (word := re.search(r"[\w'’-]+\s*$", question[:start])) and normalize(word.group()).strip() in _BEFORE_SOMEONE:
        start = word.start()
    return start, end


def _is_name(topic: str) -> bool:
    """Whether a follow-up's topic is written as a name, every word capitalised ("Enterprise", "Pro")."""
    words = topic.split()
    return bool(words) and all(w[0].isupper() for w in words)


def _name_before_thing(question: str, run: list[re.Match[str]]) -> bool:
    """Whether a run is a name before a thing written in lower case ("Free plan"), not at the question's start."""
    return run[0].start() > 0 and run[0].group()[0].isupper() and run[-1].group()[0].islower()


def _name_words(run: list[re.Match[str]]) -> list[re.Match[str]]:
    """The capitalised words a run opens with: "Free" of "Free plan"."""
    return list(itertools.takewhile(lambda w: w.group()[0].isupper(), run))


def _is_subject(question: str, run: list[re.Match[str]]) -> bool:
    """Whether a run is the subject of an inverted question, a definite one after its auxiliary ("does the
    landlord", "muss der Mieter"), not a complement ("for the trip")."""
    before = _words_before(question, run)
    return len(before) >= 2 and before[-1] in DEFINITE_ARTICLES and (before[-2] in _MODALS or before[-2] in _BE)


def _swap_topic(previous: str, new_topic: str, preposition: str | None = None, *, definite: bool = False) -> str:
    """Put `new_topic` where the previous question's topic was (see `standalone_query`); `definite`: the follow-up
    names it with a definite article ("And the tenant?")."""
    runs = [topic for run in _runs(previous) if (topic := _topic_words(previous, run))]
    if not runs:
        return f"{previous} {new_topic}"
    new_terms = set(terms(new_topic))
    sharing = [r for r in runs if new_terms & set(terms(previous[r[0].start() : r[-1].end()]))]
    # an article is no preposition: "¿Y una guitarra?" after "¿Puedo alquilar un violín?" is a new thing, not a
    # qualifier ("¿Puedo alquilar un violín una guitarra?")
    first_word = preposition or normalize(_INDEFINITE_ARTICLE.sub("", new_topic) or new_topic).split()[0]
    named = _is_name(new_topic) and [r for r in runs if _name_before_thing(previous, r)]
    days = [r for r in runs if says_day(previous[r[0].start() : r[-1].end()])] if says_day(new_topic) else []
    if sharing:  # "the Pro plan" -> "the Team plan": the run with a word in common is the topic
        replaced = [sharing[0]]
    elif named:  # "How many requests per minute on the Pro plan?" + "And Enterprise?": the Enterprise plan
        replaced = [_name_words(named[-1])]
    elif first_word in _FUNCTION:  # "and for children?", "and of ibuprofen?": a qualifier
        after = [r for r in runs if _word_before(previous, r) == first_word]
        if not after:
            return f"{previous.rstrip(' ?？!.。؟')} {new_topic}{previous[len(previous.rstrip(' ?？!.。؟')) :]}".strip()
        replaced = after[-1:]
        if _is_name(new_topic.split(None, 1)[-1]) and _name_before_thing(previous, replaced[0]):
            replaced = [_name_words(replaced[0])]  # "And on Pro?" after "... on the Free plan?": the Pro plan
        if preposition is None and " " in new_topic:
            rest = new_topic.split(None, 1)[1]
            # "Und in der EU?", "¿Y por una mudanza?": the previous question keeps its "in der", "por un"
            new_topic = _INDEFINITE_ARTICLE.sub("", _ARTICLE.sub("", rest)) or rest
    elif days:  # "¿A qué hora abre el gimnasio los sábados?" + "¿Y los domingos?": a day for a day
        replaced = days[-1:]
    elif owners := [r for r in runs if _owner_word(previous, r) in _OF]:  # "What is the maximum daily dose of
        # paracetamol?" + "And ibuprofen?": the dose of ibuprofen
        replaced = [_thing(owners[-1])]
    elif definite and (subjects := [r for r in runs[1:] if _is_subject(previous, r)]):  # "How much notice does the
        # landlord have to give?" + "And the tenant?": the notice the tenant gives, not the tenant's amount
        replaced = subjects[:1]
    else:  # a new subject takes the first content run's place; the others go, with the words that tie them, and
        # a verb stays ("Can I rent a car on a business trip?" + "What about taxis?" -> "Can I rent taxis?"). Kept,
        # the other runs pull retrieval back: "How many parental leave days do new employees get?" finds the
        # vacation rule for new employees (the reader and the lexical path each lost that follow-up); keeping
        # only the circumstances ("... on a business trip", "... during pregnancy") lost one follow-up by default
        # and two with the reader. What is asked of the old topic stays: "What is the API rate limit?" + "What
        # about webhooks?" -> "What is the webhooks rate limit?"
        replaced = [_thing(runs[0]), *runs[1:]]
    out, cursor = [], 0
    for n, run in enumerate(replaced):
        start = run[0].start()
        if n > 0:  # "... per night", "... on a business trip": drop the function words before the run too
            words = previous[cursor:start].split(" ")
            while words and (not words[-1].strip() or normalize(words[-1]) in _FUNCTION):
                words.pop()
            out.append(" ".join(words))
        else:
            before = previous[cursor:start]
            # the article agreed with the old topic: "return an item" -> "return sale items"; a new topic with its
            # own article brings it ("¿Puedo alquilar un violín?" + "¿Y una guitarra?"), else the old one stays
            own_article = _ARTICLE.match(new_topic) or _INDEFINITE_ARTICLE.match(new_topic)
            out.append(_INDEFINITE.sub("", before) if own_article else _ENGLISH_INDEFINITE.sub("", before))
            out.append(new_topic + _compound_unit(previous, run, new_topic))
        cursor = run[-1].end()
    out.append(previous[cursor:])
    return re.sub(r"\s{2,}", " ", "".join(out)).replace(" ?", " ?").strip()


# the unit of time a German compound noun ends in ("Urlaubstage"), which the compound's new topic counts too
_COMPOUND_UNIT = re.compile(r"(?<=[a-zäöüß])(?P<unit>tage|tagen|stunden|wochen|monate|jahre|nächte)$")


def _compound_unit(previous: str, run: list[re.Match[str]], new_topic: str) -> str:
    """The unit of time the replaced German compound counts, for the new topic to keep ("Und was ist mit Homeoffice?"
    after "Wie viele Urlaubstage gibt es?" asks how many "Homeoffice-Tage", as "How many remote work days do I get?"
    keeps its "days"), or "". A noun capitalised after the question's first word is German's."""
    last = run[-1]
    unit = _COMPOUND_UNIT.search(last.group()) if last.start() > 0 and last.group()[:1].isupper() else None
    return f"-{unit['unit'].capitalize()}" if unit and not new_topic.casefold().endswith(unit["unit"]) else ""


@dataclass(frozen=True)
class Rewrite:
    query: str  # the follow-up as a question that stands on its own
    focus: tuple[str, ...] = ()  # index terms of the topic it swaps in, new to the conversation: an answer names them


def standalone_query(question: str, history: Sequence[dict]) -> str:
    """Rewrite a follow-up into a question that stands on its own (see the module docstring)."""
    return rewrite_follow_up(question, history).query


def rewrite_follow_up(question: str, history: Sequence[dict]) -> Rewrite:
    """`standalone_query`, with the focus of a follow-up that swaps the topic (see the module docstring)."""
    user_turns = [i for i, t in enumerate(history) if t["role"] == "user"]
    if not user_turns:
        return Rewrite(question)
    # The previous question may itself have been a follow-up: read it as it was understood.
    last = user_turns[-1]
    previous = standalone_query(history[last]["text"].strip(), history[:last])
    said = " ".join(t["text"] for t in history[last + 1 :] if t["role"] == "assistant")
    question = question.strip().lstrip("¿¡ ")  # "¿Y la devolución?" opens like "Y la devolución?"
    folded = normalize(question)
    shift = _TOPIC_SHIFT.match(folded)
    remainder = _TRAILING.sub("", folded[shift.end() :] if shift else folded).strip(" ,")
    alone = None if shift else _CJK_TOPIC_ALONE.match(folded)
    if alone and alone["topic"] in _CJK_ATTRIBUTES:
        # "料金は？" after "ロッカーはありますか？": what the locker costs, not a new topic (answered with nothing)
        return Rewrite(f"{previous} {alone['topic']}")
    if alone and not _CJK_ASKS.search(alone["topic"]) and alone["topic"] not in _CJK_PRONOUNS:
        # "普卡呢？" after "金卡年费多少钱？": what about the standard card
        shift, remainder = alone, _CJK_IN_CASE.sub("", alone["topic"]) or alone["topic"]
    words = remainder.split()
    frame = [w for w in words if w in _FRAME] + _CJK_ASKS.findall(remainder)
    condition = shift is not None and bool(words) and words[0] in _IF
    is_new_topic = bool(remainder) and shift is not None and len(words) <= 5 and not frame and not condition
    is_new_topic = is_new_topic and not any(w in _PRONOUNS for w in words)
    if is_new_topic and CJK_LETTER.search(previous):
        # no spaces to find the old topic by: the new topic plus the previous question's frame words, after は where
        # the follow-up marks its topic so ("チェックアウトは？" -> "チェックアウトは 何時": what the answer is about)
        topic = remainder + "は" if alone and alone.group().rstrip("?？ ").endswith("は") else remainder
        # a fee written onto the topic is what is asked of it, not a name the answer holds: "那会员费呢？" asks the
        # membership's fee, and "会员年费为88元" never writes 会员费 (its focus was 会员 and 员费)
        named = _CJK_FEE.sub("", remainder) or remainder
        return Rewrite(" ".join([topic, *_CJK_INTENT.findall(previous)]), _new_terms(named, previous, said))
    if is_new_topic:
        new_topic = _TRAILING.sub("", _strip_opener(question.strip(), shift.group() if shift else "")).strip(" ,") or remainder
        written_topic = new_topic
        new_topic = _ARTICLE.sub("", new_topic) or new_topic  # the previous question keeps its own article
        opener_words = normalize(shift.group()).split() if shift else []
        preposition = (
            opener_words[-1] if opener_words and opener_words[-1] in _FUNCTION - {"and", "et", "und", "y", "e"} else None
        )
        if (when := normalize(new_topic.split()[0])) in _WHEN:  # "¿Y después del primer año?": the same question, at that time
            if timed := [r for r in _runs(previous) if _word_before(previous, r) == when]:
                # "Und nach Durchfall?" after "Wann darf mein Kind nach Fieber wiederkommen?": after diarrhoea instead of
                # after a fever (appended, the fever stayed and answered)
                return Rewrite(_swap_after(previous, timed[-1], written_topic), _new_terms(new_topic, previous, said))
            return Rewrite(_qualified(previous, written_topic))
        if says_day(new_topic) and not says_day(previous):
            # "Et le samedi ?" after "À quelle heure ferme la crèche ?": a day where none was asked qualifies the
            # question, and replaced its subject ("À quelle heure ferme la samedi ?"); said as the follow-up says it
            lead = f"{question.split()[len(opener_words) - 1]} " if preposition in _PLACE else ""
            return Rewrite(_qualified(previous, f"{lead}{written_topic}"), _new_terms(new_topic, previous, said))
        aged = "age" in asked_quantities(new_topic)
        someone = aged or names_people(new_topic)
        if aged and (span := _someone_span(previous)):
            # "Et mon fils de 8 ans ?" after "Mon bébé de 2 ans doit-il payer ?": the person for the person, age and
            # all (the baby had stayed: "mon fils de 8 ans de 2 ans doit-il payer ?"); no focus: the sources name
            # people by their group or age ("Les enfants de 4 à 11 ans"), not as a parent does
            return Rewrite(f"{previous[: span[0]]}{written_topic}{previous[span[1] :]}")
        for_word = preposition if preposition in FOR_WORDS else _FOR_BY_OPENER.get(opener_words[0] if opener_words else "")
        if (preposition in FOR_WORDS or preposition in (None, "about")) and for_word and someone and not _names_someone(previous):
            # "And for children?" after "How much is a prescription?": the prescription's price for children; as a new
            # subject it had become "How much is children?", answered with a vaccine's price "not available to children"
            written = question.split()[len(opener_words) - 1] if preposition in FOR_WORDS else for_word
            lead = "" if normalize(new_topic.split()[0]) in FOR_WORDS else f"{written} "
            # no focus: the question still asks of the prescription, and the one passage naming children (a vaccine's)
            # would be all that is left to answer from; read as a question of its own
            return Rewrite(_qualified(previous, f"{lead}{written_topic}"))
        if preposition in FOR_WORDS:  # "Et pour la grippe ?" after "... le vaccin contre le pneumocoque ?"
            preposition = next((w for r in _runs(previous) if (w := _word_before(previous, r)) in FOR_WORDS), preposition)
        if preposition in _PLACE and (placed := [r for r in _runs(previous) if _word_before(previous, r) in _PLACE - {preposition}]):
            # "And in intensive care?" after "What are the visiting hours on general wards?": a place for a place
            written = question.split()[len(opener_words) - 1]  # as the follow-up writes it: "in", "en", "bei"
            return Rewrite(_swap_place(previous, placed[-1], written, new_topic), _new_terms(new_topic, previous, said))
        if preposition and not any(_word_before(previous, r) == preposition for r in _runs(previous)):
            if preposition in _PLACE:
                # "On the Plus plan?" after "Can I password-protect a link?": the same question, there (it was read as
                # no follow-up, and answered with the Plus plan's price); no focus, as for a time: what names the place
                # alone (the Plus plan's price) would be all that is left to answer from
                written = question.split()[len(opener_words) - 1].lower()
                return Rewrite(_qualified(previous, f"{written} {written_topic}"))
            preposition = None  # "and for express?" after "How long does shipping take?": a new subject
        if preposition:  # "Und bei einer Geburt?" after "... bei einer Hochzeit?": the previous keeps its article
            new_topic = _INDEFINITE_ARTICLE.sub("", new_topic) or new_topic
        definite = bool(opener_words and opener_words[-1] in DEFINITE_ARTICLES) or words[0] in DEFINITE_ARTICLES
        kind = _ONE.sub("", new_topic)
        if kind != new_topic and (swapped := _swap_kind(previous, kind)):  # "And the Anytime one?"
            return Rewrite(swapped, _new_terms(kind, previous, said))
        return Rewrite(_swap_topic(previous, new_topic, preposition, definite=definite), _new_terms(new_topic, previous, said))
    # Same topic, new intent ("and does it take long?"): add the previous topic when the follow-up names none.
    # A pronoun stands for it however many words the follow-up has: "How much storage does it include?" after "How much
    # does Pro cost?" was answered with the Free plan's storage. Not after an opener that names the follow-up's own
    # topic, which the pronoun takes up ("Et le remboursement, il arrive quand ?")
    pronoun = shift is None and any(normalize(w) in _PRONOUNS for w in _WORD.findall(question))
    if len(_content_words(question)) >= 2 and not pronoun and not condition:
        return Rewrite(question)
    if CJK_LETTER.search(remainder) and not condition and _names_own_cjk_thing(remainder):
        return Rewrite(question)
    # a Japanese question's kana pairs ("ます", "すか") are how it asks, which "料金はかかりますか？" shares with "送迎バスは
    # ありますか？": they kept the bus from being carried along, and the tuition fees answered
    have = {t for t in terms(question) if not _HIRAGANA_ONLY.fullmatch(t)}
    # the previous topic, not its predicate: "and if it is stolen?" after "Do laptops need to be encrypted?" asks
    # of stolen laptops, and "encrypted" carried along drew the encryption rule back as the answer. A follow-up
    # that names nothing asks of the predicate too: "For how long?" after "Can I freeze my membership?" asks how
    # long it may be frozen, and got the membership's price
    asks_only = not _content_words(question)
    if asks_only and (predicate := _predicate(previous)):
        # "How long does that take?" after "How do I get a copy of my data?": "... get a copy of my data", as it was
        # asked (its words alone, "copy data", were read as no question the sentence "we respond within 30 days" answers)
        return Rewrite(f"{question} {predicate}")
    extra = [
        w.group()
        for run in _runs(previous)
        for w in (run if asks_only else _topic_words(previous, run))
        if terms(w.group()) and not set(terms(w.group())) & have
    ]
    # what the follow-up names itself is what it asks about, and an answer names it: "¿Hay franquicia?" after "¿Cuánto
    # cubren por dinero en efectivo?" was answered with the cash cover, drawn by the words carried along. Not in
    # Chinese or Japanese, whose words are not written apart ("那怎么退货？" is one run of pairs, 怎么 among them)
    own = () if CJK_LETTER.search(question) or condition else _new_terms(" ".join(_named_words(question)), previous)
    return Rewrite(f"{question} {' '.join(dict.fromkeys(extra))}".strip() if extra else question, own)


def _names_own_cjk_thing(asked: str) -> bool:
    """Whether a Chinese or Japanese follow-up (its opener taken off) names a thing of its own: a run of two letters
    or more once what asks (多少, 吗, ですか), the kana that inflect, attributes (料金, 时间) and the verbs that frame a
    question (需要, 可以) are taken out. It is a question of its own, written without spaces as an English one of two
    words or more is: "駐車場はありますか？" after "初診料はいくらですか？" had the fee question appended, and was answered
    with the fee. "多少钱？", "何時から？" and "料金はかかりますか？" name nothing of their own, and a pronoun ("それは保険適用
    ですか？") stands for the previous topic: they ask of it."""
    if any(pronoun in asked for pronoun in _CJK_PRONOUNS):
        return False
    rest = _HIRAGANA_ONLY.sub(" ", _CJK_ASKS.sub(" ", asked))
    return any(run not in _CJK_ATTRIBUTES | _CJK_FRAME for run in _CJK_RUN.findall(rest) if len(run) >= 2)


def _qualified(previous: str, words: str) -> str:
    """The previous question with `words` added before its closing mark: "À quelle heure ferme la crèche le samedi ?",
    "How much is a prescription for children?"."""
    body = previous.rstrip(" ?？!.。؟")
    return f"{body} {words}{previous[len(body) :]}"


def _predicate(question: str) -> str | None:
    """What a question asks be done, from the verb after its modal and subject to its end: "get a copy of my data" of
    "How do I get a copy of my data?"; None where it has no such verb."""
    words = list(_WORD.finditer(question))
    for before, subject, verb in zip(words, words[1:], words[2:], strict=False):
        if normalize(before.group()) in _MODALS and normalize(subject.group()) in _SUBJECTS:
            return question[verb.start() :].rstrip(" ?？!.。؟")
    return None


def _swap_kind(previous: str, kind: str) -> str | None:
    """The previous question with the words before its thing's last (the kind of it) replaced by `kind`, which a
    follow-up says with "one": "How much is the Off-Peak membership?" + "And the Anytime one?" -> "How much is the
    Anytime membership?"; "What is the API rate limit?" + "And the webhook one?" -> "What is the webhook rate
    limit?". A named kind replaces a named one first. None where the previous question names no thing."""
    runs = [_thing(topic) for run in _runs(previous) if (topic := _topic_words(previous, run))]
    if not runs:
        return None
    named = [r for r in runs if _name_before_thing(previous, r)] if _is_name(kind) else []
    thing = (named or [r for r in runs if len(r) > 1] or runs)[0]
    replaced = thing[:-1] or thing
    return f"{previous[: replaced[0].start()]}{kind}{previous[replaced[-1].end() :]}"


def _swap_after(previous: str, run: list[re.Match[str]], new_topic: str) -> str:
    """The previous question with the words after its time word that the follow-up's replace (as many as it has,
    one at least: a German verb closes the run), the time word and its articles too, replaced by the follow-up's:
    "Wann darf mein Kind nach Fieber wiederkommen?" + "nach Durchfall" -> "Wann darf mein Kind nach Durchfall
    wiederkommen?"."""
    count = max(1, len([w for w in _WORD.findall(new_topic)[1:] if terms(w) and normalize(w) not in _FUNCTION]))
    end = run[min(count, len(run)) - 1].end()
    for unit in _WORD.finditer(previous, end):  # and the unit after its number: "después de seis meses"
        if normalize(unit.group()) not in _INTENT or previous[end : unit.start()].strip():
            break
        end = unit.end()
    before = [w for w in _WORD.finditer(previous[: run[0].start()]) if normalize(w.group()) in _WHEN]
    start = before[-1].start() if before else run[0].start()
    return f"{previous[:start]}{new_topic}{previous[end:]}"


def _swap_place(previous: str, run: list[re.Match[str]], preposition: str, new_topic: str) -> str:
    """The previous question with the place `run` stands in (its preposition and articles too) replaced by the
    follow-up's: "... the visiting hours on general wards?" + "in" "intensive care" -> "... the visiting hours in
    intensive care?"."""
    before = [w for w in _WORD.finditer(previous[: run[0].start()]) if normalize(w.group()) in _PLACE]
    start = before[-1].start() if before else run[0].start()
    return f"{previous[:start]}{preposition} {new_topic}{previous[run[-1].end() :]}"


def _new_terms(topic: str, previous: str, said: str = "") -> tuple[str, ...]:
    """The topic's index terms that the previous question lacks ("express" of "express shipping" after "How long
    does standard shipping take?"), question words left out. An adjective the previous question's intent shares
    is the topic's all the same ("long" of "And on long flights?" after "What class can I fly on short flights?").
    Of several, those the previous answer already `said` are left out too, one at least kept: "and for
    international orders?" after an answer costing "$14 per order" asks about international, not orders."""
    before = focus_terms(previous)
    # a lone Chinese or Japanese letter is a topic cut from its sentence ("車" of "MT車は？"), which no text holds as a term
    new = list(dict.fromkeys(t for t in terms(closed(topic)) if t not in before and t not in _FRAME and not (len(t) == 1 and CJK_LETTER.match(t))))
    already = focus_terms(said)
    unsaid = [t for t in new if t not in already]
    return tuple(unsaid or new)


def _strip_opener(original: str, opener: str) -> str:
    """The follow-up without its opener, in its own spelling: as many words as the (folded) opener had, or
    as many characters for an opener glued to the word (Arabic و, Chinese 那)."""
    words = opener.split()
    if opener.endswith((" ", "\t")) and words:
        return " ".join(original.split()[len(words) :])
    return original[len(opener) :]


async def rewrite_with_llm(question: str, history: Sequence[dict], provider: ChatProvider) -> tuple[str, dict]:
    """Ask the model for a standalone query; falls back to `standalone_query` when its reply is unusable."""
    conversation = "\n".join(f"{t['role']}: {t['text']}" for t in history[-6:])
    messages = [
        {"role": "system", "content": REWRITE_PROMPT},
        {"role": "user", "content": f"Conversation:\n{conversation}\n\nLast message: {question}"},
    ]
    try:
        query, usage, _ = await ask_for_json(provider, messages, _read_query, attempts=1)
    except MalformedReply as exc:
        return standalone_query(question, history), exc.usage
    return query, usage


def _read_query(data: dict[str, Any]) -> str:
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise MalformedReply("the rewrite has no query")
    return query.strip()
