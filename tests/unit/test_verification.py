"""Claim-level verification with the local judge: what it must catch and what it must let through."""

import pytest
from sourcerer.models import Passage
from sourcerer.retrieval.embedders import local_embedder
from sourcerer.verify import Claim, LocalJudge, split_claims

SOURCE = (
    "Marie Curie won the Nobel Prize in Physics in 1903 together with Pierre Curie and Henri Becquerel. "
    "She was not allowed to attend the Sorbonne's men-only lectures. "
    "The refund is issued within 5 business days."
)


@pytest.fixture(params=["with_model", "lexical_only"])
def judge(request):
    return LocalJudge(local_embedder() if request.param == "with_model" else None)


def _supported(judge, claim):
    return judge.check(Claim(text=claim, citations=[1]), [Passage(text=SOURCE)])


def test_a_faithful_claim_is_supported(judge):
    assert _supported(judge, "Marie Curie won the Nobel Prize in Physics in 1903.").supported


def test_a_changed_number_is_caught(judge):
    verdict = _supported(judge, "Marie Curie won the Nobel Prize in Physics in 1911.")
    assert not verdict.supported and "1911" in verdict.why


def test_a_swapped_name_is_caught(judge):
    verdict = _supported(judge, "Marie Curie won the Nobel Prize in Physics in 1903 together with Albert Einstein.")
    assert not verdict.supported and "Einstein" in verdict.why


def test_capitals_inside_a_word_are_not_names(judge):
    """Found by the audit benchmark: "kWh" was read as the name "Wh" and a verbatim claim was rejected."""
    source = "The engine consumes approx. 4 kg (8.8 lb) of steam per kWh, a MegaWatt-class figure."
    verdict = judge.check(Claim(text="The engine consumes approx. 4 kg of steam per kWh.", citations=[1]), [Passage(text=source)])
    assert verdict.supported, verdict.why


def test_a_dropped_negation_is_caught(judge):
    verdict = _supported(judge, "She was allowed to attend the Sorbonne's men-only lectures.")
    assert not verdict.supported and "negation" in verdict.why


def test_an_added_negation_is_caught(judge):
    verdict = _supported(judge, "The refund is not issued within 5 business days.")
    assert not verdict.supported


def test_facts_from_different_sentences_joined_are_caught(judge):
    # every word occurs in the source, but not together
    verdict = _supported(judge, "Pierre Curie issued the refund.")
    assert not verdict.supported


def test_a_claim_citing_nothing_is_unsupported(judge):
    verdict = judge.check(Claim(text="Marie Curie won.", citations=[]), [Passage(text=SOURCE)])
    assert not verdict.supported and verdict.why == "cites no source"


def test_claims_only_see_the_passages_they_cite():
    judge = LocalJudge(None)
    passages = [Passage(text="The sky is blue."), Passage(text=SOURCE)]
    verdict = judge.check(Claim(text="Marie Curie won the Nobel Prize in Physics in 1903.", citations=[1]), passages)
    assert not verdict.supported


def test_split_claims_attaches_trailing_markers_and_inherits_within_a_paragraph():
    claims = split_claims("Shipping takes 3 to 5 days. [1] Returns are free and take 30 days [2]. Both apply. [1][2]")
    assert [(c.text, c.citations) for c in claims] == [
        ("Shipping takes 3 to 5 days.", [1]),
        ("Returns are free and take 30 days.", [2]),
        ("Both apply.", [1, 2]),
    ]


def test_split_claims_uncited_sentence_takes_the_next_marker():
    claims = split_claims("Standard shipping is slow. It takes 3 to 5 days [1].")
    assert [c.citations for c in claims] == [[1], [1]]


def test_a_comparison_the_source_states_is_supported_and_an_invented_one_is_not():
    judge = LocalJudge(None)
    stated = [Passage(text="The Acura CL was introduced before the Acura TL.")]
    dated = [Passage(text="For Against was formed in 1984. Aaroh was formed in 1990.")]
    assert judge.check(Claim(text="The Acura CL was introduced before the Acura TL.", citations=[1]), stated).supported
    verdict = judge.check(Claim(text="Aaroh was formed before For Against.", citations=[1]), dated)
    assert not verdict.supported and "befor" in verdict.why


def test_a_negation_elsewhere_in_the_sentence_is_not_a_contradiction():
    from sourcerer.support import ClaimSupport, source_sentences

    source = (
        "After a run of form that has seen the Premier League champions lose six of their last eight games, "
        "defender Reid says his team-mates no longer dread facing them."
    )
    claim = "The Premier League champions have lost six of their last eight games."
    assert ClaimSupport(None).veto(claim, source, source_sentences(source)) is None
    assert ClaimSupport(None).veto("The champions have not lost six of their last eight games.", source, source_sentences(source))


def test_every_rejection_says_why(judge):
    for claim in (
        "Marie Curie won the Nobel Prize in Chemistry in 1903 with Albert Einstein.",
        "The refund is issued within 5 business days by courier.",
    ):
        verdict = _supported(judge, claim)
        assert not verdict.supported and verdict.why and verdict.why != "supported"


COUNCIL = (
    "The city council voted on Tuesday to close the Riverside library branch at the end of March. "
    "Council members said the building needs repairs that would cost about $2 million. "
    "Residents who opposed the closure gathered outside the town hall before the vote. "
    "The library's books and staff will move to the Main Street branch, which will extend its opening hours. "
    "A final decision on selling the Riverside building is expected next year."
)
FAITHFUL_SUMMARY = (
    "The city council voted on Tuesday to close the Riverside library branch at the end of March. "
    "Council members said repairs to the building would cost about $2 million. "
    "Opponents of the closure protested outside the town hall before the vote. "
    "The Main Street branch will take the library's books and staff and stay open longer."
)


def _judged(judge, answer: str, source: str = COUNCIL):
    import asyncio

    from sourcerer.verify import faithfulness_of

    claims = [Claim(text=c.text, citations=[1]) for c in split_claims(answer)]
    verdicts = asyncio.run(judge.judge(claims, [Passage(text=source)]))
    return faithfulness_of(verdicts, judge.name), verdicts, claims


def test_a_faithful_summary_is_weighed_as_a_whole_not_failed_by_its_loosest_sentence(judge):
    faithfulness, verdicts, claims = _judged(judge, FAITHFUL_SUMMARY)
    assert faithfulness.faithful, [v.why for v in verdicts]
    # the paraphrased last sentence alone falls under the claim model's threshold; the answer model keeps it
    assert not judge.check(claims[-1], [Passage(text=COUNCIL)], claims_in_answer=len(claims)).supported
    assert "answer as a whole" in verdicts[-1].why


def test_a_summary_with_invented_sentences_is_unfaithful_and_names_them(judge):
    invented = (
        "The city council voted to close the Riverside library branch at the end of March. "
        "The mayor promised residents that a new library would be built downtown within two years. "
        "Developers have already offered to buy the building and turn it into luxury apartments."
    )
    faithfulness, verdicts, _ = _judged(judge, invented)
    assert not faithfulness.faithful
    assert [v.supported for v in verdicts] == [True, False, False]
    assert "mayor" in verdicts[1].why and "luxury" in verdicts[2].why


def test_a_veto_decides_before_the_answer_model(judge):
    changed = FAITHFUL_SUMMARY.replace("$2 million", "$3 million")
    faithfulness, verdicts, _ = _judged(judge, changed)
    assert not faithfulness.faithful
    assert "number not in source: 3" in verdicts[1].why


GERMAN_POLICY = "Die Tagespauschale für Verpflegung beträgt 40 EUR in Deutschland und 55 EUR im Ausland."


def test_a_claim_in_another_language_than_its_source_is_not_passed_and_says_why(judge):
    """An LLM answers an English question over a German policy in English: the claim models compare words, so
    before, a faithful translation failed as "words not in source: daily, meal, …". The local judge cannot check it,
    and says so; a claim in the source's language is judged as before, and the number check still reads across."""
    pytest.importorskip("py3langid", reason="the `local` extra is not installed")
    passages = [Passage(text=GERMAN_POLICY, source="Reise")]
    across = judge.check(Claim(text="The daily meal allowance abroad is 55 EUR.", citations=[1]), passages)
    assert not across.supported and "another language (en) than its source (de)" in across.why
    assert "an LLM judge reads across languages" in across.why
    changed = judge.check(Claim(text="The daily meal allowance abroad is 95 EUR.", citations=[1]), passages)
    assert changed.why == "number not in source: 95"
    assert judge.check(Claim(text="Die Tagespauschale im Ausland beträgt 55 EUR.", citations=[1]), passages).supported


def test_a_claim_the_local_judge_cannot_read_never_passes_with_the_answer_as_a_whole(judge):
    import asyncio

    pytest.importorskip("py3langid", reason="the `local` extra is not installed")
    passages = [Passage(text=GERMAN_POLICY + " Hotelkosten werden bis 150 EUR pro Nacht erstattet.", source="Reise")]
    claims = split_claims("Die Tagespauschale im Ausland beträgt 55 EUR. [1] Hotels are reimbursed up to 150 EUR a night. [1]")
    verdicts = asyncio.run(judge.judge(claims, passages))
    assert verdicts[0].supported and not verdicts[1].supported and "another language" in verdicts[1].why


def test_when_the_answer_model_rejects_an_answer_whose_claims_each_pass_its_weakest_claim_is_named():
    from sourcerer.support import ANSWER_SUPPORT_FEATURES, ClaimSupport, SupportModel, load_support_models
    from sourcerer.synthesis.answerability import LogisticModel

    shipped = load_support_models()["lexical"]
    features = ANSWER_SUPPORT_FEATURES["lexical"]
    never = LogisticModel(features, [0.0] * len(features), -10.0, [0.0] * len(features), [1.0] * len(features), 0.5)
    judge = LocalJudge(None, ClaimSupport(None, {"lexical": SupportModel(shipped.model, 0.0, never)}))
    faithfulness, verdicts, _ = _judged(judge, FAITHFUL_SUMMARY)
    assert not faithfulness.faithful
    assert sum(not v.supported for v in verdicts) == 1
    assert next(v.why for v in verdicts if not v.supported).startswith("the answer as a whole is not supported")


def test_claims_that_restate_their_cited_sentences_are_judged_without_the_model():
    """An extractive answer's claims are its cited sentences: verifying them runs no model (the question's is the
    one embedding on the answer path), while a paraphrase is still read with the model's similarity."""
    import asyncio

    from fakes import HashedEmbedder

    class Counting(HashedEmbedder):
        def calibrate(self, cosine):
            return cosine

    embedder = Counting()
    judge = LocalJudge(embedder)
    passages = [Passage(text=SOURCE), Passage(text="The drill ended at noon. Everyone went home.")]
    verbatim = [Claim(text=s, citations=[1]) for s in SOURCE.split(". ")[:2]] + [Claim(text="The drill ended at noon.", citations=[2])]
    verdicts = asyncio.run(judge.judge(verbatim, passages))
    assert all(v.supported for v in verdicts) and embedder.calls == 0
    paraphrase = [Claim(text="Curie received a Nobel award for physics.", citations=[1]), *verbatim[:1]]
    asyncio.run(judge.judge(paraphrase, passages))
    assert embedder.calls > 0  # a claim no sentence contains is read with the model, and weighed with the rest


def test_an_llm_answer_is_verified_in_one_batch_per_role_not_one_model_call_per_claim():
    """Claims an LLM wrote (paraphrases: the model must weigh them) are embedded together in one call, and the
    cited sentences ingest did not store in one more, whatever the number of claims; the verdicts are the ones
    claim-by-claim embedding gave."""
    import asyncio

    from fakes import HashedEmbedder
    from sourcerer.retrieval.embedders import CachedEmbedder

    class CountingBatches(HashedEmbedder):
        def __init__(self):
            super().__init__()
            self.batches = 0

        def embed(self, texts, role):
            self.batches += 1
            return super().embed(texts, role)

    passages = [Passage(text=SOURCE), Passage(text="The drill ended at noon. Everyone went home after the drill.")]
    claims = [
        Claim(text="Curie received a Nobel award for physics.", citations=[1]),
        Claim(text="Women could not go to the lectures at the Sorbonne.", citations=[1]),
        Claim(text="Refunds arrive within five working days.", citations=[1]),
        Claim(text="The exercise finished at midday.", citations=[2]),
    ]
    batched = CountingBatches()
    verdicts = asyncio.run(LocalJudge(CachedEmbedder(batched)).judge(claims, passages))
    assert batched.batches == 2, batched.batches  # the claims, then the sentences they are compared with
    one_by_one = CountingBatches()
    uncached = asyncio.run(LocalJudge(one_by_one).judge(claims, passages))  # no cache: nothing to embed ahead for
    assert one_by_one.batches >= 2 * len(claims)
    assert [(v.supported, v.score) for v in verdicts] == [(v.supported, v.score) for v in uncached]
