"""Issue: answer what the sources say. The examples a new user tried, with and without the bundled model."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import pytest
from sourcerer import ask, load_passages
from sourcerer.history import rewrite_follow_up, standalone_query
from sourcerer.synthesis.answerability import load_answer_models
from sourcerer.synthesis.extractive import answer_type

RATE_LIMIT = [{"text": "The API rate limit is 600 requests per minute per key.", "source": "api.md"}]
DEPLOYS = [
    {"text": "Production deployments happen on Tuesdays and Thursdays between 10:00 and 16:00 UTC.", "source": "deploys.md"},
    {"text": "Hotfixes need approval from the on-call lead.", "source": "hotfixes.md"},
]
TRIAL = [{"text": "La période d'essai dure trois mois pour les cadres.", "source": "rh.md"}]


@pytest.mark.parametrize(
    ("question", "passages", "quote"),
    [
        ("What is the API rate limit?", RATE_LIMIT, "The API rate limit is 600 requests per minute per key."),
        ("When do production deployments happen?", DEPLOYS, DEPLOYS[0]["text"]),
        ("When are production deployments allowed?", DEPLOYS, DEPLOYS[0]["text"]),
        ("Who approves hotfixes?", DEPLOYS, DEPLOYS[1]["text"]),
        ("Combien de temps dure la periode d'essai ?", TRIAL, TRIAL[0]["text"]),
        (
            "ما هي مُدَّة فَتْرَة التجربة؟",
            [{"text": "مدة فترة التجربة ثلاثة أشهر.", "source": "hr.md"}],
            "مدة فترة التجربة ثلاثة أشهر.",
        ),
        (
            "Wie lange dauert die Probezeit?",
            [{"text": "Die Probezeit dauert sechs Monate.", "source": "hr.md"}],
            "Die Probezeit dauert sechs Monate.",
        ),
    ],
)
def test_answers_when_the_top_passage_says_it(question, passages, quote):
    answer = ask(question, passages=passages)

    assert answer.refused is False, answer.trace.stage("synthesize").detail
    assert [c.quote for c in answer.citations] == [quote]
    synthesize = answer.trace.stage("synthesize").detail
    assert synthesize["features"] == "semantic" and synthesize["answerability"] >= synthesize["min_answerability"]


def test_refuses_what_the_passages_do_not_touch():
    answer = ask("Who approves database migrations?", passages=DEPLOYS)
    assert answer.refused is True and answer.reason == "not_in_sources" and answer.citations == []


def test_lexical_path_loads_no_model_and_says_so(monkeypatch):
    import sourcerer.retrieval.embedders as embedders

    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    monkeypatch.setattr(embedders, "LocalE5Embedder", lambda: pytest.fail("the lexical path loaded the model"))
    embedders._cached_local.cache_clear()
    try:
        answer = ask("What is the API rate limit?", passages=RATE_LIMIT)
    finally:
        embedders._cached_local.cache_clear()
    assert answer.refused is False
    assert answer.trace.stage("retrieve").detail["mode"] == "keyword"
    detail = answer.trace.stage("synthesize").detail
    assert detail["features"] == "lexical" and "sentence_similarity" not in detail
    assert detail["min_answerability"] == load_answer_models()["lexical"].answerability.threshold


def test_operating_point_can_be_overridden(monkeypatch):
    monkeypatch.setenv("SOURCERER_MIN_ANSWERABILITY", "1.01")
    answer = ask("What is the API rate limit?", passages=RATE_LIMIT)
    assert answer.refused is True and answer.reason == "unsupported"
    assert answer.trace.stage("synthesize").detail["min_answerability"] == 1.01


def test_shipped_models_are_small_and_name_their_training_data():
    from importlib import resources

    raw = resources.files("sourcerer").joinpath("data", "answer_models.json").read_bytes()
    assert len(raw) < 100_000
    models = load_answer_models()
    assert set(models) == {"semantic", "lexical"}
    assert "XQuAD" in models["semantic"].trained_on and "held out" in models["semantic"].trained_on
    for entry in models.values():
        assert 0.0 < entry.answerability.threshold < 1.0
        assert len(entry.sentence.weights) == len(entry.sentence.features)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many calls per minute?", "number"),
        ("Combien de temps dure la periode d'essai ?", "number"),
        ("Wann ist der Support erreichbar?", "time"),
        ("Who approves hotfixes?", "person"),
        ("¿Dónde se guardan los datos?", "place"),
        ("试用期多长时间？", "number"),
        ("Why is the sky blue?", None),
    ],
)
def test_question_forms_in_several_languages(question, kind):
    assert answer_type(question) == kind


HISTORY = [
    {"role": "user", "text": "How long does standard shipping take?"},
    {"role": "assistant", "text": "Standard shipping takes 3 to 5 business days. [1]"},
]


@pytest.mark.parametrize(
    ("follow_up", "previous", "expected"),
    [
        ("And what about returns?", "How long does standard shipping take?", "How long does returns take?"),
        ("and for express?", "How long does standard shipping take?", "How long does express take?"),
        ("What about the Team plan?", "How much does the Pro plan cost?", "How much does the Team plan cost?"),
        (
            "Et pour les employés ?",
            "Combien de temps dure la période d'essai pour les cadres ?",
            "Combien de temps dure la période d'essai pour les employés ?",
        ),
        ("Und für Expressversand?", "Wie lange dauert der Standardversand?", "Wie lange dauert der Expressversand?"),
        ("And for webhooks?", "What is the rate limit for the API?", "What is the rate limit for the webhooks?"),
        ("And of ibuprofen?", "What is the adult dose of paracetamol?", "What is the adult dose of ibuprofen?"),
        (
            "What about for children?",
            "What is the adult dose of amoxicillin?",
            "What is the adult dose of amoxicillin for children?",
        ),
        # what is asked of the old topic stays with the new one
        ("What about meals?", "What is the hotel limit per night?", "What is the meals limit?"),
        ("What about webhooks?", "What is the API rate limit?", "What is the webhooks rate limit?"),
        ("And the notice period?", "How long is the probation period?", "How long is the notice period?"),
        # the topic is what the attribute is of, and the verbs stay with the intent
        ("And ibuprofen?", "What is the maximum daily dose of paracetamol?", "What is the maximum daily dose of ibuprofen?"),
        ("Et pour les employés ?", "Quelle est la durée de la période d'essai des cadres ?", "Quelle est la durée de la période d'essai des employés ?"),
        ("And backups?", "How long are audit logs retained?", "How long are backups retained?"),
        ("What about the Pro plan?", "How many seats does the Team plan include?", "How many seats does the Pro plan include?"),
        ("And hotfixes?", "Who must review database migrations?", "Who must review hotfixes?"),
        ("What about gift cards?", "Within how many days can I return sale items?", "Within how many days can I return gift cards?"),
        ("And gift cards?", "Can sale items be refunded?", "Can gift cards be refunded?"),  # "Can" is followed by its subject
        ("What about vacation?", "How far in advance must parental leave be requested?", "How far in advance must vacation be requested?"),
        ("Und die Weiterbildung?", "An wie vielen Tagen ist Homeoffice erlaubt?", "An wie vielen Tagen ist Weiterbildung erlaubt?"),
        # a German compound's unit of time stays with the new topic, as "How many remote work days" keeps its "days"
        ("Und was ist mit Homeoffice?", "Wie viele Urlaubstage gibt es?", "Wie viele Homeoffice-Tage gibt es?"),
        ("Und Krankheitstage?", "Wie viele Urlaubstage gibt es?", "Wie viele Krankheitstage gibt es?"),
        ("What about taxis?", "Can I rent a car on a business trip?", "Can I rent taxis?"),
        ("And paracetamol?", "Is ibuprofen safe during pregnancy?", "Is paracetamol safe?"),  # "safe" asks, with the verb
        ("And on Saturdays?", "When does the store open on Sundays?", "When does the store open on Saturdays?"),
        # found over a tenancy agreement and an API page: the subject after its auxiliary, and a name before its thing
        ("And the tenant?", "How much notice does the landlord have to give?", "How much notice does the tenant have to give?"),
        ("And Enterprise?", "How many requests per minute on the Pro plan?", "How many requests per minute on the Enterprise plan?"),
        ("And on Pro?", "How many requests per minute on the Free plan?", "How many requests per minute on the Pro plan?"),
        # found over an SLA: "do" is the auxiliary of "you", and the plan after "on the" ends with no verb
        ("What about Enterprise?", "What uptime do you guarantee on the Standard plan?", "What uptime do you guarantee on the Enterprise plan?"),
        ("And for the work permit?", "Which documents do I need for the visa application?", "Which documents do I need for the work permit?"),
        # found over a German handbook: "bei einer Hochzeit" is introduced by "bei", its indefinite article skipped
        ("Und bei der Geburt eines Kindes?", "Wie viel Sonderurlaub gibt es bei einer Hochzeit?", "Wie viel Sonderurlaub gibt es bei einer Geburt eines Kindes?"),
        ("Und bei einem Umzug?", "Wie viel Sonderurlaub gibt es bei einer Hochzeit?", "Wie viel Sonderurlaub gibt es bei einer Umzug?"),
        ("¿Y por una mudanza?", "¿Cuántos días de permiso hay por un matrimonio?", "¿Cuántos días de permiso hay por un mudanza?"),
        # found over a Chinese card FAQ and a Japanese hotel FAQ: a topic alone, marked 呢 or は, is "what about it?"
        ("普卡呢？", "金卡年费多少钱？", "普卡 多少钱"),
        ("スタンダードプランは？", "ベーシックプランの月額料金はいくらですか？", "スタンダードプランは 料金 いくら"),
        ("这个呢？", "可以退货吗？", "这个呢？ 可以退货吗"),  # a pronoun names no new topic
        ("CDは？", "本は何冊まで借りられますか？", "cdは 何冊"),  # "how many volumes" goes with it
        # found over a ryokan's page: the topic keeps its は, so the answer is read as about it (`asked_topic_first`)
        ("チェックアウトは？", "チェックインは何時からですか？", "チェックアウトは 何時"),
        # found over a vaccination schedule: "pour" says what "contre" said; "âge" and "se fait" frame the question
        ("Et pour la grippe ?", "À quel âge se fait le vaccin contre le pneumocoque ?", "À quel âge se fait le vaccin contre le grippe ?"),
        # found over a Spanish car insurance: "cuánto" asks, so the follow-up is a question of its own
        ("¿Y cuánto cuesta añadirlas?", "¿Cubre el seguro la rotura de lunas?", "Y cuánto cuesta añadirlas? Cubre rotura lunas"),
        # found over a gym's terms and a mobile contract: a day for a day, and the previous question's own article
        ("¿Y los domingos?", "¿A qué hora abre el gimnasio los sábados?", "¿A qué hora abre el gimnasio los domingos?"),
        ("Et le dimanche ?", "Le magasin ouvre-t-il le samedi ?", "Le magasin ouvre-t-il le dimanche ?"),
        ("Und am Sonntag?", "Wann öffnet der Laden am Samstag?", "Wann öffnet der Laden am Sonntag?"),
        ("Und in der EU?", "Was kostet Roaming in der Schweiz?", "Was kostet Roaming in der EU?"),
        # found over a hospital's visiting rules: a place for a place, under the follow-up's own preposition ("And in
        # intensive care?" had become "What are the intensive care hours?", answered with the ICU's flowers rule)
        ("And in intensive care?", "What are the visiting hours on general wards?", "What are the visiting hours in intensive care?"),
        ("Et en soins intensifs ?", "Quels sont les horaires de visite dans les services généraux ?", "Quels sont les horaires de visite en soins intensifs ?"),
        # found over an Arabic travel policy: a follow-up with its own asking word asks a question of its own
        ("وكيف تُصرف المبالغ؟", "متى أقدم مطالبة المصروفات؟", "وكيف تُصرف المبالغ؟"),
        ("وكم المدة؟", "كيف أطلب استرداد المبلغ؟", "وكم المدة؟ أطلب استرداد المبلغ"),
        ("¿Y la devolución?", "¿Cuánto cuesta el envío urgente?", "¿Cuánto cuesta el devolución?"),  # "¿" opens it
        # the article that agreed with the old topic goes with it
        ("And for sale items?", "Within how many days can I return an item?", "Within how many days can I return sale items?"),
        # found over a pharmacy's page: a group of people, after a question that named none, qualifies it ("How much
        # is children?" was answered with a vaccine's price "not available to children")
        ("And for children?", "How much is a prescription?", "How much is a prescription for children?"),
        ("What about pensioners?", "How much does delivery cost?", "How much does delivery cost for pensioners?"),
        ("And for people over 65?", "How much does delivery cost?", "How much does delivery cost for people over 65?"),
        ("Et les étudiants ?", "Combien coûte l'abonnement ?", "Combien coûte l'abonnement pour les étudiants ?"),
        ("Und für Kinder?", "Wie viel kostet der Eintritt?", "Wie viel kostet der Eintritt für Kinder?"),
        ("¿Y para niños?", "¿Cuánto cuesta la entrada?", "¿Cuánto cuesta la entrada para niños?"),
        # found over a privacy policy: a follow-up that names nothing carries what the previous question asked be done,
        # as it was asked ("How long does that take? copy data" was refused)
        ("How long does that take?", "How do I get a copy of my data?", "How long does that take? get a copy of my data"),
        ("and does it take long?", "What is the standard shipping time?", "and does it take long? standard shipping"),
        # found over a sync app's help: a pronoun stands for the previous topic however many words the follow-up has
        ("How much storage does it include?", "How much does the Pro plan cost?", "How much storage does it include? Pro plan"),
        # the same topic with a new predicate takes the old topic, not the old predicate ("encrypted")
        ("and if it is stolen?", "Do laptops need to be encrypted?", "and if it is stolen? laptops"),
        # found over a telecom contract: a condition is no new topic ("¿Tengo que si no lo devuelvo?" was refused), and
        # a time qualifies the question ("¿Cuánto cuesta después del primer año?" lost the tariff)
        ("¿Y si no lo devuelvo?", "¿Tengo que devolver el router?", "Y si no lo devuelvo? devolver router"),
        ("Et si je suis en retard ?", "À quelle heure ferme la crèche ?", "Et si je suis en retard ? crèche"),
        ("¿Y después del primer año?", "¿Cuánto cuesta la tarifa?", "¿Cuánto cuesta la tarifa después del primer año?"),
        ("And after 6pm?", "How much is parking?", "How much is parking after 6pm?"),
        # found over a nursery's rules: a time the previous question had is swapped, not added to ("... nach Fieber
        # wiederkommen nach Durchfall?" was answered with the fever rule); French "Y a-t-il" opens no follow-up
        ("Und nach Durchfall?", "Wann darf mein Kind nach Fieber wiederkommen?", "Wann darf mein Kind nach Durchfall wiederkommen?"),
        ("¿Y después del primer año?", "¿Cuánto cuesta después de seis meses?", "¿Cuánto cuesta después del primer año?"),
        ("Y a-t-il des frais d'inscription ?", "Combien coûte l'abonnement ?", "Y a-t-il des frais d'inscription ?"),
        # found over a cloud storage's plans: a place where the previous question named none qualifies it ("On the Plus
        # plan?" was read as no follow-up, and answered with the Plus plan's price)
        ("On the Plus plan?", "Can I password-protect a link?", "Can I password-protect a link on the Plus plan?"),
        ("And in intensive care?", "What are the visiting hours?", "What are the visiting hours in intensive care?"),
        # found over a music school's page: an article opening the new thing is no preposition (it was appended,
        # "¿Puedo alquilar un violín una guitarra?", and answered with the classes), the verb after a modal that
        # carries its subject stays ("¿Puedo guitarra?"), as a German modal question's closing verb does, and what a
        # French question asks of its thing after the verb ("fourni") is no topic
        ("¿Y una guitarra?", "¿Puedo alquilar un violín?", "¿Puedo alquilar una guitarra?"),
        ("Et une guitare ?", "Puis-je louer un violon ?", "Puis-je louer une guitare ?"),
        ("Und eine Gitarre?", "Kann ich eine Geige mieten?", "Kann ich eine Gitarre mieten?"),
        ("¿Y una guitarra?", "¿Cuánto cuesta un violín?", "¿Cuánto cuesta una guitarra?"),
        ("Et le cadenas ?", "Le casque est-il fourni ?", "Le cadenas est-il fourni ?"),
        (
            "Et le remboursement, il arrive quand ?",
            "Quel est le délai pour les retours ?",
            "Et le remboursement, il arrive quand ?",
        ),
    ],
)
def test_follow_up_swaps_the_topic_and_keeps_the_intent(follow_up, previous, expected):
    assert standalone_query(follow_up, [{"role": "user", "text": previous}]) == expected


@pytest.mark.parametrize(
    ("follow_up", "previous", "carried"),
    [
        # "does it cost anything?" after "is there a shuttle bus?": the kana it asks with ("ます", "すか") are no topic
        # the two share, and kept the bus from being carried along (the tuition fees answered)
        ("料金はかかりますか？", "送迎バスはありますか？", "送迎バス"),
        ("لكم مدة؟", "هل يمكنني تجميد اشتراكي؟", "تجميد"),  # "for how long?": ل glued to كم, as و is
        # "and the fee?": what the locker costs, no new topic (it was read as one, and refused)
        ("料金は？", "ロッカーはありますか？", "ロッカー"),
    ],
)
def test_a_follow_up_asking_of_the_same_topic_carries_it(follow_up, previous, carried):
    assert carried in standalone_query(follow_up, [{"role": "user", "text": previous}])


@pytest.mark.parametrize(
    ("follow_up", "previous", "focus"),
    [
        ("And express shipping?", "How long does standard shipping take?", ("express",)),
        ("and for express?", "How long does standard shipping take?", ("express",)),
        ("Und für Expressversand?", "Wie lange dauert der Standardversand?", ("expressversand",)),
        ("What about the Team plan?", "How much does the Pro plan cost?", ("team",)),
        ("那快递呢？", "标准运输需要多长时间？", ("快递",)),
        ("夕食は？", "朝食は何時からですか？", ("夕食",)),
        # "in the case of" names nothing: its pairs ("ルの", "の場", "場合") were the focus, and no answer held them
        ("無断キャンセルの場合は？", "キャンセル料はいくらですか？", ("無断", "断キ")),
        # the condition asked is no topic an answer names ("Bekomme ich eine Bescheinigung?": "…, wenn Sie …")
        ("Unter welcher Bedingung?", "Bekomme ich eine Bescheinigung?", ()),
        ("MT車は？", "AT車の料金はいくらですか？", ("mt",)),  # "車" alone, cut from "MT車は", is in no text as a term
        ("and does it take long?", "What is the standard shipping time?", ()),  # the same topic: nothing new to name
        # a hyphenated word is one, written closed: its parts were "book" (asked before) and "day" (of "business days")
        ("What about e-books?", "How long can I borrow a book?", ("ebook",)),
        ("And same-day delivery?", "How much does express delivery cost?", ("sameday",)),
        # a fee written onto the topic is asked of it: "会员年费为88元" never writes 会员费
        ("那会员费呢？", "加急配送多少钱？", ("会员",)),
    ],
)
def test_a_follow_up_that_swaps_the_topic_names_what_the_answer_must_be_about(follow_up, previous, focus):
    assert rewrite_follow_up(follow_up, [{"role": "user", "text": previous}]).focus == focus


POLICIES = [json.loads(line) for line in (Path(__file__).parents[2] / "examples" / "policies.jsonl").read_text().splitlines() if line.strip()]
EXPRESS_HISTORY = [
    {"role": "user", "text": "How long does standard shipping take?"},
    {"role": "assistant", "text": "Standard shipping takes 3 to 5 business days within the continental United States. [1]"},
]


@pytest.mark.parametrize("follow_up", ["And express shipping?", "and for express?"])
def test_an_entity_swap_is_answered_about_the_new_entity_not_the_old_one(follow_up):
    """The issue's example: "And express shipping?" was answered with the standard shipping sentence, cited. That
    sentence shares every word of the rewrite but "express"; the answer now comes from a passage that names it."""
    answer = ask(follow_up, passages=POLICIES, history=EXPRESS_HISTORY)
    assert not answer.refused, answer.trace
    assert answer.citations[0].quote.startswith("Express shipping arrives the next business day"), answer.answer
    assert "standard" not in answer.answer.lower()
    assert any("the follow-up asks about express" in note for note in answer.trace.notes)


def test_a_hyphenated_topic_is_looked_for_whole():
    """"What about e-books?" after the book loan question was answered with the book loan rule: the index terms of
    "e-books" are its parts less the letter, "book", so the follow-up brought nothing new to look for. "And same-day
    delivery?" after the express price was answered with it: its focus was "day", which "1 to 2 business days"
    names. A hyphenated word is looked for whole, written closed or hyphenated."""
    library = [
        {"text": "Books can be borrowed for three weeks and renewed twice online.", "source": "loans"},
        {"text": "E-books are borrowed through the library app for 14 days.", "source": "ebooks"},
    ]
    history = [{"role": "user", "text": "How long can I borrow a book?"}, {"role": "assistant", "text": "Books can be borrowed for three weeks. [1]"}]
    answer = ask("What about e-books?", passages=library, history=history)
    assert not answer.refused and answer.citations[0].quote.startswith("E-books"), answer.answer
    shop = [
        {"text": "Express shipping arrives in 1 to 2 business days and costs $14 per order.", "source": "express"},
        {"text": "Standard shipping takes 3 to 5 business days within the continental US.", "source": "shipping"},
    ]
    history = [{"role": "user", "text": "How much does express delivery cost?"}, {"role": "assistant", "text": "It costs $14 per order. [1]"}]
    answer = ask("And same-day delivery?", passages=shop, history=history)
    assert answer.refused and answer.reason == "unsupported", answer.answer
    assert any("the follow-up asks about same-day" in note for note in answer.trace.notes)


def test_a_chinese_follow_up_is_answered_from_the_new_topic_and_what_it_asks_of_it():
    """Held-out conversations over a Chinese shop: "那会员费呢？" (and the membership fee?) was refused, as its focus
    held 员费, which "会员年费为88元" (the yearly membership fee) never writes; "那加急呢？" after "标准配送需要多久？" was
    refused as asking how long with no length of time said, where "次日送达" (delivered the next day) says it."""
    shop = [
        {"text": "标准配送需要3到5个工作日。", "source": "shipping"},
        {"text": "加急配送次日送达，运费为20元。", "source": "express"},
        {"text": "会员年费为88元，可享受全年免运费。", "source": "membership"},
    ]
    for previous, follow_up, source in (("加急配送多少钱？", "那会员费呢？", "membership"), ("标准配送需要多久？", "那加急呢？", "express")):
        answer = ask(follow_up, passages=shop, history=[{"role": "user", "text": previous}, {"role": "assistant", "text": "…"}])
        assert not answer.refused and answer.citations[0].label == source, (follow_up, answer.answer)


@pytest.mark.parametrize(
    ("previous", "follow_up", "carried"),
    [
        ("初診料はいくらですか？", "駐車場はありますか？", False),  # a thing of its own: a question of its own
        ("診療時間は何時までですか？", "予約は必要ですか？", False),
        ("挂号费多少钱？", "有停车场吗？", False),
        ("初診料はいくらですか？", "それは保険適用ですか？", True),  # a pronoun stands for the previous topic
        ("送迎バスはありますか？", "料金はかかりますか？", True),  # an attribute is asked of it
        ("ロッカーはありますか？", "必要ですか？", True),
    ],
)
def test_a_chinese_or_japanese_follow_up_that_names_its_own_thing_stands_on_its_own(previous, follow_up, carried):
    """Held-out conversations over a Japanese clinic: "駐車場はありますか？" (is there parking?) after "初診料はいくらですか？"
    had the fee question appended ("駐車場はありますか？ 初診料はいくらですか") and was answered with the fee, cited, and
    "予約は必要ですか？" with the opening hours. Written without spaces, the follow-up read as one word, never as a
    question of its own."""
    query = standalone_query(follow_up, [{"role": "user", "text": previous}])
    assert (query != follow_up) == carried, query
    if follow_up in ("駐車場はありますか？", "予約は必要ですか？"):
        clinic = [
            {"text": "診療時間は平日9時から18時までです。", "source": "hours"},
            {"text": "初診の方は予約が必要です。", "source": "reservation"},
            {"text": "初診料は3,000円です。", "source": "fee"},
            {"text": "駐車場は20台分あり、無料です。", "source": "parking"},
        ]
        answer = ask(follow_up, passages=clinic, history=[{"role": "user", "text": previous}, {"role": "assistant", "text": "…"}])
        assert not answer.refused and answer.citations[0].label in ("parking", "reservation"), answer.answer


def test_a_word_that_says_when_is_no_thing_a_follow_up_names():
    """Held-out conversations over a French bakery: "Combien de temps avant ?" after "Faut-il commander les gâteaux à
    l'avance ?" had the focus "avant", which no passage holds ("à l'avance"), and was refused."""
    bakery = [
        {"text": "Les gâteaux sur commande doivent être commandés 48 heures à l'avance.", "source": "commande"},
        {"text": "La livraison est possible dans un rayon de 5 km pour 3 euros.", "source": "livraison"},
    ]
    history = [{"role": "user", "text": "Faut-il commander les gâteaux à l'avance ?"}, {"role": "assistant", "text": "…"}]
    assert rewrite_follow_up("Combien de temps avant ?", history).focus == ()
    answer = ask("Combien de temps avant ?", passages=bakery, history=history)
    assert not answer.refused and "48 heures" in answer.answer, answer.answer


def test_a_follow_up_that_keeps_the_topic_is_answered_about_what_it_now_asks():
    """"and if it is stolen?" after "Do laptops need to be encrypted?" carried "encrypted" along, and the
    encryption rule, beside the stolen-laptop rule in one section, was the answer."""
    laptops = "## Laptops\n\nLaptops must be encrypted with BitLocker or FileVault.\nReport a lost or stolen laptop to security@acme.com within 24 hours."
    history = [
        {"role": "user", "text": "Do laptops need to be encrypted?"},
        {"role": "assistant", "text": "Laptops must be encrypted with BitLocker or FileVault. [1]"},
    ]
    answer = ask("and if it is stolen?", passages=_chunked("it-policy.md", laptops), history=history)
    assert not answer.refused, answer.trace
    assert answer.answer.startswith("Report a lost or stolen laptop"), answer.answer


def test_a_follow_up_about_a_new_topic_is_answered_by_a_sentence_that_names_it():
    """"And personal laptops?" after a question on personal phones: the passage on personal devices names laptops,
    so it stayed a candidate, and its sentence on phones (sharing every other word) was the answer."""
    devices = (
        "## Personal devices\n\nYou may read work email on a personal phone if it has a screen lock.\n"
        "Personal laptops may not be used to store customer data."
    )
    history = [
        {"role": "user", "text": "Can I read work email on a personal phone?"},
        {"role": "assistant", "text": "You may read work email on a personal phone if it has a screen lock. [1]"},
    ]
    answer = ask("And personal laptops?", passages=_chunked("it-policy.md", devices), history=history)
    assert not answer.refused, answer.trace
    assert answer.answer.startswith("Personal laptops may not be used") and "phone" not in answer.answer, answer.answer
    assert answer.trace.stage("synthesize").detail["off_focus_set_aside"] == 1


HELP_CENTRE = """<main><h1>Frequently asked questions</h1>
<details><summary>How do I reset my password?</summary><p>Click "Forgot password" on the sign-in page. We email you a
link that works for 30 minutes.</p></details>
<details><summary>Can I change my username?</summary><p>No. Usernames are permanent, but you can change your display
name at any time.</p></details>
<details><summary>How do I delete my account?</summary><p>Go to Settings, then Privacy, and choose Delete account.
Your data is erased within 14 days.</p></details></main>"""


def test_a_reply_to_another_faq_question_is_no_answer_where_the_faq_asks_the_question_in_other_words():
    """"Can I rename my account?" shares only "account" with the steps under "How do I delete my account?", and was
    answered with the steps to delete it. The FAQ question it asks in other words is "Can I change my username?",
    whose "No." replies to usernames, not renamed accounts: a refusal, with the FAQ question it matched in the
    trace. A paraphrase of the delete question itself is still answered with its steps."""
    passages = _chunked("help.html", HELP_CENTRE)
    rename = ask("Can I rename my account?", passages=passages, chat="extractive")
    assert rename.refused, rename.answer
    assert rename.trace.stage("synthesize").detail["asked_faq_question"] == "Can I change my username?"
    close = ask("How do I close my account?", passages=passages, chat="extractive")
    assert close.answer.startswith("Go to Settings, then Privacy, and choose Delete account"), close.answer
    assert "asked_faq_question" not in close.trace.stage("synthesize").detail


def test_a_yes_or_no_answer_adds_no_sentence_that_says_nothing_more_of_the_question():
    """"Can I store customer data on my personal laptop?" got "Personal laptops may not be used to store customer
    data." and, from the same section, "You may read work email on a personal phone if it has a screen lock.",
    which holds no word of the question the first lacks and reads as a yes. A question that asks for something
    keeps its second sentence where it is close."""
    devices = (
        "## Personal devices\n\nYou may read work email on a personal phone if it has a screen lock.\n"
        "Personal laptops may not be used to store customer data."
    )
    passages = _chunked("it-policy.md", devices)
    answer = ask("Can I store customer data on my personal laptop?", passages=passages, chat="extractive")
    assert answer.answer == "Personal laptops may not be used to store customer data. [1]", answer.answer


def test_a_standalone_question_is_answered_about_the_kind_it_asks_for():
    """"How long does express shipping take?" over the README's policies: the words tie between the standard and
    the express rules, and the standard one (which says how long) was the answer, cited. A sentence whose subject
    swaps the question's word for another ("standard shipping") while a sentence near it keeps it ("express
    shipping") is about another kind; strict verification keeps the express answer (the standard rule is no
    better answer to beat)."""
    from sourcerer.synthesis.scope import other_kind, word_pairs

    assert word_pairs("How long does express shipping take?") == {("express", "ship"), ("ship", "take")}
    standard, express = POLICIES[0]["text"], POLICIES[1]["text"]
    assert other_kind("How long does express shipping take?", standard, express) == "express"
    assert other_kind("How long does standard shipping take?", standard, express) is None
    # a later phrase of a sentence is not what it is about: "... for the high speed engine inventor"
    later = "Early versions were in use by 1851, but the best indicator was developed for the high speed engine inventor."
    assert other_kind("Who developed the steam engine indicator?", later, "The steam engine indicator traces pressure.") is None
    for verify in (False, "strict"):
        answer = ask("How long does express shipping take?", passages=POLICIES, verify=verify)
        assert not answer.refused and answer.citations[0].quote.startswith("Express shipping arrives"), answer.answer
        assert answer.trace.stage("synthesize").detail["other_kind_set_aside"] == ["express"]
    assert ask("How long does standard shipping take?", passages=POLICIES).citations[0].quote.startswith("Standard shipping")


def test_a_japanese_question_is_answered_by_the_sentence_about_its_topic():
    """Found trying a ryokan's page as a user: "夕食は何時までですか？" (until when is dinner?) was answered
    "チェックインは15時から19時までです。", whose character pairs (時ま, まで, です) the question shares, while "夕食は18時
    から20時まで、お部屋で…" stood fourth; the follow-up "チェックアウトは？" after the check-in question got the check-in
    hours first. A sentence that only names the topic in passing, or a title before Wikipedia's text, is not
    promoted (none of 1,071 JSQuAD questions opening with a topic changed)."""
    page = [
        {"text": "チェックインは15時から19時までです。チェックアウトは10時です。19時以降の到着の場合は、夕食のご用意ができませんので、必ずご連絡ください。", "source": "チェックイン・チェックアウト"},
        {"text": "夕食は18時から20時まで、お部屋でお召し上がりいただけます。朝食は7時から9時まで、大広間でご用意しております。", "source": "お食事"},
    ]
    answer = ask("夕食は何時までですか？", passages=page, chat="extractive")
    assert not answer.refused and answer.citations[0].quote.startswith("夕食は18時から20時まで"), answer.answer
    follow_up = ask("チェックアウトは？", passages=page, history=[{"role": "user", "text": "チェックインは何時からですか？"}], chat="extractive")
    assert not follow_up.refused and follow_up.answer.startswith("チェックアウトは10時です。"), follow_up.answer
    # a sentence may join another topic to it, or say how often, before it (a library's page: "日曜日は何時まで開いて
    # いますか？" got the weekday hours first)
    hours = [{"text": "平日は9時から20時まで開館しています。土曜日と日曜日は9時から17時までです。", "source": "開館時間"}]
    answer = ask("日曜日は何時まで開いていますか？", passages=hours, chat="extractive")
    assert not answer.refused and answer.answer.startswith("土曜日と日曜日は9時から17時までです。"), answer.answer


def test_a_verb_before_the_thing_is_no_kind_of_it():
    """Found trying a leave policy as a user: "Do part-time employees get annual leave?" was answered "Full-time
    employees receive 25 days of paid annual leave per year.", while "Part-time employees receive leave pro rata."
    ranked first and was set last as being about a "receive" kind of leave. A kind opens the subject or follows a
    word that says nothing; after another word it is a verb."""
    from sourcerer.synthesis.scope import other_kind

    question = "Do part-time employees get annual leave?"
    full, part = "Full-time employees receive 25 days of paid annual leave per year.", "Part-time employees receive leave pro rata."
    assert other_kind(question, part, full) is None
    assert other_kind("How long does express shipping take?", "The standard shipping takes 3 to 5 days.", "Express shipping arrives tomorrow.") == "express"
    policy = [{"text": f"Annual leave\n{full} {part}\nUp to 5 unused days can be carried over.", "source": "Leave policy"}]
    answer = ask(question, passages=policy, chat="extractive")
    assert not answer.refused and answer.answer.startswith(part), answer.answer
    assert ask("Do full-time employees get annual leave?", passages=policy, chat="extractive").answer.startswith(full)


def test_another_form_of_the_word_does_not_keep_the_asked_kind(monkeypatch):
    """Found trying a SaaS billing page as a user: "Can I get a refund on a monthly plan?" was answered "Annual
    plans are refunded pro rata for unused full months ...": "months" is indexed as "monthly" is, so the sentence
    read as holding the asked kind. A form of the word ("express", "expressed") still holds it. The monthly plans'
    sentence says nothing of a refund, and where the reader can run it vetoes it too (p under its bar)."""
    from sourcerer.synthesis.scope import other_kind

    question = "Can I get a refund on a monthly plan?"
    annual = "Annual plans are refunded pro rata for unused full months if cancelled within the first 90 days."
    monthly = "Monthly plans stop at the end of the current month."
    assert other_kind(question, annual, monthly) == "month"
    assert other_kind("How long does express shipping take?", "Standard shipping takes 5 days; expressed parcels one.", "Express shipping arrives tomorrow.") is None
    passages = [{"text": f"Cancellation\nYou can cancel at any time. {monthly} {annual}", "source": "Billing"}]
    answer = ask(question, passages=passages, chat="extractive")
    assert annual not in answer.answer, answer.answer
    monkeypatch.setenv("SOURCERER_READER_VETO", "0")
    answer = ask(question, passages=passages, chat="extractive")
    assert not answer.refused and answer.answer.startswith(monthly), answer.answer


def test_a_second_sentence_about_another_kind_is_not_added():
    """Found trying a school's page as a user: "How much is the breakfast club?" got the breakfast club's price and,
    after it, the after-school club's; "When does the spring term end?" the autumn term's dates after its own."""
    school = [{"text": "School day\nThe breakfast club opens at 7:45 am and costs £3 per session. The after-school club runs until 6 pm and costs £12 per session.", "source": "School"}]
    answer = ask("How much is the breakfast club?", passages=school, chat="extractive")
    assert not answer.refused and "£3" in answer.answer and "after-school" not in answer.answer, answer.answer
    terms = [{"text": "Term dates\nThe spring term starts on 6 January and ends on 28 March. The autumn term starts on 4 September and ends on 20 December.", "source": "School"}]
    answer = ask("When does the spring term end?", passages=terms, chat="extractive")
    assert not answer.refused and "28 March" in answer.answer and "autumn" not in answer.answer, answer.answer


def test_a_german_compound_of_another_kind_goes_after_the_asked_one():
    """Found trying a rail operator's terms as a user: "Was kostet die Fahrradkarte im Nahverkehr?" was answered
    "Die Fahrradkarte für den Fernverkehr kostet 9,90 Euro.", while "Im Nahverkehr gelten die Regeln des jeweiligen
    Verkehrsverbunds." stood second. German writes the kind and its thing as one word."""
    from sourcerer.synthesis.scope import other_kind

    far, near = "Die Fahrradkarte für den Fernverkehr kostet 9,90 Euro.", "Im Nahverkehr gelten die Regeln des jeweiligen Verkehrsverbunds."
    assert other_kind("Was kostet die Fahrradkarte im Nahverkehr?", far, near) == "Nahverkehr"
    assert other_kind("Was kostet die Fahrradkarte?", far, near) is None
    rules = [{"text": f"Fahrräder\nFahrräder dürfen nur mit einer Fahrradkarte mitgenommen werden. {far}\n{near}", "source": "Fahrräder"}]
    # "was kostet" asks a price: the sentence on Nahverkehr states none, and the Fernverkehr price is said of another
    # kind, so the question is refused (answered with the Nahverkehr rule before "was kostet" was read as a price)
    answer = ask("Was kostet die Fahrradkarte im Nahverkehr?", passages=rules, chat="extractive")
    assert answer.refused and answer.trace.stage("synthesize").detail["missing_value"] == "money", answer.answer
    answer = ask("Welche Regeln gelten für die Fahrradkarte im Nahverkehr?", passages=rules, chat="extractive")
    assert not answer.refused and answer.answer.startswith(near), answer.answer


def test_a_preposition_is_neither_a_kind_nor_a_thing():
    """Found trying a French vaccination schedule as a user: "Combien de doses pour le vaccin contre le
    papillomavirus ?" was answered with the ROR vaccine's second dose. "la vaccination contre les papillomavirus"
    read as a "vaccination" kind of "contre" beside "le vaccin contre le pneumocoque", and the right sentence was set
    last as being about another kind."""
    from sourcerer.synthesis.scope import other_kind, word_pairs

    schedule = [
        "La vaccination contre les papillomavirus est recommandée de 11 à 14 ans, en deux doses espacées de 6 à 13 mois.",
        "Le vaccin contre le pneumocoque est administré à 2 mois, 4 mois et 11 mois.",
        "Le vaccin ROR est administré à 12 mois, avec une seconde dose entre 16 et 18 mois.",
    ]
    question = "Combien de doses pour le vaccin contre le papillomavirus ?"
    assert word_pairs(question) == set()
    assert other_kind(question, schedule[0], schedule[1]) is None
    answer = ask(question, passages=[{"text": t, "source": "Calendrier des vaccinations"} for t in schedule], chat="extractive")
    assert not answer.refused and answer.citations[0].quote.startswith("La vaccination contre les papillomavirus"), answer.answer


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is the phone number of the emergency line?", "phone"),
        ("Which number should I call for support?", "phone"),
        ("¿Cuál es el número de la línea de emergencia?", "phone"),
        ("Quel est le numéro de téléphone du support ?", "phone"),
        ("Wie lautet die Telefonnummer des Supports?", "phone"),
        ("ما رقم هاتف خدمة العملاء؟", "phone"),
        ("紧急热线的电话号码是多少？", "phone"),
        ("What is the support email address?", "email"),
        ("What is the URL of the portal?", "url"),
        # what something costs or pays: an amount of money answers it
        ("How much does express shipping cost?", "money"),
        ("How much extra pay do on-call engineers receive?", "money"),
        ("Quelle prime reçoit l'ingénieur d'astreinte ?", "money"),
        ("Wie hoch ist die Zulage für Rufbereitschaft?", "money"),
        ("¿Cuánto se cobra por estar de guardia?", "money"),
        ("كم يحصل مهندس المناوبة من بدل إضافي؟", "money"),
        ("值班有多少补贴？", "money"),
        ("朝食の料金はいくらですか？", "money"),
        ("前日にキャンセルするといくらかかりますか？", "money"),
        ("いくらか割引はありますか？", None),  # "some discount", not "how much"
        ("どんな企業がいくらでも探すことが出来るか？", None),  # "any number of", JSQuAD
        ("全GDPのいくら占めているか？", None),  # a share of the GDP, JSQuAD
        ("How much does late check-out cost?", "money"),  # a hyphenated word between
        ("How much paracetamol can I take in a day?", None),
        ("Quel prix obtient le vainqueur ?", None),  # a prize, not a price
        # asking about the value, not for it
        ("How do I update my phone number?", None),
        ("Can I change my email address?", None),
        ("What happens to my email address when I leave?", None),
        ("What ratings website did Silent Hill get an 86/100 score on?", None),
        ("How many days of leave do I get?", None),
        # how many of a thing: a count answers it; how many of a unit of time, or times, is left to the models
        ("How many failover drills happen per year?", "count"),
        ("Combien d'élèves y a-t-il par cours ?", "count"),
        ("¿Cuántos monitores hay por grupo?", "count"),
        ("Wie viele Räume gibt es?", "count"),
        ("How many vacation days do I get?", None),
        ("Wie viele Stunden hat der Grundkurs?", None),
        ("How many times can I reschedule?", None),
    ],
)
def test_the_contact_value_a_question_asks_for(question, kind):
    from sourcerer.synthesis.scope import asked_value

    assert asked_value(question) == kind


def test_a_question_asking_for_a_phone_number_is_not_answered_without_one():
    """"What is the phone number of the emergency line?" over a support policy that says Enterprise customers can
    call the emergency line around the clock: the sentence shares the question's words and holds no number to
    call, so it is no answer (`decided_by: asked value`, with a note). Given the number, it answers."""
    policy = "Our support desk is open Monday to Friday from 8:00 to 20:00 CET. Enterprise customers can call the emergency line around the clock."
    question = "What is the phone number of the emergency line?"
    answer = ask(question, passages=[{"text": policy, "source": "Support"}])
    assert answer.refused and answer.reason == "unsupported", answer.answer
    detail = answer.trace.stage("synthesize").detail
    assert detail["decided_by"] == "asked value" and detail["missing_value"] == "phone"
    assert any("asks for a phone number, and the closest sentences hold none" in n for n in answer.trace.notes)
    numbered = policy.replace("around the clock.", "around the clock on +49 30 1234 5678.")
    answered = ask(question, passages=[{"text": numbered, "source": "Support"}])
    assert not answered.refused and "+49 30 1234 5678" in answered.answer, answered.trace


def test_a_question_asking_how_many_is_not_answered_by_a_measure_of_something_else():
    """Found trying the handbook as a user: "How many failover drills happen per year?" was answered "During the
    March drill, the failover cutover ... completed in 42 seconds." (0.83), and "How many engineers are on call?"
    with the on-call rule's 5 and 30 minutes (0.95): a length of time, an amount of money or a clock time counts no
    thing. Given a count, it answers, in words or digits; a question asking how many of a unit of time is left to
    the answer models ("How many minutes ...?" is answered by the minutes)."""
    from sourcerer.synthesis.scope import holds_value

    handbook = load_passages(Path(__file__).parents[2] / "examples" / "handbook")
    for question in ("How many failover drills happen per year?", "How many engineers are on call?"):
        answer = ask(question, passages=handbook, chat="extractive")
        assert answer.refused and answer.reason == "unsupported", answer.answer
        assert answer.trace.stage("synthesize").detail["missing_value"] == "count"
        assert any("asks for how many there are, and the closest sentences hold none" in n for n in answer.trace.notes)
    counted = [*handbook, {"text": "We run four failover drills a year, one each quarter.", "source": "Drills"}]
    answered = ask("How many failover drills happen per year?", passages=counted, chat="extractive")
    assert not answered.refused and "four failover drills" in answered.answer, answered.trace
    minutes = ask("How many minutes does on-call have to acknowledge a page?", passages=handbook, chat="extractive")
    assert not minutes.refused and "within 5 minutes" in minutes.answer, minutes.trace
    assert holds_value("count", "Up to six players per lane.") and holds_value("count", "The room seats 12.")
    assert holds_value("count", "We have one screen.") and holds_value("count", "Nous accueillons dix participants.")
    assert holds_value("count", "The Enterprise plan includes unlimited seats.") and holds_value("count", "Only 3% of members renew.")
    for measure in ("Private lessons cost €60 for 45 minutes.", "Open since 1998.", "Open from 8 am to 8 pm.", "Sizes up to 240 x 260."):
        assert not holds_value("count", measure), measure


def test_days_of_a_kind_no_source_names_are_not_answered_with_another_things_days():
    """Found trying the example policies as a user: "How many vacation days do I get?" was answered "Standard
    shipping takes 3 to 5 business days ..." (0.21 against a bar of 0.21), and on the FAQ "How many sick days do
    employees get per year?" with the vacation rule: the words right after "how many" are what is counted, which
    the asked-kind check leaves alone, and a kind of days no source names is another thing's days. Days the sources
    name the kind of, or count by the calendar ("business days"), are answered."""
    from sourcerer.synthesis.scope import unit_of_unnamed_kind

    accrual = [
        "New employees accrue 1.5 days of paid vacation per month during their first year. From the second year on, the accrual rises to 2 days per month.",
        "Unused vacation of up to 5 days may be carried over into the next calendar year.",
    ]
    for question, passages in (
        ("How many vacation days do I get?", POLICIES),
        ("How many sick days do employees get per year?", [{"text": t, "source": "Leave"} for t in accrual]),
    ):
        answer = ask(question, passages=passages, chat="extractive")
        assert answer.refused and answer.reason == "unsupported", answer.answer
        assert answer.trace.stage("synthesize").detail["decided_by"] == "asked kind"
        assert any(f"asks about {question.split()[2]} days, which no passage mentions" in n for n in answer.trace.notes), answer.trace.notes
    vacation = ["Full-time employees receive 25 vacation days per year.", *(p["text"] for p in POLICIES)]
    answered = ask("How many vacation days do I get?", passages=[{"text": t, "source": "Handbook"} for t in vacation], chat="extractive")
    assert not answered.refused and "25 vacation days" in answered.answer, answered.trace
    business = ask("How many business days does standard shipping take?", passages=POLICIES, chat="extractive")
    assert not business.refused and "3 to 5 business days" in business.answer, business.trace
    policy = ["Los empleados tienen 23 días laborables de vacaciones al año."]
    assert unit_of_unnamed_kind("¿Cuántos días de permiso hay por mudanza?", policy, policy).missing == ["dias de permiso"]
    assert unit_of_unnamed_kind("¿Cuántos días de vacaciones tengo?", policy, policy) is None
    leave = ["Mitarbeitende haben 30 Urlaubstage im Jahr."]
    assert unit_of_unnamed_kind("Wie viele Krankheitstage gibt es?", leave, leave).missing == ["krankheitstage"]
    assert unit_of_unnamed_kind("Wie viele Urlaubstage gibt es?", leave, leave) is None


def test_a_question_asking_which_region_is_not_answered_without_a_name():
    """Found trying the handbook as a user: "What region is the standby?" was answered "During the March drill, the
    failover cutover from the primary region to the standby region completed in 42 seconds." (0.52): it says
    "region" twice and names none. A question asking which region, country, city, continent or language is
    answered by a name (a capitalised word past the first that names no month or day, an acronym, a cloud region's
    code)."""
    from sourcerer.synthesis.scope import asked_value, holds_place_name

    handbook = load_passages(Path(__file__).parents[2] / "examples" / "handbook")
    answer = ask("What region is the standby?", passages=handbook, chat="extractive")
    assert answer.refused and answer.trace.stage("synthesize").detail["missing_value"] == "place", answer.answer
    assert any("asks for the name of a place or language" in n for n in answer.trace.notes)
    named = [*handbook, {"text": "The standby region is eu-central-1 (Frankfurt).", "source": "Regions"}]
    assert "eu-central-1" in ask("What region is the standby?", passages=named, chat="extractive").answer
    assert asked_value("Which countries do you ship to?") == "place" and asked_value("What is the standby?") is None
    assert holds_place_name("We ship to the EU and Norway.") and not holds_place_name("Orders ship on Monday in May.")


def test_the_sentence_holding_the_asked_phone_number_answers_over_one_that_shares_a_word():
    """"What is your phone number?" matched "Send your order number to refunds@acme.com ..." by its "number",
    and was refused for holding no phone number, while "Call us on 0800 123 456" stood third. A sentence among the
    best few that holds the asked contact value answers, and strict verification's relevance check does not set
    a sentence without one against it (it refused the answer as off topic). A price is not looked for this way."""
    support = (
        "# Support\n\n## How to contact us\n\nCall us on 0800 123 456, Monday to Friday from 9 am to 5 pm. You can also "
        "email help@acme.com at any time.\n\n## How to apply for a refund\n\nRefunds are available within 30 days of "
        "purchase. Send your order number to refunds@acme.com and we will reply within two business days.\n"
    )
    passages = _chunked("support.md", support)
    phone = ask("What is your phone number?", passages=passages, chat="extractive", verify="strict", judge="local")
    assert not phone.refused and phone.answer.startswith("Call us on 0800 123 456"), phone.answer
    assert phone.faithfulness.relevant


def test_a_question_asking_what_something_costs_is_not_answered_without_an_amount():
    """"How much does express shipping cost?" over the policies: the express rule says when it arrives, not what it
    costs, so it is no answer (it was quoted before). Given the price, it answers; "free" answers too."""
    question = "How much does express shipping cost?"
    answer = ask(question, passages=POLICIES)
    assert answer.refused and answer.reason == "unsupported", answer.answer
    assert answer.trace.stage("synthesize").detail["missing_value"] == "money"
    assert any("asks for an amount of money, and the closest sentences hold none" in n for n in answer.trace.notes)
    priced = [*POLICIES, {"text": "Express shipping costs $14 per order.", "source": "Shipping Policy"}]
    answered = ask(question, passages=priced)
    assert not answered.refused and "$14" in answered.answer, answered.trace
    free = [*POLICIES, {"text": "Express shipping is free on orders over $50.", "source": "Shipping Policy"}]
    assert not ask(question, passages=free).refused


def test_the_price_of_another_kind_is_no_answer_when_the_asked_kind_stands_in_another_passage():
    """Found trying the demo's sample passages as a user: "How much does standard shipping cost?" was answered
    "Express shipping delivers within 2 business days and costs $14.99 per order.": the price of another kind, as
    when both rules stand in one passage, but standard shipping's rule (no price) stood in a passage of its own,
    which the answer does not quote. The sentence keeping the asked kind is looked for in every passage."""
    sample = [
        {"text": "Standard shipping takes 3 to 5 business days within the continental United States.", "source": "Shipping"},
        {"text": "Express shipping delivers within 2 business days and costs $14.99 per order.", "source": "Shipping"},
    ]
    standard = ask("How much does standard shipping cost?", passages=sample, chat="extractive")
    assert standard.refused and standard.trace.stage("synthesize").detail["missing_value"] == "money", standard.answer
    express = ask("How much does express shipping cost?", passages=sample, chat="extractive")
    assert not express.refused and "$14.99" in express.answer, express.trace


def test_what_is_the_support_email_asks_for_an_address():
    """"What is the support email?" was answered "Support is available by chat from 8 am to 8 pm ...": the value's
    name alone at the end of the question ("email?", "email for ...") asks for an address too, as "email address"
    does; "What is the email policy?" asks for none."""
    from sourcerer.synthesis.scope import asked_value

    hours = [{"text": "Support is available by chat from 8 am to 8 pm Eastern, Monday to Friday.", "source": "Support"}]
    answer = ask("What is the support email?", passages=hours, chat="extractive")
    assert answer.refused and answer.trace.stage("synthesize").detail["missing_value"] == "email", answer.answer
    written = [{"text": hours[0]["text"] + " You can also email help@acme.com at any time.", "source": "Support"}]
    assert "help@acme.com" in ask("What is the support email?", passages=written, chat="extractive").answer
    assert asked_value("Which email for billing questions?") == "email" and asked_value("What is the email policy?") is None


def test_how_much_is_a_thing_is_not_answered_by_a_sentence_holding_no_amount():
    """Found on the exploratory benchmark (a bowling alley): "How much are arcade tokens?" was answered "The arcade
    takes tokens, which are sold at the front desk.": "How much is …?" asks an amount, of money or of anything, and a
    sentence holding no number, nor saying that it costs nothing, gives none."""
    museum = [{"text": "Guided tours start at the main entrance every hour. The car park is free for visitors.", "source": "Visiting"}]
    tours = ask("How much are the guided tours?", passages=museum, chat="extractive")
    assert tours.refused and tours.trace.stage("synthesize").detail["missing_value"] == "amount", tours.answer
    assert any("asks for an amount, and the closest sentences hold none" in n for n in tours.trace.notes)
    assert "free for visitors" in ask("How much is the car park?", passages=museum, chat="extractive").answer
    priced = [{"text": f"{museum[0]['text']} A guided tour costs £8 per person.", "source": "Visiting"}]
    assert "£8" in ask("How much are the guided tours?", passages=priced, chat="extractive").answer


def test_a_share_is_an_amount_only_where_something_is_paid():
    """Found trying an SLA as a user: "What is the price of the Business plan?" was answered "We commit to 99.9%
    monthly uptime for the Standard plan and 99.99% for the Business plan.": a percentage counted as an amount of
    money. It counts where the sentence says what is paid (a fee, a discount, what the employer covers)."""
    from sourcerer.synthesis.scope import holds_value

    sla = [
        {"text": "We commit to 99.9% monthly uptime for the Standard plan and 99.99% for the Business plan.", "source": "SLA"},
        {"text": "Below 99.0% uptime, you receive a credit of 25% of the monthly fee.", "source": "SLA"},
    ]
    answer = ask("What is the price of the Business plan?", passages=sla, chat="extractive")
    assert answer.refused and answer.trace.stage("synthesize").detail["decided_by"] == "asked value", answer.answer
    assert not holds_value("money", "Accuracy is 95% on the test set.")
    # a table's row labels its price ("price_eur: 2.40"): found asking a CSV price list what oat milk costs
    assert holds_value("money", "product: Oat milk; size: 1 l; price_eur: 2.40; in_stock: yes.")
    assert holds_value("money", "Preis: 12,50") and not holds_value("money", "size: 1 l")
    assert holds_value("money", "2013年のGDPは100億ドルであった。")  # JSQuAD's amounts in katakana currencies
    for paid in ("Gym membership is covered at 60% by the employer.", "Annual payment gets a 20% discount.",
                 "Die Firma übernimmt 50 % der Kosten.", "前日は50%、当日は100%のキャンセル料がかかります。"):
        assert holds_value("money", paid), paid


def test_a_chinese_topic_alone_asks_the_previous_question_of_it():
    """Found over a Chinese card FAQ: "普卡呢？" (and the standard card?) after "金卡年费多少钱？" was read as the same
    topic and answered with the gold card's fee first; "免年费" (the fee waived) is an amount too."""
    faq = [{"text": "金卡年费为每年300元。", "source": "年费"}, {"text": "普卡首年免年费，刷卡满6次免次年年费。", "source": "年费"}]
    answer = ask("普卡呢？", passages=faq, history=[{"role": "user", "text": "金卡年费多少钱？"}], chat="extractive")
    assert not answer.refused and answer.answer.startswith("普卡首年免年费"), answer.answer


def test_a_price_question_is_answered_by_what_costs_nothing():
    """Found trying a French broadband offer as a user: "Combien coûte l'installation ?" was refused (0.18) over a
    section that says "L'installation est gratuite.": the sentence models read the question as asking a number, which
    "gratuite" is not. A price question asks an amount, and "free" is one."""
    from sourcerer.synthesis.extractive import type_match

    question = "Combien coûte l'installation ?"
    assert type_match("number", "L'installation est gratuite.", question) == 1.0
    assert type_match("number", "L'installation est gratuite.", "Combien de jours faut-il ?") == 0.0
    offer = [
        {"text": "Installation\nUn technicien intervient sous 15 jours après la commande. L'installation est gratuite.", "source": "Fibre"},
        {"text": "Prix\nL'offre Fibre coûte 29,99 € par mois pendant 12 mois, puis 39,99 € par mois.", "source": "Fibre"},
    ]
    answer = ask(question, passages=offer, chat="extractive")
    assert not answer.refused and answer.answer.startswith("L'installation est gratuite."), answer.answer


def test_a_price_question_is_not_answered_by_its_thing_without_an_amount_and_another_thing_s_price():
    """Found on the exploratory benchmark: "Was kostet das Frühstück?" over a bakery's page was answered with the
    breakfast's hours and, second, a birthday cake's price; "Combien coûte un cours pour enfants ?" with the term's
    fee and then that children's classes exist. The sentence naming most of what is priced holds no amount, and the
    amount is in a sentence naming less of it that does not follow it. One that follows may say it with a pronoun."""
    cafe = [{"text": "Café Linde\nUnser Café öffnet täglich um 8 Uhr. Im Café können Sie frühstücken; das Frühstück servieren wir "
             "bis 11 Uhr. Der Mittagstisch wechselt jeden Tag. Ein Stück Kuchen kostet 3,50 Euro.", "source": "Café"}]
    studio = [{"text": "Atelier Terre\nL'abonnement trimestriel coûte 290 euros pour un cours par semaine. Le stage d'été dure "
               "cinq jours. Il coûte 180 euros, matériel compris. Nous proposons des cours pour adultes et pour enfants à "
               "partir de 6 ans.", "source": "Atelier"}]  # fmt: skip
    for question, passages in (("Was kostet das Frühstück?", cafe), ("Combien coûte un cours pour enfants ?", studio)):
        answer = ask(question, passages=passages, chat="extractive")
        assert answer.refused and answer.trace.stage("synthesize").detail["missing_value"] == "money", answer.answer
    assert ask("Was kostet ein Stück Kuchen?", passages=cafe, chat="extractive").answer.startswith("Ein Stück Kuchen kostet 3,50 Euro.")
    summer = ask("Combien coûte le stage d'été ?", passages=studio, chat="extractive")
    assert not summer.refused and "Il coûte 180 euros" in summer.answer, summer.answer


def test_the_price_of_another_kind_is_no_answer_however_few_kinds_the_sources_name():
    """Found over a hotel FAQ: "How much does late check-out cost?" was answered "Early check-in costs 1,000 yen per
    hour." The sources name one kind of check only, which the asked kind otherwise needs two of; a price is asked."""
    hotel = [
        {"text": "Check-in is from 3 pm and check-out is until 11 am. Early check-in costs 1,000 yen per hour.", "source": "Hotel"},
        {"text": "Parking costs 1,500 yen per night.", "source": "Hotel"},
    ]
    answer = ask("How much does late check-out cost?", passages=hotel, chat="extractive")
    assert answer.refused and answer.trace.stage("synthesize").detail["decided_by"] == "asked kind", answer.answer
    assert "1,000 yen" in ask("How much does early check-in cost?", passages=hotel, chat="extractive").answer


def test_an_adjective_the_previous_intent_shares_is_still_the_new_topic():
    """"long" frames "How long...?", but in "And on long flights?" it is the topic: the short-flight rule, which
    never says long, is no answer to it (it was given, cited, before)."""
    history = [{"role": "user", "text": "What class can I fly on short flights?"}]
    assert rewrite_follow_up("And on long flights?", history).focus == ("long",)
    passages = [{"text": "Economy class is mandatory for flights under six hours.", "source": "short flights"}]
    answer = ask("And on long flights?", passages=passages, history=history)
    assert answer.refused and answer.reason == "unsupported", answer.answer


def test_a_passage_that_says_the_comparative_names_the_new_topic():
    """"flights longer than six hours" names long (the stemmer keeps "longer" apart): that passage stays a
    candidate for "And on long flights?", and only the short-flight rule is set aside."""
    from sourcerer.text import names, terms

    assert names("long", terms("flights longer than six hours")) and names("big", terms("bigger rooms"))
    assert names(terms("early")[0], terms("the earlier deadline")) and names("lang", terms("länger als sechs Stunden"))
    assert not names(terms("international")[0], terms("internal orders")) and not names("express", terms("expressway"))
    history = [{"role": "user", "text": "What class can I fly on short flights?"}]
    passages = [
        {"text": "Economy class is mandatory for flights under six hours.", "source": "Travel"},
        {"text": "Premium economy is allowed for flights longer than six hours.", "source": "Travel"},
    ]
    answer = ask("And on long flights?", passages=passages, history=history)
    assert any("the follow-up asks about long: 1 passage(s) that never name it set aside" in n for n in answer.trace.notes)
    assert answer.refused or answer.citations[0].quote.startswith("Premium economy"), answer.answer
    # the note says the topic as the follow-up writes it, not as the index stems it ("internat")
    shipping = ask("And international?", passages=POLICIES, history=[{"role": "user", "text": "How long does standard shipping take?"}])
    assert any("the follow-up asks about international: " in n for n in shipping.trace.notes), shipping.trace.notes


def test_a_word_the_previous_answer_said_is_not_what_the_follow_up_swaps_in():
    """"and for international orders?" after an answer costing "$14 per order" asks about international: a
    passage need not say "orders" to answer it, and must say "international"."""
    history = [
        {"role": "user", "text": "How long does express shipping take?"},
        {"role": "assistant", "text": "Express shipping arrives in 1 to 2 business days and costs $14 per order. [1]"},
    ]
    assert rewrite_follow_up("and for international orders?", history).focus == ("internat",)
    # with nothing said before, both words are new and both must be named
    assert rewrite_follow_up("and for international orders?", history[:1]).focus == ("internat", "order")
    passages = [
        {"text": "Express shipping arrives in 1 to 2 business days and costs $14 per order.", "source": "express"},
        {"text": "We ship internationally to 40 countries; international delivery takes 7 to 14 business days.", "source": "international"},
    ]
    answer = ask("and for international orders?", passages=passages, history=history)
    assert not answer.refused, answer.trace
    assert [c.label for c in answer.citations] == ["international"], answer.answer


def test_a_follow_up_that_names_nothing_is_answered_about_what_was_asked_be_done():
    """Found trying a privacy policy as a user: "How long does that take?" after "How do I get a copy of my data?" was
    refused; its rewrite carried "copy data", and the sentence that says "we respond within 30 days" did not read as
    its answer."""
    privacy = [
        {"text": "## How long we keep it\nAccount data is deleted 24 months after your last login.\nCustomer support chats are "
         "kept for 12 months.\n\n## Your rights\nYou can request a copy of your data at any time; we respond within 30 days.\n"
         "You can ask us to correct or delete your data by emailing privacy@brightcart.example.", "source": "privacy.md"},
    ]
    history = [{"role": "user", "text": "How do I get a copy of my data?"}, {"role": "assistant", "text": "You can request a copy of your data at any time. [1]"}]
    assert standalone_query("How long does that take?", history) == "How long does that take? get a copy of my data"
    answer = ask("How long does that take?", passages=privacy, history=history, chat="extractive")
    assert answer.answer.startswith("You can request a copy of your data at any time; we respond within 30 days."), answer.answer
    # a heading that shares only the question's asking words ("How long we keep it") lends its sentences none of them
    direct = ask("How long does it take to get a copy of my data?", passages=privacy, chat="extractive")
    assert direct.answer.startswith("You can request a copy of your data at any time"), direct.answer


def test_a_follow_up_with_a_pronoun_is_answered_about_the_previous_topic():
    """Found trying a sync app's help center as a user: "How much storage does it include?" after "How much does Pro
    cost?" names two words of its own, so nothing was added, and the Free plan's storage was the answer."""
    storage = [{"text": "## Storage\nThe Free plan includes 5 GB of storage. The Pro plan includes 2 TB and costs $9.99 per month.", "source": "help.md"}]
    history = [{"role": "user", "text": "How much does Pro cost?"}, {"role": "assistant", "text": "The Pro plan includes 2 TB and costs $9.99 per month. [1]"}]
    answer = ask("How much storage does it include?", passages=storage, history=history, chat="extractive")
    assert answer.answer.startswith("The Pro plan includes 2 TB"), answer.answer


def test_a_follow_up_for_a_group_of_people_asks_the_same_thing_for_them():
    """"And for children?" after "How much is a prescription?" became "How much is children?", the one passage
    naming children was all that was left, and its vaccine price was the answer. The prescription is still what is
    asked of; a group of people, where the previous question named none, says whom for."""
    pharmacy = [
        {"text": "The standard prescription charge is £9.90 per item. Patients under 16 or over 60 do not pay prescription charges.", "source": "Prescription charges"},
        {"text": "The yellow fever vaccine costs £75 and is not available to children under 9 months.", "source": "Vaccinations"},
        {"text": "We deliver free of charge to patients over 65. Other patients pay £3.50 per delivery.", "source": "Delivery"},
    ]
    history = [{"role": "user", "text": "How much is a prescription?"}, {"role": "assistant", "text": "The standard prescription charge is £9.90 per item. [1]"}]
    children = ask("And for children?", passages=pharmacy, history=history)
    assert children.trace.stage("rewrite").detail["query"] == "How much is a prescription for children?"
    assert children.refused or [c.label for c in children.citations] == ["Prescription charges"], children.answer
    delivery = [{"role": "user", "text": "How much does delivery cost?"}, {"role": "assistant", "text": "Other patients pay £3.50 per delivery. [1]"}]
    over_65 = ask("And for people over 65?", passages=pharmacy, history=delivery)
    assert not over_65.refused, over_65.trace
    assert over_65.citations[0].quote.startswith("We deliver free of charge to patients over 65"), over_65.answer


def test_an_entity_no_passage_names_is_refused_not_answered_about_another():
    answer = ask("And overnight shipping?", passages=POLICIES, history=EXPRESS_HISTORY)
    assert answer.refused and answer.reason == "unsupported", answer.answer
    assert answer.trace.stage("rewrite").detail["focus"] == ["overnight"]


def test_a_follow_up_of_a_follow_up_reads_the_previous_one_as_it_was_understood():
    history = [
        {"role": "user", "text": "How many seats are included in the Pro plan?"},
        {"role": "assistant", "text": "10 seats. [1]"},
        {"role": "user", "text": "and in the Team plan?"},
        {"role": "assistant", "text": "25 seats. [2]"},
    ]
    assert standalone_query("What about the Enterprise plan?", history) == "How many seats are included in the Enterprise plan?"


def test_follow_up_is_answered_from_the_new_topic(seed_passages):
    answer = ask("And what about returns?", passages=seed_passages, history=HISTORY)

    assert answer.refused is False
    assert [c.label for c in answer.citations] == ["Returns Policy"]
    rewrite = answer.trace.stage("rewrite").detail
    assert rewrite == {"query": "How long does returns take?", "by": "rule", "focus": ["return"]}
    assert answer.trace.stage("retrieve").detail["query"] == "How long does returns take?"


def test_a_page_citation_takes_the_box_of_the_quoted_words_only():
    from sourcerer.citations import localize
    from sourcerer.models import CharSpan, Passage

    first, second = "Premiums are due monthly.", "Claims must be filed within 90 days."
    passage = Passage(
        text=f"{first} {second}",
        locator={"kind": "page", "page": 2, "box": [50, 100, 500, 160]},
        sentences=[
            {"start": 0, "end": len(first), "locator": {"kind": "page", "page": 2, "box": [50, 100, 480, 120]}},
            {
                "start": len(first) + 1,
                "end": len(first) + 1 + len(second),
                "locator": {"kind": "page", "page": 2, "box": [50, 140, 500, 160]},
            },
        ],
    )
    quote, spans, locator = localize(passage, [CharSpan(start=len(first) + 1, end=len(passage.text))])
    assert quote == second and spans == [(len(first) + 1, len(passage.text))]
    assert locator == {"kind": "page", "page": 2, "box": [50, 140, 500, 160]}


def test_a_model_answer_is_pinned_to_the_sentences_that_support_each_claim():
    from sourcerer.models import Passage
    from sourcerer.verify import pick_quotes

    passage = Passage(text="Express costs $14.99. Standard shipping takes 3 to 5 business days. Returns take 30 days.")
    quotes = pick_quotes("Standard delivery needs 3 to 5 business days [1].", [passage])
    assert [passage.text[q.start : q.end] for q in quotes[1]] == ["Standard shipping takes 3 to 5 business days."]


def test_answering_from_the_index_runs_the_model_on_queries_only(tmp_path, monkeypatch):
    """Sentence and passage vectors are stored at ingest: synthesis, answerability and the local judge read
    them, so an answer embeds only the question (and, with verify, its claims) — never a passage."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    embedder = local_embedder()
    index = SQLiteIndex(tmp_path / "index.db", embedder=embedder)
    index.ingest_document(
        {
            "source_uri": "ops.md",
            "text": "# Failover\n\nThe failover cutover took 42 seconds.\nReplica lag stayed under two seconds.\n",
            "metadata": {"title": "Operations"},
        }
    )
    embedded = []
    original = embedder.inner.embed
    monkeypatch.setattr(embedder.inner, "embed", lambda texts, role: embedded.append(role) or original(texts, role))
    monkeypatch.setattr(embedder, "memory", OrderedDict())  # nothing from earlier tests or the disk cache may hide a model run
    monkeypatch.setattr(embedder, "path", None)
    monkeypatch.setattr(embedder, "_db", None)
    answer = ask("How long did the failover cutover take?", retriever=index.retriever(tenant="local"), verify=True)
    assert not answer.refused and "42 seconds" in answer.answer
    assert answer.trace.stage("synthesize").detail["features"] == "semantic"  # the model's path, not a fallback
    assert embedded and set(embedded) == {"query"}


def test_answering_over_a_chunk_still_waiting_for_its_vectors_runs_the_model_on_the_question_only(tmp_path, monkeypatch):
    """A chunk ingested with embedding deferred has no stored vectors until the background embedder reaches it.
    Under a backlog, an answer over it must not compute them in the request (under a steady ingest that made
    every answer embed a dozen sentences, seconds of model time): it is weighed on its words, as on a
    keyword-only index, and says so."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store import retriever
    from sourcerer.store.sqlite import SQLiteIndex

    monkeypatch.setattr(retriever, "CATCH_UP", 0)  # a backlog larger than one small batch

    embedder = local_embedder()
    index = SQLiteIndex(tmp_path / "index.db", embedder=embedder, defer_embedding=True)
    for topic, text in (("people", "Engineers get a laptop on their first day."), ("travel", "Flights are booked through the portal.")):
        index.ingest_document({"source_uri": f"{topic}.md", "text": text})
    assert index.embed_pending() == 2  # older documents have their vectors: the search's semantic half runs
    index.ingest_document({"source_uri": "ops.md", "text": "# Failover\n\nA failover cutover takes 42 seconds.\n"})
    embedded = []
    original = embedder.inner.embed
    monkeypatch.setattr(embedder.inner, "embed", lambda texts, role: embedded.append(role) or original(texts, role))
    monkeypatch.setattr(embedder, "memory", OrderedDict())
    monkeypatch.setattr(embedder, "path", None)
    monkeypatch.setattr(embedder, "_db", None)
    answer = ask("How long does a failover cutover take?", retriever=index.retriever(tenant="local"), verify=True)
    assert not answer.refused and "42 seconds" in answer.answer
    assert answer.trace.stage("synthesize").detail["features"] != "semantic"  # its words alone, and said so
    assert any("wait for their vectors" in note for note in answer.trace.notes)
    assert embedded == ["query"]  # the question's one call, for the search
    assert index.pending_embeddings() == 1  # still the background embedder's to do


def test_an_answer_right_after_a_small_ingest_embeds_the_backlog_once_and_keeps_it(tmp_path):
    """When the whole backlog is one small batch (a document just ingested, nobody else writing), the answer
    embeds it itself, stores it, and answers with the vectors: the background embedder has nothing left."""
    from fakes import HashedEmbedder
    from sourcerer.store.sqlite import SQLiteIndex

    index = SQLiteIndex(tmp_path / "index.db", embedder=HashedEmbedder(), defer_embedding=True)
    index.ingest_document({"source_uri": "ops.md", "text": "# Failover\n\nA failover cutover takes 42 seconds.\n"})
    assert index.pending_embeddings() == 1
    passages = index.retriever(tenant="local")("How long does a failover cutover take?")
    assert passages and not any(p["pending"] for p in passages) and passages[0]["vectors"]
    assert index.pending_embeddings() == 0


FAQ_DOCUMENT = [
    {
        "text": "How long do refunds take?\nRefunds are issued within five business days.\n\n¿Puedo devolver artículos rebajados?\n"
        "Los artículos rebajados no admiten devolución.",
        "source": "faq.txt",
    }
]


@pytest.mark.parametrize(
    ("question", "quote"),
    [
        ("How long do refunds take?", "Refunds are issued within five business days."),
        ("¿Puedo devolver artículos rebajados?", "Los artículos rebajados no admiten devolución."),
    ],
)
def test_an_faq_documents_own_question_is_context_never_the_answer(question, quote):
    """An FAQ's question matches the user's best of all its sentences, and asserts nothing: it was quoted as the
    answer's first sentence ("How long do refunds take? [1] Refunds are issued ..."). It now counts as context for
    its passage, and the answer is the statement under it."""
    answer = ask(question, passages=FAQ_DOCUMENT, chat="extractive")
    assert not answer.refused
    assert answer.answer == f"{quote} [1]"
    assert "?" not in answer.citations[0].quote


def test_an_faq_answer_label_is_not_part_of_the_answer():
    """"Q: ...? / A: ..." documents: the question is context and the label "A:" is dropped from what the answer
    shows, while the citation still quotes the source sentence as it stands."""
    passages = [{"text": "Q: How long does shipping take?\nA: Standard shipping takes 3 to 5 business days.", "source": "faq.txt"}]
    answer = ask("How long does shipping take?", passages=passages, chat="extractive", verify="strict")
    assert answer.answer == "Standard shipping takes 3 to 5 business days. [1]"
    assert answer.faithfulness.faithful and answer.citations[0].quote == "A: Standard shipping takes 3 to 5 business days."


def test_an_faq_answer_is_found_and_scoped_by_the_question_heading_over_it(tmp_path):
    """In a Markdown FAQ the question is the heading and the answer under it often does not repeat its words
    ("Yes, for a flat fee of $15."). The heading opens its chunk, so a search finds the answer by the question's
    words and the answer is read as being about Canada: it answers "Do you ship to Canada?", never "Do you ship to
    Mexico?", and never quotes the heading itself."""
    from sourcerer.store.sqlite import SQLiteIndex

    index = SQLiteIndex(tmp_path / "index.db", embedder=None)
    faq = (
        "# Shipping FAQ\n\n## Do you ship to Canada?\n\nYes, for a flat fee of $15.\n\n"
        "## How long do refunds take?\n\nRefunds reach your card within 5 business days.\n"
    )
    index.ingest_document({"source_uri": "faq.md", "text": faq})
    retriever = index.retriever(tenant="local")
    canada = ask("Do you ship to Canada?", retriever=retriever, chat="extractive")
    assert not canada.refused and canada.answer == "Yes, for a flat fee of $15. [1]"
    assert canada.citations[0].locator.model_dump() == {"kind": "lines", "start": 5, "end": 5}
    mexico = ask("Do you ship to Mexico?", retriever=retriever, chat="extractive", min_score=0)
    assert mexico.refused and not mexico.citations, mexico.answer


def test_a_question_about_a_list_gets_the_list_and_a_question_about_an_item_the_item(tmp_path):
    """Under "What to bring on your first day" the items are short lines once their markers are gone: none is a
    title (they once were, and only the last item could be an answer). "What should I bring?" names the heading,
    not an item, so the answer is the whole list; "Do I need ID?" names one item, so the answer is that item."""
    from sourcerer.store.sqlite import SQLiteIndex

    index = SQLiteIndex(tmp_path / "index.db", embedder=None)
    guide = (
        "# Onboarding\n\n## What to bring on your first day\n\n- A government-issued photo ID\n- Your signed offer letter\n"
        "- Bank details for payroll\n\n## Working hours\n\nCore hours are 10:00 to 16:00.\n"
    )
    index.ingest_document({"source_uri": "onboarding.md", "text": guide})
    for passages in ({"retriever": index.retriever(tenant="local")}, {"passages": [{"text": guide, "source": "onboarding.md"}]}):
        whole = ask("What should I bring on my first day?", chat="extractive", min_score=0, **passages)
        assert whole.answer == "A government-issued photo ID. [1] Your signed offer letter. [1] Bank details for payroll. [1]"
        one = ask("Do I need a photo ID on my first day?", chat="extractive", min_score=0, **passages)
        assert one.answer == "A government-issued photo ID. [1]"


def _chunked(source_uri: str, text: str) -> list[dict]:
    """A document's chunks as `ask(passages=...)` takes them, read and chunked as ingest does (no index)."""
    from sourcerer.store.base import prepare
    from sourcerer.store.models import Document

    chunks = prepare(Document(source_uri=source_uri, text=text, tenant="t")).chunks
    return [{"text": c.text, "source": c.label, "sentences": c.sentences} for c in chunks]


def _indexed(tmp_path, source_uri: str, text: str):
    """A retriever over an embedded index holding one document, ingested as `sourcerer ingest` does."""
    from sourcerer.store.sqlite import SQLiteIndex

    index = SQLiteIndex(tmp_path / "index.db", embedder=None)
    index.ingest_document({"source_uri": source_uri, "text": text})
    return index.retriever(tenant="local")


LEAFLET = (
    "# Ibuprofen tablets\n\n## Warnings\n\nDo not take ibuprofen if you:\n- are pregnant or breastfeeding\n- have had a stomach ulcer\n"
    "- are allergic to aspirin\n\nTalk to a pharmacist first if you have asthma.\n\n"
    "## Do not give this medicine to children if\n\n- They are under 12 years old.\n- They have chickenpox.\n"
)


def test_strict_verification_keeps_the_procedure_the_question_names(tmp_path):
    """"¿Cómo se toma el ibuprofeno?" over an indexed leaflet is answered with its "Cómo tomar ibuprofeno" section
    whole, and strict verification refused it as off topic: its lines, read one by one, scored under the bar
    (p = 0.013). The procedure the question names answers it, with no rival set against it."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    leaflet = (
        "# Prospecto: ibuprofeno 400 mg\n\n## Qué es y para qué se utiliza\n\nEl ibuprofeno alivia el dolor leve o moderado y "
        "baja la fiebre.\n\n## Antes de tomar ibuprofeno\n\nNo tome ibuprofeno si:\n- es alérgico al ibuprofeno o a otros "
        "antiinflamatorios;\n- ha tenido una úlcera de estómago;\n- está en los últimos tres meses del embarazo.\n\nConsulte a su "
        "médico si toma anticoagulantes.\n\n## Cómo tomar ibuprofeno\n\nAdultos: un comprimido cada 6 a 8 horas.\nNo tome más de "
        "3 comprimidos en 24 horas.\nTome los comprimidos con comida o leche.\n\n## Posibles efectos adversos\n\nPuede causar "
        "dolor de estómago, náuseas o diarrea.\nDeje de tomarlo y acuda al médico si aparece sangre en las heces.\n"
    )
    index = SQLiteIndex(tmp_path / "index.db", embedder=local_embedder())
    index.ingest_document({"source_uri": "prospecto.md", "text": leaflet})
    answer = ask("¿Cómo se toma el ibuprofeno?", retriever=index.retriever(tenant="local"), chat="extractive", verify="strict", judge="local")
    assert not answer.refused, (answer.reason, answer.trace.draft)
    assert answer.answer.startswith("Cómo tomar ibuprofeno: Adultos: un comprimido cada 6 a 8 horas;") and answer.faithfulness.relevant


def test_a_line_that_completes_a_lead_in_is_answered_with_it(tmp_path):
    """"are allergic to aspirin" under "Do not take ibuprofen if you:" and "They have chickenpox." under "Do not give
    this medicine to children if" say nothing alone, or the opposite ("You are allergic to aspirin."): the answer
    quotes the lead-in with the line (it once answered "Do not take ibuprofen if you:. [1] are allergic to aspirin.
    [1]"), over an index and over passages, and the judge reads the two as one sentence. A line of prose after the
    list is no item of it."""
    retriever = _indexed(tmp_path, "leaflet.md", LEAFLET)
    for passages in ({"retriever": retriever}, {"passages": [{"text": LEAFLET, "source": "leaflet.md"}]}):
        aspirin = ask("Can I take ibuprofen if I am allergic to aspirin?", chat="extractive", min_score=0, verify="strict", judge="local", **passages)
        assert aspirin.answer == "Do not take ibuprofen if you: are allergic to aspirin. [1]"
        assert aspirin.faithfulness.faithful and aspirin.faithfulness.claims[0].why == "every word of the claim is in one cited sentence"
        assert "Do not take ibuprofen if you:" in aspirin.citations[0].quote and len(aspirin.citations[0].quote_spans) == 2
        chickenpox = ask("Can I give this medicine to children who have chickenpox?", chat="extractive", min_score=0, verify="strict", judge="local", **passages)
        assert chickenpox.answer == "Do not give this medicine to children if: They have chickenpox. [1]" and chickenpox.faithfulness.faithful
        asthma = ask("What if I have asthma?", chat="extractive", min_score=0, **passages)
        assert asthma.answer == "Talk to a pharmacist first if you have asthma. [1]"
        # the lead-in alone answers nothing ("Do not take ibuprofen if you:. [1]" once): it is said with its lines, as
        # one claim the judge reads against the lead-in and its lines together
        who = ask("Who should not take ibuprofen?", chat="extractive", min_score=0, verify="strict", judge="local", **passages)
        assert who.answer == (
            "Do not take ibuprofen if you: are pregnant or breastfeeding; have had a stomach ulcer; are allergic to aspirin. [1]"
        ), who.answer
        assert who.faithfulness.faithful and who.faithfulness.claims[0].why == "every word of the claim is in one cited sentence"


def test_an_html_list_under_an_open_line_is_answered_and_verified_with_it(tmp_path):
    """An HTML list loses its markers, and "Do not drive if" over "you feel dizzy." is then one line of negation:
    the judge once read "Do not drive if: you feel dizzy." as negating "feel" too (the negation's reach ran across
    the line break) and strict verification refused the right answer as "negation differs from the source"."""
    page = (
        "<html><body><h2>Before you drive</h2><p>Do not drive if</p><ol><li>you feel dizzy.</li><li>you see double.</li></ol>"
        "</body></html>"
    )
    retriever = _indexed(tmp_path, "driving.html", page)
    answer = ask("Can I drive if I feel dizzy?", retriever=retriever, chat="extractive", min_score=0,
                 verify="strict", judge="local")
    assert answer.answer == "Do not drive if: you feel dizzy. [1]" and answer.faithfulness.faithful, answer.answer


HOWTO = (
    "# Orders\n\n## Returning an item\n\nTo return an item:\n\n1. Sign in and open Your orders.\n"
    "2. Choose the item and select \"Return\".\n3. Print the label and drop the parcel at a post office.\n\n"
    "Refunds reach your card within 10 days.\n\n## Questions\n\n**Can I change the delivery address?**\n"
    "Yes, until the order ships.\n"
)


def test_numbered_steps_are_answered_whole_under_their_lead_in(tmp_path):
    """Steps that end in a stop once ran into one paragraph at ingest ("To return an item: Sign in and open Your
    orders. Choose ..."), and "How do I return an item?" got "To return an item:. [1] Choose the item and select
    "Return". [1]": one step of three, after a lead-in with a stray stop. The chunk keeps the source's lines, and
    a step that holds no word of the question its lead-in lacks is said with the lead-in and every step; the
    paragraph after the blank line is no step."""
    retriever = _indexed(tmp_path, "orders.md", HOWTO)
    hits, _ = retriever.search("return an item", k=1)
    assert "To return an item:\n\nSign in and open Your orders.\nChoose the item" in hits[0].text
    for passages in ({"retriever": retriever}, {"passages": [{"text": HOWTO, "source": "orders.md"}]}):
        steps = ask("How do I return an item?", chat="extractive", min_score=0, verify="strict", judge="local", **passages)
        assert steps.answer == (
            'To return an item: Sign in and open Your orders; Choose the item and select "Return"; '
            "Print the label and drop the parcel at a post office. [1]"
        ), steps.answer
        assert steps.faithfulness.faithful
        refunds = ask("How long do refunds take?", chat="extractive", min_score=0, **passages)
        assert refunds.answer == "Refunds reach your card within 10 days. [1]", refunds.answer


RETURNS = (
    "# Returns and refunds\n\nYou can return most items within 30 days of delivery for a full refund.\n\n"
    "## How to return an item\n\n1. Sign in to your account.\n2. Open Orders and choose the item.\n"
    "3. Print the prepaid label and drop the parcel at any post office.\n\n"
    "## Refund timing\n\nRefunds reach your card 5 to 10 business days after we receive the parcel.\n"
)
RETURNS_PAGE = (
    "<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/returns'>Returns</a></li></ul></nav><main>"
    "<h1>Returns and refunds</h1><p>You can return most items within 30 days of delivery for a full refund.</p>"
    "<h2>How to return an item</h2><ol><li>Sign in to your account.</li><li>Open <strong>Orders</strong> and choose "
    "the item.</li><li>Print the prepaid label and drop the parcel at any post office.</li></ol>"
    "<h2>Refund timing</h2><p>Refunds reach your card 5 to 10 business days after we receive the parcel.</p></main></body></html>"
)


RETURNS_FAQ = RETURNS.replace("## How to return an item", "## How do I return an item?")


@pytest.mark.parametrize(("name", "text"), [("returns.md", RETURNS), ("returns.html", RETURNS_PAGE), ("faq.md", RETURNS_FAQ)])
def test_steps_under_a_how_to_heading_are_answered_whole_and_in_order(name, text, monkeypatch):
    """A help centre's "How to return an item" over numbered steps: "How do I return an item?" was refused over
    the Markdown page (the answerability model read "Open Orders and choose the item." without its heading) and
    got two steps of three over the HTML one and under an FAQ's "How do I return an item?". The heading names a
    procedure, so its lines are its steps: said together, in order, after it (an FAQ's question unsaid); the
    paragraph under the next heading is no step. A question about one step gets that step, a sentence of its own."""
    passages = {"passages": _chunked(name, text)}
    lead = "How to return an item: "
    if name == "faq.md":
        # an FAQ's question goes unsaid, and lends the reply no words: the answerability model reads the steps as
        # they stand, just under its operating point here (0.200 against 0.209), so it is lowered to see them said
        lead = ""
        monkeypatch.setenv("SOURCERER_MIN_ANSWERABILITY", "0.15")
    steps = ask("How do I return an item?", chat="extractive", verify="strict", judge="local", **passages)
    assert steps.answer == (
        f"{lead}Sign in to your account; Open Orders and choose the item; "
        "Print the prepaid label and drop the parcel at any post office. [1]"
    ), steps.answer
    assert steps.faithfulness.faithful
    label = ask("Where do I drop the parcel with the prepaid label?", chat="extractive", **passages)
    assert label.answer == "Print the prepaid label and drop the parcel at any post office. [1]", label.answer


def test_only_the_best_sentence_says_a_procedure_whole():
    """Under "How to request your data", "How long do you take to reply to a data request?" is answered "We reply
    within 30 days.", and its second sentence ("You can request a copy of your data at any time.", which holds no
    word of the question its heading lacks) once said the whole section after it. Only the best sentence says a
    procedure whole; "How can I request my data?" still gets it."""
    policy = (
        "# Privacy policy\n\n## How to request your data\n\nYou can request a copy of your data at any time. Email "
        "privacy@acme.com from the address on your account. We reply within 30 days.\n\n## How we use your data\n\n"
        "We never sell your data.\n"
    )
    passages = _chunked("privacy.md", policy)
    reply = ask("How long do you take to reply to a data request?", passages=passages, chat="extractive")
    assert reply.answer.startswith("We reply within 30 days. [1]") and "How to request your data:" not in reply.answer, reply.answer
    how = ask("How can I request my data?", passages=passages, chat="extractive")
    assert how.answer == (
        "How to request your data: You can request a copy of your data at any time. Email privacy@acme.com from the "
        "address on your account. We reply within 30 days. [1]"  # sentences of one paragraph keep their stops
    ), how.answer
    assert ask("How can I request my data?", passages=passages, chat="extractive", verify="strict").faithfulness.faithful


def test_a_question_that_asks_the_procedure_a_heading_names_is_answered_with_that_procedure():
    """"How should I take this medicine?" over a leaflet whose "How to take this medicine" section ranked third was
    answered with the overdose rule, which holds every word of the question. The heading names the very procedure
    asked, so its lines answer, whole; strict verification's relevance check sets no other section against them."""
    leaflet = (
        "# Paracetamol tablets\n\n## Before you take this medicine\n\nDo not take paracetamol if you are allergic to it.\n\n"
        "## How to take this medicine\n\nAdults: take 1 or 2 tablets every 4 to 6 hours as needed.\n"
        "Do not take more than 8 tablets in 24 hours.\n\n"
        "## If you take too much\n\nTalk to a doctor at once if you take too much of this medicine, even if you feel well.\n"
    )
    how = ask("How should I take this medicine?", passages=_chunked("leaflet.md", leaflet), chat="extractive", verify="strict", judge="local")
    assert how.answer.startswith(
        "How to take this medicine: Adults: take 1 or 2 tablets every 4 to 6 hours as needed; Do not take more than 8 tablets in 24 hours."
    ), how.answer
    assert how.faithfulness.faithful and how.faithfulness.relevant
    pregnant = ask("How do I take this medicine if I am pregnant?", passages=_chunked("leaflet.md", leaflet), chat="extractive")
    assert "How to take this medicine:" not in pregnant.answer  # a word the heading lacks: not the procedure it names


def test_a_lead_in_with_more_lines_than_an_answer_says_gives_its_first_lines_and_a_mark_that_more_follow():
    """A lead-in over twelve documents was said alone, "We accept any of these documents as proof of address:.
    [1]", an answer that says nothing: its lines were more than an answer lists (`max_list_items`). It says the
    first ten and "…", and strict verification keeps it; a question about one line still gets that line."""
    documents = ["a passport", "a driving licence", "a utility bill", "a bank statement", "a tax return", "a payslip",
                 "a tenancy agreement", "a council tax bill", "a birth certificate", "a marriage certificate",
                 "a pension letter", "a benefits letter"]
    page = "# Opening an account\n\n## Documents\n\nWe accept any of these documents as proof of address:\n\n"
    page += "".join(f"- {d}\n" for d in documents) + "\n## Fees\n\nThe account costs nothing to open.\n"
    passages = _chunked("account.md", page)
    which = ask("Which documents do you accept as proof of address?", passages=passages, chat="extractive", verify="strict", judge="local")
    assert which.answer == (
        "We accept any of these documents as proof of address: " + "; ".join(documents[:10]) + "; … [1]"
    ), which.answer
    assert which.faithfulness.faithful
    one = ask("Can I use a payslip as proof of address?", passages=passages, chat="extractive")
    assert one.answer == "We accept any of these documents as proof of address: a payslip. [1]", one.answer


def test_a_list_asked_for_whole_that_is_longer_than_an_answer_lists_gives_its_first_items_and_a_mark():
    """"What should I bring on my first day?" over twelve items was answered "A photo ID. [1]", as if that were
    all to bring: the list was longer than an answer lists. It gives the first ten, the last with "…"."""
    items = ["A photo ID", "Your signed offer letter", "Bank details for payroll", "Your tax code", "Your national insurance number",
             "Emergency contact details", "A copy of your degree", "Your work permit", "A passport photo",
             "Your laptop charger", "Your pension details", "A reusable water bottle"]
    page = "# Onboarding\n\n## What to bring on your first day\n\n" + "".join(f"- {i}\n" for i in items)
    page += "\n## Working hours\n\nCore hours are 10:00 to 16:00.\n"
    whole = ask("What should I bring on my first day?", passages=_chunked("guide.md", page), chat="extractive", verify="strict", judge="local")
    assert whole.answer == " ".join(f"{i}. [1]" for i in items[:9]) + f" {items[9]}; … [1]", whole.answer
    assert whole.faithfulness.faithful


def test_lines_under_a_procedure_heading_are_sentences_of_their_own_unless_the_procedure_is_asked():
    """Two lines under "How to take this medicine" were said joined under it, as one claim: "How to take this
    medicine: Adults ...: take 1 or 2 tablets ...; Do not give to children under 10 years.", and strict
    verification refused it (the line's negation read as the whole claim's). Each is a sentence of its own."""
    leaflet = (
        "# Paracetamol tablets\n\n## How to take this medicine\n\n"
        "Adults and children aged 16 years and over: take 1 or 2 tablets every 4 to 6 hours as needed.\n"
        "Do not take more than 8 tablets in 24 hours.\nDo not give to children under 10 years.\n\n"
        "## How to store\n\nStore below 25°C.\n"
    )
    passages = _chunked("leaflet.md", leaflet)
    child = ask("Can I give paracetamol to my 5 year old?", passages=passages, chat="extractive", verify="strict", judge="local")
    assert not child.refused and child.answer.startswith("Do not give to children under 10 years. [1]"), child.answer
    assert child.faithfulness.faithful


@pytest.mark.parametrize(
    ("heading", "names_steps"),
    [
        ("How to return an item", True),
        ("Comment résilier votre abonnement", True),
        ("Wie Sie Ihr Passwort ändern", True),
        ("So ändern Sie Ihr Passwort", True),
        ("So schnell liefern wir", False),
        ("Cómo cancelar un pedido", True),
        ("Para cancelar su pedido", True),
        ("Para empresas", False),  # "for businesses": no procedure
        ("Sick leave", False),
        ("How long refunds take", False),
        ("How do I return an item?", True),  # an FAQ's question over its steps
        ("¿Cómo cancelo mi pedido?", True),
        ("Do you ship to Canada?", False),  # an FAQ's yes-or-no question: its reply answers it alone
    ],
)
def test_a_heading_that_names_a_procedure_leads_in_its_steps(heading, names_steps):
    from sourcerer.sentences import opens_clause

    assert opens_clause(heading) is names_steps


FAQ_REPLIES = (
    "Q: Do you offer student discounts?\nA: Yes. Students get 20% off with a valid student ID.\n\n"
    "Q: Can I pause my subscription?\nA: No, but you can cancel at any time and resubscribe later.\n\n"
    "Q: Can I change the delivery address?\nA: Yes, until the order ships.\n\n"
    "Q: Livrez-vous en Belgique ?\nA: Oui, la livraison coûte 9 € et prend 3 à 4 jours ouvrés.\n"
)


@pytest.mark.parametrize(
    "question, answer",
    [
        ("Do you offer a discount for students?", "Yes. [1] Students get 20% off with a valid student ID. [1]"),
        ("Is it still possible to change the delivery address?", "Yes, until the order ships. [1]"),  # adds words only
        # asks for something: the reply's words answer it, not its "Oui"
        ("Combien coûte la livraison en Belgique ?", "Oui, la livraison coûte 9 € et prend 3 à 4 jours ouvrés. [1]"),
        ("Do you offer discounts for teachers?", None),  # "A: Yes." once answered it
        ("Can I change my email address?", None),
        ("Can I cancel the order?", None),  # "order" is in the reply, but its "Yes" answers the address question
        ("Can I cancel my subscription?", None),  # "No, but you can cancel at any time." once answered it
    ],
)
def test_a_yes_or_no_answers_its_own_faq_question_not_one_that_shares_its_words(question, answer):
    """"Yes, until the order ships." under "Can I change the delivery address?" answered "Can I cancel the
    order?" and "Can I change my email address?", and strict verification passed it: every word was in the
    source. A reply's yes or no belongs to its question: asked with a word the FAQ question lacks, while it holds
    one the question lacks, it is another question, and the sentence models refuse. A question that asks for
    something (how much, combien) may find its words in the reply; a yes-or-no question may not."""
    got = ask(question, passages=[{"text": FAQ_REPLIES, "source": "faq.txt"}], chat="extractive", min_score=0, verify="strict")
    assert (got.answer if not got.refused else None) == answer, got.answer


def test_the_judge_reads_a_lead_in_apart_from_its_lines_once_their_markers_are_gone():
    """Ingest drops a list's markers, and "Exceptions:" over "London and Paris: up to 250 EUR per night" is then one
    sentence to the splitter: the judge splits it, and reads each line with its lead-in, and all of them together."""
    from sourcerer.sentences import lead_ins_apart, sentence_spans
    from sourcerer.support import ClaimSupport, source_sentences

    text = "Hotel costs are reimbursed up to 180 EUR per night. Exceptions:\nLondon and Paris: up to 250 EUR\nConferences: the hotel rate"
    assert [text[a:b] for a, b in lead_ins_apart(text, sentence_spans(text))] == [
        "Hotel costs are reimbursed up to 180 EUR per night.", "Exceptions:", "London and Paris: up to 250 EUR",
        "Conferences: the hotel rate",
    ]
    assert source_sentences(text)[-1].text == "Exceptions:\nLondon and Paris: up to 250 EUR\nConferences: the hotel rate"
    support = ClaimSupport(None)
    for claim in ("Exceptions: London and Paris: up to 250 EUR.", "Exceptions: London and Paris: up to 250 EUR; Conferences: the hotel rate."):
        assert support.check(claim, text).why == "every word of the claim is in one cited sentence", claim
    assert not support.check("Exceptions: London and Paris: up to 350 EUR.", text).supported


def test_a_quoted_sentence_keeps_its_own_spacing_before_punctuation():
    """French writes a space before a colon: the answer quotes "si vous :" as written (it once read "si vous:"),
    while the space a removed marker leaves before a stop still goes."""
    from sourcerer.citations import strip_markers

    assert strip_markers("Refunds take 5 days [1] .") == "Refunds take 5 days." and strip_markers("si vous :") == "si vous :"
    notice = "Précautions\nNe prenez pas ce médicament si vous :\n- avez une maladie grave du foie\n- êtes allergique au paracétamol"
    answer = ask("Puis-je prendre du paracétamol si je suis allergique ?", passages=[{"text": notice, "source": "notice"}],
                 chat="extractive", min_score=0, verify="strict", judge="local")
    assert answer.answer == "Ne prenez pas ce médicament si vous : êtes allergique au paracétamol. [1]" and answer.faithfulness.faithful


def test_strict_verification_reads_a_line_with_its_lead_in_as_the_answer_quotes_it(tmp_path):
    """"We accept: PayPal. [1]" answers "Can I pay with PayPal?": the relevance check once matched the claim with the
    lead-in "A: We accept:" alone (a tie on words), read "PayPal" as a better sentence passed over, and refused the
    right answer as off topic. A line is matched with its lead-in, and a whole list with the lead-in and its lines."""
    faq = (
        "# Customer FAQ\n\nQ: Do you deliver on Sundays?\nA: No. We deliver Monday to Saturday.\n\n"
        "Q: What payment methods do you accept?\nA: We accept:\n- Visa and Mastercard\n- PayPal\n- bank transfer for business accounts\n"
    )
    retriever = _indexed(tmp_path, "faq.md", faq)
    paypal = ask("Can I pay with PayPal?", retriever=retriever, chat="extractive", min_score=0, verify="strict", judge="local")
    assert paypal.answer == "We accept: PayPal. [1]" and paypal.faithfulness.relevant, (paypal.answer, paypal.faithfulness)
    every = ask("Which payment methods are accepted?", retriever=retriever, chat="extractive", min_score=0, verify="strict", judge="local")
    assert every.answer == "We accept: Visa and Mastercard; PayPal; bank transfer for business accounts. [1]", every.answer
    assert every.faithfulness.faithful and every.faithfulness.relevant


def test_a_negation_reaches_to_the_end_of_its_line_only():
    from sourcerer.support import negated_terms

    negative, positive = negated_terms("Do not drive if\nyou feel dizzy.")
    assert "driv" in negative and {"feel", "dizzy"} <= positive
    assert "feel" in negated_terms("Do not drive if you feel dizzy.")[0]


def test_a_term_said_both_with_and_without_a_negation_is_no_disagreement():
    """A Spanish leaflet's lines repeat the drug's name: "No tome ibuprofeno si: es alérgico al ibuprofeno ..."
    negates taking ibuprofen and names the allergy to it, and strict verification refused that answer as
    "negation differs" against its lines. A term one side says only negated and the other only plainly still is."""
    from sourcerer.support import contradicts

    lines = "es alérgico al ibuprofeno o a otros antiinflamatorios;\nha tenido una úlcera de estómago."
    assert not contradicts("No tome ibuprofeno si: es alérgico al ibuprofeno o a otros antiinflamatorios; ha tenido una úlcera de estómago.", lines)
    assert contradicts("The team has never lost at home.", "The team lost at home.")


def test_a_spanish_leaflets_list_is_said_whole_and_verified():
    leaflet = (
        "# Prospecto\n\n## Antes de tomar ibuprofeno\n\nNo tome ibuprofeno si:\n- es alérgico al ibuprofeno o a otros "
        "antiinflamatorios;\n- ha tenido una úlcera de estómago;\n- está en los últimos tres meses del embarazo.\n"
    )
    answer = ask("¿Quién no debe tomar ibuprofeno?", passages=_chunked("prospecto.md", leaflet), chat="extractive", verify="strict", judge="local")
    assert not answer.refused, (answer.answer, answer.faithfulness)
    assert answer.answer == (
        "No tome ibuprofeno si: es alérgico al ibuprofeno o a otros antiinflamatorios; ha tenido una úlcera de estómago; "
        "está en los últimos tres meses del embarazo. [1]"
    ), answer.answer
    beipack = (
        "# Gebrauchsinformation\n\n## Was sollten Sie beachten?\n\nParacetamol darf nicht eingenommen werden, wenn Sie\n"
        "- allergisch gegen Paracetamol sind,\n- eine schwere Lebererkrankung haben.\n\nSprechen Sie mit Ihrem Arzt, wenn Sie "
        "regelmäßig Alkohol trinken.\n"
    )
    who = ask("Wer darf Paracetamol nicht einnehmen?", passages=_chunked("beipack.md", beipack), chat="extractive", verify="strict", judge="local")
    assert who.answer == (  # it once said "..., wenn Sie. [1] allergisch gegen Paracetamol sind,. [1]"
        "Paracetamol darf nicht eingenommen werden, wenn Sie: allergisch gegen Paracetamol sind; eine schwere "
        "Lebererkrankung haben. [1]"
    ), (who.answer, who.faithfulness)
    # a German leaflet's section 3, "Wie ist Paracetamol einzunehmen?", names the procedure its lines are
    dosing = "## Wie ist Paracetamol einzunehmen?\n\nErwachsene nehmen 1 bis 2 Tabletten.\nNehmen Sie nicht mehr als 8 Tabletten in 24 Stunden.\n"
    how = ask("Wie ist Paracetamol einzunehmen?", passages=_chunked("beipack.md", beipack + "\n" + dosing), chat="extractive")
    assert how.answer == "Erwachsene nehmen 1 bis 2 Tabletten; Nehmen Sie nicht mehr als 8 Tabletten in 24 Stunden. [1]", how.answer
    # "¿Cómo se toma ...?" asks what "Cómo tomar ..." names (its pronoun aside, "toma" a form of "tomar")
    pauta = "## Cómo tomar ibuprofeno\n\nAdultos: un comprimido cada 6 a 8 horas.\nNo tome más de 3 comprimidos en 24 horas.\n"
    uso = "## Qué es y para qué se utiliza\n\nEl ibuprofeno alivia el dolor leve o moderado y baja la fiebre.\n"
    como = ask("¿Cómo se toma el ibuprofeno?", passages=_chunked("prospecto.md", uso + "\n" + leaflet + "\n" + pauta), chat="extractive")
    assert como.answer.startswith("Cómo tomar ibuprofeno: Adultos: un comprimido cada 6 a 8 horas; No tome más de 3"), como.answer
    # one line of it said after its lead-in ends in a stop, not in its semicolon and a stop (";.")
    ulcer = ask("¿Puedo tomar ibuprofeno con una úlcera de estómago?", passages=_chunked("prospecto.md", leaflet), chat="extractive")
    assert ";." not in ulcer.answer and ulcer.answer.startswith("No tome ibuprofeno si:"), ulcer.answer


@pytest.mark.parametrize(
    ("text", "leads"),
    [
        # a marked list under a colon; the prose line after it is none of its items
        ("Do not take it if you:\n- are pregnant\n- have asthma\nTalk to a pharmacist first.", [None, 0, 0, None]),
        # lines under a heading that ends open, up to the next title
        ("Do not take this medicine if\nYou are pregnant.\nYou have asthma.\nSide effects\nNausea is common.", [None, 0, 0, None, None]),
        # a paragraph under it, and a blank line under a Markdown heading
        ("## Do not drive if\n\nYou feel drowsy. You see double.", [None, 0, 0]),
        # a colon inside a line, a closed heading, a blank line between the lines: no lead-in
        ("Adults: take two tablets.\nChildren: take one.", [None, None]),
        ("Refunds\nRefunds take 5 days.", [None, None]),
        ("Bring these:\n- a photo ID\n\n- a pen", [None, 0, None]),
        # items that end in a semicolon, the last in a stop: one list ("a; b; c.")
        ("No tome ibuprofeno si:\n- es alérgico a él;\n- ha tenido una úlcera;\n- está embarazada.", [None, 0, 0, 0]),
        # a clause opened with its subject, German's verb last; items that end in commas
        ("Paracetamol darf nicht eingenommen werden, wenn Sie\n- allergisch gegen Paracetamol sind,\n- eine schwere Lebererkrankung haben.", [None, 0, 0]),
    ],
)
def test_a_lead_in_governs_the_lines_under_it_and_no_others(text, leads):
    from sourcerer.sentences import lead_in, sentence_spans

    spans = sentence_spans(text)
    assert [lead_in(text, spans, i) for i in range(len(spans))] == leads, [text[a:b] for a, b in spans]


def test_the_item_that_ends_a_semicolon_list_closes_it():
    """In an indexed chunk a list has lost its markers, and its lines are the sentences ingest found. After
    "...; ...; are allergic to aspirin." the prose line "Talk to a pharmacist first ..." is none of its lines: read
    as one, "Do not take this medicine if you: Talk to a pharmacist first" was an answer."""
    from sourcerer.sentences import lead_in

    def lines(text: str) -> list[tuple[int, int]]:
        starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
        return [(start, text.find("\n", start) if "\n" in text[start:] else len(text)) for start in starts]

    for text in (
        "Do not take this medicine if you:\nare pregnant;\nhave asthma.\nTalk to a pharmacist first.",
        # items that each end in a stop: a line that opens in another case is a sentence of its own
        "Do not take this medicine if you:\nare pregnant.\nhave asthma.\nTalk to a pharmacist first.",
    ):
        spans = lines(text)
        assert [lead_in(text, spans, i) for i in range(len(spans))] == [None, 0, 0, None], text


def test_strict_verification_reads_an_answer_with_the_heading_it_answers_under():
    """"Yes, for a flat fee of $15." answers "Do you ship to Canada?" only under that heading: the relevance check
    reads the sentence with it, as synthesis did, and keeps the answer (it once refused it as off topic, p = 0.01);
    a whole list under "What to bring on your first day" likewise."""
    faq = "# Help centre\n\n## Do you ship to Canada?\n\nYes, for a flat fee of $15. Delivery takes 5 to 8 business days.\n"
    guide = "# Onboarding\n\n## What to bring on your first day\n\n- A photo ID\n- Your signed offer letter\n- Bank details for payroll\n"
    for name, text, question in (("faq.md", faq, "Do you ship to Canada?"), ("guide.md", guide, "What should I bring on my first day?")):
        answer = ask(question, passages=_chunked(name, text), chat="extractive", verify="strict", judge="local")
        assert not answer.refused and answer.faithfulness.relevant, (question, answer.answer)


def test_asking_without_a_retrieval_floor_leaves_the_callers_retriever_as_it_was(tmp_path):
    """Where nothing is refused before synthesis (`min_score=0`, or the reader deciding), `ask()` searches with no
    semantic floor. It once set that on the caller's retriever, so the caller's next question, asked with a floor,
    searched without one; it now searches with a copy, whose hits the caller's retriever still lists."""
    from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR

    retriever = _indexed(tmp_path, "orders.md", HOWTO)
    answer = ask("How long do refunds take?", retriever=retriever, chat="extractive", min_score=0)
    assert not answer.refused and retriever.semantic_floor == SEMANTIC_FLOOR
    assert any("Refunds reach your card" in hit.text for hit in retriever.hits)


def test_the_best_sentence_is_said_first_unless_it_leans_on_the_one_before():
    """Two sentences of one passage were said in source order, so "Who approves expense claims over $500?" opened
    with the deadline for claims. The best one comes first now, except where it opens leaning on the sentence
    before it ("It arrives the next business day.")."""
    claims = "Submit expense claims within 30 days of the purchase. Claims over $500 need approval from your manager."
    answer = ask("Who approves expense claims over $500?", passages=[{"text": claims, "source": "h"}], chat="extractive", min_score=0)
    assert answer.answer.startswith("Claims over $500 need approval from your manager. [1]"), answer.answer
    express = "Express shipping is available for orders placed before 2 pm. It arrives the next business day."
    answer = ask("When does express shipping arrive?", passages=[{"text": express, "source": "h"}], chat="extractive", min_score=0)
    assert answer.answer == "Express shipping is available for orders placed before 2 pm. [1] It arrives the next business day. [1]"


def test_a_quote_marks_what_it_leaves_out_and_where_a_line_breaks():
    """A quote of several spans joined them with a space: "To reset your password: Click "Reset password"." read as
    one sentence of the source, the two steps between left out unseen, and a list's lines ran into one another
    ("alcohol traffic fines"). Text left out is " … ", a line without a stop ends in " / "."""
    from sourcerer.citations import localize
    from sourcerer.models import CharSpan, Passage

    text = "The following are not reimbursed:\nalcohol\ntraffic fines\n\nTo reset it: open Settings. Click Reset. Enter the code."
    passage = Passage(text=text, source="h")

    def quote(*parts: str) -> str:
        spans = [CharSpan(start=text.index(p), end=text.index(p) + len(p)) for p in parts]
        return localize(passage, spans)[0]

    assert quote("The following are not reimbursed:", "alcohol", "traffic fines") == "The following are not reimbursed: alcohol / traffic fines"
    assert quote("To reset it:", "Click Reset.") == "To reset it: … Click Reset."
    assert quote("Click Reset.", "Enter the code.") == "Click Reset. Enter the code."


def test_without_the_reader_a_word_shared_across_languages_is_no_answer(monkeypatch):
    """"Is there a dress code?" over French help pages was answered with "Saisissez le code au dos de la carte.":
    the one word the two share drew the passage in, and the sentence models read words. Without the reader an
    answer in another language than the question is refused (`decided_by: languages`), as such a question already
    was at retrieval when it shared no word; the reader reads across languages at its own operating point."""
    monkeypatch.setenv("SOURCERER_READER", "off")
    page = "Pour activer une carte cadeau :\n\n1. Connectez-vous.\n2. Ouvrez la page Cartes cadeaux.\n3. Saisissez le code au dos de la carte.\n"
    passages = [{"text": page, "source": "cartes.md"}]
    answer = ask("Where do I enter the code?", passages=passages, chat="extractive", min_score=0)
    assert answer.refused and answer.reason == "unsupported", answer.answer
    synthesize = next(stage for stage in answer.trace.stages if stage.stage == "synthesize")
    assert synthesize.detail["decided_by"] == "languages" and synthesize.detail["languages"] == {"question": "en", "passage": "fr"}
    assert any("SOURCERER_READER=on" in note for note in answer.trace.notes), answer.trace.notes
    french = ask("Où saisir le code de la carte cadeau ?", passages=passages, chat="extractive", min_score=0)
    assert not french.refused and "Saisissez le code au dos de la carte." in french.answer, french.answer


def test_table_rows_under_a_lead_in_keep_their_stops(tmp_path):
    """A table under "Our plans are:" is, once each row stands on its line, a lead-in's lines: said whole, its rows
    were joined by semicolons, and the semicolons between cells ran rows into one another ("Seats: 1; Plan:
    Team; ..."). Rows keep their own stops, and the judge reads each as a claim."""
    page = (
        "# Pricing\n\nOur plans are:\n\n| Plan | Price per month | Seats |\n|---|---|---|\n| Starter | $10 | 1 |\n"
        "| Team | $49 | 10 |\n\nAnnual billing saves 20%.\n"
    )
    retriever = _indexed(tmp_path, "prices.md", page)
    answer = ask("What plans do you have?", retriever=retriever, chat="extractive", min_score=0,
                 verify="strict", judge="local")
    assert answer.answer == (
        "Our plans are: Plan: Starter; Price per month: $10; Seats: 1. Plan: Team; Price per month: $49; Seats: 10. [1]"
    ), answer.answer
    assert answer.faithfulness.faithful


def test_lines_of_one_lead_in_keep_their_order_whichever_ranks_first():
    """The best sentence is said first, but two lines of one lead-in are one claim in the source's order: chosen
    best-first, "set ACME_URL" before "set ACME_KEY" once read "Then configure: set ACME_URL ...; set ACME_KEY ..."."""
    from sourcerer.models import Passage
    from sourcerer.synthesis.extractive import Analysis, ExtractiveSynthesizer, ScoredSentence

    text = "Then configure:\n- set ACME_KEY to your key\n- set ACME_URL to your endpoint"
    passage = Passage(text=text, source="install.md")

    def line(words: str, score: float) -> ScoredSentence:
        start = text.index(words)
        return ScoredSentence(0, start, start + len(words), words, {}, score)

    chosen = [line("set ACME_URL to your endpoint", 0.9), line("set ACME_KEY to your key", 0.8)]
    analysis = Analysis(feature_set="lexical", question="How do I set the URL and the key?", sources=[passage])
    draft = ExtractiveSynthesizer()._draft(chosen, {}, analysis)
    assert draft.answer == "Then configure: set ACME_KEY to your key; set ACME_URL to your endpoint. [1]", draft.answer


WARRANTY = (
    "WARRANTY\n\nAll Acme headphones come with a two-year limited warranty from the date of purchase.\n\n"
    "What is covered\nThe warranty covers defects in materials and workmanship under normal use.\n\n"
    "What is not covered\nDamage from drops, water, or unauthorised repairs is not covered. Ear cushions are wear parts "
    "and are not covered.\n"
)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What is not covered by the warranty?", "Damage from drops, water, or unauthorised repairs is not covered."),
        ("What isn't covered by the warranty?", "Damage from drops, water, or unauthorised repairs is not covered."),
        ("What does the warranty cover?", "The warranty covers defects in materials and workmanship under normal use."),
        ("Is water damage covered?", "Damage from drops, water, or unauthorised repairs is not covered."),  # yes or no: either way
    ],
)
def test_a_question_asking_with_a_negation_is_answered_by_a_sentence_that_negates_too(question, first):
    """Found trying a warranty as a user: "What is not covered by the warranty?" was answered "The warranty covers
    defects in materials and workmanship under normal use.": every word of the question but its "not", and the
    opposite of what was asked."""
    answer = ask(question, passages=_chunked("warranty.txt", WARRANTY), chat="extractive")
    assert answer.answer.startswith(first + " [1]"), answer.answer


def test_a_price_said_of_another_kind_is_no_answer_to_what_the_asked_kind_costs():
    """Found trying a shipping page as a user: "How much does standard shipping cost?" was answered "Standard
    shipping takes 3 to 5 business days. [1] Express shipping arrives the next day and costs $6. [1]": the only
    amount was express shipping's. An amount held only by a sentence about another kind is none."""
    shipping = [{"text": "Standard shipping takes 3 to 5 business days. Express shipping arrives the next day and costs $6.", "source": "Shipping"}]
    standard = ask("How much does standard shipping cost?", passages=shipping, chat="extractive")
    assert standard.refused and standard.trace.stage("synthesize").detail["missing_value"] == "money", standard.answer
    express = ask("How much does express shipping cost?", passages=shipping, chat="extractive")
    assert express.answer.startswith("Express shipping arrives the next day and costs $6. [1]"), express.answer


@pytest.mark.parametrize(
    ("question", "passages", "first"),
    [
        (
            "What is the most ibuprofen I can take in one day?",
            ["Adults take 200 mg to 400 mg of ibuprofen every six hours.", "Never exceed 1200 mg of ibuprofen in a day."],
            "Never exceed 1200 mg of ibuprofen in a day.",
        ),
        (
            "Wie viel Ibuprofen darf ich höchstens am Tag einnehmen?",
            ["Erwachsene nehmen alle sechs Stunden 200 bis 400 mg Ibuprofen ein.", "Nehmen Sie nicht mehr als 1200 mg Ibuprofen am Tag ein."],
            "Nehmen Sie nicht mehr als 1200 mg Ibuprofen am Tag ein.",
        ),
        (
            "布洛芬一天最多能吃多少？",
            ["成人每六小时服用布洛芬200至400毫克。", "布洛芬每日总量不得超过1200毫克。"],
            "布洛芬每日总量不得超过1200毫克。",
        ),
    ],
)
def test_a_question_asking_for_a_limit_is_answered_by_the_sentence_that_states_one(question, passages, first):
    """"What's the most paracetamol I can take in a single day?" was answered with the usual dose ("Adults may take
    500 mg to 1000 mg ... every four to six hours."), every word of the question, while "Do not exceed 4000 mg in 24
    hours." stood second: a leaflet's usual dose given for its maximum."""
    answer = ask(question, passages=[{"text": p, "source": "Leaflet"} for p in passages], chat="extractive")
    assert answer.answer.startswith(first + " [1]") or answer.answer.startswith(first + " [2]"), answer.answer


@pytest.mark.parametrize(
    ("question", "passages", "first"),
    [
        (
            "ATM每天最多能取多少钱？",
            ["借记卡年费为10元，账户日均余额超过3000元可免年费。", "ATM每日取款限额为2万元。", "手机银行单日转账限额为5万元。"],
            "ATM每日取款限额为2万元。",
        ),
        (
            "What is the most I can withdraw at an ATM per day?",
            ["Accounts with a balance of more than 3,000 EUR pay no annual fee.", "The daily ATM withdrawal limit is 1,000 EUR."],
            "The daily ATM withdrawal limit is 1,000 EUR.",
        ),
    ],
)
def test_a_sentence_naming_the_limit_states_one(question, passages, first):
    """Found trying a bank card's FAQ as a user: "ATM每天最多能取多少钱？" was answered "借记卡年费为10元，账户日均余额超过
    3000元可免年费。" (an annual fee): the sentence model put the ATM limit first (0.60 against 0.01), and the limit
    reading moved the fee's "超过" (more than) before it, reading no limit in "限额" (the limit)."""
    answer = ask(question, passages=[{"text": p, "source": "Card FAQ"} for p in passages], chat="extractive")
    assert answer.answer.startswith(first), answer.answer


def test_a_question_asking_how_often_is_answered_by_the_sentence_that_states_a_frequency():
    """Found trying a German leaflet as a user: "Wie oft darf ich Ibuprofen nehmen?" was answered with the
    contraindication ("Nehmen Sie Ibuprofen nicht ein, wenn Sie allergisch ... sind"), which holds its words, while
    the dose "alle 6 bis 8 Stunden" stood second. "How many times did he win?" asks a count, not a frequency."""
    from sourcerer.synthesis.scope import ASKED_FREQUENCY

    leaflet = [
        {"text": "Dosierung\nErwachsene und Jugendliche ab 40 kg nehmen 1 Tablette, bei Bedarf alle 6 bis 8 Stunden.", "source": "Ibuprofen"},
        {"text": "Gegenanzeigen\nNehmen Sie Ibuprofen nicht ein, wenn Sie allergisch gegen Ibuprofen sind.", "source": "Ibuprofen"},
    ]
    answer = ask("Wie oft darf ich Ibuprofen nehmen?", passages=leaflet, chat="extractive")
    assert answer.answer.startswith("Erwachsene und Jugendliche ab 40 kg"), answer.answer
    assert not ASKED_FREQUENCY.search("how many times did grant hill win the award?")
    assert ASKED_FREQUENCY.search("how many times a day can i take it?")


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("How many books can I borrow?", "Each card may have at most 30 items on loan"),
        ("How many times can I renew a loan?", "Loans can be renewed twice"),
        ("Wie viele Bücher darf ich ausleihen?", "Pro Ausweis dürfen höchstens 30 Medien"),
        ("Wie oft kann ich verlängern?", "Die Leihfrist kann zweimal verlängert werden"),
    ],
)
def test_a_question_asking_how_many_is_answered_by_the_sentence_that_states_a_count(question, first):
    """Found trying a library's rules as a user: "How many books can I borrow?" was answered "Books can be borrowed
    for four weeks." (its words, and a number of weeks), while the limit of 30 items stood lower. A number of times
    ("twice") counts where times are asked; "zweimal" says how often in German."""
    rules = [
        {"text": "Ausleihe\nBücher können für vier Wochen ausgeliehen werden. Die Leihfrist kann zweimal verlängert werden, sofern keine "
         "Vormerkung vorliegt. Pro Ausweis dürfen höchstens 30 Medien gleichzeitig ausgeliehen werden.", "source": "Benutzungsordnung"},
        {"text": "Borrowing\nBooks can be borrowed for four weeks. Loans can be renewed twice, unless another reader has reserved the "
         "item. Each card may have at most 30 items on loan at the same time.", "source": "Rules of use"},
    ]
    answer = ask(question, passages=rules, chat="extractive")
    assert answer.answer.startswith(first), answer.answer


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What time is breakfast?", "It is served from 7am to 10:30am in the Harbour Restaurant."),
        ("À quelle heure est servi le petit-déjeuner ?", "Il est servi de 7h à 10h30 au restaurant."),
    ],
)
def test_a_question_asking_what_time_is_answered_by_the_sentence_that_states_one(question, said):
    """Found trying a hotel's FAQ as a user: "What time is breakfast?" was answered "Breakfast is included in all
    rates except Room Only.", while the sentence that says when it is served, which leans on it, stood second."""
    faq = [
        {"text": "Is breakfast included?\nBreakfast is included in all rates except Room Only. It is served from 7am to "
         "10:30am in the Harbour Restaurant.", "source": "Hotel FAQ"},
        {"text": "Le petit-déjeuner est-il inclus ?\nLe petit-déjeuner est inclus dans tous les tarifs sauf Chambre seule. Il "
         "est servi de 7h à 10h30 au restaurant.", "source": "FAQ de l'hôtel"},
    ]
    answer = ask(question, passages=faq, chat="extractive")
    assert said in answer.answer, answer.answer


_FOUNDRY = """# House rules – The Foundry coworking

The Foundry is open to members from 7:00 to 22:00 on weekdays and from 9:00 to 18:00 on Saturdays. We are closed on Sundays and public holidays. Members with a 24/7 plan can enter at any time with their key card.

## Plans and prices
A hot desk costs €190 per month and gives access to any free desk in the open space. A fixed desk costs €290 per month and includes a lockable drawer. A day pass costs €25 and can be bought at reception. Students get 20% off the hot desk plan on presentation of a valid student card.

## Meeting rooms
Members can book meeting rooms through the app. Hot desk members get 4 hours of meeting room time per month; fixed desk members get 10 hours. Extra hours cost €15 each. Bookings cancelled less than 2 hours in advance are charged in full.

## Guests
Each member may bring up to two guests per day free of charge. Guests must be registered at reception and must leave with their host.

## Other rules
Phone calls must be taken in the phone booths, not at the desks. Dogs are welcome if they are well behaved and on a lead; other animals are not allowed. Printing costs €0.10 per black-and-white page and €0.40 per colour page. Coffee and tea are free for members. Lost key cards are replaced for €20."""
_THEATRE = """# Billetterie – Théâtre des Lilas

## Achat des billets
Les billets sont en vente sur notre site et au guichet du théâtre, ouvert du mardi au samedi de 14 h à 19 h. Le guichet ouvre aussi une heure avant chaque représentation. Le paiement se fait par carte bancaire ou en espèces au guichet ; les chèques ne sont plus acceptés.

## Tarifs
Le plein tarif est de 28 €. Le tarif réduit à 18 € est réservé aux moins de 26 ans, aux demandeurs d'emploi et aux personnes en situation de handicap, sur présentation d'un justificatif. Les enfants de moins de 12 ans paient 10 €. Les groupes de 10 personnes ou plus bénéficient de 15 % de réduction sur le plein tarif.

## Échanges et remboursements
Les billets ne sont ni repris ni remboursés. Ils peuvent être échangés une fois, sans frais, pour une autre date du même spectacle, jusqu'à 48 heures avant la représentation. En cas d'annulation d'un spectacle par le théâtre, les billets sont remboursés intégralement.

## Accès à la salle
Les portes ouvrent 30 minutes avant le début. Les retardataires ne sont admis qu'à l'entracte. La salle est accessible aux fauteuils roulants ; merci de nous prévenir lors de la réservation. Les photos et les enregistrements sont interdits pendant le spectacle. Un vestiaire gratuit est à votre disposition."""
_PRAXIS = """# Tierarztpraxis Dr. Weber – Informationen für Tierhalter

## Sprechzeiten
Montag bis Freitag von 8:00 bis 12:00 Uhr und von 15:00 bis 18:30 Uhr. Samstag von 9:00 bis 12:00 Uhr nur für Notfälle. Mittwochnachmittag ist die Praxis geschlossen.

## Termine
Termine vereinbaren Sie telefonisch unter 0711 123456 oder online. Impfungen und Routineuntersuchungen finden nur nach Terminvereinbarung statt. Notfälle werden jederzeit während der Sprechzeiten behandelt. Außerhalb der Sprechzeiten wenden Sie sich bitte an die Tierklinik Stuttgart.

## Kosten
Wir rechnen nach der Gebührenordnung für Tierärzte (GOT) ab. Eine allgemeine Untersuchung kostet ab 23,62 €. Die Rechnung ist direkt nach der Behandlung in bar oder mit EC-Karte zu bezahlen. Haben Sie eine Tierkrankenversicherung, erhalten Sie eine Rechnung zur Einreichung.

## Behandelte Tiere
Wir behandeln Hunde, Katzen, Kaninchen, Meerschweinchen und andere Kleintiere. Pferde und Nutztiere behandeln wir nicht. Vögel und Reptilien behandelt Frau Dr. Schmidt am Dienstag und Donnerstag.

## Hinweise
Bitte bringen Sie Katzen und Kleintiere in einer Transportbox. Hunde sind im Wartezimmer an der Leine zu führen. Bringen Sie zum ersten Termin den Impfpass Ihres Tieres mit. Kastrationen werden dienstags und freitags vormittags durchgeführt; das Tier muss nüchtern sein."""

_REINIGUNG = """# Textilreinigung Blitzblank – Preise und Bedingungen

## Öffnungszeiten
Montag bis Freitag 7:30 bis 18:30 Uhr, Samstag 9 bis 13 Uhr.

## Preise
Ein Hemd kostet 3,50 Euro, gebügelt und auf dem Bügel. Eine Hose oder ein Rock kostet 7 Euro, ein Sakko 9 Euro, ein Anzug 15 Euro. Bettdecken reinigen wir ab 25 Euro. Leder und Pelz nehmen wir nicht an.

## Abholung
Normale Aufträge sind nach drei Werktagen fertig. Mit dem Expressservice ist Ihr Hemd am selben Tag fertig, wenn Sie es bis 9 Uhr bringen; der Aufpreis beträgt 50 %.

## Haftung
Für Knöpfe und Verzierungen übernehmen wir keine Haftung. Bei Beschädigung ersetzen wir höchstens das Zwanzigfache des Reinigungspreises.

## Aufbewahrung
Nicht abgeholte Kleidung bewahren wir drei Monate auf. Danach wird sie gespendet."""


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Was kostet eine Bettdecke?", "Bettdecken reinigen wir ab 25 Euro."),  # Bettdecke, Bettdecken: one word
        ("Reinigen Sie Teppiche?", None),  # cleaning duvets is no answer: the verb a question opens with names no thing
        ("Was kostet ein Anzug?", "Eine Hose oder ein Rock kostet 7 Euro, ein Sakko 9 Euro, ein Anzug 15 Euro."),
    ],
)
def test_a_word_the_sources_write_with_another_ending_is_the_word_asked(question, said, tmp_path):
    """Found trying a dry cleaner's prices as a user: "Was kostet eine Bettdecke?" was answered with the shirts' price,
    as the index stems English only ("bettdeck" against "bettdecken"), and "Reinigen Sie Teppiche?" with "Bettdecken
    reinigen wir ab 25 Euro.", which shares only the verb the question opens with."""
    from sourcerer.passage_files import document_passages

    (tmp_path / "preise.md").write_text(_REINIGUNG, encoding="utf-8")
    answer = ask(question, passages=document_passages(tmp_path / "preise.md"), chat="extractive")
    assert answer.refused if said is None else answer.answer.startswith(said), answer.answer


def test_only_a_language_the_index_does_not_stem_reads_a_word_by_its_other_endings():
    """English is stemmed already, and there another ending makes another word ("producer", "produced": NoMIRACL's
    "Who was the producer of …?" was refused, every passage then covering the question whole)."""
    from sourcerer.synthesis.extractive import _as_inflected
    from sourcerer.synthesis.scope import unstemmed_language

    assert not unstemmed_language("Who was the producer of Night at the Museum?")
    assert unstemmed_language("Was kostet eine Bettdecke?") and unstemmed_language("Puis-je échanger mon billet ?")
    assert unstemmed_language("À quelle heure puis-je arriver ?") and unstemmed_language("¿Cuánto cuesta la entrada?")
    assert _as_inflected("bettdeck", {"bettdecken", "hemd"}) == "bettdecken"
    assert _as_inflected("bettdeck", {"bettdecken", "bettdecker"}) == "bettdeck"  # two such words: neither
    assert _as_inflected("hemd", {"hemden"}) == "hemd"  # too short to tell


_TORTEN = """# Bestellbedingungen für Torten

## Bestellung
Torten müssen mindestens drei Tage vor dem Abholtermin bestellt werden. Hochzeitstorten bitte mindestens vier Wochen vorher bestellen.

## Preise
Eine Torte für 12 Personen kostet 38 Euro, für 20 Personen 58 Euro. Eine Beschriftung ist kostenlos, ein Fotodruck kostet 8 Euro.

## Anzahlung
Bei Bestellungen über 100 Euro ist eine Anzahlung von 50 % fällig.

## Allergene
Alle Torten können Spuren von Nüssen enthalten. Glutenfreie Torten bieten wir nicht an. Laktosefreie Torten sind auf Anfrage möglich.

## Abholung
Die Abholung ist von Dienstag bis Samstag zwischen 8 und 18 Uhr möglich. Eine Lieferung bieten wir nur für Hochzeitstorten an, innerhalb von 20 km für 25 Euro.

## Stornierung
Eine kostenlose Stornierung ist bis 48 Stunden vor dem Abholtermin möglich."""

@pytest.mark.parametrize(
    ("question", "page", "said"),
    [
        ("What are the opening hours?", _FOUNDRY, "The Foundry is open to members from 7:00 to 22:00"),  # not "Extra hours cost"
        ("À quelle heure ouvrent les portes ?", _THEATRE, "Les portes ouvrent 30 minutes avant le début."),  # how long before
        ("Wann finden Kastrationen statt?", _PRAXIS, None),  # "dienstags" is a day said: the best states none
        # a time said of the thing asked ("Abholung" for "abholen"), not a price of it ("Torte")
        ("Wann kann ich die Torte abholen?", _TORTEN, "Die Abholung ist von Dienstag bis Samstag"),
    ],
)
def test_a_question_asking_when_is_answered_by_a_sentence_that_states_a_time(question, page, said, tmp_path):
    """Found trying a coworking space's rules, a theatre's box office and a vet's notes as a user: "What are the
    opening hours?" was refused for "Extra hours cost €15 each." (its "hours"), "À quelle heure ouvrent les portes ?"
    answered with the box office's hours, as "30 minutes avant" was no time stated, and "Wann finden Kastrationen
    statt?" with "Impfungen und Routineuntersuchungen finden nur nach Terminvereinbarung statt." (finden, statt):
    no answer is better than a time of another thing (the castrations' days, "dienstags", count as one now). And a
    cake shop's "Wann kann ich die Torte abholen?" was answered with the cakes' prices, while the pick-up days stood
    next."""
    from sourcerer.passage_files import document_passages

    (tmp_path / "page.md").write_text(page, encoding="utf-8")
    answer = ask(question, passages=document_passages(tmp_path / "page.md"), chat="extractive")  # a passage per section
    assert answer.refused if said is None else answer.answer.startswith(said), answer.answer


@pytest.mark.parametrize(
    ("question", "text", "said", "not_said"),
    [
        (
            "Muss meine Katze gegen Tollwut geimpft sein?",
            "## Impfungen\nHunde müssen gegen Staupe, Parvovirose und Tollwut geimpft sein.\n"
            "Katzen müssen gegen Katzenseuche und Katzenschnupfen geimpft sein.\nDer Impfpass ist bei der Ankunft vorzulegen.",
            "Katzen müssen",
            "Hunde",
        ),
        (
            "Must my cat be vaccinated against rabies?",
            "## Vaccinations\nDogs must be vaccinated against distemper, parvovirus and rabies every year.\n"
            "Cats must be vaccinated against cat flu and enteritis every year.\nBring the vaccination record on arrival.",
            "Cats must",
            "Dogs",
        ),
    ],
)
def test_a_rule_said_of_another_subject_gives_way_to_the_asked_ones(question, text, said, not_said):
    """Found trying a boarding kennel's terms as a user: "Muss meine Katze gegen Tollwut geimpft sein?" was answered
    "Hunde müssen gegen Staupe, Parvovirose und Tollwut geimpft sein." (it names rabies), while the cats' rule, which
    says the same of cats and names no rabies, stood next."""
    kennel = [{"text": text, "source": "kennel.md"}, {"text": "## Prices\nA night costs 25 euros.", "source": "kennel.md"}]
    answer = ask(question, passages=kennel, chat="extractive")
    assert answer.answer.startswith(said) and not_said not in answer.answer, answer.answer


def test_a_pronoun_is_no_other_subject_nor_what_a_question_asks_for():
    """Read over the training QA sets' gold paragraphs: "Il peut, sur sa demande, être admis à jouir des droits de
    citoyen français" (the answer) was dropped as said of another subject than "L'indigène musulman" before it, and
    "¿Qué campo …?" asks for a field: a sentence opening with "Los campos" is no better for it."""
    from sourcerer.synthesis.scope import other_subject

    question = "Est-ce qu'un indigène musulman peut avoir les droits d'un citoyen français ?"
    said = "Il peut, sur sa demande, être admis à jouir des droits de citoyen français."
    assert other_subject(question, said, "L'indigène musulman est français et peut avoir des droits.") is None
    passage = (
        "Una distinción clave entre el análisis de algoritmos y la teoría de la complejidad computacional es que el "
        "primero analiza los recursos de un problema, mientras que la segunda estudia todos los algoritmos posibles. "
        "Los campos relacionados con la teoría son el análisis de algoritmos y la teoría de la computabilidad."
    )
    answer = ask("¿Qué campo estudia todos los algoritmos posibles?", passages=[{"text": passage, "source": "doc"}], chat="extractive")
    assert answer.answer.startswith("Una distinción"), answer.answer


def test_an_impersonal_it_leans_on_no_sentence_before_it():
    """Found trying a village hall's hire terms as a user: "Peut-on fumer dans la salle ?" was answered "Le ménage est
    à la charge du locataire. Il est interdit de fumer dans la salle.": "Il est interdit de …" (it is forbidden to)
    was read as leaning on the sentence before it, which was said first."""
    rules = [{"text": "## Règles\nLa musique doit s'arrêter à 2 heures du matin.\nLe ménage est à la charge du locataire.\n"
              "Il est interdit de fumer dans la salle.", "source": "salle.md"},
             {"text": "## Tarifs\nLa location pour un week-end coûte 450 euros.", "source": "salle.md"}]
    answer = ask("Peut-on fumer dans la salle ?", passages=rules, chat="extractive")
    assert answer.answer.startswith("Il est interdit de fumer") and "ménage" not in answer.answer, answer.answer


def test_whether_a_thing_is_included_is_answered_by_its_price_or_refused():
    """Found trying a business hotel's guest information as a user: "Is breakfast included?" was answered "Breakfast is
    served from 6:30am to 10am …", which says nothing of paying, while "Breakfast costs 18 euros per person." came
    right after it; and "¿Está incluida la limpieza?" over a flat's rules with the smoking ban. Whether a thing is
    included asks what it costs, as whether it is free does."""
    hotel = [{"text": "## Breakfast\nBreakfast is served from 6:30am to 10am on weekdays and until 11am at weekends.\n"
              "Breakfast costs 18 euros per person.", "source": "hotel.md"},
             {"text": "## Parking\nThe hotel garage costs 22 euros per night.", "source": "hotel.md"}]
    answer = ask("Is breakfast included?", passages=hotel, chat="extractive")
    assert answer.answer.startswith("Breakfast costs 18 euros"), answer.answer
    flat = [{"text": "## Normas\nEstá prohibido fumar en todo el edificio.\nLas mascotas no están permitidas.", "source": "piso.md"},
            {"text": "## Precio\nEl alquiler cuesta 900 euros al mes.", "source": "piso.md"}]
    answer = ask("¿Está incluida la limpieza?", passages=flat, chat="extractive")
    assert answer.refused, answer.answer


_GYM_HOURS = {
    "en": "## Opening hours\nFrom Monday to Friday we are open from 6:00 to 22:00.\nOn Saturdays and Sundays we are open from 8:00 to 20:00.",
    "fr": "## Horaires\nDu lundi au vendredi, la salle est ouverte de 6 h à 22 h.\nLe samedi et le dimanche, elle est ouverte de 8 h à 20 h.",
    "de": "## Öffnungszeiten\nMontag bis Freitag ist das Studio von 6 bis 22 Uhr geöffnet.\nSamstags und sonntags ist es von 8 bis 20 Uhr geöffnet.",
    "zh": "## 营业时间\n周一至周五营业时间为6:00至22:00。\n周六和周日营业时间为8:00至20:00。",
    "ja": "## 営業時間\n平日は7時から23時まで営業しています。\n土日祝日は9時から20時まで営業しています。",
}


@pytest.mark.parametrize(
    ("language", "question", "said", "not_said"),
    [
        ("en", "Are you open on weekends?", "On Saturdays and Sundays", "Monday"),
        ("en", "What time do you open at the weekend?", "On Saturdays and Sundays", "Monday"),
        ("en", "What time do you open on Tuesday?", "From Monday to Friday", "Saturdays"),
        ("en", "Are you open on Tuesdays?", "From Monday to Friday", "Saturdays"),
        ("fr", "À quelle heure ouvrez-vous le week-end ?", "Le samedi et le dimanche", "lundi"),
        ("de", "Wann habt ihr am Wochenende geöffnet?", "Samstags und sonntags", "Montag"),
        ("zh", "周末几点开门？", "周六和周日", "周一"),
        ("zh", "星期六几点开门？", "周六和周日", "周一"),
        ("ja", "週末は何時からですか？", "土日祝日", "平日"),
    ],
)
def test_a_question_asked_of_a_day_is_answered_by_the_sentence_for_that_day(language, question, said, not_said):
    """Found trying a Chinese gym's member notes as a user: "周末几点开门？" (what time do you open at the weekend?) was
    answered "周一至周五营业时间为6:00至22:00。" (Monday to Friday), and "Are you open on weekends?" over the same hours
    in English alike, while the sentence for Saturdays and Sundays stood next; the weekday hours did not follow it.
    A day a range covers is named by it: "What time do you open on Tuesday?" was refused for naming no Tuesday."""
    hours = [{"text": _GYM_HOURS[language], "source": "gym.md"}, {"text": "## Fees\nA monthly pass costs 30 euros.", "source": "gym.md"}]
    answer = ask(question, passages=hours, chat="extractive")
    assert said in answer.answer and not_said not in answer.answer, answer.answer


def test_a_day_outside_the_days_an_answer_names_is_answered_by_them():
    """"Is the museum open on Monday?" over hours from Tuesday to Sunday was refused for naming no Monday: the days a
    schedule names answer a question of another day (closed), as "Monday to Friday" answers one of weekends."""
    hours = [{"text": "## Hours\nThe museum is open Tuesday to Sunday from 10:00 to 18:00.", "source": "museum.md"},
             {"text": "## Tickets\nAdults pay 12 euros.", "source": "museum.md"}]
    answer = ask("Is the museum open on Monday?", passages=hours, chat="extractive")
    assert not answer.refused and "Tuesday to Sunday" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("From Monday to Friday", {0, 1, 2, 3, 4}),
        ("The museum is open Tuesday to Sunday", {1, 2, 3, 4, 5, 6}),
        ("Friday to Monday", {4, 5, 6, 0}),
        ("de lunes a viernes y los fines de semana", set(range(7))),
        ("Le samedi et le dimanche", {5, 6}),
        ("am Wochenende", {5, 6}),
        ("月曜日から金曜日は9時から18時まで", {0, 1, 2, 3, 4}),
        ("日曜日と祝日は休診です。", {6}),
        ("星期天", {6}),
        ("open daily from 9", set(range(7))),
        ("I need a second opinion", set()),
    ],
)
def test_the_days_a_text_names(text, days):
    from sourcerer.synthesis.days import days_named

    assert days_named(text) == days


def test_a_question_asked_with_an_adjective_finds_the_sentence_that_says_its_noun():
    """Found trying an antihistamine leaflet as a user: "Can I take it while pregnant?" was answered "If you take more
    than the recommended dose, contact your doctor or go to A&E straight away.": "pregnant" and "pregnancy" were
    two words, and the overdose section shared "take"."""
    leaflet = [
        {"text": "## Before you take cetirizine\nDo not take cetirizine if you are allergic to cetirizine or hydroxyzine.\n"
         "Cetirizine is not recommended during pregnancy. Do not take it while breastfeeding, as it passes into breast milk.", "source": "leaflet.md"},
        {"text": "## If you take too much\nIf you take more than the recommended dose, contact your doctor or go to A&E "
         "straight away. Take the pack with you.", "source": "leaflet.md"},
        {"text": "## How to take cetirizine\nAdults and children aged 12 and over: take one tablet once a day.\nSwallow the "
         "tablet whole with a glass of water.", "source": "leaflet.md"},
    ]
    answer = ask("Can I take it while pregnant?", passages=leaflet, chat="extractive")
    assert answer.answer.startswith("Cetirizine is not recommended during pregnancy."), answer.answer


def test_a_german_compound_is_read_as_the_words_the_sources_write_apart():
    """Found trying a German home insurance as a user: "Sind Hochwasserschäden versichert?" was answered with the list
    of insured damages, which names no flood, while "Schäden durch Hochwasser sind nur mit dem Zusatzbaustein
    Elementar versichert." says it in two words."""
    from sourcerer.synthesis.extractive import _compound_parts

    terms_ = {"hochwasser", "schaden", "versicherung", "summe"}
    assert _compound_parts("hochwasserschaden", terms_) == ("hochwasser", "schaden")
    assert _compound_parts("versicherungssumme", terms_) == ("versicherung", "summe")  # the linking s
    assert _compound_parts("schaden", terms_) == ("schaden",) and _compound_parts("erdbebenschaden", terms_) == ("erdbebenschaden",)
    policy = [
        {"text": "## Welche Schäden sind versichert?\nVersichert sind Schäden durch Feuer, Leitungswasser, Sturm, Hagel und "
         "Einbruchdiebstahl.\nSchäden durch Hochwasser sind nur mit dem Zusatzbaustein Elementar versichert.\nGlasbruch ist "
         "nicht versichert.", "source": "hausrat.md"},
        {"text": "## Selbstbeteiligung\nDie Selbstbeteiligung beträgt 150 Euro je Schadenfall.", "source": "hausrat.md"},
    ]
    answer = ask("Sind Hochwasserschäden versichert?", passages=policy, chat="extractive")
    assert answer.answer.startswith("Schäden durch Hochwasser sind nur mit dem Zusatzbaustein Elementar versichert."), answer.answer


def test_a_follow_up_about_the_other_party_keeps_what_was_asked():
    """Found trying a tenancy agreement as a user: after "How much notice does the landlord have to give?", "And the
    tenant?" was rewritten "How much tenant does have?" and answered with the deposit the tenant pays."""
    tenancy = [
        {"text": "Deposit\nThe tenant pays a deposit of £1,380, equal to five weeks' rent.", "source": "tenancy.md"},
        {
            "text": "Ending the tenancy\nThe tenant may end the tenancy after the fixed term by giving at least one month's "
            "notice in writing. The landlord must give at least two months' notice.",
            "source": "tenancy.md",
        },
    ]
    history = [{"role": "user", "content": "How much notice does the landlord have to give?"}]
    answer = ask("And the tenant?", passages=tenancy, chat="extractive", history=history)
    assert answer.answer.startswith("The tenant may end the tenancy"), answer.answer


PARACETAMOL_LEAFLET = (
    "# Paracetamol 500 mg tablets\n\n## What this medicine is used for\nParacetamol is used to treat mild to moderate pain, "
    "including headache, toothache and period pain. It also reduces fever.\n\n## Before you take this medicine\nDo not take "
    "paracetamol if you are allergic to it.\nTalk to your doctor before taking this medicine if you have liver or kidney "
    "problems, or if you drink more than 14 units of alcohol a week.\n\n## How to take this medicine\nAdults and children "
    "aged 16 years and over: take 1 or 2 tablets every 4 to 6 hours as needed.\nDo not take more than 8 tablets in 24 hours.\n"
    "Children aged 10 to 15 years: take 1 tablet every 4 to 6 hours. Do not give more than 4 tablets in 24 hours.\n"
    "Do not give to children under 10 years.\n\n## Pregnancy and breastfeeding\nParacetamol can be used during pregnancy and "
    "breastfeeding at the lowest effective dose for the shortest possible time.\n"
)


def test_a_whole_leaflet_given_as_one_passage_still_answers_its_limit_and_its_ages():
    """Found passing a leaflet whole to `ask()`: "What is the most paracetamol I can take in a day?" was answered "Do
    not take paracetamol if you are allergic to it." (the limit stood fifth, past the three sentences the limit
    reading looked at); "How many tablets can a 12 year old take in 24 hours?" was refused as asking about 12 against
    "Children aged 10 to 15" (one end of a range names no one thing); and "Can I give it to my 8 year old?" put "Do
    not take more than 8 tablets" first (an 8 beside another word is another thing)."""
    leaflet = [{"text": PARACETAMOL_LEAFLET, "source": "leaflet.md"}]
    most = ask("What is the most paracetamol I can take in a day?", passages=leaflet, chat="extractive", verify="strict")
    assert most.answer.startswith("Do not take more than 8 tablets in 24 hours."), most.answer
    child = ask("How many tablets can a 12 year old take in 24 hours?", passages=leaflet, chat="extractive")
    assert not child.refused and "Children aged 10 to 15 years" in child.answer, child.trace.notes
    young = ask("Can I give it to my 8 year old?", passages=leaflet, chat="extractive")
    assert not young.answer.startswith("Do not take more than 8 tablets"), young.answer


def test_strict_verification_keeps_the_sentence_that_holds_the_asked_number(tmp_path):
    """Found asking an API page with `sourcerer ask --verify strict`: "What does error 429 mean?" was answered with the
    HTTP 429 sentence, then refused as off topic, the 401 sentence (every word but the number) read as the better
    answer. A sentence without the asked number is no better answer to beat."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    index = SQLiteIndex(tmp_path / "index.db", embedder=local_embedder())
    index.ingest_document(
        {
            "source_uri": "api.md",
            "text": "# Acme API — Limits and Errors\n\n## Rate limits\n\n"
            "Free plan keys may make 60 requests per minute.\nPro plan keys may make 600 requests per minute.\n"
            "When you exceed the limit the API returns HTTP 429 with a Retry-After header.\n\n## Request size\n\n"
            "A request body may be at most 10 MB.\n"
            "File uploads larger than 10 MB must use the multipart upload endpoint, which accepts files up to 5 GB.\n"
            "\n## Authentication\n\nSend your API key in the Authorization header as a Bearer token.\n"
            "Keys can be rotated from the dashboard; the old key stays valid for 24 hours after rotation.\n\n"
            "## Errors\n\nA 401 response means the key is missing or invalid.\n"
            "A 403 response means the key is valid but lacks permission for the resource.\n"
            "A 503 response means the service is temporarily unavailable; retry with exponential backoff.\n\n"
            "## Data retention\n\nRequest logs are kept for 30 days.\n"
            "Uploaded files are deleted 7 days after the job that used them finishes.\n\n",
        }
    )
    answer = ask("What does error 429 mean?", retriever=index.retriever(tenant="local"), chat="extractive", verify="strict")
    index.close()
    assert not answer.refused and "HTTP 429" in answer.answer, answer.trace.notes


def test_a_quantity_is_no_number_to_put_first():
    """Found over an employee handbook: "Do I need a doctor's note for 2 days off sick?" was answered "Employees may
    work remotely up to 2 days per week ..." and "Can I carry over 10 days?" "Employees receive 10 days of paid sick
    leave per year.": the asked-number reading put first a sentence that held the number with the same unit. A short
    number is a thing asked about by its label ("step 3", "form 8"), not by its unit."""
    handbook = [
        {"text": "Vacation\nUp to 5 unused days may be carried over to the next year.", "source": "handbook.md"},
        {
            "text": "Sick leave\nEmployees receive 10 days of paid sick leave per year. A doctor's note is required for "
            "absences longer than 3 consecutive days.",
            "source": "handbook.md",
        },
        {"text": "Remote work\nEmployees may work remotely up to 2 days per week with their manager's approval.", "source": "handbook.md"},
    ]
    note = ask("Do I need a doctor's note for 2 days off sick?", passages=handbook, chat="extractive")
    assert note.answer.startswith("A doctor's note is required"), note.answer
    carry = ask("Can I carry over 10 days?", passages=handbook, chat="extractive")
    assert not carry.answer.startswith("Employees receive 10 days"), carry.answer


def test_a_chinese_follow_up_that_asks_is_no_new_topic():
    """Found over a Chinese shop FAQ: "那怎么退货？" (then how do I return it?) after "多久发货？" and "还有，积分有效期多久？"
    after "可以退货吗？" were read as new topics, their every character pair (怎么 too) a word a passage had to name:
    every passage was set aside and both were refused."""
    faq = [
        {"text": "退货政策\n收到商品后7天内可以无理由退货。退货运费由买家承担。", "source": "常见问题"},
        {"text": "发货时间\n订单在付款后48小时内发货。", "source": "常见问题"},
        {"text": "会员积分\n每消费1元可获得1积分。积分有效期为一年。", "source": "常见问题"},
    ]
    assert not rewrite_follow_up("那怎么退货？", [{"role": "user", "text": "多久发货？"}]).focus
    ret = ask("那怎么退货？", passages=faq, chat="extractive", history=[{"role": "user", "content": "多久发货？"}])
    assert not ret.refused and "退货" in ret.answer, ret.trace.notes
    points = ask("还有，积分有效期多久？", passages=faq, chat="extractive", history=[{"role": "user", "content": "可以退货吗？"}])
    assert points.answer.startswith("积分有效期为一年。"), points.trace.notes
    assert rewrite_follow_up("那偏远地区呢？", [{"role": "user", "text": "多久发货？"}]).query == "偏远地区 多久"  # still a new topic


def test_a_range_put_first_is_about_what_the_best_sentence_is_about():
    """Found trying travel insurance terms as a user: "My bags were delayed 5 hours, can I claim?" was answered
    "Theft must be reported to the local police within 24 hours …": its range holds 5 hours, and it says nothing of
    delayed bags, while the rule for bags delayed more than 12 hours (which does not apply) ranked first."""
    baggage = (
        "Baggage\nLost, stolen or damaged baggage is covered up to £1,500 on Essential and £3,000 on Premier. The single item "
        "limit is £300; valuables are limited to £500 in total. If your bags are delayed more than 12 hours on the outward "
        "journey, we pay £100 for essentials. Theft must be reported to the local police within 24 hours and you need a "
        "written police report."
    )
    answer = ask("My bags were delayed 5 hours, can I claim?", passages=[{"text": baggage, "source": "Travel insurance"}], chat="extractive")
    assert not answer.refused and answer.answer.startswith("If your bags are delayed more than 12 hours"), answer.answer


def test_an_age_the_question_states_finds_the_rule_for_it_where_the_best_states_no_age():
    """Found trying a pet insurance summary as a user: "Is my 10 year old cat's claim reduced?" was answered "… we
    reimburse you within 10 working days." (its 10), while "For pets aged 9 and over, you also pay 20% of the remaining
    claim." stood third: "aged 9 and over" is a range of ages, and one holding the asked age goes first where the best
    states none."""
    from sourcerer.synthesis.scope import stated_ranges

    assert stated_ranges("For pets aged 9 and over, you also pay 20% of the remaining claim.") == {"age": [(9.0, float("inf"))]}
    policy = (
        "Excess\nYou pay the first 99 GBP of every claim. For pets aged 9 and over, you also pay 20% of the remaining claim.\n"
        "Claims\nClaims must be made within 90 days of treatment. We pay the vet directly if the vet agrees; otherwise we "
        "reimburse you within 10 working days."
    )
    answer = ask("Is my 10 year old cat's claim reduced?", passages=[{"text": policy, "source": "Pet insurance"}], chat="extractive")
    assert answer.answer.startswith("For pets aged 9 and over"), answer.answer
    # an age range says who is in a group where it reaches into the group's ages: "aged 65 and over" says nothing of
    # children, and "Is the flu vaccine free for children?" stays refused
    from sourcerer.synthesis.scope import groups_aged

    assert groups_aged("patients aged 65 and over") == {"seniors"} and groups_aged("Adults over 16 years") == {"children", "adults", "seniors"}
    flu = [{"text": "Vaccinations\nThe flu vaccine is offered free to patients aged 65 and over, pregnant women and people with long-term conditions.", "source": "Practice"}]
    assert ask("Is the flu vaccine free for children?", passages=flu, chat="extractive").refused
    # seniors follow the rule for adults where the sources have none of their own
    library = [{"text": "Anmeldung\nDie Jahresgebühr beträgt 20 Euro für Erwachsene. Kinder unter 14 Jahren benötigen die Einverständniserklärung der Eltern.", "source": "Bibliothek"}]
    assert "20 Euro" in ask("Wie viel kostet die Jahresgebühr für Rentner?", passages=library, chat="extractive").answer


def test_a_sentence_that_leans_on_the_one_before_is_said_after_it():
    """Found trying a nursery's rules as a user: "Combien coûte une heure de crèche ?" was answered "Il varie de 0,50 €
    à 4,20 € de l'heure.", which does not say what varies; the sentence before it does. It is said first, and takes
    no second sentence's place."""
    fees = (
        "Tarifs\nLe tarif horaire dépend des revenus du foyer et du nombre d'enfants à charge, selon le barème de la CNAF. "
        "Il varie de 0,50 € à 4,20 € de l'heure. Les couches et les repas sont fournis sans supplément."
    )
    answer = ask("Combien coûte une heure de crèche ?", passages=[{"text": fees, "source": "Règlement"}], chat="extractive")
    assert not answer.refused and answer.answer.startswith("Le tarif horaire dépend"), answer.answer
    assert "Il varie de 0,50 € à 4,20 €" in answer.answer


def test_the_price_said_right_after_the_best_sentence_answers_what_it_costs():
    """Found trying a Japanese clinic's page as a user: "インフルエンザの予防接種はいくらですか？" (how much is the flu
    vaccination?) was refused for holding no amount: the best sentence says when it is given, and the next, "料金は…"
    (the fee is …), leaves the topic out as Japanese does. An amount in another section is still no answer."""
    clinic = (
        "予防接種\nインフルエンザの予防接種は10月から1月まで行っています。料金は大人3,500円、13歳未満の子どもは1回2,500円です。"
        "13歳未満の子どもは2回接種が必要です。"
    )
    answer = ask("インフルエンザの予防接種はいくらですか？", passages=[{"text": clinic, "source": "受診のご案内"}], chat="extractive")
    assert not answer.refused and "3,500円" in answer.answer, answer.answer


def test_a_follow_up_that_says_one_for_the_thing_asks_of_its_kind():
    """Found trying a gym's membership terms as a user: "And the Anytime one?" after "How much is the Off-Peak
    membership?" became "How much is the Anytime one?" and was refused; "For how long?" after "Can I freeze it?"
    carried the membership's words and not "freeze", and got the price."""
    off_peak = [{"role": "user", "text": "How much is the Off-Peak membership?"}]
    assert standalone_query("And the Anytime one?", off_peak) == "How much is the Anytime membership?"
    assert standalone_query("And the webhook one?", [{"role": "user", "text": "What is the API rate limit?"}]) == "What is the webhook rate limit?"
    assert standalone_query("What about the monthly one?", [{"role": "user", "text": "Can I get a refund on the annual plan?"}]) == "Can I get a refund on the monthly plan?"
    assert "freeze" in standalone_query("For how long?", [{"role": "user", "text": "Can I freeze my membership?"}])
    gym = (
        "Memberships\nThe Off-Peak membership costs £24.99 a month and gives access from 10am to 4pm on weekdays. The Anytime "
        "membership costs £34.99 a month and gives access 24 hours a day. You can freeze your membership for 1 to 3 months "
        "once a year for £5 a month. There is no minimum term; cancel any time with one month's notice."
    )
    passages = [{"text": gym, "source": "FitHub"}]
    answer = ask("And the Anytime one?", passages=passages, history=off_peak, chat="extractive")
    assert not answer.refused and answer.answer.startswith("The Anytime membership costs £34.99"), answer.answer
    answer = ask("For how long?", passages=passages, history=[{"role": "user", "text": "Can I freeze my membership?"}], chat="extractive")
    assert not answer.refused and answer.answer.startswith("You can freeze your membership for 1 to 3 months"), answer.answer


def test_the_sentence_that_says_the_asked_kind_goes_before_the_one_that_leaves_it_out():
    """Found trying a council's parking permit rules as a user: "Can I get a refund on visitor permits?" was
    answered "If you no longer need your permit, you can get a refund …" first (every other word of the question,
    read as a yes), and "Visitor permits cannot be refunded." second. A sentence of another section that says the
    pair of something else ("apply for a residents' permit") is not put first."""
    permits = [
        {"text": "Who can apply\nYou can apply for a residents' permit if you live in a controlled parking zone.", "source": "Permits"},
        {
            "text": "Refunds\nIf you no longer need your permit, you can get a refund for each full unused month, minus a £10 "
            "admin fee. Visitor permits cannot be refunded.",
            "source": "Permits",
        },
    ]
    answer = ask("Can I get a refund on visitor permits?", passages=permits, chat="extractive")
    assert not answer.refused and answer.answer.startswith("Visitor permits cannot be refunded."), answer.answer
    answer = ask("Can I get a refund on my residents' permit?", passages=permits, chat="extractive")
    assert not answer.refused and answer.answer.startswith("If you no longer need your permit"), answer.answer


def test_a_follow_up_names_what_it_asks_and_a_day_qualifies_a_question_that_named_none():
    """Found trying home insurance terms and a nursery's rules as a user: "¿Hay franquicia?" after "¿Cuánto cubren
    por dinero en efectivo?" was answered with the cash cover, drawn by the words carried along; the follow-up's own
    word is now its focus, which an answer's passage names. "Et le samedi ?" after "À quelle heure ferme la crèche ?"
    became "À quelle heure ferme la samedi ?": a day (or a time of day) where the previous question named none is added
    to it."""
    cash = [{"role": "user", "text": "¿Cuánto cubren por dinero en efectivo?"}]
    assert rewrite_follow_up("¿Hay franquicia?", cash).focus == ("franquicia",)
    assert standalone_query("Et le samedi ?", [{"role": "user", "text": "À quelle heure ferme la crèche ?"}]) == "À quelle heure ferme la crèche le samedi ?"
    assert standalone_query("And on Sundays?", [{"role": "user", "text": "What time does the gym open?"}]) == "What time does the gym open on Sundays?"
    assert standalone_query("¿Y los domingos?", [{"role": "user", "text": "¿A qué hora abre el gimnasio los sábados?"}]) == "¿A qué hora abre el gimnasio los domingos?"
    # a time of day too: "Und morgens um 8?" after "Darf ich mein Fahrrad mitnehmen?" had become "Darf ich morgens um 8?"
    bike = [{"role": "user", "text": "Darf ich mein Fahrrad mitnehmen?"}]
    assert standalone_query("Und morgens um 8?", bike) == "Darf ich mein Fahrrad mitnehmen morgens um 8?"
    policy = [
        {"text": "Robo\nEl robo en la vivienda está cubierto hasta 6.000 euros. El dinero en efectivo está cubierto hasta 300 euros.", "source": "Hogar"},
        {"text": "Franquicia\nSe aplica una franquicia de 150 euros en cada siniestro de daños por agua. No hay franquicia en robo.", "source": "Hogar"},
    ]
    answer = ask("¿Hay franquicia?", passages=policy, history=cash, chat="extractive")
    assert not answer.refused and "franquicia" in answer.answer, answer.answer


def test_a_question_about_a_group_no_source_names_is_refused_not_answered_with_another_groups_dose():
    """The FAQ benchmark's near-misses: "What is the maximum daily dose of paracetamol for children?" over a leaflet
    for adults was answered "Do not exceed 4000 mg in 24 hours. Adults may take 500 mg to 1000 mg ..." (a dose for
    adults, cited), and "儿童的对乙酰氨基酚剂量是多少？" with the adult dose. The adults' question is still answered."""
    leaflet = [
        {"text": "Adults may take 500 mg to 1000 mg of paracetamol every four to six hours. Do not exceed 4000 mg in 24 hours.", "source": "leaflet#1"},
        {"text": "Patients with liver disease should consult a doctor before taking paracetamol.", "source": "leaflet#2"},
    ]
    children = ask("What is the maximum daily dose of paracetamol for children?", passages=leaflet, chat="extractive")
    assert children.refused and children.trace.stage("synthesize").detail["missing_kind"]["missing"] == ["children"], children.answer
    adults = ask("How much paracetamol can an adult take?", passages=leaflet, chat="extractive")
    assert not adults.refused and "Adults may take" in adults.answer, adults.answer
    zh = [{"text": "成人每次服用对乙酰氨基酚500毫克，每六小时一次。", "source": "说明书#1"}, {"text": "每日总剂量不得超过4000毫克。", "source": "说明书#2"}]
    assert ask("儿童的对乙酰氨基酚剂量是多少？", passages=zh, chat="extractive").refused


@pytest.mark.parametrize(
    "question",
    ["How often do I have to change my password?", "Tous les combien faut-il changer son mot de passe ?", "¿Cada cuánto hay que cambiar la contraseña?", "كل كم يوما يجب تغيير كلمة المرور؟"],
)
def test_how_often_is_not_answered_by_a_sentence_that_says_no_frequency(question):
    """The FAQ benchmark's near-misses fr-13, es-13 and ar-06: how often a password must be changed, over a policy
    that gives only its length, was answered "Les mots de passe doivent comporter au moins 14 caractères." (cited,
    and no frequency). How often is an asked value: a sentence that states none is no answer."""
    policy = [
        {"text": "Passwords must be at least 14 characters long. Les mots de passe doivent comporter au moins 14 caractères.", "source": "security#1"},
        {"text": "Las contraseñas deben tener al menos 14 caracteres. يجب أن تتكون كلمة المرور من 14 حرفا على الأقل.", "source": "security#2"},
    ]
    answer = ask(question, passages=policy, chat="extractive")
    assert answer.refused, answer.answer
    assert answer.trace.stage("synthesize").detail["missing_value"] == "frequency"


def test_how_often_is_answered_by_a_frequency_said_in_words():
    """A frequency said in a word ("regularly", "souvent") or a share of cases answers how often, as "every 90 days"
    does."""
    policy = [{"text": "Passwords must be at least 14 characters long. Passwords must be changed every 90 days.", "source": "security"}]
    answer = ask("How often do I have to change my password?", passages=policy, chat="extractive")
    assert not answer.refused and "every 90 days" in answer.answer, answer.answer
    from sourcerer.synthesis.scope import holds_value

    assert holds_value("frequency", "It posts an update in the incident channel every 30 minutes.")
    assert holds_value("frequency", "神秘博士很少独自旅行。") and not holds_value("frequency", "Passwords must be at least 14 characters long.")
    surgery = [{"text": "The operation takes two hours. In about 20% of cases, further surgery is required.", "source": "surgery"}]
    answer = ask("How often is further surgery required?", passages=surgery, chat="extractive")
    assert not answer.refused and "20% of cases" in answer.answer, answer.answer


def test_a_german_price_question_reads_its_thing_and_was_kostet_asks_a_price():
    """Found trying a car rental's terms as a user: "Was kostet ein Navi?" was answered "Jeder weitere Kilometer
    kostet 0,25 Euro." (a price, of something else): German capitalises every noun, so "Navi" was read as a name and
    the price check left it to named scope, which reads no German names; and "was kostet" was not read as asking a
    price at all (only "was kosten")."""
    from sourcerer.synthesis.scope import asked_value

    assert asked_value("Was kostet ein Navi?") == asked_value("Was kosten die Kindersitze?") == "money"
    terms = [
        {"text": "Zusatzfahrer\nEin Zusatzfahrer kostet 8 Euro pro Tag und muss bei der Abholung anwesend sein.", "source": "Mietbedingungen"},
        {"text": "Kilometer\nIn den Tarifen sind 300 Kilometer pro Tag enthalten. Jeder weitere Kilometer kostet 0,25 Euro.", "source": "Mietbedingungen"},
    ]
    navi = ask("Was kostet ein Navi?", passages=terms, chat="extractive")
    assert navi.refused and navi.trace.stage("synthesize").detail["decided_by"] == "asked kind", navi.answer
    driver = ask("Was kostet ein Zusatzfahrer?", passages=terms, chat="extractive")
    assert not driver.refused and "8 Euro" in driver.answer, driver.answer


@pytest.mark.parametrize(
    ("question", "passages"),
    [
        ("How long does a production deployment take to roll back?", DEPLOYS),
        ("Combien de temps dure une consultation ?", [{"text": "Une consultation coûte 23 euros et est remboursée à 70 % par l'Assurance maladie.", "source": "cabinet"}]),
        ("回滚一次发布需要多长时间？", [{"text": "生产环境的发布只在每周二和周四的10:00到16:00之间进行。", "source": "发布"}]),
    ],
)
def test_how_long_a_thing_takes_is_not_answered_by_a_sentence_that_says_no_length_of_time(question, passages):
    """The FAQ benchmark's near-misses en-02 and zh-05, and a dentist's page tried as a user: how long a rollback
    takes was answered with the deployment window ("between 10:00 and 16:00 UTC": times of day, no length), and
    "Combien de temps dure une consultation ?" with its price. A length of time is an asked value."""
    answer = ask(question, passages=passages, chat="extractive")
    assert answer.refused, answer.answer
    assert answer.trace.stage("synthesize").detail["missing_value"] == "duration"


def test_how_long_a_warranty_is_is_not_answered_by_a_sentence_that_says_no_length():
    """Found trying a headphone warranty as a user: "How long is the warranty?" was answered "Out-of-warranty repairs
    cost a flat fee of 49 EUR plus shipping." (its "warranty"). "How long is ..." asks a length of time (or of
    distance: "How long is the river?"), as "Quelle est la durée de ..." does."""
    warranty = [
        {"text": "Outside the warranty\nOut-of-warranty repairs cost a flat fee of 49 EUR plus shipping.\nReplacement ear cushions can be ordered for 19 EUR a pair.", "source": "Warranty"},
    ]
    garantie = [{"text": "Hors garantie\nLes réparations hors garantie coûtent 49 euros, frais de port en plus.", "source": "Garantie"}]
    for question, passages, kind in (("How long is the warranty?", warranty, "length"), ("Quelle est la durée de la garantie ?", garantie, "duration")):
        answer = ask(question, passages=passages, chat="extractive")
        assert answer.refused, answer.answer
        assert answer.trace.stage("synthesize").detail["missing_value"] == kind
    kept = [{"text": "The warranty lasts 2 years from the date of purchase.", "source": "Warranty"}]
    assert "2 years" in ask("How long is the warranty?", passages=kept, chat="extractive").answer


def test_whether_a_thing_is_paid_for_is_answered_by_what_it_costs_or_that_it_is_free():
    """Found trying a credit card's fee schedule as a user: "补卡要钱吗？" (does a new card cost money?) was answered
    "卡片丢失后请立即拨打客服电话95555挂失。" (call 95555 to report a lost card). Whether a thing is paid for is an
    asked value: an amount, what costs nothing, or a sentence on charging or being included answers it."""
    card = [{"text": "挂失\n卡片丢失后请立即拨打客服电话95555挂失。\n挂失前72小时内的盗刷损失由银行承担。", "source": "收费标准"}]
    replace = ask("补卡要钱吗？", passages=card, chat="extractive")
    assert replace.refused and replace.trace.stage("synthesize").detail["missing_value"] == "charge", replace.answer
    trips = [{"text": "Absences\nLes sorties scolaires organisées par l'école ne sont pas facturées.", "source": "Règlement"}]
    assert "ne sont pas facturées" in ask("Les sorties scolaires sont-elles payantes ?", passages=trips, chat="extractive").answer
    infants = [{"text": "Infants may bring a folding pushchair free of charge.", "source": "Baggage"}]
    assert "free of charge" in ask("Are pushchairs free?", passages=infants, chat="extractive").answer


def test_how_long_a_thing_takes_is_answered_first_by_the_sentence_that_says_how_long():
    """Found trying a bank's fee schedule as a user: "كم يستغرق؟" (how long does it take?) after "كم تكلفة التحويل
    الدولي؟" was answered first with the transfer's price, and second with "تصل التحويلات الدولية خلال يومين إلى خمسة
    أيام عمل." (two to five working days). A sentence saying how long, with as many of the question's words, goes
    first; one about something else does not ("Refunds take 5 days" to how long shipping takes)."""
    from sourcerer.synthesis.extractive import ScoredSentence, asked_duration_first

    def ranking(*texts: str) -> list[ScoredSentence]:
        return [ScoredSentence(0, 0, len(t), t, {}, 1.0) for t in texts]

    transfer = ranking("التحويل الدولي يكلف 50 ريالاً لكل عملية.", "تصل التحويلات الدولية خلال يومين إلى خمسة أيام عمل.")
    assert asked_duration_first("كم يستغرق التحويل الدولي؟", transfer)[0] is transfer[1]
    shipping = ranking("Shipping is free on orders over $50.", "Refunds take 5 days.")
    assert asked_duration_first("How long does shipping take?", shipping) == shipping
    # "how long do you keep …" asks how long too, a length of time or of distance ("How long did John pass south?")
    from sourcerer.synthesis.scope import asked_value

    assert asked_value("How long do you keep my order history?") == "length"
    kept = [{"text": "Privacy\nWe collect your order history when you create an account.", "source": "Privacy"}]
    assert ask("How long do you keep my order history?", passages=kept, chat="extractive").refused


def test_days_of_the_week_and_times_of_day_are_no_length_of_time_in_arabic():
    """FAQ ar-05: "كم يستغرق التراجع عن عملية نشر؟" (how long does a rollback take?) was answered with the days and
    hours deployments happen on ("يومي الثلاثاء والخميس بين الساعة 10:00 و16:00"): Arabic's words for day and hour
    say when there, not how long."""
    deploys = [{"text": "تتم عمليات النشر في بيئة الإنتاج يومي الثلاثاء والخميس بين الساعة 10:00 و16:00.", "source": "النشر"}]
    rollback = ask("كم يستغرق التراجع عن عملية نشر؟", passages=deploys, chat="extractive")
    assert rollback.refused and rollback.trace.stage("synthesize").detail["missing_value"] == "duration", rollback.answer
    backups = [{"text": "تحفظ النسخ الاحتياطية لمدة 35 يوما.", "source": "النسخ"}]
    assert "35" in ask("كم مدة الاحتفاظ بالنسخ الاحتياطية؟", passages=backups, chat="extractive").answer


def test_how_long_is_answered_by_a_length_of_time_in_any_of_its_forms():
    """Business days in a German compound ("Werktagen") or after a Chinese measure word ("五个工作日") are lengths of
    time; "How long is the river?" asks a length of time or of distance, and either answers it."""
    from sourcerer.synthesis.scope import asked_value

    de = [{"text": "Die Erstattung erfolgt innerhalb von fünf Werktagen nach Eingang der Rücksendung.", "source": "Rückgabe"}]
    assert "Werktagen" in ask("Wie lange dauert die Erstattung?", passages=de, chat="extractive").answer
    zh = [{"text": "退款将在收到退货后五个工作日内原路退回。", "source": "退货"}]
    assert "五个工作日" in ask("退货以后多久能拿到退款？", passages=zh, chat="extractive").answer
    assert asked_value("How long is the river?") == "length" and asked_value("How long does shipping take?") == "duration"
    river = [{"text": "The Mono is the longest river, with a length of 400 km.", "source": "Togo"}]
    assert "400 km" in ask("How long is the Mono river?", passages=river, chat="extractive").answer
    # how often is no length of time: a cleaning every six months says nothing of how long one takes
    clinic = [{"text": "Recomendamos una limpieza cada seis meses.", "source": "FAQ"}]
    assert ask("¿Cuánto tarda una limpieza?", passages=clinic, chat="extractive").refused


def test_a_weekday_is_no_length_of_time_and_how_long_until_asks_one():
    """Exploratory batches 1 and 9: "Wie lange dauert ein Spiel?" over an escape room's page was answered with its
    hours, "Von Mittwoch bis Sonntag …", whose "Sonntag" read as a length of time (a compound of "Tag", as
    "Werktagen" is); "How long until I get my photos?" asked for none, and was answered with a passport photo's price.
    Both are refused where the sentences they are answered from state no length of time."""
    from sourcerer.synthesis.scope import asked_value, holds_value

    assert not holds_value("duration", "Von Mittwoch bis Sonntag spielen wir von 12 bis 23 Uhr.")
    assert not holds_value("duration", "An Feiertagen und samstags nachmittags bleibt die Praxis geschlossen.")
    assert holds_value("duration", "Die Lieferung erfolgt in drei Werktagen.") and holds_value("duration", "Der Kurs dauert zwei Tage.")
    assert asked_value("How long until I get my photos?") == asked_value("How soon can you come?") == "duration"
    assert asked_value("How quickly can an algorithm solve it?") is None  # how fast, as often as how long
    escape = [{"text": "Von Mittwoch bis Sonntag spielen wir von 12 bis 23 Uhr. Ein Spiel kostet 25 Euro pro Person.", "source": "Escape"}]
    game = ask("Wie lange dauert ein Spiel?", passages=escape, chat="extractive")
    assert game.refused and game.trace.stage("synthesize").detail["missing_value"] == "duration", game.answer
    studio = [{"text": "Passport photos are taken while you wait for £12 a set. Your images are delivered within ten working days.", "source": "Studio"}]
    assert "ten working days" in ask("How long until I get my photos?", passages=studio, chat="extractive").answer


def test_a_follow_up_that_puts_a_condition_or_a_time_on_the_previous_question_is_answered_from_its_rule():
    """Found trying a telecom contract as a user: "¿Y después del primer año?" after "¿Cuánto cuesta la tarifa?" was
    refused, every passage set aside for never naming "año" (the tariff says "a partir del mes 13"), and "¿Y si no lo
    devuelvo?" after "¿Tengo que devolver el router?" became "¿Tengo que si no lo devuelvo?", refused for
    "devuelvo" (the rule says "devolver")."""
    contract = [
        {"text": "Precio\nLa tarifa cuesta 45 euros al mes durante los primeros 12 meses y 55 euros al mes a partir del mes 13.", "source": "Fibra"},
        {"text": "Baja\nLa baja se hace efectiva en un plazo de 2 días laborables. Debes devolver el router en los 30 días siguientes a la baja; si no, se cobrarán 60 euros.", "source": "Fibra"},
    ]
    price = [{"role": "user", "text": "¿Cuánto cuesta la tarifa?"}, {"role": "assistant", "text": "La tarifa cuesta 45 euros al mes ..."}]
    later = ask("¿Y después del primer año?", passages=contract, history=price, chat="extractive")
    assert not later.refused and "55 euros" in later.answer, later.answer
    router = [{"role": "user", "text": "¿Tengo que devolver el router?"}, {"role": "assistant", "text": "Debes devolver el router ..."}]
    kept = ask("¿Y si no lo devuelvo?", passages=contract, history=router, chat="extractive")
    assert not kept.refused and "60 euros" in kept.answer, kept.answer


# Found trying documents as a user; each question over its passages, and how its answer must open
_GROUP_FIRST = [
    # a hospital's visiting rules: "小孩" and "儿童" are one group, and "病房内禁止吸烟和饮酒。" (its words: 病房, 进) was
    # put before the rule for children under twelve
    (
        "小孩可以进病房吗？",
        [
            {"text": "探视时间\n普通病房探视时间为每天15:00至20:00。重症监护室（ICU）每天只允许探视一次，时间为16:00至16:30，每次限一人。新生儿病房不接受探视，家属可通过视频查看。", "source": "探视须知"},
            {"text": "探视人数\n每位患者同一时间最多允许两名探视者。十二岁以下儿童不得进入病房。", "source": "探视须知"},
            {"text": "陪护\n每位患者只允许一名陪护人员，需办理陪护证。陪护证每天收费10元。陪护人员夜间可租用折叠床，每晚20元。", "source": "探视须知"},
            {"text": "其他规定\n病房内禁止吸烟和饮酒。请勿携带鲜花进入病房。探视者如有发热、咳嗽等症状，请勿探视。", "source": "探视须知"},
            {"text": "停车\n医院地下停车场前两小时免费，之后每小时5元。", "source": "探视须知"},
        ],
        "十二岁以下儿童不得进入病房。",
    ),
    # an age says who is a child: the price for under-14s answers the price for a child of 10, and the rule on
    # children from 3 (its "Sí" a reply to another FAQ question) was put before it, and the question refused
    (
        "¿Cuánto cuesta una limpieza para un niño de 10 años?",
        [
            {"text": "¿Cuánto cuesta una limpieza?\nLa limpieza dental cuesta 60 euros. Para menores de 14 años cuesta 40 euros.", "source": "FAQ"},
            {"text": "¿Con qué frecuencia debo hacerme una limpieza?\nRecomendamos una limpieza cada seis meses.", "source": "FAQ"},
            {"text": "¿Atienden a niños?\nSí, atendemos a niños a partir de los 3 años. La primera revisión infantil es gratuita.", "source": "FAQ"},
        ],
        "Para menores de 14 años cuesta 40 euros.",
    ),
    # where every rule is about children, naming them is no reason to answer with one that is about something else
    (
        "Comment inscrire mon enfant à la cantine ?",
        [
            {"text": "Inscription\nL'inscription à la cantine se fait en ligne sur le portail famille avant le 31 août.\nUn enfant peut être inscrit pour un, deux, trois ou quatre jours fixes par semaine.", "source": "Règlement"},
            {"text": "Comportement\nLes enfants doivent respecter le personnel et la nourriture.\nAprès trois avertissements écrits, l'enfant peut être exclu de la cantine pendant une semaine.", "source": "Règlement"},
        ],
        "L'inscription à la cantine se fait en ligne",
    ),
    # a group of people is no name, capitalised or not: "Babys" (a question with no German function word) was read as
    # one, and the question refused beside "Kinder unter 6 Jahren fahren kostenlos."
    (
        "Fahren Babys kostenlos?",
        [{"text": "Einzelfahrschein\nKinder unter 6 Jahren fahren kostenlos.\nHunde fahren mit einem Kinderfahrschein; Blindenhunde fahren kostenlos.", "source": "Tarif"}],
        "Kinder unter 6 Jahren fahren kostenlos.",
    ),
    # German "Kind", capitalised after the first word, is a child: "Darf mein 8-jähriges Kind die Tabletten nehmen?" over
    # an ibuprofen leaflet was answered with how to take them with water; "8-jähriges" states the age, which the rule
    # for children under 12 holds (the dose for 12 and over, answered before that was read, holds no 8)
    (
        "Darf mein 8-jähriges Kind die Tabletten nehmen?",
        [
            {"text": "Dosierung\nErwachsene und Jugendliche ab 12 Jahren nehmen 1 Tablette bis zu dreimal täglich ein.\nNehmen Sie nicht mehr als 3 Tabletten (1200 mg) in 24 Stunden ein.", "source": "Ibuprofen"},
            {"text": "Einnahme\nNehmen Sie die Tabletten mit einem Glas Wasser während oder nach einer Mahlzeit ein.", "source": "Ibuprofen"},
            {"text": "Gegenanzeigen\nKinder unter 12 Jahren dürfen diese Tabletten nicht einnehmen.", "source": "Ibuprofen"},
        ],
        "Kinder unter 12 Jahren dürfen diese Tabletten nicht einnehmen.",
    ),
]


@pytest.mark.parametrize(("question", "passages", "opening"), _GROUP_FIRST, ids=[case[0] for case in _GROUP_FIRST])
def test_the_sentence_that_names_the_asked_group_of_people_answers_before_one_that_names_none(question, passages, opening):
    """The sentence naming the group the question asks about (in other words of the group, or by an age) answers before
    the best one, which names none of it."""
    answer = ask(question, passages=passages, chat="extractive")
    assert answer.answer.startswith(opening), answer.answer


def test_a_group_named_with_nothing_else_of_the_question_is_not_put_first_and_english_kind_is_no_child():
    """A sentence naming the group and nothing else of the question is not put first; English "kind" names no group."""
    from sourcerer.people import groups_named
    from sourcerer.synthesis.extractive import ScoredSentence, asked_group_first

    ranked = [ScoredSentence(0, 0, len(t), t, {}, 1.0) for t in ("Tuition was $38,000.", "Grants total 88% of aid for undergraduate students.")]
    assert asked_group_first("How much do students from poor families pay for school?", ranked) == ranked
    assert groups_named("What kind of plan is it?") == {} and groups_named("Kind regards") == {}


def test_the_measure_a_follow_up_asks_after_how_is_not_its_focus():
    """Found trying a travel insurance summary as a user: "How deep?" after "Can I go scuba diving?" was refused, its
    focus "deep" setting aside the one rule on diving, which says "to a depth of 30 metres"."""
    diving = [{"role": "user", "text": "Can I go scuba diving?"}, {"role": "assistant", "text": "Scuba diving is covered ..."}]
    assert rewrite_follow_up("How deep?", diving).focus == ()
    assert rewrite_follow_up("And snowboarding?", [{"role": "user", "text": "Am I covered for skiing?"}]).focus == ("snowboard",)
    policy = [
        {"text": "Sports and activities\nSkiing is covered only with the Winter Sports add-on. Scuba diving is covered to a depth of 30 metres if you hold a PADI qualification.", "source": "SafeTrip"},
        {"text": "Baggage\nLost, stolen or damaged baggage is covered up to £1,500 per person.", "source": "SafeTrip"},
    ]
    answer = ask("How deep?", passages=policy, history=diving, chat="extractive")
    assert not answer.refused and "30 metres" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("follow_up", "previous", "expected"),
    [
        # found trying a train company's ticket conditions as a user: the baby stayed beside the son ("mon fils de 8
        # ans de 2 ans doit-il payer ?"), and the son was a focus no passage names
        ("Et mon fils de 8 ans ?", "Mon bébé de 2 ans doit-il payer ?", "mon fils de 8 ans doit-il payer ?"),
        ("¿Y mi hija de 3 años?", "¿Cuánto paga mi hijo de 10 años?", "¿Cuánto paga mi hija de 3 años?"),
        ("And my 8 year old?", "Can my 2 year old travel free?", "Can my 8 year old travel free?"),
        # an identity card's fees: a son of 16 had become the card ("Was kostet der meinen 16-jährigen Sohn?")
        ("Und für meinen 16-jährigen Sohn?", "Was kostet der Personalausweis?", "Was kostet der Personalausweis für meinen 16-jährigen Sohn?"),
        ("And for a 10 year old?", "How much is a ticket?", "How much is a ticket for a 10 year old?"),
        # a course syllabus: what an exam is worth is still asked of the midterm
        ("And the midterm?", "How much is the final exam worth?", "How much is the midterm worth?"),
    ],
)
def test_a_follow_up_naming_someone_by_age_asks_the_same_thing_of_them(follow_up, previous, expected):
    rewrite = rewrite_follow_up(follow_up, [{"role": "user", "text": previous}, {"role": "assistant", "text": "..."}])
    assert rewrite.query == expected
    assert not any(term.isdigit() for term in rewrite.focus)  # an age is no word a passage must name
    # a group for a group is still a new topic the answer must name
    groups = [{"role": "user", "text": "Wie viel kostet das Ticket für Kinder?"}]
    assert rewrite_follow_up("Und für Erwachsene?", groups).focus == ("erwachsen",)


def test_a_follow_up_by_age_is_answered_by_the_rule_for_that_age():
    """Found trying an identity card's fees and a train company's fares as a user: both follow-ups were refused."""
    card = [{"text": "Gebühren\nDer Personalausweis kostet für Personen ab 24 Jahren 37 Euro. Für Personen unter 24 Jahren kostet er 22,80 Euro. Ein vorläufiger Personalausweis kostet 10 Euro.", "source": "Bürgeramt"}]
    asked = [{"role": "user", "text": "Was kostet der Personalausweis?"}, {"role": "assistant", "text": "37 Euro. [1]"}]
    son = ask("Und für meinen 16-jährigen Sohn?", passages=card, history=asked, chat="extractive")
    assert not son.refused and son.citations[0].quote.startswith("Für Personen unter 24 Jahren"), son.answer
    fares = [{"text": "Enfants\nLes enfants de moins de 4 ans voyagent gratuitement s'ils n'occupent pas de place assise. Les enfants de 4 à 11 ans bénéficient d'un tarif réduit.", "source": "Billets"}]
    baby = [{"role": "user", "text": "Mon bébé de 2 ans doit-il payer ?"}, {"role": "assistant", "text": "..."}]
    eight = ask("Et mon fils de 8 ans ?", passages=fares, history=baby, chat="extractive")
    assert not eight.refused and eight.citations[0].quote.startswith("Les enfants de 4 à 11 ans"), eight.answer


def test_how_long_after_a_yes_or_no_is_answered_by_the_next_sentence_that_says_how_long():
    """Found trying a gym's membership terms as a user: "Wie lange?" after "Kann ich die Mitgliedschaft pausieren?" was
    refused for want of a length of time, the sentence stating it ("Eine Pause ...") sharing no word with the
    question (pause is no "pausieren" by its first five letters). The sentence right after the best, under the same
    heading, goes on about the same thing."""
    gym = [
        {"text": "Pausieren\nBei Krankheit oder Schwangerschaft kann die Mitgliedschaft gegen Nachweis pausiert werden. Eine Pause ist für mindestens einen und höchstens sechs Monate möglich.", "source": "FitWerk"},
        {"text": "Laufzeit\nDie Mindestlaufzeit beträgt 12 Monate. Die Kündigung muss schriftlich erfolgen.", "source": "FitWerk"},
    ]
    asked = [{"role": "user", "text": "Kann ich die Mitgliedschaft pausieren?"}, {"role": "assistant", "text": "..."}]
    answer = ask("Wie lange?", passages=gym, history=asked, chat="extractive")
    assert not answer.refused and answer.answer.startswith("Eine Pause ist"), answer.answer


def test_a_chinese_question_asking_how_many_people_is_answered_by_the_sentence_that_counts_them():
    """Found trying a hospital's visiting rules as a user: "一次可以去几个人？" (how many people may visit at once) was
    answered with the intensive care unit's rule ("每天只允许探视一次": once a day, its 一次), while "每位患者每次最多允许2名
    探视者。" (two visitors per patient at a time) stood second."""
    rules = [
        {"text": "探视时间\n探视时间为每天下午3点至5点。重症监护室每天只允许探视一次，时间为下午4点至4点30分。", "source": "探视规定"},
        {"text": "探视人数\n每位患者每次最多允许2名探视者。12岁以下儿童不得进入病区探视。", "source": "探视规定"},
    ]
    answer = ask("一次可以去几个人？", passages=rules, chat="extractive")
    assert answer.answer.removeprefix("探视人数").strip().startswith("每位患者每次最多允许2名探视者"), answer.answer


def test_a_second_sentence_that_shares_only_a_pronoun_with_the_question_is_not_added():
    """Found re-reading a Spanish hotel's answers: "¿A qué hora es el check-in?" got "Es obligatorio presentar un
    documento de identidad …" after the hours, and "Le ménage est-il inclus ?" "Il est interdit de fumer …": the
    index keeps "es" and "il" as terms (names and science use them), and one shared is no word of what is asked."""
    hotel = [
        {
            "text": "Llegada y salida\nEl check-in es a partir de las 15:00 y el check-out hasta las 12:00.\nLa salida tardía hasta las 16:00 cuesta 30 euros.\nEs obligatorio presentar un documento de identidad al llegar.",
            "source": "Políticas del hotel",
        }
    ]
    answer = ask("¿A qué hora es el check-in?", passages=hotel, chat="extractive")
    assert answer.answer.startswith("El check-in es a partir de las 15:00") and "obligatorio" not in answer.answer, answer.answer
    hall = [
        {"text": "Tarifs\nLa location pour un week-end coûte 450 euros. Un chèque de caution de 1 000 euros est demandé à la réservation.", "source": "Conditions de location"},
        {"text": "Règles\nLa musique doit s'arrêter à 2 heures du matin.\nLe ménage est à la charge du locataire.\nIl est interdit de fumer dans la salle.", "source": "Conditions de location"},
    ]
    answer = ask("Le ménage est-il inclus ?", passages=hall, chat="extractive")
    assert answer.answer.startswith("Le ménage est à la charge du locataire.") and "fumer" not in answer.answer, answer.answer


def test_a_question_whether_something_is_given_back_is_answered_by_what_is_refunded():
    """Found trying a party venue's terms as a user: "Can I get my deposit back?" was answered "A £50 deposit secures
    your date; the balance is paid on the day.", while "The deposit is refunded if you cancel at least 14 days
    before." stood next. The refund must be said of the question's thing: another thing refunded is no answer."""
    venue = [{"text": "Booking\nA £50 deposit secures your date; the balance is paid on the day. Numbers must be confirmed 5 days before the party. The deposit is refunded if you cancel at least 14 days before.", "source": "Party packages"}]
    answer = ask("Can I get my deposit back?", passages=venue, chat="extractive")
    assert answer.answer.startswith("The deposit is refunded if you cancel at least 14 days before."), answer.answer
    cover = [{"text": "Dentaire\nLes couronnes sont prises en charge jusqu'à 300 euros par dent. Les lunettes sont remboursées jusqu'à 250 euros tous les deux ans.", "source": "Garanties"}]
    kept = ask("Les couronnes sont-elles remboursées ?", passages=cover, chat="extractive")
    assert kept.answer.startswith("Les couronnes sont prises en charge"), kept.answer


def test_a_question_asking_how_many_people_is_answered_by_a_count_of_them_not_their_age():
    """Found trying an escape room's terms as a user: "How many people can play?" was answered "Players under 16 must
    be accompanied by an adult who plays in the room." (its words, and 16, an age), while "Rooms are booked for groups
    of 2 to 6 players." stood third. A count of people stands before them; a number after them is their age."""
    terms = [
        {"text": "Age\nPlayers under 16 must be accompanied by an adult who plays in the room. Children under 10 cannot play the horror room.", "source": "terms"},
        {"text": "Bookings\nRooms are booked for groups of 2 to 6 players. Bookings must be paid in full online.", "source": "terms"},
    ]
    answer = ask("How many people can play?", passages=terms, chat="extractive")
    assert answer.answer.startswith("Rooms are booked for groups of 2 to 6 players."), answer.answer
    hall = [{"text": "La grande salle accueille jusqu'à 80 personnes. Les enfants de moins de 12 ans doivent être accompagnés.", "source": "salle"}]
    assert ask("Combien de personnes peut accueillir la salle ?", passages=hall, chat="extractive").answer.startswith("La grande salle accueille")


@pytest.mark.parametrize(
    ("question", "passages", "opening"),
    [
        # found trying a clinic's page as a user: the booking sentence, sharing "rendez-vous", was the answer
        (
            "Puis-je venir sans rendez-vous ?",
            [{"text": "Rendez-vous\nLes rendez-vous se prennent en ligne ou par téléphone au 01 23 45 67 89.\nLes consultations sans rendez-vous ont lieu le samedi matin de 9 h à 12 h.", "source": "Centre médical"}],
            "Les consultations sans rendez-vous",
        ),
        (
            "Can I return an item without a receipt?",
            [{"text": "Returns\nYou can return an item within 30 days with the receipt.\nWithout a receipt, we offer store credit only.", "source": "Shop"}],
            "Without a receipt, we offer store credit only.",
        ),
    ],
)
def test_a_case_without_something_is_answered_by_the_sentence_on_that_case(question, passages, opening):
    answer = ask(question, passages=passages, chat="extractive")
    assert answer.answer.removeprefix("Rendez-vous").removeprefix("Returns").strip().startswith(opening), answer.answer


def test_a_rule_for_people_of_the_asked_age_answers_where_the_best_states_no_age():
    """Found trying a travel pass's rules as a user: "Darf mein 4-jähriger Sohn mitfahren?" was answered "Die Mitnahme
    von Personen ist nicht im Ticket enthalten." (no age), while the rule for children under 6, which shares no word
    with it, stood second."""
    rules = [{"text": "Mitnahme\nDie Mitnahme von Personen ist nicht im Ticket enthalten.\nKinder unter 6 Jahren fahren kostenlos mit.\nDie Fahrradmitnahme ist meist kostenpflichtig.", "source": "Deutschlandticket"}]
    answer = ask("Darf mein 4-jähriger Sohn mitfahren?", passages=rules, chat="extractive")
    assert answer.answer.removeprefix("Mitnahme").strip().startswith("Kinder unter 6 Jahren"), answer.answer


def test_a_follow_up_naming_a_plan_asks_the_previous_question_of_it():
    """Found trying a cloud storage's plans as a user: "On the Plus plan?" after "Can I password-protect a link?" was
    answered "The Plus plan costs 4.99 USD per month and includes 200 GB.": the sources protect links on Pro only."""
    plans = [
        {"text": "The Plus plan costs 4.99 USD per month and includes 200 GB. The Pro plan costs 9.99 USD per month.", "source": "Plans"},
        {"text": "Shared links can be protected with a password on the Pro plan.", "source": "Sharing"},
    ]
    history = [{"role": "user", "text": "Can I password-protect a link?"}]
    answer = ask("On the Plus plan?", passages=plans, history=history, chat="extractive")
    assert "4.99" not in answer.answer, answer.answer
    assert answer.refused or answer.answer.startswith("Shared links"), answer.answer


def test_a_spanish_verb_is_one_word_with_the_noun_its_participle_makes():
    """Found trying a campsite's page as a user: "¿A qué hora se puede llegar?" was answered "El silencio es
    obligatorio de 23:00 a 8:00.", while "La llegada es a partir de las 14:00 …" said it: "llegar" and "llegada" are
    one word to a reader, and neither starts the other."""
    from sourcerer.synthesis.extractive import _as_inflected

    assert _as_inflected("llegar", {"llegada", "partir", "salida"}) == "llegada"
    assert _as_inflected("salida", {"salir", "llegar"}) == "salir"
    assert _as_inflected("llegar", {"llevar", "lleno"}) == "llegar"  # another verb, no participle of this one
    # a French verb and its noun in -ation as the index keeps it ("Dois-je réserver les cours ?" was answered "Les cours
    # … sont inclus dans tous les abonnements."), another ending of the verb itself first
    assert _as_inflected("reserver", {"reservat", "conseille"}) == "reservat"
    assert _as_inflected("declarer", {"declar", "declarat", "sinistr"}) == "declar"
    camping = [
        {"text": "Horarios\nLa llegada es a partir de las 14:00 y la salida antes de las 12:00. La recepción abre de 8:00 a 22:00.", "source": "Camping"},
        {"text": "Normas\nEstá prohibido hacer barbacoas de carbón. El silencio es obligatorio de 23:00 a 8:00.", "source": "Camping"},
    ]
    answer = ask("¿A qué hora se puede llegar?", passages=camping, chat="extractive")
    assert answer.answer.startswith("La llegada es a partir de las 14:00"), answer.answer


def test_a_chinese_answer_opens_with_the_sentence_that_names_the_thing_asked():
    """Found trying a gym's notes as a user: "提供毛巾吗？" (do you provide towels?) was answered "提供免费储物柜和淋浴。"
    (free lockers and showers are provided) and then the towel rule: the first shares only 提供, a word that asks.
    Nor is a sentence sharing only such a word added after the answer; "怎么收费？" (how is it charged?) asks with
    every word, and keeps its second sentence."""
    gym = [{"text": "设施\n提供免费储物柜和淋浴。毛巾需要自带，或在前台以 5 元租用。", "source": "活力健身房"}]
    answer = ask("提供毛巾吗？", passages=gym, chat="extractive")
    assert answer.answer.startswith("毛巾需要自带") and "储物柜" not in answer.answer, answer.answer
    bank = [{"text": "收费标准\n前5分钟免费。之后每小时2元，每天最多收费20元。", "source": "充电宝租借"}]
    answer = ask("怎么收费？", passages=bank, chat="extractive")
    assert "每小时2元" in answer.answer, answer.answer


def test_a_question_for_the_opening_times_is_answered_by_the_sentence_that_states_them():
    """Found trying a nursery's page as a user: "Quels sont les horaires ?" (the opening times) was answered "Le
    tarif horaire dépend des revenus de la famille …" (the hourly rate: the same word, singular), while the
    sentence with the hours stood fifth."""
    creche = [
        {"text": "Tarifs\nLe tarif horaire dépend des revenus de la famille, selon le barème de la CAF. Les couches et les repas sont fournis par la crèche.", "source": "Crèche"},
        {"text": "Accueil\nLa crèche accueille les enfants de 10 semaines à 3 ans, du lundi au vendredi de 7h30 à 18h30.", "source": "Crèche"},
    ]
    answer = ask("Quels sont les horaires ?", passages=creche, chat="extractive")
    assert "7h30 à 18h30" in answer.citations[0].quote and "tarif" not in answer.answer, answer.answer


def test_a_price_question_is_answered_by_the_sentence_that_names_what_it_prices():
    """Found trying a climbing hall's FAQ as a user: "Was kostet der Einführungskurs?" was answered "Eine Tageskarte
    kostet 14 Euro …" (it shares only "kostet"), while "… oder unseren Einführungskurs (35 Euro)." stood third."""
    hall = [
        {"text": "Eintritt\nEine Tageskarte kostet 14 Euro für Erwachsene und 9 Euro für Kinder bis 14 Jahre. Eine 10er-Karte kostet 120 Euro.", "source": "Kletterhalle"},
        {"text": "Toprope und Vorstieg\nZum Toprope-Klettern brauchen Sie einen Sicherungsschein oder unseren Einführungskurs (35 Euro). Für den Vorstieg ist ein Vorstiegsschein nötig.", "source": "Kletterhalle"},
    ]
    answer = ask("Was kostet der Einführungskurs?", passages=hall, chat="extractive")
    assert answer.answer.startswith("Zum Toprope-Klettern") and "Tageskarte" not in answer.answer, answer.answer
    answer = ask("Was kostet eine Tageskarte?", passages=hall, chat="extractive")
    assert answer.answer.startswith("Eine Tageskarte kostet 14 Euro"), answer.answer
    # nor one that names it and states no amount ("How much is …?" asks a price as often as not); dinars are money
    glamping = [
        {"text": "Minimum stay\nAt weekends the minimum stay is two nights.", "source": "Meadow Glamping"},
        {"text": "Tents\nOur bell tents sleep up to 4 and cost £95 per night midweek and £120 at weekends.", "source": "Meadow Glamping"},
    ]
    answer = ask("How much is a night at the weekend?", passages=glamping, chat="extractive")
    assert answer.answer.startswith("Our bell tents sleep up to 4 and cost £95"), answer.answer
    from sourcerer.synthesis.scope import holds_value

    assert holds_value("money", "رسوم إدارة الحساب الشهرية 10 دنانير.")


def test_a_question_asking_until_when_is_answered_by_the_sentence_with_the_time_of_day():
    """Found trying a bike rental's FAQ as a user: "Bis wann muss ich das Rad zurückbringen?" was answered "Wir
    verlangen eine Kaution von 50 Euro pro Rad …", while "Die Räder müssen bis 18 Uhr zurückgegeben werden." stood
    second: a time of day written "18 Uhr" (or "6pm") was no time to the reading of when."""
    rental = [
        {"text": "Kaution\nWir verlangen eine Kaution von 50 Euro pro Rad, bar oder per Karte.", "source": "Radl"},
        {"text": "Rückgabe\nDie Räder müssen bis 18 Uhr zurückgegeben werden. Bei verspäteter Rückgabe berechnen wir einen weiteren Tag.", "source": "Radl"},
        {"text": "Schäden\nBei einem Platten helfen wir kostenlos. Bei Diebstahl haftet der Mieter bis 300 Euro.", "source": "Radl"},
    ]
    answer = ask("Bis wann muss ich das Rad zurückbringen?", passages=rental, chat="extractive")
    assert answer.answer.startswith("Die Räder müssen bis 18 Uhr"), answer.answer


def test_how_long_a_place_is_open_is_answered_by_its_hours():
    """Found on the exploratory benchmark (a pharmacy): "Wie lange habt ihr samstags geöffnet?" (how long are you
    open on Saturdays?) was refused for want of a length of time, while the sentence with Saturday's hours answers
    it: how long a place is open asks its hours, not a duration. Opening an account is no such question."""
    from sourcerer.synthesis.scope import asked_value

    bakery = [{"text": "Wir haben montags bis freitags von 6 bis 18 Uhr und samstags von 7 bis 12 Uhr geöffnet. Torten bestellen Sie drei Tage im Voraus.", "source": "Bäckerei"}]
    answer = ask("Wie lange habt ihr samstags geöffnet?", passages=bakery, chat="extractive")
    assert not answer.refused and "samstags von 7 bis 12 Uhr" in answer.answer, answer.trace
    pool = [{"text": "The pool is open from 7am to 9pm on weekdays and from 8am to 6pm at weekends.", "source": "Pool"}]
    assert "8am to 6pm" in ask("How long are you open on Saturdays?", passages=pool, chat="extractive").answer
    assert asked_value("How long does it take to open an account?") == "duration"


def test_a_german_question_to_a_business_with_ihr_is_read_as_german():
    """Found on the exploratory benchmark (a bike workshop): "Habt ihr sonntags geöffnet?" and "Verkauft ihr gebrauchte
    Räder?" were refused, their first word read as a name no source holds: "ihr" (the plural you a customer asks a
    business with) made no German word, and a capitalised word of a question that is not German is a name."""
    from sourcerer.synthesis.scope import is_german

    assert is_german("Habt ihr sonntags geöffnet?") and is_german("Verkauft ihr gebrauchte Räder?")
    workshop = [{"text": "Wir reparieren alle Fahrräder. Gebrauchte Fahrräder verkaufen wir mit einem Jahr Garantie.", "source": "Werkstatt"}]
    answer = ask("Verkauft ihr gebrauchte Räder?", passages=workshop, chat="extractive")  # "Räder" ends "Fahrräder"
    assert not answer.refused and "Gebrauchte Fahrräder" in answer.answer, answer.trace
