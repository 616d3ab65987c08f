"""The groups of people a rule is said for, in the seven languages we read.

A leaflet, a policy or a price list says its rules for some people and not others: "Adults may take 500 mg to
1000 mg", "Students get 20% off", "Parental leave is 16 weeks for the primary caregiver". A question about a group
the sources never name ("How much can children take?", "Dürfen Kinder das nehmen?", "儿童的剂量是多少？") is not
answered by the rule for another group, however many other words they share (`synthesis.scope.missing_group`). A
follow-up naming a group asks the previous question for it ("And for children?": `history`).

Words in one group stand for one another ("kids" are "children", "pupils" are "students", but German "Schüler" are
not "Studenten"): a question may name a group in other words than its sources. Babies and teenagers are children: "Not for children under 2" answers
"Can my baby take it?". Words that name people without sorting them (people, customers, users, members, residents: a
town's population) are in no group, nor one person's relatives ("Who was his mother?"). Words that are as often
something else are left out: English "minor", "senior" and "junior" (adjectives; "juniors" are children), German "Kind"
but where it is capitalised after a text's first word ("Darf mein 8-jähriges Kind …?"; English "kind"), French "cadre" (a frame), "élève" ("élevé", high, once folded), "employé" and Spanish "empleado"
(used), French "enceinte" (a wall), Spanish "menor" (smaller).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from sourcerer.text import CJK_LETTER, normalize

_WORD = re.compile(r"[^\W\d_](?:[^\W_]|-)*", re.UNICODE)  # "l'adulte" is two words; "non-members" one

# each group's words, folded (`normalize`); Chinese and Japanese ones are found inside a text, Arabic ones after
# the prefixes Arabic glues to a word ("للأطفال": for the children)
_GROUPS = {
    "children": """
        child children kid kids baby babies infant infants toddler toddlers newborn newborns minors teen teens
        teenager teenagers adolescent adolescents juniors
        enfant enfants bebe bebes nourrisson nourrissons mineurs mineures ado ados adolescente adolescentes
        kinder kindern kindes saugling sauglinge sauglingen kleinkind kleinkinder babys jugendliche jugendlichen
        minderjahrige minderjahrigen
        nino ninos nina ninas lactante lactantes hijos hijas
        儿童 孩童 孩子 小孩 婴儿 幼儿 新生儿 早产儿 未成年 青少年 子供 子ども こども 小児 乳児 幼児
        طفل اطفال رضيع رضع
    """,
    "adults": """
        adult adults grown-ups adulte adultes erwachsene erwachsenen erwachsener adulto adultos
        成人 成年人 大人
        بالغ بالغين
    """,
    "seniors": """
        seniors pensioner pensioners retiree retirees elderly aines retraites senioren rentner rentnerin rentnern
        jubilado jubilados jubilada jubiladas
        老人 老年人 长者 高齢者 シニア
        مسن مسنين
    """,
    "students": """
        student students pupil pupils alumni alumnus etudiant etudiants etudiante etudiantes studenten studierende
        studierenden estudiante estudiantes alumno alumnos alumna alumnas
        学生 大学生 留学生
        طالب طلاب طالبات
    """,
    # German tells school pupils from students: "Schüler und Studenten zahlen 99 Euro." names both, and a music
    # school's "unsere Schülerinnen und Schüler" (its pupils) says nothing of a discount for "Studenten"
    "pupils": "schuler schulerin schulerinnen",
    "pregnant": """
        pregnant pregnancy pregnancies grossesse schwanger schwangere schwangeren schwangerschaft
        embarazada embarazadas embarazo
        孕妇 怀孕 妊娠 妊婦
        حامل حوامل
    """,
    "breastfeeding": """
        breastfeeding breast-feeding allaitement allaitante allaitantes stillen stillende stillzeit lactancia
        哺乳 授乳
        مرضع مرضعات رضاعه
    """,
    "employees": """
        employee employees staff worker workers salarie salaries salariee salariees
        mitarbeiter mitarbeiterin mitarbeiterinnen mitarbeitende mitarbeitenden angestellte angestellten
        arbeitnehmer arbeitnehmerin trabajador trabajadores
        员工 职工 雇员 従業員 社員
        موظف موظفين موظفون
    """,
    "contractors": """
        contractor contractors freelancer freelancers prestataire prestataires freelances auftragnehmer
        freiberufler contratista contratistas autonomo autonomos
        承包商 外包人员 業務委託
        متعاقد متعاقدين
    """,
    "interns": """
        intern interns trainee trainees apprentice apprentices stagiaire stagiaires apprenti apprentis praktikant
        praktikanten praktikantin auszubildende auszubildenden azubi azubis becario becarios becaria practicante
        practicantes
        实习生 研修生 インターン
        متدرب متدربين
    """,
    "non-members": "non-member non-members nonmembers non-membre non-membres nichtmitglied nichtmitglieder",
    "guests": """
        guest guests visitor visitors invite invites visiteur visiteurs gast gaste gasten besucher besucherin
        besucherinnen invitado invitados visitante visitantes
        访客 客人 ゲスト 来客 来訪者
        ضيف ضيوف زائر زوار
    """,
    "tenants": """
        tenant tenants locataire locataires mieter mieterin mietern inquilino inquilinos inquilina
        租户 租客 入居者
        مستاجر مستاجرين
    """,
    "landlords": """
        landlord landlords bailleur bailleurs vermieter vermieterin arrendador arrendadores casero
        房东 大家さん 貸主
        مؤجر
    """,
    "caregivers": "caregiver caregivers guardian guardians 家长 保護者",
    "drivers": "driver drivers conducteur conducteurs chauffeur chauffeurs fahrer fahrerin 司机 驾驶员 運転者 ドライバー سائق",
    "passengers": """
        passenger passengers passager passagers passagere fahrgast fahrgaste passagier passagiere pasajero pasajeros
        乘客 旅客 乗客
        راكب ركاب
    """,
}
# the words that name people without sorting them into a group: a follow-up naming them still asks for someone
_OTHER_PEOPLE = frozenset(
    normalize(word)
    for word in """
        people person persons resident residents residente residentes minor senior member members membre membres
        mitglied mitglieder socio socios miembro miembros parent parents mother mothers father fathers mere pere eltern
        mutter vater padre padres madre veteran veterans citizen citizens customer customers client clients patient
        patients manager managers woman women man men family families couple couples partner partners spouse spouses
        dependant dependants dependent dependents owner owners traveller travellers traveler travelers user users
        beginner beginners
        personne personnes cliente clientes cadre cadres femme femmes homme hommes famille familles proprietaire
        proprietaires person personen kind kunde kunden kundin patient patienten familie familien frau frauen mann
        manner persona personas menor menores mayores cliente paciente pacientes mujer mujeres hombre hombres familia
        familias propietario propietarios
        daughter daughters sons sohn sohne tochter fils fille filles hijo hija
    """.split()
)
# words that mention a group in a source but name none in a question: Arabic "الحمل" is pregnancy in "خلال مرحلة
# الحمل" and carrying in "حمل الرقم القياسي" (held the record)
_MENTIONING = {"حمل": "pregnant"}
_BY_WORD = {normalize(word): group for group, words in _GROUPS.items() for word in words.split()}
# words that name a group only as written, capitalised after a text's first word: German "Kind" (English "kind")
_CAPITALISED = {"Kind": "children"}
_CJK_WORDS = {word: group for word, group in _BY_WORD.items() if CJK_LETTER.search(word)}
_ARABIC_PREFIX = re.compile(r"^(?:وال|بال|فال|كال|لل|ال|و|ب|ل|ف)")
_ARABIC_LETTER = re.compile(r"[\u0600-\u06ff]")
COMPOUND_LETTERS = 5  # a group's word at least this long names it inside a longer word ("Kleinkinder", "Schwangerschaftstest")


def groups_named(text: str) -> dict[str, str]:
    """The groups of people `text` names, each with the word that names it first ("children": "kids")."""
    found: dict[str, str] = {}
    if CJK_LETTER.search(text):
        for word, group in _CJK_WORDS.items():
            if word in text:
                found.setdefault(group, word)
    for at, match in enumerate(_WORD.finditer(text)):
        written = match.group()
        word = normalize(written)
        group = _BY_WORD.get(word) or (_CAPITALISED.get(written) if at else None)
        if group is None and _ARABIC_LETTER.search(word):
            group = _BY_WORD.get(_ARABIC_PREFIX.sub("", word))
        if group is not None:
            found.setdefault(group, written)
    return found


@lru_cache(maxsize=16)
def groups_mentioned(texts: tuple[str, ...]) -> frozenset[str]:
    """The groups `texts` name, a word of one inside a longer word counting too ("Kleinkinder", "grandchildren"):
    what sources mention is read generously, so a question's group is missing only where no source comes near it."""
    found = {group for text in texts for group in groups_named(text)}
    for text in texts:
        for written in _WORD.findall(text):
            word = normalize(written)
            if (group := _MENTIONING.get(_ARABIC_PREFIX.sub("", word))) is not None:
                found.add(group)
            for size in range(COMPOUND_LETTERS, len(word)):
                found.update(group for part in (word[:size], word[-size:]) if (group := _BY_WORD.get(part)) is not None)
    return frozenset(found)


# the words for women and for men, folded, by which a thing is said for one of them ("A men's haircut costs £18",
# "corte de caballero", "男士剪发"); not those that are as often something else: German "man" (one) and "Männer"
# (English "manner" once folded), "Herr" and "señor" (Mr)
_SEXES = {
    "women": "woman women lady ladies female femme femmes dame dames frau frauen damen mujer mujeres senora senoras dama damas"
    " 女性 女士 女子 妇女 レディース نساء امراه سيدات",
    "men": "men gentleman gentlemen male homme hommes herren mann caballero caballeros hombre hombres senores 男性 男士 男子 メンズ رجال",
}
_SEX_OF = {word: sex for sex, words in _SEXES.items() for word in words.split()}
# German writes the sex into the thing: "Damenhaarschnitt", "Herrenschnitt", "Frauenarzt"
_SEX_PREFIXES = tuple(word for word in _SEX_OF if len(word) >= COMPOUND_LETTERS and word.isascii())


def sexes_named(text: str) -> dict[str, str]:
    """Whether `text` names women or men, each with the word that names them first ("men": "men", of "men's")."""
    return labels_named(text, _SEX_OF, _SEX_PREFIXES)


def labels_named(text: str, labels: Mapping[str, str], prefixes: Sequence[str] = ()) -> dict[str, str]:
    """The labels `text` names by a word of `labels` (folded word -> label), each with the word that names it first:
    a Chinese or Japanese word found inside the text, an Arabic one after the prefixes Arabic glues on ("للرجال"), a
    hyphenated word by itself or its parts ("Vendez-vous"), and a word that opens with one of `prefixes` (a German
    compound: "Damenhaarschnitt")."""
    found: dict[str, str] = {}
    if CJK_LETTER.search(text):
        for word, label in labels.items():
            if CJK_LETTER.search(word) and word in text:
                found.setdefault(label, word)
    for match in _WORD.finditer(text):
        for written in dict.fromkeys((match.group(), *match.group().split("-"))):
            word = normalize(written)
            label = labels.get(word) or labels.get(_ARABIC_PREFIX.sub("", word)) or next((labels[p] for p in prefixes if word.startswith(p)), None)
            if label is not None:
                found.setdefault(label, written)
                break
    return found


def names_people(text: str) -> bool:
    """Whether `text` names people at all: a group ("children", "les étudiants") or people of no group ("people")."""
    return bool(groups_named(text)) or any(normalize(word) in _OTHER_PEOPLE for word in _WORD.findall(text))
