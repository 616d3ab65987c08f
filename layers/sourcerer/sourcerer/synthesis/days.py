"""The days of the week a text names, as the set of those it covers: "Monday to Friday", "le week-end", "周六和周日".

Opening hours and rules are stated day by day, and a question asked of one day is answered by the sentence that
covers it: "Are you open on weekends?" over a gym's hours was answered "From Monday to Friday we are open from 6:00
to 22:00.", and "周末几点开门？" (what time do you open at the weekend?) with "周一至周五营业时间为6:00至22:00。", while
the sentence for Saturdays and Sundays stood next. Read on folded text (`text.normalize`).
"""

from __future__ import annotations

import re

from sourcerer.text import CJK_LETTER, normalize

# the months' names and abbreviations, as written and folded
MONTHS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec januar februar marz märz juni juli oktober dezember janvier fevrier février mars "
    "avril mai juin juillet aout août septembre octobre novembre decembre décembre enero febrero marzo abril mayo "
    "junio julio agosto septiembre octubre noviembre diciembre".split()
)
_LETTERS = re.compile(r"[^\W\d_]+")
# the seasons, folded, which a rule says by its months ("between March and October" holds the summer); not "fall"
# (a verb as often) nor Chinese and Japanese "春" or "冬" alone, which start other words
SEASONS = frozenset(
    "summer winter spring autumn summertime wintertime ete hiver printemps automne sommer fruhling fruhjahr herbst "
    "verano invierno primavera otono صيف الصيف شتاء الشتاء الربيع الخريف 夏天 夏季 冬天 冬季 春天 春季 秋天 秋季 夏場 冬場".split()
)


def months_named(text: str) -> set[str]:
    """The months `text` names, folded ("may" only as the month is written, "May")."""
    return {folded for word in _LETTERS.findall(text) if (folded := normalize(word)) in MONTHS and word != "may"}


_CJK_SEASONS = frozenset(season for season in SEASONS if CJK_LETTER.match(season))


def seasons_named(text: str) -> set[str]:
    """The seasons `text` names, folded (`SEASONS`): "summer", "l'été", "im Winter", "夏天"."""
    words = {normalize(word) for word in _LETTERS.findall(text)} | {season for season in _CJK_SEASONS if season in text}
    return words & SEASONS


# the days a place may keep other hours than the week's, however its week reads: public holidays and the feasts
# that are one, and Ramadan (folded; not "holiday" alone, "vacances", "Urlaub", "vacaciones", "假期" or "عطلة", which
# are a person's leave as often: "How much holiday do I get?" asks the annual leave)
_HOLIDAYS = re.compile(
    r"\b(?:bank|public|national|federal) holidays?\b|\bchristmas\b|\beaster\b|\bnew year'?s?\b|\bboxing day\b|"
    r"\bthanksgiving\b|\bjours? ferie|\bferies?\b|\bnoel\b|\bpaques\b|\bnouvel an\b|\bfeiertag|\bweihnacht|\bostern\b|"
    r"\bsilvester\b|\bneujahr\b|\bfestivos?\b|\bferiados?\b|\bnavidad\b|\bsemana santa\b|\bano nuevo\b|"
    r"العيد|عيد الفطر|عيد الاضحي|الاعياد|العطل الرسميه|عطله رسميه|رمضان|节假日|法定假日|春节|国庆|过年|祝日|祝祭日|祭日|年末年始|"
    r"お盆|ゴールデンウィーク|正月"
)


def holidays_named(text: str) -> list[str]:
    """The public holidays (or Ramadan) `text` names, folded: "bank holidays", "jours fériés", "العيد", "祝日"."""
    return [m.group() for m in _HOLIDAYS.finditer(normalize(text))]


WEEK = frozenset(range(7))  # Monday is 0
WORKDAYS = frozenset(range(5))
WEEKEND = frozenset({5, 6})

# each day's names (folded), singular and plural, in the languages the answer models know; Japanese and Chinese
# after the Latin ones, which match whole words
_DAY_NAMES = (
    "monday mondays lundi lundis montag montags lunes الاثنين",
    "tuesday tuesdays mardi mardis dienstag dienstags martes الثلاثاء",
    "wednesday wednesdays mercredi mercredis mittwoch mittwochs miercoles الاربعاء",
    "thursday thursdays jeudi jeudis donnerstag donnerstags jueves الخميس",
    "friday fridays vendredi vendredis freitag freitags viernes الجمعه",
    "saturday saturdays samedi samedis samstag samstags sonnabend sabado sabados السبت",
    "sunday sundays dimanche dimanches sonntag sonntags domingo domingos الاحد",
)
_GROUPS = {
    **{name: frozenset({day}) for day, names in enumerate(_DAY_NAMES) for name in names.split()},
    **dict.fromkeys("weekday weekdays werktags werktag werktagen".split(), WORKDAYS),
    **dict.fromkeys("weekend weekends week-end week-ends wochenende wochenenden finde".split(), WEEKEND),
    **dict.fromkeys("daily everyday taglich".split(), WEEK),
}
_PHRASES = {  # several words that name days together (folded)
    "every day": WEEK,
    "7 days a week": WEEK,
    "seven days a week": WEEK,
    "tous les jours": WEEK,
    "7 jours sur 7": WEEK,
    "todos los dias": WEEK,
    "jeden tag": WEEK,
    "fin de semana": WEEKEND,
    "fines de semana": WEEKEND,
    "en semaine": WORKDAYS,
    "entre semana": WORKDAYS,
    "dias laborables": WORKDAYS,
    "jours ouvres": WORKDAYS,
    # the end of the week in Arabic: Friday and Saturday across most of the Arab world, Saturday and Sunday elsewhere
    "نهايه الاسبوع": frozenset({4, 5, 6}),
}
_CJK_DAY = "一二三四五六日天"  # Monday .. Sunday after 周, 星期, 礼拜 (日 and 天 both Sunday)
_JAPANESE_DAY = "月火水木金土日"
_CJK_GROUPS = {"周末": WEEKEND, "週末": WEEKEND, "工作日": WORKDAYS, "平日": WORKDAYS, "土日": WEEKEND, "每天": WEEK, "每日": WEEK, "毎日": WEEK}

_LATIN = "|".join(sorted((re.escape(p) for p in [*_PHRASES, *_GROUPS]), key=len, reverse=True))
_DAY = re.compile(
    rf"(?<![\w-])(?:{_LATIN})(?![\w-])|(?:周|星期|礼拜)[{_CJK_DAY}]|[{_JAPANESE_DAY}]曜日?|"
    + "|".join(_CJK_GROUPS)
)
# what joins the first and last day of a range: "Monday to Friday", "du lundi au vendredi", "Montag bis Freitag",
# "de lunes a viernes", "周一至周五", "月曜日から金曜日", "Tuesday–Sunday"
_THROUGH = re.compile(r"\s*(?:to|through|thru|until|till|au|a|jusqu'au|bis|hasta|al|至|到|から|~|～|-|–|—|إلى|الى)\s*")


def days_named(text: str) -> frozenset[int]:
    """The days of the week `text` names (Monday is 0), ranges filled in: "Monday to Friday" is 0 to 4."""
    folded = normalize(text)
    found = list(_DAY.finditer(folded))
    days: set[int] = set()
    for match, after in zip(found, [*found[1:], None], strict=False):
        named = _named(match.group())
        days |= named
        if after is not None and len(named) == 1 and _THROUGH.fullmatch(folded[match.end() : after.start()]):
            last = _named(after.group())
            if len(last) == 1:
                first, end = next(iter(named)), next(iter(last))
                days |= {(first + n) % 7 for n in range((end - first) % 7 + 1)}
    return frozenset(days)


def says_when(question: str, sentence: str) -> bool:
    """Whether `sentence` says which days of the week (two or more: a range, a list) or which months something holds,
    where the question asks of a day (not every day) or of a month or a season: "We are open Tuesday to Saturday …"
    answers "Are you open on Mondays?", "Nous louons de décembre à avril" "Êtes-vous ouverts en mai ?", "… from 9:30am
    to 5pm between March and October" "Do you have an evening opening in summer?"."""
    asked = days_named(question)
    if asked and asked != WEEK and len(days_named(sentence)) >= 2:
        return True
    return bool(months_named(question) or seasons_named(question)) and len(months_named(sentence)) >= 2


def day_words(text: str) -> list[str]:
    """The words of `text` that name days (folded): "weekends" of "Do you deliver on weekends?"."""
    return [match.group() for match in _DAY.finditer(normalize(text))]


def for_other_days(question: str, sentence: str) -> bool:
    """Whether `sentence` names days and none the question names: "From Monday to Friday …" for "Are you open on
    weekends?"; False where either names none."""
    asked = days_named(question)
    return bool(asked) and bool(named := days_named(sentence)) and not named & asked


def _named(word: str) -> frozenset[int]:
    for table in (_GROUPS, _PHRASES, _CJK_GROUPS):
        if word in table:
            return table[word]
    if "曜" in word:  # "土曜日"
        return frozenset({_JAPANESE_DAY.index(word[0])})
    return frozenset({min(_CJK_DAY.index(word[-1]), 6)})  # "周六", "星期天"
