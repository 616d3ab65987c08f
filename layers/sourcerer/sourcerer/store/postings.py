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
(few: one ingest's chunks); once it holds `MERGE_DELTA` postings it is merged into the base.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from collections.abc import Iterable

import numpy as np

from sourcerer.retrieval.keyword import K1, B

MERGE_DELTA = 200_000  # delta postings are merged into the base (a vectorised sort of all postings) once there
MERGE_SHARE = 0.1  # are this many and this share of the base: rarely, so the sort's cost is spread thin


class TermIndex:
    """Rows of (chunk id, terms); `alive[i]` is False once row i is retired (its chunk deleted or rewritten)."""

    def __init__(self) -> None:
        self.seq = 0  # the last change-log entry applied
        self.size = 0
        self.generation = 0  # bumped whenever rows are renumbered (a reset or a compaction)
        self.ids = np.zeros(0, dtype=np.int64)
        self.length = np.zeros(0, dtype=np.float64)
        self.alive = np.zeros(0, dtype=bool)
        self.row_of: dict[int, int] = {}
        self.retired = 0
        self.vocabulary: dict[str, int] = {}
        self.start = np.zeros(1, dtype=np.int64)  # base: term t's postings are [start[t], start[t + 1])
        self.rows = np.zeros(0, dtype=np.int32)
        self.tf = np.zeros(0, dtype=np.float32)
        self.delta: dict[int, tuple[list[int], list[int]]] = {}
        self.delta_postings = 0
        self.lock = threading.RLock()

    # --- keeping up with writes ----------------------------------------------------------------------

    def reset(self, seq: int, rows: Iterable[tuple[int, str]]) -> None:
        """Replace everything with `rows` ((chunk id, space-separated terms), a full load), as of change-log
        entry `seq`."""
        ids, lengths, term_ids = array("q"), array("q"), array("i")  # compact: tens of millions of terms at 500k
        vocabulary: dict[str, int] = {}
        for chunk, text in rows:
            tokens = text.split()
            ids.append(chunk)
            lengths.append(len(tokens))
            term_ids.extend([vocabulary.setdefault(t, len(vocabulary)) for t in tokens])
        lengths_ = np.frombuffer(lengths, dtype=np.int64) if lengths else np.zeros(0, dtype=np.int64)
        row_of_posting = np.repeat(np.arange(len(ids), dtype=np.int64), lengths_)
        with self.lock:
            self.generation += 1
            self.seq, self.retired = seq, 0
            self.size = len(ids)
            self.ids = np.frombuffer(ids, dtype=np.int64).copy() if ids else np.zeros(0, dtype=np.int64)
            self.length = lengths_.astype(np.float64)
            self.alive = np.ones(self.size, dtype=bool)
            self.row_of = {int(chunk): row for row, chunk in enumerate(self.ids)}
            self.vocabulary = vocabulary
            self.delta, self.delta_postings = {}, 0
            terms_ = np.frombuffer(term_ids, dtype=np.int32).astype(np.int64) if term_ids else np.zeros(0, dtype=np.int64)
            self._set_base(terms_, row_of_posting)

    def _set_base(self, term_ids: np.ndarray, rows: np.ndarray, tf: np.ndarray | None = None) -> None:
        """The base postings from one (term, row) pair per occurrence (tf None) or per posting (tf given)."""
        keys = term_ids * max(1, self.size) + rows
        if tf is None:
            keys, counts = np.unique(keys, return_counts=True)  # sorted by term, then row
            tf = counts.astype(np.float32)
        else:
            order = np.argsort(keys, kind="stable")
            keys, tf = keys[order], tf[order].astype(np.float32)
        terms_sorted = keys // max(1, self.size)
        self.rows = (keys % max(1, self.size)).astype(np.int32)
        self.tf = tf
        self.start = np.searchsorted(terms_sorted, np.arange(len(self.vocabulary) + 1), side="left").astype(np.int64)

    def apply(self, seq: int, touched: Iterable[int], rows: Iterable[tuple[int, str]]) -> None:
        """Retire every touched chunk's row and append `rows` (the touched chunks that still exist)."""
        with self.lock:
            for chunk in touched:
                row = self.row_of.pop(chunk, None)
                if row is not None and self.alive[row]:
                    self.alive[row] = False
                    self.retired += 1
            for chunk, text in rows:
                self._append(chunk, text.split())
            self.seq = seq
            if self.delta_postings >= max(MERGE_DELTA, MERGE_SHARE * len(self.rows)):
                self._merge()

    def _append(self, chunk: int, tokens: list[str]) -> None:
        row = self.size
        if row >= len(self.ids):
            capacity = max(row + 1, int(len(self.ids) * 1.5), 1024)
            for name in ("ids", "length", "alive"):
                old = getattr(self, name)
                grown = np.zeros(capacity, dtype=old.dtype)
                grown[: len(old)] = old
                setattr(self, name, grown)
        self.ids[row], self.length[row], self.alive[row] = chunk, len(tokens), True
        self.row_of[chunk] = row
        self.size += 1
        for token, count in Counter(tokens).items():
            term = self.vocabulary.setdefault(token, len(self.vocabulary))
            rows, counts = self.delta.setdefault(term, ([], []))
            rows.append(row)
            counts.append(count)
            self.delta_postings += 1

    def _postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every posting, base and delta: (term ids, rows, frequencies)."""
        base_terms = np.repeat(np.arange(len(self.start) - 1, dtype=np.int64), np.diff(self.start))
        delta_terms = [np.full(len(r), t, dtype=np.int64) for t, (r, _) in self.delta.items()]
        delta_rows = [np.asarray(r, dtype=np.int64) for r, _ in self.delta.values()]
        delta_tf = [np.asarray(c, dtype=np.float32) for _, c in self.delta.values()]
        return (
            np.concatenate([base_terms, *delta_terms]),
            np.concatenate([self.rows.astype(np.int64), *delta_rows]),
            np.concatenate([self.tf, *delta_tf]),
        )

    def _merge(self) -> None:
        """Fold the delta into the base (rows keep their numbers)."""
        terms_, rows, tf = self._postings()
        self.delta, self.delta_postings = {}, 0
        self._set_base(terms_, rows, tf)

    def compact(self) -> bool:
        """Drop retired rows once they are a quarter of the rows (at least 10,000); True when rows were renumbered
        (per-caller visibility must then be looked up again)."""
        with self.lock:
            if self.retired <= max(10_000, self.size // 4):
                return False
            terms_, rows, tf = self._postings()
            kept = self.alive[rows]
            renumber = np.cumsum(self.alive[: self.size]) - 1
            keep_rows = np.flatnonzero(self.alive[: self.size])
            self.ids, self.length = self.ids[keep_rows].copy(), self.length[keep_rows].copy()
            self.size, self.retired = len(keep_rows), 0
            self.alive = np.ones(self.size, dtype=bool)
            self.row_of = {int(chunk): row for row, chunk in enumerate(self.ids)}
            self.delta, self.delta_postings = {}, 0
            self._set_base(terms_[kept], renumber[rows[kept]], tf[kept])
            self.generation += 1
            return True

    # --- searching -----------------------------------------------------------------------------------

    def search(
        self, tokens: list[str], idf: dict[str, float], avg_len: float, visible: np.ndarray, limit: int
    ) -> dict[int, float]:
        """The `limit` best visible chunks by BM25 over `tokens` (chunk id -> score normalised by the sum of
        the query's IDFs, as `SQLiteIndex._keyword` scores FTS5's candidates)."""
        with self.lock:
            size = min(self.size, len(visible))  # rows appended after `visible` was made are not searched yet
            allowed = visible[:size] & self.alive[:size]
            scores = np.zeros(size, dtype=np.float64)
            for token in tokens:
                term = self.vocabulary.get(token)
                if term is None:
                    continue
                rows = self.rows[self.start[term] : self.start[term + 1]]
                tf = self.tf[self.start[term] : self.start[term + 1]]
                if term in self.delta:
                    extra_rows, extra_tf = self.delta[term]
                    rows = np.concatenate([rows, np.asarray(extra_rows, dtype=np.int32)])
                    tf = np.concatenate([tf, np.asarray(extra_tf, dtype=np.float32)])
                inside = rows < size
                rows, tf = rows[inside], tf[inside].astype(np.float64)
                norm = 1 - B + B * self.length[rows] / (avg_len or 1.0)
                scores[rows] += idf[token] * tf * (K1 + 1) / (tf + K1 * norm)  # a term's rows are distinct
            scores[~allowed] = 0.0
            ids = self.ids
        ceiling = sum(idf.values()) or 1.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:  # every candidate tied with the limit-th stays, so ties break by chunk id
            kth = np.partition(scores[candidates], len(candidates) - limit)[len(candidates) - limit]
            candidates = candidates[scores[candidates] >= kth]
        ranked = sorted(((int(ids[row]), float(scores[row])) for row in candidates), key=lambda kv: (-kv[1], kv[0]))
        return {chunk: min(1.0, score / ceiling) for chunk, score in ranked[:limit]}
