"""The evaluation data every benchmark and trainer reads, and its splits, in one place: loaders for
`../shared/eval` (SciFact, XQuAD, NoMIRACL, HaluEval and the staged training sets), and the held-out rules (what
the trainers never see, what the benchmarks report on), so a benchmark never imports a trainer to learn them."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import time
from collections import defaultdict
from pathlib import Path

from bench.common import CACHE, EVAL


def read_jsonl(*paths: Path) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def sample(rows: list, n: int, seed: int = 13) -> list:
    if n >= len(rows):
        return rows
    return random.Random(seed).sample(rows, n)


def qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            q, d, s = line.split("\t")
            out[q][d] = int(s)
    return out


def scifact_corpus() -> list[dict]:
    """SciFact's 5,183 abstracts, in file order."""
    return read_jsonl(*sorted((EVAL / "scifact").glob("corpus.part-*.jsonl")))


def scifact_queries(split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """SciFact's claims and the qrels of `split` (`test`: what this benchmark reports on; `train`: what
    `bench/train/reranker.py` learns from)."""
    queries = {q["_id"]: q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")}
    return queries, qrels(EVAL / "scifact" / "qrels" / f"{split}.tsv")


def scifact_index():
    """The full SciFact corpus in a SQLite index kept under bench/.cache (built on first use, checked by an
    idempotent re-ingest after), with the bundled model and the bench's embedding cache: (index, embedder)."""
    from sourcerer.retrieval.embedders import make_embedder
    from sourcerer.store import open_index

    corpus = scifact_corpus()
    embedder = make_embedder("local")
    index = open_index(f"sqlite:///{CACHE / 'scifact.db'}", embedder=embedder)
    ingest_corpus(index, corpus, "scifact")
    return index, embedder


def doc_ranking(hits, limit: int) -> list[str]:
    seen: list[str] = []
    for hit in hits:
        corpus_id = hit.metadata["corpus_id"]
        if corpus_id not in seen:
            seen.append(corpus_id)
    return seen[:limit]


def corpus_documents(corpus: list[dict], tenant: str) -> list:
    """A BEIR corpus's rows as Documents (title, a blank line, the text)."""
    from sourcerer.store import Document

    return [
        Document(
            source_uri=f"{tenant}/{row['_id']}.txt",
            text=f"{row.get('title', '')}\n\n{row['text']}".strip(),
            tenant=tenant,
            metadata={"title": row.get("title") or row["_id"], "corpus_id": row["_id"]},
        )
        for row in corpus
    ]


def ingest_corpus(index, corpus: list[dict], tenant: str) -> tuple[float, int]:
    """Ingest one document at a time (as the API's POST /v1/documents does): (seconds, chunks)."""
    documents = corpus_documents(corpus, tenant)
    started = time.perf_counter()
    chunks = sum(index.ingest_document(document)["chunks"] for document in documents)
    return time.perf_counter() - started, chunks


def xquad_qrels(lang: str) -> dict[str, str]:
    """XQuAD's question -> the one paragraph that answers it."""
    return {q: next(iter(docs)) for q, docs in qrels(EVAL / "xquad" / lang / "qrels" / "test.tsv").items()}


def xquad_titles() -> dict[str, str]:
    return {row["_id"]: row["title"] for row in read_jsonl(EVAL / "xquad" / "en" / "corpus.jsonl")}


def held_out_articles() -> set[str]:
    """The XQuAD articles no model is trained on (every other one, by name); the benchmarks report on these."""
    return set(sorted(set(xquad_titles().values()))[1::2])


def nomiracl_training_ids() -> set[str]:
    """NoMIRACL en questions the answerability model trains on: every other one by id, in each subset.
    `bench/refusal.py` reports on the others only."""
    ids = set()
    for subset in ("relevant", "non_relevant"):
        rows = sorted(read_jsonl(EVAL / "nomiracl" / f"en.test.{subset}.jsonl"), key=lambda r: r["query_id"])
        ids |= {r["query_id"] for r in rows[::2]}
    return ids


QA_EVALUATED, SUMMARIES_EVALUATED = 2000, 300  # what bench/verification.py reports on (bench.common.sample, seed 13)


def qa_rows() -> list[dict]:
    return read_jsonl(*sorted((EVAL / "halueval").glob("qa_data.part-*.jsonl")))


def summary_rows() -> list[dict]:
    return read_jsonl(*sorted((EVAL / "halueval").glob("summarization_data.part-*.jsonl")))


TRAIN = EVAL / "train"


QA_SETS = ["squad2_dev_half", "squad_es_v2", "persianqa", "mlqa_dev", "arcd", "jsquad", "cmrc2018_dev", "piaf"]


HELD_OUT_SHARE = 15  # percent of articles


def rows(name: str) -> list[dict]:
    with gzip.open(TRAIN / name / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def held_out(key: str) -> bool:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 100 < HELD_OUT_SHARE


def xquad_held() -> tuple[set[str], set[str]]:
    """XQuAD's question ids and English paragraphs (prefixes): SQuAD rows on those paragraphs, in English or in
    SQuAD-es's translation (which keeps the ids), are never trained on."""
    ids, paragraphs = set(), set()
    with open(EVAL / "xquad" / "en" / "queries.jsonl", encoding="utf-8") as f:
        ids.update(json.loads(line)["_id"] for line in f)
    with open(EVAL / "xquad" / "en" / "corpus.jsonl", encoding="utf-8") as f:
        paragraphs.update(" ".join(json.loads(line)["text"].split())[:80] for line in f)
    return ids, paragraphs


def sentences(text: str) -> list[tuple[int, int, str]]:
    from sourcerer.sentences import sentence_spans

    return [(a, b, text[a:b]) for a, b in sentence_spans(text) if text[a:b].strip()]


# SQuAD-es v2 is SQuAD 2.0's development set machine-translated; these of its articles are in
# `squad2_dev_half` too, in English (the rest of it is not staged).
SQUAD_ES_ENGLISH_TITLES = {
    "Normandos": "Normans",
    "Complejidad computacional _ teoría": "Computational_complexity_theory",
    "Hugonotes": "Huguenot",
    "Motor": "Steam_engine",
    "1973: Crisis del petróleo": "1973_oil_crisis",
    "Ley Europea": "European_Union_law",
    "Conmutación de paquetes": "Packet_switching",
    "Universidad": "Harvard_University",
    "Dinastía Yuan": "Yuan_dynasty",
    "Sistema inmune": "Immune_system",
    "Parlamento escocés": "Scottish_Parliament",
    "El islamismo": "Islamism",
    "Imperialismo": "Imperialism",
    "Varsovia": "Warsaw",
    "Guerra franco-india": "French_and_Indian_War",
    "Fuerza": "Force",
}


READER_CONFIG = Path(__file__).resolve().parent.parent / "layers" / "sourcerer" / "sourcerer" / "data" / "reader.json"
# How the QA sets' articles are held out: "title", by each article's title in its own set and language (the
# shipped reader's, where a question's translations can fall on either side), or "english-article", by the
# English article a translation shares (MLQA's versions of a question; SQuAD-es and SQuAD 2.0), so every
# translation of a held-out question is held out too.
SPLITS = ("title", "english-article")


def reader_split() -> str:
    """The split the shipped reader was trained on (`data/reader.json`; "title" for readers that do not say)."""
    return json.loads(READER_CONFIG.read_text(encoding="utf-8")).get("split", "title") if READER_CONFIG.exists() else "title"


def _english_article(name: str, row: dict, english_titles: dict[str, str]) -> str | None:
    """The English article a row shares with its translations in other languages or sets (`english_titles`: MLQA
    id -> the English version's title; MLQA asks each question in several languages, under a title in each), or
    None where no translation is staged."""
    if name == "mlqa_dev" and row["id"] in english_titles:
        return f"mlqa/{english_titles[row['id']]}"
    if name == "squad2_dev_half":
        return f"squad/{row['title']}"
    if name == "squad_es_v2" and row["title"] in SQUAD_ES_ENGLISH_TITLES:
        return f"squad/{SQUAD_ES_ENGLISH_TITLES[row['title']]}"
    return None


def qa_questions(split: str, by: str | None = None) -> list[dict]:
    """Questions of the QA sets in `split` ('train' or 'held_out'), each with its paragraph's sentences, the
    index of the answer sentence (None: unanswerable) and the article's other paragraphs; `by` is one of `SPLITS`
    (default: the shipped reader's).

    Split by title, a held-out question can have a translation in training (MLQA's other languages, SQuAD-es
    against SQuAD 2.0): `translation_trained` marks it, and the reading model's held-out figures leave it out (the
    record, docs/how-it-decides.md, "The reading model"). Split by English article, none has."""
    by = by or reader_split()
    if by not in SPLITS:
        raise ValueError(f"unknown split {by!r}: one of {', '.join(SPLITS)}")
    banned_ids, banned_paragraphs = xquad_held()
    english_titles = {r["id"]: r["title"] for r in rows("mlqa_dev") if r["lang"] == "en"}
    out = []
    by_set: dict[str, dict[str, list[dict]]] = {}
    side: dict[str, bool] = {}  # article (set, language, title) -> held out
    trained: set[str] = set()  # the English articles of the training rows, across sets and languages
    for name in QA_SETS:
        by_article: dict[str, list[dict]] = defaultdict(list)
        every = rows(name)
        banned = {r["context"] for r in every if r["id"] in banned_ids}
        for r in every:
            if r["context"] in banned or " ".join(r["context"].split())[:80] in banned_paragraphs:
                continue
            article = f"{name}/{r.get('lang')}/{r['title']}"  # the paragraphs a question's negatives come from
            by_article[article].append(r)
            if by == "title":
                side[article] = held_out(article)
            elif article not in side:
                shared = _english_article(name, r, english_titles)
                side[article] = held_out(shared or article)
        by_set[name] = by_article
        for article, items in by_article.items():
            if not side[article]:
                trained.update(k for r in items if (k := _english_article(name, r, english_titles)))
    for name, by_article in by_set.items():
        for article, items in by_article.items():
            if side[article] != (split == "held_out"):
                continue
            contexts = list(dict.fromkeys(r["context"] for r in items))
            for r in items:
                split_sentences = sentences(r["context"])
                answer = None
                if r["answerable"] and r["answer_starts"]:
                    start = r["answer_starts"][0]
                    answer = next((i for i, (a, b, _) in enumerate(split_sentences) if a <= start < b), None)
                    if answer is None:
                        continue
                out.append(
                    {
                        "set": name,
                        "id": r["id"],
                        "lang": r["lang"],
                        "title": r.get("title") or "",
                        "question": r["question"],
                        "sentences": [s for *_, s in split_sentences],
                        "answer": answer,
                        "answers": [a for a in r.get("answers", []) if a],
                        "plausible": [a for a in r.get("plausible_answers", []) or [] if a],
                        "others": [c for c in contexts if c != r["context"]],
                        "adversarial": not r["answerable"],
                        "translation_trained": split == "held_out" and _english_article(name, r, english_titles) in trained,
                    }
                )
    return out


def overlap(question: str, sentence: str) -> float:
    q = set(question.lower().split())
    return len(q & set(sentence.lower().split())) / (1 + len(q))


def claim_sets(split: str) -> dict[str, list[tuple[str, str, int]]]:
    """(claim, source, label) pairs from the licensed NLI and consistency sets, by set."""
    out: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    names = {"jnli": "JNLI (ja)", "klue_nli": "KLUE-NLI (ko)", "indonli": "IndoNLI (id)"}
    for name in ("jnli", "klue_nli", "indonli"):
        for r in rows(name):
            if name == "klue_nli":
                is_held = held_out(f"{name}/{r['id']}")
            else:  # the sets' own test parts are the held-out ones
                is_held = r.get("split", "").startswith("test")
            if is_held == (split == "held_out"):
                out[names[name]].append((r["hypothesis"], r["premise"], int(r["label"] == "entailment")))
    for r in rows("falke_correctness"):
        if held_out(f"falke/{r['article_id']}") == (split == "held_out"):
            out["Falke (en)"].append((r["claim"], r["document"], int(r["label"])))
    return dict(out)


def half(question: dict) -> str:
    key = f"{question['set']}/{question['question']}"
    return "calibrate" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2 == 0 else "report"
