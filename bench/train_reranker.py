"""Train the local reranker (`make train`, or `python -m bench.train_reranker`).

Data: SciFact's **train** claims (`qrels/train.tsv`, 809 claims) over the full 5,183-abstract corpus, indexed the
way `bench/retrieval.py` indexes it. `bench/retrieval.py` reports only on the 300 test claims (`qrels/test.tsv`),
which nothing here reads. A fifth of the train claims (fixed seed) is kept aside to choose the fit and give the
held-out figures printed at the end.

For each claim the index's hybrid search returns 50 candidates (what the service hands a reranker); each
candidate gets `rerank_features` and the label "its abstract is cited for the claim". The model is a linear
scorer over standardised features fitted by coordinate ascent on nDCG@10 itself (Metzler and Croft's method, as
in RankLib): starting from the retrieval score alone, each weight in turn takes the step that most improves the
mean nDCG@10 of the training claims, for a few rounds. Logistic fits (pointwise, and pairwise as in RankNet) are
printed beside it for comparison; they optimise a likelihood, not the order, and do worse on the held-out claims.
Both feature sets are fitted (`semantic`, with the stored e5 vectors, and `lexical`). The weights land in
`layers/sourcerer/sourcerer/data/rerank_model.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from sourcerer.synthesis.answerability import LogisticModel

from bench.common import ROOT, table, use_bench_cache
from bench.logistic import fit_logistic
from bench.retrieval import doc_ndcg, scifact_index, scifact_queries

MODEL_PATH = ROOT / "layers" / "sourcerer" / "sourcerer" / "data" / "rerank_model.json"
CANDIDATES = 50
VALIDATION_SHARE = 0.2
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
        out[qid] = {"docs": docs, "labels": [int(d in qrels[qid]) for d in docs], "lexical": lexical, "semantic": semantic}
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
        held_out = ndcg_of(pool, valid_ids, train_qrels, lambda i, p, m=model, f=feature_set: m.logit(p[f][i]))
        rows.append([feature_set, "coordinate ascent on nDCG@10 (shipped)", "", held_out])
        # refit on every train claim; the held-out figure is the validation one above
        model = coordinate_ascent(pool, sorted(pool), train_qrels, feature_set, features)
        models[feature_set] = {
            "model": model.to_json(),
            "fit": "coordinate ascent on nDCG@10",
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
            indent=1,
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
