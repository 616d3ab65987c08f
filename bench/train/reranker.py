"""Train the local reranker (`make train`, or `python -m bench.train.reranker`).

Data: SciFact's **train** claims (`qrels/train.tsv`, 809 claims) over the full 5,183-abstract corpus, indexed the
way `bench/retrieval.py` indexes it. `bench/retrieval.py` reports only on the 300 test claims (`qrels/test.tsv`),
which nothing here reads. A fifth of the train claims (fixed seed) is kept aside to choose the fit and give the
held-out figures printed at the end.

For each claim the index's hybrid search returns 50 candidates (what the service hands a reranker); each
candidate gets `rerank_features` and the label "its abstract is cited for the claim". The shipped model is
LambdaMART: boosted regression trees fitted by LightGBM's `lambdarank` objective, which optimises nDCG@10 over
each claim's candidates. Its settings (63 leaves, 200 rounds at rate 0.03, at least 50 candidates per leaf) were
chosen by 5-fold cross-validation over the train claims only. The trees are flattened into
`layers/sourcerer/sourcerer/data/rerank_model.json` and scored with numpy (`TreeEnsemble`), so LightGBM is needed
to train, never to serve. Linear fits are printed beside it for comparison: coordinate ascent on nDCG@10
(Metzler and Croft, as in RankLib; what shipped before) and logistic regressions (pointwise, and pairwise as in
RankNet). Both feature sets are fitted (`semantic`, with the stored e5 vectors, and `lexical`).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from sourcerer.retrieval.rerank import TreeEnsemble
from sourcerer.synthesis.answerability import LogisticModel

from bench.common import ROOT, table, use_bench_cache
from bench.datasets import scifact_index, scifact_queries
from bench.metrics import doc_ndcg
from bench.train.logistic import fit_logistic

MODEL_PATH = ROOT / "layers" / "sourcerer" / "sourcerer" / "data" / "rerank_model.json"
CANDIDATES = 50
VALIDATION_SHARE = 0.2
LAMBDAMART = {
    "objective": "lambdarank",
    "lambdarank_truncation_level": 20,
    "num_leaves": 63,
    "learning_rate": 0.03,
    "min_data_in_leaf": 50,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "feature_fraction": 0.8,
    "deterministic": True,
    "num_threads": 2,
    "verbosity": -1,
}
ROUNDS_BOOSTED = 200
STEPS = (-1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0)  # coordinate ascent's tries per weight and round
ROUNDS = 3


def pools(index, queries: dict[str, str], qids: list[str], embedder, qrels) -> dict[str, dict]:
    """Per claim: the fused candidates' features per feature set, their abstracts and labels."""
    from sourcerer.retrieval.rerank import rerank_features

    out = {}
    for qid in qids:
        hits = list(index.search(queries[qid], tenant="scifact", k=CANDIDATES, mode="hybrid"))
        if not hits:
            continue
        docs = [h.metadata["corpus_id"] for h in hits]
        _, lexical = rerank_features(queries[qid], hits, None)
        kind, semantic = rerank_features(queries[qid], hits, embedder)
        if kind != "semantic":
            raise SystemExit("the index's hits carry no stored vectors: rebuild it with the bundled model")
        out[qid] = {
            "qid": qid,
            "docs": docs,
            "labels": [int(d in qrels[qid]) for d in docs],
            "lexical": lexical,
            "semantic": semantic,
        }
    return out


def fit(pool: dict[str, dict], qids: list[str], feature_set: str, features: list[str], how: str, l2: float):
    rows, labels = [], []
    for qid in qids:
        p = pool[qid]
        feats, ys = p[feature_set], p["labels"]
        if how == "pointwise":
            rows.extend(feats)
            labels.extend(ys)
            continue
        positives = [f for f, y in zip(feats, ys, strict=True) if y]
        negatives = [f for f, y in zip(feats, ys, strict=True) if not y]
        for pos in positives:
            for neg in negatives:
                diff = {name: pos.get(name, 0.0) - neg.get(name, 0.0) for name in features}
                rows.append(diff)
                labels.append(1)
                rows.append({name: -v for name, v in diff.items()})
                labels.append(0)
    return fit_logistic(rows, labels, features, l2=l2)


def coordinate_ascent(pool: dict[str, dict], qids: list[str], qrels, feature_set: str, features: list[str]) -> LogisticModel:
    """A linear scorer over standardised `features` whose weights maximise mean nDCG@10 over `qids` (greedy,
    one weight at a time, from the retrieval score alone)."""
    rows = [r for q in qids for r in pool[q][feature_set]]
    mean = np.array([sum(r.get(f, 0.0) for r in rows) / len(rows) for f in features])
    scale = np.array([np.std([r.get(f, 0.0) for r in rows]) or 1.0 for f in features])
    matrices = {q: (np.array([[r.get(f, 0.0) for f in features] for r in pool[q][feature_set]]) - mean) / scale for q in qids}

    def objective(w: np.ndarray) -> float:
        total = 0.0
        for q in qids:
            order = np.argsort(-(matrices[q] @ w), kind="stable")
            total += doc_ndcg([pool[q]["docs"][i] for i in order], qrels[q])
        return total / len(qids)

    weights = np.zeros(len(features))
    weights[features.index("score")] = 1.0
    best = objective(weights)
    for _ in range(ROUNDS):
        improved = False
        for j in range(len(features)):
            for step in STEPS:
                trial = weights.copy()
                trial[j] += step
                value = objective(trial)
                if value > best + 1e-6:
                    best, weights, improved = value, trial, True
        if not improved:
            break
    return LogisticModel(features, [float(w) for w in weights], 0.0, [float(m) for m in mean], [float(s) for s in scale])


def lambdamart(
    pool: dict[str, dict], qids: list[str], feature_set: str, features: list[str], seed: int, **settings
) -> TreeEnsemble:
    """LightGBM's LambdaMART over `qids`' candidates (the `LAMBDAMART` settings, `settings` overriding them),
    flattened into a `TreeEnsemble`."""
    import lightgbm

    rounds = settings.pop("rounds", ROUNDS_BOOSTED)
    matrix = np.array([[row.get(f, 0.0) for f in features] for q in qids for row in pool[q][feature_set]])
    labels = np.array([y for q in qids for y in pool[q]["labels"]])
    data = lightgbm.Dataset(matrix, labels, group=[len(pool[q]["labels"]) for q in qids], feature_name=features)
    booster = lightgbm.train({**LAMBDAMART, "seed": seed, **settings}, data, num_boost_round=rounds)
    return flatten(booster.dump_model(), features)


SEARCH = [  # what `--search` cross-validates: 63 leaves, 200 rounds (shipped) is within 0.002 of 127 leaves at half the size
    {"num_leaves": 15, "rounds": 200},
    {"num_leaves": 31, "rounds": 200},
    {"num_leaves": 63, "rounds": 200},
    {"num_leaves": 63, "rounds": 300},
    {"num_leaves": 127, "rounds": 200},
    {"num_leaves": 63, "rounds": 200, "min_data_in_leaf": 20},
]


def search_settings(pool: dict[str, dict], qids: list[str], qrels, seed: int, folds: int = 5) -> None:
    """5-fold cross-validation of the `SEARCH` settings over the train claims (semantic features): how the
    shipped settings were chosen, without touching the test claims."""
    from sourcerer.retrieval.rerank import RERANK_FEATURES

    order = sorted(qids)
    random.Random(seed).shuffle(order)
    parts = [order[i::folds] for i in range(folds)]
    rows = []
    for settings in SEARCH:
        values = []
        for part in parts:
            held = set(part)
            model = lambdamart(
                pool, [q for q in order if q not in held], "semantic", RERANK_FEATURES["semantic"], seed, **settings
            )
            scores = {q: model.scores(pool[q]["semantic"]) for q in part}
            values.append(ndcg_of(pool, part, qrels, lambda i, p, s=scores: s[p["qid"]][i]))
        rows.append([json.dumps(settings), sum(values) / folds, min(values), max(values)])
    print(
        table(
            f"LambdaMART settings, {folds}-fold cross-validation over {len(order)} train claims",
            ["settings", "nDCG@10", "worst fold", "best fold"],
            rows,
        )
    )


def flatten(dump: dict, features: list[str]) -> TreeEnsemble:
    """LightGBM's `dump_model()` as the arrays `TreeEnsemble` walks (numerical `<=` splits only, as trained)."""
    feature, threshold, left, right, value, roots = [], [], [], [], [], []

    def add(node: dict) -> int:
        if "leaf_value" in node:
            value.append(node["leaf_value"])
            return -len(value)  # leaf k is stored as -(k + 1)
        if node["decision_type"] != "<=":
            raise ValueError(f"unexpected split {node['decision_type']!r}")
        at = len(feature)
        feature.append(node["split_feature"])
        threshold.append(node["threshold"])
        left.append(0)
        right.append(0)
        left[at] = add(node["left_child"])
        right[at] = add(node["right_child"])
        return at

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"]))
    return TreeEnsemble(
        features=list(features),
        feature=np.asarray(feature, dtype=np.int64),
        threshold=np.asarray(threshold, dtype=np.float64),
        left=np.asarray(left, dtype=np.int64),
        right=np.asarray(right, dtype=np.int64),
        value=np.asarray(value, dtype=np.float64),
        roots=np.asarray(roots, dtype=np.int64),
    )


def ndcg_of(pool: dict[str, dict], qids: list[str], qrels, score=None) -> float:
    """Mean nDCG@10 over `qids`, candidates ordered by `score(features) -> float` (None: the fused order)."""
    values = []
    for qid in qids:
        p = pool.get(qid)
        if p is None:
            values.append(0.0)
            continue
        order = range(len(p["docs"]))
        if score is not None:
            order = sorted(order, key=lambda i: (-score(i, p), i))
        values.append(doc_ndcg([p["docs"][i] for i in order], qrels[qid]))
    return sum(values) / max(1, len(values))


def main() -> None:
    from sourcerer.retrieval.rerank import RERANK_FEATURES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--search", action="store_true", help="cross-validate the LambdaMART settings first (a few minutes)")
    args = parser.parse_args()
    use_bench_cache()
    started = time.perf_counter()
    index, embedder = scifact_index()
    queries, train_qrels = scifact_queries("train")
    qids = sorted(train_qrels)
    rng = random.Random(args.seed)
    validation = set(rng.sample(qids, int(VALIDATION_SHARE * len(qids))))
    pool = pools(index, queries, qids, embedder, train_qrels)
    fit_ids = [q for q in qids if q not in validation and q in pool]
    valid_ids = sorted(validation)
    print(f"pools: {len(pool)} claims in {time.perf_counter() - started:.0f} s")
    if args.search:
        search_settings(pool, fit_ids, train_qrels, args.seed)

    rows = [["fused order (no rerank)", "", "", ndcg_of(pool, valid_ids, train_qrels)]]
    rows.append(["retrieval score alone", "", "", ndcg_of(pool, valid_ids, train_qrels, lambda i, p: p["lexical"][i]["score"])])
    models = {}
    for feature_set in ("semantic", "lexical"):
        features = RERANK_FEATURES[feature_set]
        for how in ("pairwise", "pointwise"):
            model = fit(pool, fit_ids, feature_set, features, how, 1.0)
            value = ndcg_of(pool, valid_ids, train_qrels, lambda i, p, m=model, f=feature_set: m.logit(p[f][i]))
            rows.append([feature_set, f"logistic, {how}", 1.0, value])
        model = coordinate_ascent(pool, fit_ids, train_qrels, feature_set, features)
        value = ndcg_of(pool, valid_ids, train_qrels, lambda i, p, m=model, f=feature_set: m.logit(p[f][i]))
        rows.append([feature_set, "coordinate ascent on nDCG@10", "", value])
        ensemble = lambdamart(pool, fit_ids, feature_set, features, args.seed)
        scores = {q: ensemble.scores(pool[q][feature_set]) for q in valid_ids if q in pool}
        held_out = ndcg_of(pool, valid_ids, train_qrels, lambda i, p, s=scores: s[p["qid"]][i])
        rows.append([feature_set, "LambdaMART, LightGBM (shipped)", "", held_out])
        # refit on every train claim; the held-out figure is the validation one above
        ensemble = lambdamart(pool, sorted(pool), feature_set, features, args.seed)
        models[feature_set] = {
            "model": ensemble.to_json(),
            "fit": f"LambdaMART (LightGBM lambdarank), {ROUNDS_BOOSTED} trees of {LAMBDAMART['num_leaves']} leaves",
            "held_out": {"ndcg@10": round(held_out, 4), "fused_ndcg@10": round(rows[0][3], 4), "claims": len(valid_ids)},
        }
    MODEL_PATH.write_text(
        json.dumps(
            {
                "trained_on": (
                    f"SciFact train claims (qrels/train.tsv, {len(qids)} claims; the 300 test claims are never read), "
                    f"{CANDIDATES} hybrid candidates each; seed {args.seed}; held out: {len(valid_ids)} train claims"
                ),
                "embed_model": embedder.model_id,
                "models": models,
            },
            separators=(",", ":"),  # the trees are long arrays: one line, not one line per number
        )
        + "\n",
        encoding="utf-8",
    )
    print(
        table(
            f"Local reranker — held-out SciFact train claims ({len(valid_ids)}), nDCG@10 over {CANDIDATES} candidates",
            ["features", "fit", "l2", "nDCG@10"],
            rows,
        )
    )
    print(f"wrote {Path(MODEL_PATH).relative_to(ROOT)} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
