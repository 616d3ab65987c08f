"""Zero-dependency BM25 over the library's Unicode-aware tokenizer."""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sourcerer.models import Passage
from sourcerer.retrieval.base import as_passages
from sourcerer.text import passage_terms, terms

K1 = 0.8  # term-frequency saturation; 0.8 / 0.5 measured best on SciFact with this tokenizer (bench/)
B = 0.5  # length normalisation


def _int4_to_long(code: int) -> int:
    bits, shift = code & 0x07, (code >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


# The 256 document lengths Lucene can store (its norms keep a length in one byte: SmallFloat.intToByte4 and
# byte4ToInt): exact below 24, then 4 significant bits. OpenSearch scores BM25 with these, so the SQLite index
# does too: the same chunks get the same keyword scores in both (they differed by up to 1% and swapped near-ties).
STORED_LENGTHS = [code if code < 24 else min(24 + _int4_to_long(code - 24), 2**31 - 1) for code in range(256)]


def stored_length(terms_in_document: int) -> int:
    """A document length as Lucene stores it (rounded down to one of `STORED_LENGTHS`)."""
    return STORED_LENGTHS[bisect.bisect_right(STORED_LENGTHS, terms_in_document) - 1]


# --- the one BM25: every index and the in-memory retriever score with these, so a keyword score means the same
# everywhere (OpenSearch computes the same with the index's similarity set to K1 and B) ----------------------


def idf(documents: int, containing: int) -> float:
    """BM25's IDF as Lucene computes it: log(1 + (N - n + 0.5) / (n + 0.5)), never negative."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def pool_idf(candidates: int, containing: int) -> float:
    """A term's IDF within a reranker's candidate pool: log(1 + (N + 1) / (n + 0.5)). Not BM25's: a term every
    candidate holds keeps weight (0.70 at N = n = 50, where BM25's IDF gives 0.01), because within a pool
    retrieved *for* the question its words are expected everywhere and coverage must still count them. The
    reranking models were trained on coverages weighed this way (`bench/train/reranker.py`)."""
    return math.log(1.0 + (candidates + 1) / (containing + 0.5))


def length_norm(stored: Any, average: float) -> Any:
    """BM25's length part for a stored length (a number or a numpy array): 1 - b + b * length / average."""
    return 1 - B + B * stored / (average or 1.0)


def term_weight(term_idf: Any, tf: Any, norm: Any) -> Any:
    """One term's BM25 contribution, with (k1 + 1) in the numerator as OpenSearch's legacy BM25 has it: a term
    present once in a document of average length weighs its IDF, so dividing by the query's summed IDFs gives
    [0, 1] (numbers or numpy arrays alike)."""
    return term_idf * (K1 + 1) * tf / (tf + K1 * norm)


class BM25:
    """Okapi BM25 (k1=0.8, b=0.5; `term_weight`) with scores normalised into [0, 1].

    Normalisation: a document's BM25 score is divided by the sum of the IDF weights of the *distinct query
    terms*, i.e. the score a document would get if it contained every query term once at average length.
    The result (clipped to 1) reads as "the IDF-weighted share of the question this passage matches":

    * it does not depend on the other hits (unlike dividing by the best hit), so a question nothing answers
      well scores low everywhere instead of promoting its least-bad hit to 1.0;
    * rare terms weigh more than common ones, so a passage that shares only one common word with a question
      of several content words scores well under 0.2, while one that matches the key terms scores high;
    * query terms that occur in no passage still count in the denominator (with the highest IDF), so a
      passage that misses the question's key term cannot score high.
    """

    def __init__(self, documents: Sequence[str]) -> None:
        self.doc_terms = [Counter(passage_terms(doc)) for doc in documents]
        self.doc_len = [sum(c.values()) for c in self.doc_terms]
        self.n_docs = len(documents)
        self.avg_len = (sum(self.doc_len) / self.n_docs) if self.n_docs else 0.0
        self.doc_freq: Counter[str] = Counter()
        for counts in self.doc_terms:
            self.doc_freq.update(counts.keys())
        self.postings: dict[str, list[int]] = {}
        for i, counts in enumerate(self.doc_terms):
            for term in counts:
                self.postings.setdefault(term, []).append(i)

    def idf(self, term: str) -> float:
        return idf(self.n_docs, self.doc_freq.get(term, 0))

    def scores(self, query: str) -> dict[int, float]:
        """Normalised scores of the documents that share at least one term with `query`."""
        query_terms = list(dict.fromkeys(terms(query)))
        if not query_terms or not self.n_docs:
            return {}
        ceiling = sum(self.idf(t) for t in query_terms)
        raw: dict[int, float] = {}
        for term in query_terms:
            weight = self.idf(term)
            for i in self.postings.get(term, ()):
                norm = length_norm(stored_length(self.doc_len[i]), self.avg_len)
                raw[i] = raw.get(i, 0.0) + term_weight(weight, self.doc_terms[i][term], norm)
        return {i: min(1.0, s / ceiling) for i, s in raw.items() if s > 0}

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        ranked = sorted(self.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:k]


def _with_score(passage: Passage, score: float) -> Passage:
    return passage.model_copy(update={"score": round(score, 6)})


class KeywordRetriever:
    """BM25 over an in-memory list of passages. Only passages sharing a term with the question are returned."""

    name = "keyword"

    def __init__(self, passages: Iterable[Any]) -> None:
        self.passages = as_passages(passages)
        self.bm25 = BM25([p.text for p in self.passages])

    def __call__(self, question: str, k: int) -> list[Passage]:
        return [_with_score(self.passages[i], s) for i, s in self.bm25.top(question, k)]


def keyword_retriever(passages: Iterable[Any]) -> KeywordRetriever:
    """A BM25 retriever over `passages` (dicts with `text` and `source`, `Passage` objects or strings)."""
    return KeywordRetriever(passages)
