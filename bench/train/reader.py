"""What the reading model learns from: the pairs of `make train` (`bench/train/reader_train.py` trains on them).

* **answer head** — reads "question | sentence": does this sentence answer this question? From the QA sets of
  `../shared/eval/train/` in nine languages (SQuAD 2.0 en, SQuAD-es v2, PersianQA, MLQA ar/de/en/es/hi/vi/zh,
  ARCD, JSQuAD, CMRC 2018, PIAF): the sentence holding the gold answer is a positive; the other sentences of
  the same paragraph, a sentence of another paragraph of the same article, and every sentence the adversarial
  unanswerable questions (SQuAD 2.0-style) were written against are negatives (`answer_pairs`). Beside them:
  entity swaps (`swap_pairs`), MLQA questions read against other languages' versions of their paragraph
  (`cross_lingual_pairs`), and on-topic sentences of NoMIRACL en's training half that do not answer.
* **headed pairs** (`headed_pairs`, with `--headed` only: measured, not shipped) — a sentence read after a heading,
  as `ask()` reads it: under its article's title, under another question about it, and FAQ entries whose answer
  span means nothing without the question above it.
* **claim head** — reads "claim | source sentence(s)": does the source support the claim? JNLI (valid),
  KLUE-NLI, IndoNLI (val) and Falke's contrastive summary sentences (entailment = supported; `claim_pairs`).
* **summary claims** (`summary_claim_pairs`, with `--summary-claims` only: written for the next GPU run, not yet
  trained) — model-written summaries' claims read as the judge's veto reads them: HaluEval summaries outside the
  300 reported on, and the licensed SummaC subsets' and WiCE dev's items outside the consistency benchmark's samples
  (6,691 pairs).

Held out, by article (by id for the NLI sets), and never trained on: 15% of every set's articles, JNLI test,
IndoNLI tests, and every SQuAD article that XQuAD (a benchmark) is built from. Articles are held out by the
English article a question's translations share (`english-article`), so a held-out MLQA question's other
languages, and SQuAD-es's translation of a held-out SQuAD 2.0 article, are held out too. XNLI is non-commercial
and is used by `bench/reader_eval.py` to evaluate only; OCNLI and QAGS state no license and are not used.

The readers trained before this one, on these 2 cores with a time-boxed loop (one pass at most per run, with
`--resume`, `--swaps-only` and `--cross-lingual-only` variants; docs/how-it-decides.md, "The reading model"), are in this
file's history up to commit a1f4372.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable

from bench.common import ROOT
from bench.datasets import claim_sets, overlap, sentences

DATA = ROOT / "layers" / "sourcerer" / "sourcerer" / "data"


def store_operating_points(points: dict[str, float]) -> None:
    """Merge fitted operating points into the shipped reader's configuration (`data/reader.json`)."""
    path = DATA / "reader.json"
    config = json.loads(path.read_text())
    config["operating_points"] = {**config.get("operating_points", {}), **points}
    path.write_text(json.dumps(config, indent=1) + "\n")


def answer_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """(question, sentence, label) pairs: the answer sentence, near-miss sentences of the same paragraph, one of
    another paragraph of the article; for an adversarial unanswerable, its paragraph's likeliest sentences."""
    pairs = []
    for q in questions:
        sents = q["sentences"]
        if q["answer"] is not None:
            pairs.append((q["question"], sents[q["answer"]], 1))
            rest = [s for i, s in enumerate(sents) if i != q["answer"] and not any(a in s for a in q["answers"])]
            rest.sort(key=lambda s: -overlap(q["question"], s))
            pairs += [(q["question"], s, 0) for s in rest[:2]]
        else:
            ranked = sorted(sents, key=lambda s: (not any(p in s for p in q["plausible"]), -overlap(q["question"], s)))
            pairs += [(q["question"], s, 0) for s in ranked[:3]]
        if q["others"]:
            other = sentences(rng.choice(q["others"]))
            other = [s for *_, s in other if not any(a in s for a in q["answers"])]
            if other:
                pairs.append((q["question"], rng.choice(other), 0))
    return pairs


SWAPS_PER_QUESTION = 2
# A run of capitalised words after a question's first word (Latin script): "Japan", "the Enterprise plan"
_NAME = re.compile(r"(?<=\s)[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def swap_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """Entity-swap negatives: an answerable question whose name the answer sentence also holds, with that name
    swapped for a name from another question that the paragraph never mentions, read with the answer sentence.
    "What is the meal allowance in Japan?" over the Europe/US allowance is the near miss the QA sets teach least
    (SQuAD 2.0's few entity swaps, none in the other languages)."""
    return [(swapped, q["sentences"][q["answer"]], 0) for q, swapped in _swapped_questions(questions, rng)]


def _swapped_questions(questions: list[dict], rng: random.Random) -> list[tuple[dict, str]]:
    """(question, the question with a name swapped) for `swap_pairs`."""
    pools: dict[str, list[str]] = {}
    for q in questions:
        pools.setdefault(q["lang"], []).extend(_NAME.findall(q["question"]))
    out = []
    for q in questions:
        if q["answer"] is None:
            continue
        sentence, pool = q["sentences"][q["answer"]], pools.get(q["lang"], [])
        names = [n for n in _NAME.findall(q["question"]) if n in sentence]
        if not names or len(pool) < 100:  # too few names to draw unrelated ones from
            continue
        name, paragraph = rng.choice(names), " ".join(q["sentences"]).casefold()
        swapped: set[str] = set()
        for _ in range(5 * SWAPS_PER_QUESTION):
            other = rng.choice(pool)
            if other.casefold() not in paragraph and not set(other.casefold().split()) & set(name.casefold().split()):
                swapped.add(q["question"].replace(name, other, 1))
            if len(swapped) == SWAPS_PER_QUESTION:
                break
        out += [(q, question) for question in sorted(swapped)]
    return out


def _by_paragraph(questions: list[dict], keep: Callable[[dict], bool]) -> list[list[dict]]:
    """The questions `keep` keeps, grouped by the paragraph they are asked of, in order of first appearance."""
    groups: dict[tuple, list[dict]] = {}
    for q in questions:
        if keep(q):
            groups.setdefault((q["set"], q["lang"], tuple(q["sentences"])), []).append(q)
    return list(groups.values())


def headed_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """Sentences read after what they stand under, as `ask()` reads them (`sourcerer.reading.under_heading`): an
    FAQ answer after its question, a section's sentence after its title. From each paragraph asked several
    questions: a question read with the sentence that answers it under *another* question about that sentence
    (a positive: the heading is a paraphrase's neighbour, the sentence decides), with the sentence that answers
    another question under that question (a negative: the FAQ near miss, "Do you ship to Mexico?" over the
    Canada answer), and with the answer and a non-answer under the article's title. Beside them, a swapped name
    read against the answer under the original question (a negative: the heading names the other entity)."""
    from sourcerer.reading import under_heading

    pairs = []
    for group in _by_paragraph(questions, lambda q: q["answer"] is not None):
        for q in group:
            sents, answer = q["sentences"], q["answer"]
            same = [o for o in group if o is not q and o["answer"] == answer and o["question"] != q["question"]]
            other = [o for o in group if o["answer"] != answer and not any(a in sents[o["answer"]] for a in q["answers"])]
            if same:
                pairs.append((q["question"], under_heading(rng.choice(same)["question"], sents[answer]), 1))
            if other:
                o = rng.choice(other)
                pairs.append((q["question"], under_heading(o["question"], sents[o["answer"]]), 0))
            if q["title"] and rng.random() < 0.5:
                pairs.append((q["question"], under_heading(q["title"], sents[answer]), 1))
                rest = [s for i, s in enumerate(sents) if i != answer and not any(a in s for a in q["answers"])]
                if rest:
                    pairs.append((q["question"], under_heading(q["title"], rng.choice(rest)), 0))
    pairs += [(swapped, under_heading(q["question"], q["sentences"][q["answer"]]), 0) for q, swapped in _swapped_questions(questions, rng)]
    return pairs + faq_pairs(questions, rng)


def faq_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """FAQ entries whose answer says nothing without its question ("Yes, for a flat fee."): the answer span alone
    under a question. A question read with its own answer under its question as another language asks it (MLQA's
    translations: the paraphrase an FAQ reader meets) or, without a translation, as itself, is a positive; read with
    another question's answer of the same paragraph under that question, a negative, and so is a question with a
    name swapped, read with the original's entry: only the heading can tell these apart."""
    from sourcerer.reading import under_heading

    def entry(q: dict) -> bool:
        return q["answer"] is not None and bool(q["answers"])

    groups = _by_paragraph(questions, entry)
    by_id: dict[str, list[dict]] = {}
    for q in questions:
        if entry(q) and q["set"] == "mlqa_dev":
            by_id.setdefault(q["id"], []).append(q)
    neighbours = {id(q): group for group in groups for q in group}
    pairs = []
    for q in (q for group in groups for q in group):
        versions = [v for v in by_id.get(q["id"], []) if v["lang"] != q["lang"]] if q["set"] == "mlqa_dev" else []
        entry = rng.choice(versions) if versions else q
        pairs.append((q["question"], under_heading(entry["question"], entry["answers"][0]), 1))
        others = [o for o in neighbours[id(entry)] if o["answers"][0] not in q["answers"] and q["answers"][0] not in o["answers"][0]]
        if others:
            o = rng.choice(others)
            pairs.append((q["question"], under_heading(o["question"], o["answers"][0]), 0))
    pairs += [(swapped, under_heading(q["question"], q["answers"][0]), 0) for q, swapped in _swapped_questions(questions, rng) if q["answers"]]
    return pairs


def cross_lingual_pairs(questions: list[dict], rng: random.Random, sources: int = 1) -> list[tuple[str, str, int]]:
    """Question and sentence in different languages: MLQA asks the same question of the same paragraph in several
    languages (one id), so a question in one is paired with the answer sentence of another (a positive) and with
    another sentence of that paragraph that lacks the answer (a negative). No word is shared, so only meaning
    matches: what a question in a person's own words asks of a document's wording. Both versions come from
    training articles. `sources`: how many other languages' versions each question is read against."""
    by_id: dict[str, list[dict]] = {}
    for q in questions:
        if q["set"] == "mlqa_dev" and q["answer"] is not None:
            by_id.setdefault(q["id"], []).append(q)
    pairs = []
    for versions in by_id.values():
        if len(versions) < 2:
            continue
        for asker in versions:
            others = [v for v in versions if v["lang"] != asker["lang"]]
            for source in rng.sample(others, min(sources, len(others))):
                rest = [s for i, s in enumerate(source["sentences"]) if i != source["answer"] and not any(a in s for a in source["answers"])]
                pairs.append((asker["question"], source["sentences"][source["answer"]], 1))
                if rest:
                    pairs.append((asker["question"], rng.choice(rest), 0))
    return pairs


def nomiracl_negatives(rng: random.Random) -> list[tuple[str, str, int]]:
    """On-topic sentences that do not answer: from NoMIRACL en's training half of non-relevant sets (every
    retrieved passage judged not to answer), each question's three sentences that share most of its words."""
    from bench.common import EVAL
    from bench.datasets import nomiracl_training_ids, read_jsonl

    train_ids = nomiracl_training_ids()
    pairs = []
    for row in read_jsonl(EVAL / "nomiracl" / "en.test.non_relevant.jsonl"):
        if row["query_id"] not in train_ids:
            continue
        pool = [s for p in row["passages"] for *_, s in sentences(p["text"]) if len(s) > 20]
        pool.sort(key=lambda s: -overlap(row["query"], s))
        pairs += [(row["query"], s, 0) for s in pool[:3]]
    rng.shuffle(pairs)
    return pairs


def claim_pairs(split: str) -> list[tuple[str, str, int]]:
    return [pair for pairs in claim_sets(split).values() for pair in pairs]


def summary_claim_pairs(items: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """(claim, source, label) as the local judge's veto reads a summary's claims (`sourcerer.verify.claim_source`:
    the document's sentences that match the claim best), from (summary, document, label) items labelled as a whole.
    A faithful summary's claims are each supported; an unfaithful one holds at least one that is not, taken to be its
    weakest, as `bench/train/claim_support.py` takes it (its `featurise`, `modelled` and `weakest`). A claim one
    sentence holds word for word passes by rule, unread, and a vetoed one never reaches the head: neither is written."""
    from sourcerer.verify import claim_source

    from bench.train.claim_support import claims_of, featurise, modelled, weakest

    pairs = []
    scored = featurise([{"source": document, "answer": summary, "label": label} for summary, document, label in items], "lexical")
    for item in scored:
        # the claims the veto would read (by their features): all of a faithful summary's, the weakest of another
        chosen = modelled(item["claims"]) if item["label"] == 1 else [w for w in [weakest(item["claims"])] if w is not None]
        for claim, values in zip(claims_of(item["answer"]), item["claims"], strict=True):
            if any(values is c for c in chosen) and (source := claim_source(claim, item["source"])) is not None:
                pairs.append((claim, source, item["label"]))
    return pairs


def summary_claim_items(seed: int, n_halueval: int = 1500) -> list[tuple[str, str, int]]:
    """(summary, document, label) that no benchmark reports on, for `summary_claim_pairs`: HaluEval summaries outside
    the 300 `bench/verification.py` samples (a right and a made-up summary of each document), and the items of the
    SummaC subsets whose parts state a license (FactCC, SummEval, XSumFaith; not Polytope) and of WiCE's dev part
    that `bench/consistency.py` does not sample. QAGS states no license and is not used."""
    from bench.consistency import consistency_sets
    from bench.datasets import SUMMARIES_EVALUATED, rows, sample, summary_rows

    summaries = summary_rows()
    held = {r["document"] for r in sample(summaries, SUMMARIES_EVALUATED)}
    chosen = random.Random(seed).sample([r for r in summaries if r["document"] not in held], n_halueval)
    items = [(r[key], r["document"], label) for r in chosen for key, label in (("right_summary", 1), ("hallucinated_summary", 0))]
    reported = {(claim, document) for sampled in consistency_sets(100).values() for claim, document, _ in sampled}
    items += [(r["claim"], r["document"], int(r["label"])) for r in rows("summac_subsets")
              if r["dataset"] in ("factcc", "summeval", "xsumfaith") and (r["claim"], r["document"]) not in reported]
    items += [(r["claim"], r["document"], int(r["label"])) for r in rows("wice")
              if r.get("split") == "dev" and (r["claim"], r["document"]) not in reported]
    return items


def answer_text(question: str, sentence: str) -> str:
    """What the answer head reads (with the engine's `query: ` prefix)."""
    from sourcerer.reading import answer_input

    return answer_input(question, sentence)


def claim_text(claim: str, source: str) -> str:
    from sourcerer.reading import claim_input

    return claim_input(claim, source)
