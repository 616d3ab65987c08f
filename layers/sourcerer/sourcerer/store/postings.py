"""The SQLite index's keyword terms in memory: exact BM25 over every query term, at any index size.

Why: FTS5 computes `bm25()` for every chunk holding any query term before it can rank, so a common term makes
keyword search grow with the index (1.7 s at 500k chunks). Dropping common terms from candidate finding brought
that to ~210 ms, but changed the top 10 of most queries. Here each term's postings (rows and term frequencies)
are numpy arrays, and a query scores every chunk holding any of its terms with the same BM25 formula, vectorised:
exact, and a few milliseconds per common term.

Long-running processes only (`sourcerer serve`, like the HNSW graph): building the postings reads every chunk's
terms once (seconds at 500k chunks), in a background thread, while FTS5 serves. The terms stay stored in FTS5,
which remains the source of truth; this is a cache of it, kept current from the same change log as the vectors
(`chunk_changes`): a touched chunk's row is retired and appended again with its new terms.

Layout: rows (chunk id, length in terms, alive) as in `VectorCache`; postings in two parts. The *base* is
compressed-column: term `t`'s postings are `rows[start[t]:start[t + 1]]` with their frequencies `tf[...]`,
built at load and at compaction. The *delta* holds the postings of rows appended since, per term in Python lists
(few: one ingest's chunks). Once it holds `MERGE_DELTA` postings (and a tenth of the base's) it is frozen and
merged into a new base by a background thread, while searches read base + frozen delta + new delta: a write
never waits for the merge's sort (seconds at 500k chunks).
"""

from __future__ import annotations

import itertools
import threading
from array import array
from collections import Counter
from collections.abc import Iterable

import numpy as np

from sourcerer.retrieval.keyword import STORED_LENGTHS, idf, length_norm, stored_length, term_weight
from sourcerer.store.vectors import compact_rows, retire_rows

MERGE_DELTA = 200_000
MERGE_SHARE = 0.1

Delta = dict[int, tuple[list[int], list[int]]]  # term id -> (rows, frequencies)


def compressed_columns(
    term_ids: np.ndarray, rows: np.ndarray, tf: np.ndarray | None, n_rows: int, n_terms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, rows, tf) sorted by term then row, from one (term, row) pair per occurrence (`tf` None: counted
    here) or per posting (`tf` given)."""
    keys = term_ids.astype(np.int64) * max(1, n_rows) + rows
    if tf is None:
        keys, counts = np.unique(keys, return_counts=True)
        tf = counts.astype(np.float32)
    else:
        order = np.argsort(keys, kind="stable")
        keys, tf = keys[order], tf[order].astype(np.float32)
    start = np.searchsorted(keys // max(1, n_rows), np.arange(n_terms + 1), side="left").astype(np.int64)
    return start, (keys % max(1, n_rows)).astype(np.int32), tf


def flatten(start: np.ndarray, rows: np.ndarray, tf: np.ndarray, deltas: list[Delta]) -> tuple[np.ndarray, ...]:
    """Every posting of a base and deltas as parallel arrays: (term ids, rows, frequencies)."""
    parts_terms = [np.repeat(np.arange(len(start) - 1, dtype=np.int64), np.diff(start))]
    parts_rows, parts_tf = [rows.astype(np.int64)], [tf]
    for delta in deltas:
        for term, (term_rows, counts) in delta.items():
            parts_terms.append(np.full(len(term_rows), term, dtype=np.int64))
            parts_rows.append(np.asarray(term_rows, dtype=np.int64))
            parts_tf.append(np.asarray(counts, dtype=np.float32))
    return np.concatenate(parts_terms), np.concatenate(parts_rows), np.concatenate(parts_tf)


class TermIndex:
    """Rows of (chunk id, terms); `alive[i]` is False once row i is retired (its chunk deleted or rewritten)."""

    def __init__(self) -> None:
        self.seq = 0  # the last change-log entry applied
        self.size = 0
        self.generation = 0  # bumped whenever rows are renumbered (a reset or a compaction)
        self.ids = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.row_of: dict[int, int] = {}
        self.retired = 0
        self.vocabulary: dict[str, int] = {}
        self.start = np.zeros(1, dtype=np.int64)  # base: term t's postings are [start[t], start[t + 1])
        self.rows = np.zeros(0, dtype=np.int32)
        self.tf = np.zeros(0, dtype=np.float32)
        self.merging: Delta = {}  # a frozen delta being merged into the base in the background
        self.delta: Delta = {}
        self.delta_postings = 0
        self.lock = threading.RLock()

    # --- keeping up with writes ----------------------------------------------------------------------

    def reset(self, seq: int, rows: Iterable[tuple[int, str]]) -> None:
        """Replace everything with `rows` ((chunk id, space-separated terms), a full load), as of change-log
        entry `seq`."""
        ids, lengths, term_ids = array("q"), array("q"), array("i")  # compact: tens of millions of terms at 500k
        vocabulary: dict[str, int] = {}
        rows = iter(rows)
        while batch := list(itertools.islice(rows, 10_000)):
            # whole batches through C-level str, set and map calls: no Python bytecode per term
            texts = [text for _, text in batch]
            tokens = " ".join(texts).split()
            fresh = set(tokens).difference(vocabulary)
            vocabulary.update(zip(fresh, itertools.count(len(vocabulary))))
            term_ids.extend(map(vocabulary.__getitem__, tokens))
            ids.extend(chunk for chunk, _ in batch)
            lengths.extend(text.count(" ") + 1 if text else 0 for text in texts)  # terms are single-spaced
        n = len(ids)
        counts = np.frombuffer(lengths, dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        occurrences = np.frombuffer(term_ids, dtype=np.int32) if term_ids else np.zeros(0, dtype=np.int32)
        base = compressed_columns(occurrences, np.repeat(np.arange(n, dtype=np.int64), counts), None, n, len(vocabulary))
        with self.lock:
            self.generation += 1
            self.seq, self.retired, self.size = seq, 0, n
            capacity = n + max(1024, n // 4)  # headroom: growing copies these arrays
            self.ids, self.length, self.alive = (np.zeros(capacity, dtype=t) for t in (np.int64, np.float32, bool))
            stored = np.asarray(STORED_LENGTHS)[np.searchsorted(STORED_LENGTHS, counts, side="right") - 1]  # as Lucene keeps them
            self.ids[:n], self.length[:n], self.alive[:n] = np.frombuffer(ids, dtype=np.int64) if n else [], stored, True
            self.row_of = {int(chunk): row for row, chunk in enumerate(self.ids[:n])}
            self.vocabulary = vocabulary
            self.start, self.rows, self.tf = base
            self.merging, self.delta, self.delta_postings = {}, {}, 0

    def apply(self, seq: int, touched: Iterable[int], rows: Iterable[tuple[int, str]]) -> None:
        """Retire every touched chunk's row and append `rows` (the touched chunks that still exist)."""
        with self.lock:
            retire_rows(self, touched)
            for chunk, text in rows:
                self._append(chunk, text.split())
            self.seq = seq
            if not self.merging and self.delta_postings >= max(MERGE_DELTA, MERGE_SHARE * len(self.rows)):
                self.merging, self.delta, self.delta_postings = self.delta, {}, 0
                threading.Thread(
                    target=self._merge, args=(self.generation,), name="sourcerer-postings-merge", daemon=True
                ).start()

    def _append(self, chunk: int, tokens: list[str]) -> None:
        row = self.size
        if row >= len(self.ids):
            capacity = max(row + 1, int(len(self.ids) * 1.5), 1024)
            for name in ("ids", "length", "alive"):
                old = getattr(self, name)
                grown = np.zeros(capacity, dtype=old.dtype)
                grown[: len(old)] = old
                setattr(self, name, grown)
        self.ids[row], self.length[row], self.alive[row] = chunk, stored_length(len(tokens)), True
        self.row_of[chunk] = row
        self.size += 1
        for token, count in Counter(tokens).items():
            term = self.vocabulary.setdefault(token, len(self.vocabulary))
            term_rows, counts = self.delta.setdefault(term, ([], []))
            term_rows.append(row)
            counts.append(count)
            self.delta_postings += 1

    def _merge(self, generation: int) -> None:
        """Fold the frozen delta into a new base, off the lock (base and frozen delta never change in place)."""
        with self.lock:
            start, rows, tf, merging = self.start, self.rows, self.tf, self.merging
            n_rows, n_terms = self.size, len(self.vocabulary)
        base = compressed_columns(*flatten(start, rows, tf, [merging]), n_rows, n_terms)
        with self.lock:
            if self.generation == generation:  # else a reset or compaction rebuilt the base meanwhile
                self.start, self.rows, self.tf = base
                self.merging = {}

    def compact(self) -> bool:
        """Drop retired rows once they are a quarter of the rows (at least 10,000); True when rows were renumbered
        (per-caller visibility must then be looked up again)."""
        with self.lock:
            renumber = compact_rows(self, ("ids", "length"))
            if renumber is None:
                return False
            terms_, rows, tf = flatten(self.start, self.rows, self.tf, [self.merging, self.delta])
            rows = renumber[rows]
            kept = rows >= 0
            self.start, self.rows, self.tf = compressed_columns(
                terms_[kept], rows[kept], tf[kept], self.size, len(self.vocabulary)
            )
            self.merging, self.delta, self.delta_postings = {}, {}, 0
            return True

    # --- searching -----------------------------------------------------------------------------------

    def _term_postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """A term's rows and frequencies: base, frozen delta and delta."""
        rows, tf = [], []
        if term + 1 < len(self.start):
            rows.append(self.rows[self.start[term] : self.start[term + 1]])
            tf.append(self.tf[self.start[term] : self.start[term + 1]])
        for delta in (self.merging, self.delta):
            if term in delta:
                rows.append(np.asarray(delta[term][0], dtype=np.int32))
                tf.append(np.asarray(delta[term][1], dtype=np.float32))
        if len(rows) == 1:
            return rows[0], tf[0]
        return (np.concatenate(rows), np.concatenate(tf)) if rows else (np.zeros(0, np.int32), np.zeros(0, np.float32))

    def _term(self, token: str, documents: int, size: int) -> tuple[np.ndarray, np.ndarray, float]:
        """A query term's postings among the first `size` rows, and its IDF. Its document frequency is counted
        from its live postings, as FTS5's vocabulary table has it, without a scan of that table."""
        term = self.vocabulary.get(token)
        rows, tf = self._term_postings(term) if term is not None else (np.zeros(0, np.int32), np.zeros(0, np.float32))
        term_idf = idf(documents, int(np.count_nonzero(self.alive[: self.size][rows])))
        if len(rows) and rows[-1] >= size:  # rows ascend: base, then frozen delta, then delta
            inside = rows < size
            rows, tf = rows[inside], tf[inside]
        return rows, tf, term_idf

    def search(self, tokens: list[str], documents: int, avg_len: float, visible: np.ndarray, limit: int) -> dict[int, float]:
        """The `limit` best visible chunks by BM25 over `tokens` in an index of `documents` chunks (chunk id ->
        score normalised by the sum of the query's IDFs, as `SQLiteIndex._keyword` scores FTS5's candidates)."""
        ceiling = 0.0
        with self.lock:
            size = min(self.size, len(visible))  # rows appended after `visible` was made are not searched yet
            scores = np.zeros(size, dtype=np.float32)
            norm = length_norm(self.length[:size], avg_len)  # BM25's length part, per row
            for token in tokens:
                rows, tf, term_idf = self._term(token, documents, size)
                ceiling += term_idf  # a term no chunk holds still counts, at its highest IDF
                scores[rows] += term_weight(term_idf, tf, norm[rows])  # a term's rows are distinct
            scores *= visible[:size] & self.alive[:size]
            ids = self.ids
        ceiling = ceiling or 1.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:  # every candidate tied with the limit-th stays
            kth = np.partition(scores[candidates], len(candidates) - limit)[len(candidates) - limit]
            candidates = candidates[scores[candidates] >= kth]
        # every chunk tied with the limit-th is returned: the caller breaks ties by unit id, as OpenSearch does
        ranked = sorted(((int(ids[row]), float(scores[row])) for row in candidates), key=lambda kv: (-kv[1], kv[0]))
        return {chunk: min(1.0, score / ceiling) for chunk, score in ranked}

    def score(
        self, tokens: list[str], documents: int, avg_len: float, visible: np.ndarray, chunks: Iterable[int]
    ) -> dict[int, float]:
        """BM25 of the given visible chunks alone, scored and normalised as `search` scores them (those holding
        no query term left out): the keyword side of the chunks the vector search found, without ranking every
        chunk again."""
        ceiling = 0.0
        with self.lock:
            size = min(self.size, len(visible))
            wanted = np.array(sorted({self.row_of[c] for c in chunks if self.row_of.get(c, size) < size}), dtype=np.int64)
            wanted = wanted[visible[wanted] & self.alive[wanted]]
            scores = np.zeros(len(wanted), dtype=np.float32)
            norm = length_norm(self.length[wanted], avg_len)
            for token in tokens:
                rows, tf, term_idf = self._term(token, documents, size)
                ceiling += term_idf
                at = np.searchsorted(wanted, rows)  # where each posting's row would sit among the wanted rows
                hit = at < len(wanted)
                hit[hit] = wanted[at[hit]] == rows[hit]
                scores[at[hit]] += term_weight(term_idf, tf[hit], norm[at[hit]])
            ids = self.ids[wanted]
        ceiling = ceiling or 1.0
        return {int(chunk): min(1.0, float(score) / ceiling) for chunk, score in zip(ids, scores, strict=True) if score > 0}
