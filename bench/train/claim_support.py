"""Train the local judge's claim-support model (`make train`).

Data, disjoint from every set a benchmark reports on:

* HaluEval QA: items outside the 2,000 that `bench/verification.py` samples (`knowledge` is the source, the
  right answer's claims are supported, the hallucinated answer holds at least one that is not);
* HaluEval summaries: items outside the 300 that `bench/verification.py` samples (the document is the source;
  the right summary's sentences are supported, the hallucinated summary holds at least one that is not).

Claims one cited sentence holds word for word are supported by rule and left out. A hallucinated answer
is labelled as a whole, not sentence by sentence, so only its weakest claim (fewest of
its words and word pairs in the source) is taken as the unsupported example (multiple-instance learning); its
other sentences are often faithful. Claims a deterministic check already vetoes (a number, a quote, a
negation) are left out: the model decides the rest. The model is fitted twice, with the bundled e5 model's
similarities (`semantic`) and without (`lexical`). On a validation fifth, the per-claim threshold for
single-claim answers maximises QA balanced accuracy.

An answer of several claims is then judged as a whole (`sourcerer.support.judge_answer`): a second logistic
model over the mean and the weakest of its claims' probabilities and features, fitted on the training answers
of several claims with their whole-answer labels (here the labels are exact: no sentence-level guess needed),
its threshold the one that maximises the validation summaries' balanced accuracy. It replaced "every claim must
pass alone", which rejected two thirds of the right summaries (0.57 balanced accuracy on the benchmark).
Weights: `layers/sourcerer/sourcerer/data/claim_support.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import TYPE_CHECKING

from bench.common import ROOT, table, use_bench_cache
from bench.datasets import QA_EVALUATED, SUMMARIES_EVALUATED, qa_rows, sample, summary_rows
from bench.train.logistic import fit_logistic

if TYPE_CHECKING:
    from sourcerer.support import Support, SupportModel

MODEL_PATH = ROOT / "layers" / "sourcerer" / "sourcerer" / "data" / "claim_support.json"
CLAIM_SUMMARIES = 1200  # summaries the claim model learns from (`training_items`; the curve in docs/how-it-decides.md)


def training_items(n_qa: int, n_summaries: int, seed: int, claim_summaries: int = CLAIM_SUMMARIES) -> list[dict]:
    """(source, answer, label, kind, claim_model) items none of which the verification benchmark reports on.
    The claim model learns from the QA items and the first `claim_summaries` summaries only (`claim_model`):
    more summary claims, weakly labelled, cost it QA accuracy; the answer model learns from them all."""
    qa = qa_rows()
    held = {r["question"] for r in sample(qa, QA_EVALUATED)}
    qa = random.Random(seed).sample([r for r in qa if r["question"] not in held], n_qa)
    summaries = summary_rows()
    held_docs = {r["document"] for r in sample(summaries, SUMMARIES_EVALUATED)}
    summaries = random.Random(seed).sample([r for r in summaries if r["document"] not in held_docs], n_summaries)
    items = []
    for r in qa:
        items += [
            {"source": r["knowledge"], "answer": r["right_answer"], "label": 1, "kind": "qa", "claim_model": True},
            {"source": r["knowledge"], "answer": r["hallucinated_answer"], "label": 0, "kind": "qa", "claim_model": True},
        ]
    for n, r in enumerate(summaries):
        common = {"source": r["document"], "kind": "summary", "claim_model": n < claim_summaries}
        items += [{**common, "answer": r["right_summary"], "label": 1}, {**common, "answer": r["hallucinated_summary"], "label": 0}]
    return items


def claims_of(answer: str) -> list[str]:
    from sourcerer.verify import split_claims

    return [c.text for c in split_claims(answer)] or [answer]


def featurise(items: list[dict], feature_set: str) -> list[dict]:
    """Per item: its claims' features (None for a vetoed claim, "empty" for one without content words)."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.support import ClaimSupport, checked_terms, source_sentences

    embedder = local_embedder() if feature_set == "semantic" else None
    support = ClaimSupport(embedder, models={"semantic": None, "lexical": None})  # features only
    out = []
    for item in items:
        sentences = source_sentences(item["source"])
        claims = []
        for claim in claims_of(item["answer"]):
            if not checked_terms(claim):
                claims.append("empty")
            elif support.veto(claim, item["source"], sentences):
                claims.append(None)
            else:
                values, got = support.features(claim, item["source"], sentences)
                if got != feature_set:
                    raise SystemExit(f"expected {feature_set} features, got {got}")
                claims.append(values)
        out.append({**item, "claims": claims})
    return out


def modelled(claims: list) -> list[dict]:
    """The claims the claim model decides: neither vetoed, empty, nor held word for word by one sentence."""
    from sourcerer.support import contained

    return [c for c in claims if isinstance(c, dict) and not contained(c)]


def several_claims(claims: list) -> bool:
    """Whether the answer model judges this answer: more than one claim has features (`judge_answer`)."""
    return sum(1 for c in claims if isinstance(c, dict)) > 1


def weakest(claims: list) -> dict | None:
    return min(modelled(claims), key=lambda c: c["sentence_coverage"] + c["pair_coverage"] - c["missing_name_share"], default=None)


def supports_of(model: SupportModel, claims: list) -> list[Support]:
    """The claims as `ClaimSupport.check` scores them (the answer model's input)."""
    from sourcerer.support import Support, contained

    out = []
    for c in claims:
        if c is None:
            out.append(Support(False, "veto", 0.0))
        elif c == "empty":
            out.append(Support(True, "empty", 1.0))
        else:
            p = 1.0 if contained(c) else model.model.probability(c)
            out.append(Support(p >= model.threshold(len(claims)), "", p, c, "any"))
    return out


def answer_probability(model: SupportModel, claims: list) -> float:
    """How supported an answer is, as served: 0 with a vetoed claim; several claims by the answer model
    (`sourcerer.support.weighed`; before it is fitted, 1 or 0: every claim must pass alone); else its claim's."""
    from sourcerer.support import weighed

    supports = supports_of(model, claims)
    if any(not s.supported and not s.values for s in supports):
        return 0.0
    if several_claims(claims):
        p = weighed(supports, model.answer)
        return float(all(s.supported for s in supports)) if p is None else p
    return min((s.probability for s in supports if s.values), default=1.0)


def balanced_accuracy(scored: list[tuple[float, int]], threshold: float) -> float:
    pos = [p for p, y in scored if y == 1]
    neg = [p for p, y in scored if y == 0]
    tpr = sum(p >= threshold for p in pos) / max(1, len(pos))
    tnr = sum(p < threshold for p in neg) / max(1, len(neg))
    return (tpr + tnr) / 2


def train(feature_set: str, items: list[dict], seed: int) -> tuple[dict, list[list]]:
    from sourcerer.support import ANSWER_SUPPORT_FEATURES, SUPPORT_FEATURES, SupportModel

    started = time.perf_counter()
    featured = featurise(items, feature_set)
    rng = random.Random(seed)
    validation = {i for i in range(0, len(featured), 2) if rng.random() < 0.2}  # pairs stay together
    validation |= {i + 1 for i in validation}
    training = [item for i, item in enumerate(featured) if i not in validation]

    # 1. the claim model: every modelled claim of a right answer, the weakest of a hallucinated one
    rows, labels = [], []
    for item in training:
        if not item["claim_model"]:
            continue
        if item["label"] == 1:
            rows += modelled(item["claims"])
            labels += [1] * len(modelled(item["claims"]))
        elif (claim := weakest(item["claims"])) is not None and all(c is not None for c in item["claims"]):
            rows.append(claim)
            labels.append(0)
    model = fit_logistic(rows, labels, SUPPORT_FEATURES[feature_set], l2=1.0)
    # Its operating point for single-claim answers (the QA set's) maximises their balanced accuracy on the
    # validation fifth; the one for claims of longer answers, the longer answers' when each claim must pass.
    candidates = [t / 100 for t in range(5, 96)]

    def validation_scores(support_model: SupportModel, several: bool) -> list[tuple[float, int]]:
        return [
            (answer_probability(support_model, featured[i]["claims"]), featured[i]["label"])
            for i in sorted(validation)
            if several_claims(featured[i]["claims"]) == several
        ]

    single = max(candidates, key=lambda t: balanced_accuracy(validation_scores(SupportModel(model, t), False), t))
    model.threshold = single
    several = max(candidates, key=lambda t: balanced_accuracy(validation_scores(SupportModel(model, t), True), 0.5))
    claim_model = SupportModel(model, several)

    # 2. the answer model: answers of several scored claims, none vetoed, as a whole
    from sourcerer.support import answer_support_features

    answer_rows, answer_labels = [], []
    for item in training:
        supports = supports_of(claim_model, item["claims"])
        if all(c is not None for c in item["claims"]) and several_claims(item["claims"]):
            answer_rows.append(answer_support_features(supports))
            answer_labels.append(item["label"])
    answer = fit_logistic(answer_rows, answer_labels, ANSWER_SUPPORT_FEATURES[feature_set], l2=1.0)
    served = SupportModel(model, several, answer)
    answer.threshold = max(candidates, key=lambda t: balanced_accuracy(validation_scores(served, True), t))

    def decided(kind: str, support_model: SupportModel) -> list[tuple[float, int]]:  # as served
        out = []
        for i in sorted(validation):
            item = featured[i]
            if item["kind"] == kind:
                t = support_model.answer.threshold if several_claims(item["claims"]) and support_model.answer else single
                p = answer_probability(support_model, item["claims"])
                out.append((1.0 if p >= t else 0.0, item["label"]))
        return out

    held_out = {
        "threshold_several_claims": several,
        "answer_threshold": answer.threshold,
        "qa_balanced_accuracy": balanced_accuracy(decided("qa", served), 0.5),
        "summary_balanced_accuracy": balanced_accuracy(decided("summary", served), 0.5),
        "summary_balanced_accuracy_claim_by_claim": balanced_accuracy(decided("summary", claim_model), 0.5),
        "n_train_claims": len(rows),
        "n_train_answers": len(answer_rows),
        "n_validation_answers": len(validation),
    }
    curve = [
        [feature_set, t, *(balanced_accuracy(validation_scores(served, several), t) for several in (False, True))]
        for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, single, answer.threshold)
    ]
    print(f"{feature_set}: trained in {time.perf_counter() - started:.0f} s; held-out {json.dumps(held_out)}")
    return {
        "model": model.to_json(),
        "threshold_several_claims": several,
        "answer": answer.to_json(),
        "held_out": {k: round(v, 4) if isinstance(v, float) else v for k, v in held_out.items()},
    }, curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", choices=("semantic", "lexical", "both"), default="both")
    parser.add_argument("--qa", type=int, default=1500, help="HaluEval QA training items (default 1500)")
    parser.add_argument("--summaries", type=int, default=1700, help="HaluEval summary training items (default: all 1,700)")
    parser.add_argument("--claim-summaries", type=int, default=CLAIM_SUMMARIES, help="of those, the claim model's")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    use_bench_cache()
    items = training_items(args.qa, args.summaries, args.seed, args.claim_summaries)
    existing = json.loads(MODEL_PATH.read_text()) if MODEL_PATH.exists() else {"models": {}}
    curves = []
    for feature_set in ("semantic", "lexical") if args.features == "both" else (args.features,):
        entry, curve = train(feature_set, items, args.seed)
        existing["models"][feature_set] = entry
        curves += curve
    existing["trained_on"] = (
        f"HaluEval QA ({args.qa} items outside the {QA_EVALUATED} bench/verification.py reports on) and HaluEval "
        f"summaries ({args.summaries} outside the {SUMMARIES_EVALUATED} it reports on; the claim model learns from "
        f"{args.claim_summaries} of them, the answer model from all); seed {args.seed}"
    )
    MODEL_PATH.write_text(json.dumps(existing, indent=1) + "\n", encoding="utf-8")
    columns = ["features", "threshold", "one claim", "several claims (answer model)"]
    print(table("Validation answers: balanced accuracy at each threshold", columns, curves))
    print(f"wrote {MODEL_PATH.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
