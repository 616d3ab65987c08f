"""Train the local judge's claim-support model (`make train`).

Data, disjoint from every set a benchmark reports on:

* HaluEval QA: items outside the 2,000 that `bench/verification.py` samples (`knowledge` is the source, the
  right answer's claims are supported, the hallucinated answer holds at least one that is not);
* HaluEval summaries: items outside the 300 that `bench/verification.py` samples (the document is the source;
  the right summary's sentences are supported, the hallucinated summary holds at least one that is not).

Claims one cited sentence holds word for word are supported by rule and left out too. A hallucinated answer
is labelled as a whole, not sentence by sentence, so only its weakest claim (fewest of
its words and word pairs in the source) is taken as the unsupported example (multiple-instance learning); its
other sentences are often faithful. Claims a deterministic check already vetoes (a number, a quote, a
negation) are left out: the model decides the rest. The model is fitted twice, with the bundled e5 model's
similarities (`semantic`) and without (`lexical`). On a validation fifth, the per-claim threshold for
single-claim answers maximises QA balanced accuracy, and the one for answers of several claims maximises the
summaries' (the more claims, the likelier one faithful claim falls under a fixed threshold). Weights: `layers/sourcerer/sourcerer/data/claim_support.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from bench.common import EVAL, ROOT, read_jsonl, sample, table, use_bench_cache
from bench.logistic import fit_logistic

MODEL_PATH = ROOT / "layers" / "sourcerer" / "sourcerer" / "data" / "claim_support.json"
QA_EVALUATED, SUMMARIES_EVALUATED = 2000, 300  # what bench/verification.py reports on (bench.common.sample, seed 13)


def qa_rows() -> list[dict]:
    return read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl")))


def summary_rows() -> list[dict]:
    return read_jsonl(*sorted((EVAL / "halueval").glob("summarization_data.part-*.jsonl")))


def training_items(n_qa: int, n_summaries: int, seed: int) -> list[dict]:
    """(source, answer, label, kind) items none of which the verification benchmark reports on."""
    qa = qa_rows()
    held = {r["question"] for r in sample(qa, QA_EVALUATED)}
    qa = random.Random(seed).sample([r for r in qa if r["question"] not in held], n_qa)
    summaries = summary_rows()
    held_docs = {r["document"] for r in sample(summaries, SUMMARIES_EVALUATED)}
    summaries = random.Random(seed).sample([r for r in summaries if r["document"] not in held_docs], n_summaries)
    items = []
    for r in qa:
        items += [
            {"source": r["knowledge"], "answer": r["right_answer"], "label": 1, "kind": "qa"},
            {"source": r["knowledge"], "answer": r["hallucinated_answer"], "label": 0, "kind": "qa"},
        ]
    for r in summaries:
        items += [
            {"source": r["document"], "answer": r["right_summary"], "label": 1, "kind": "summary"},
            {"source": r["document"], "answer": r["hallucinated_summary"], "label": 0, "kind": "summary"},
        ]
    return items


def claims_of(answer: str) -> list[str]:
    from sourcerer.verify import split_claims

    return [c.text for c in split_claims(answer)] or [answer]


def featurise(items: list[dict], feature_set: str) -> list[dict]:
    """Per item: its claims' features (None for a vetoed claim)."""
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.support import ClaimSupport, checked_terms, contained, source_sentences

    embedder = local_embedder() if feature_set == "semantic" else None
    support = ClaimSupport(embedder, models={"semantic": None, "lexical": None})  # features only
    out = []
    for item in items:
        sentences = source_sentences(item["source"])
        claims = []
        for claim in claims_of(item["answer"]):
            if not checked_terms(claim) or support.veto(claim, item["source"], sentences):
                claims.append(None if checked_terms(claim) else "empty")
                continue
            values, got = support.features(claim, item["source"], sentences)
            if got != feature_set:
                raise SystemExit(f"expected {feature_set} features, got {got}")
            claims.append("contained" if contained(values) else values)
        out.append({**item, "claims": claims})
    return out


def weakest(claims: list) -> dict | None:
    scored = [c for c in claims if isinstance(c, dict)]
    return min(scored, key=lambda c: c["sentence_coverage"] + c["pair_coverage"] - c["missing_name_share"], default=None)


def answer_probability(model, claims: list) -> float:
    """An answer is as supported as its weakest claim; a vetoed claim makes it unsupported."""
    if any(c is None for c in claims):
        return 0.0
    scored = [model.probability(c) for c in claims if isinstance(c, dict)]
    return min(scored, default=1.0)


def balanced_accuracy(scored: list[tuple[float, int]], threshold: float) -> float:
    pos = [p for p, y in scored if y == 1]
    neg = [p for p, y in scored if y == 0]
    tpr = sum(p >= threshold for p in pos) / max(1, len(pos))
    tnr = sum(p < threshold for p in neg) / max(1, len(neg))
    return (tpr + tnr) / 2


def train(feature_set: str, items: list[dict], seed: int) -> tuple[dict, list[list]]:
    from sourcerer.support import SUPPORT_FEATURES

    started = time.perf_counter()
    featured = featurise(items, feature_set)
    rng = random.Random(seed)
    validation = {i for i in range(0, len(featured), 2) if rng.random() < 0.2}  # pairs stay together
    validation |= {i + 1 for i in validation}
    rows, labels = [], []
    for i, item in enumerate(featured):
        if i in validation:
            continue
        if item["label"] == 1:
            for claim in item["claims"]:
                if isinstance(claim, dict):
                    rows.append(claim)
                    labels.append(1)
        else:
            claim = weakest(item["claims"])
            if claim is not None and all(c is not None for c in item["claims"]):
                rows.append(claim)
                labels.append(0)
    model = fit_logistic(rows, labels, SUPPORT_FEATURES[feature_set], l2=1.0)
    by_kind: dict[str, list[tuple[float, int]]] = {"qa": [], "summary": []}
    by_length: dict[str, list[tuple[float, int]]] = {"single": [], "several": []}
    for i in sorted(validation):
        item = featured[i]
        scored = (answer_probability(model, item["claims"]), item["label"])
        by_kind[item["kind"]].append(scored)
        by_length["single" if len(item["claims"]) <= 1 else "several"].append(scored)
    # One operating point per answer length: the more claims an answer has, the more chances one faithful claim
    # is wrongly rejected, so answers of several claims get their own (lower) per-claim threshold. Single-claim
    # answers are the QA set's; answers of several claims, the summaries'.
    candidates = [t / 100 for t in range(5, 96)]
    single = max(candidates, key=lambda t: balanced_accuracy(by_length["single"], t))
    several = max(candidates, key=lambda t: balanced_accuracy(by_length["several"], t))
    model.threshold = single

    def decided(kind: str) -> list[tuple[float, int]]:  # each answer against its own operating point, as served
        out = []
        for i in sorted(validation):
            item = featured[i]
            if item["kind"] == kind:
                t = single if len(item["claims"]) <= 1 else several
                out.append((1.0 if answer_probability(model, item["claims"]) >= t else 0.0, item["label"]))
        return out

    held_out = {
        "threshold_several_claims": several,
        "qa_balanced_accuracy": balanced_accuracy(decided("qa"), 0.5),
        "summary_balanced_accuracy": balanced_accuracy(decided("summary"), 0.5),
        "n_train_claims": len(rows),
        "n_validation_answers": len(validation),
    }
    curve = [
        [feature_set, t, balanced_accuracy(by_kind["qa"], t), balanced_accuracy(by_kind["summary"], t)]
        for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, single, several)
    ]
    print(f"{feature_set}: trained in {time.perf_counter() - started:.0f} s; held-out {json.dumps(held_out)}")
    return {
        "model": model.to_json(),
        "threshold_several_claims": several,
        "held_out": {k: round(v, 4) if isinstance(v, float) else v for k, v in held_out.items()},
    }, curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", choices=("semantic", "lexical", "both"), default="both")
    parser.add_argument("--qa", type=int, default=1500, help="HaluEval QA training items (default 1500)")
    parser.add_argument("--summaries", type=int, default=300, help="HaluEval summary training items (default 300)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    use_bench_cache()
    items = training_items(args.qa, args.summaries, args.seed)
    existing = json.loads(MODEL_PATH.read_text()) if MODEL_PATH.exists() else {"models": {}}
    curves = []
    for feature_set in ("semantic", "lexical") if args.features == "both" else (args.features,):
        entry, curve = train(feature_set, items, args.seed)
        existing["models"][feature_set] = entry
        curves += curve
    existing["trained_on"] = (
        f"HaluEval QA ({args.qa} items outside the {QA_EVALUATED} bench/verification.py reports on) and HaluEval "
        f"summaries ({args.summaries} outside the {SUMMARIES_EVALUATED} it reports on); seed {args.seed}"
    )
    MODEL_PATH.write_text(json.dumps(existing, indent=1) + "\n", encoding="utf-8")
    print(table("Validation answers: balanced accuracy at each threshold", ["features", "threshold", "QA", "summaries"], curves))
    print(f"wrote {MODEL_PATH.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
