"""The SQLite index's vectors in memory: caught up from a change log, searched exactly or through an HNSW graph.

Why a change log: the index used to reload every vector after any write (5.8 s at 500k chunks, paid by the
first query after each ingest) and copy the whole matrix per query. Every write now appends the ids of the
chunks it touched to `chunk_changes` in its own transaction; a reader applies only the entries after the last
one it saw: a touched row is retired, and appended again if the chunk still exists with a vector. Other
processes' writes (gunicorn workers, the CLI) arrive the same way.

Why two search paths, and why the filter is always exact:

* Exact (numpy): the cosine of every visible row. Used below `ANN_MIN_ROWS` rows, while the graph is still
  being built, and whenever the caller sees few rows (`EXACT_VISIBLE_ROWS`), where it is also the fastest.
* HNSW (faiss `IndexHNSWFlat`, inner product): built in a background thread once the index holds
  `ANN_MIN_ROWS` vectors, then extended as rows arrive. The caller's visibility (tenant, scope, ACL, and rows
  retired by later writes) is passed *into* the graph search as a bitmap (`IDSelectorBitmap`): the search never
  returns a row the caller may not see, and filtering can never push out an allowed row that the graph
  search ranked, because there is no post-filtering step to drop it (filter-aware search, not over-fetch).
  Candidates are then re-scored exactly, so scores are the same cosines the exact path returns.
  Recall@10 of the graph against exact search is measured in `bench/scale.py`.
* Exact, filtered (faiss): once the graph exists, a caller who sees at most `FLAT_VISIBLE_SHARE` of its rows is
  scanned exhaustively over the graph's own copy of the vectors with the same bitmap, in C: exact, without
  gathering the caller's rows in numpy, and without the graph's lower recall under a selective filter.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

ANN_MIN_ROWS = 50_000  # below this an exact scan takes a few milliseconds: no graph needed
EXACT_VISIBLE_ROWS = 20_000  # a caller who sees this few rows is scanned exactly (fast, and no graph detours)
# the search beam, measured at 500k vectors (40 SciFact queries, recall@10 against exact for a tenant with 80% /
# 8% of the rows): 128: 0.87 / 0.85 in 3.9 ms; 256: 0.94 / 0.91; 512: 0.97 / 0.94; 1024: 0.985 / 0.957 in 7 ms
# (exact scan: 74 ms). At 100k, 128 already gave 0.986.
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 16, 64, 1024
MAX_EF_SEARCH = 4096
# a caller who sees at most this share of the graph's rows is scanned exactly through faiss instead (a filtered
# graph search finds fewer of a small share's true neighbours: recall@10 0.957 for an 8% tenant at 500k)
FLAT_VISIBLE_SHARE = 0.25


def _faiss() -> Any | None:
    try:
        import faiss
    except ImportError:  # the `local` extra brings it; without it every search is exact
        return None
    return faiss


def _reserve(graph: Any, rows: int) -> None:
    """Room for `rows` more rows in a built graph's arrays. faiss sizes them exactly at the first `add`, so the
    next one would copy all of them (160 ms at 60k rows, seconds at 500k) on a query's path; growing a vector
    and shrinking it back keeps its capacity."""
    faiss = _faiss()
    storage = faiss.downcast_index(graph.storage)
    per_row = [
        (storage.codes, storage.code_size),
        (graph.hnsw.neighbors, int(graph.hnsw.cum_nneighbor_per_level.at(1)) or 2 * HNSW_M),  # level 0's links
        (graph.hnsw.levels, 1),
        (graph.hnsw.offsets, 1),
    ]
    for array, width in per_row:
        size = array.size()
        array.resize(size + rows * width)
        array.resize(size)


def retire_rows(cache: Any, touched: Iterable[int]) -> None:
    """Retire the rows of `touched` chunks (deleted, rewritten or moved) in an in-memory cache of rows (this
    module's `VectorCache`, `postings.TermIndex`): they stop matching at once, and compaction drops them later."""
    for chunk in touched:
        row = cache.row_of.pop(chunk, None)
        if row is not None and cache.alive[row]:
            cache.alive[row] = False
            cache.retired += 1


def compact_rows(cache: Any, per_row: tuple[str, ...]) -> np.ndarray | None:
    """Drop the retired rows of an in-memory cache of rows once they are a quarter of its rows (at least 10,000):
    the `per_row` arrays keep the live rows, renumbered in order, and `generation` moves on (per-caller visibility
    must be looked up again). Returns each old row's new number (-1: dropped), or None when not yet worth it.
    Called under the cache's lock."""
    if cache.retired <= max(10_000, cache.size // 4):
        return None
    alive = cache.alive[: cache.size]
    kept = np.flatnonzero(alive)
    renumber = np.where(alive, np.cumsum(alive) - 1, -1)
    for name in per_row:
        setattr(cache, name, getattr(cache, name)[kept].copy())
    cache.alive = np.ones(len(kept), dtype=bool)
    cache.size, cache.retired = len(kept), 0
    cache.row_of = {int(chunk): row for row, chunk in enumerate(cache.ids)}
    cache.generation += 1
    return renumber


class VectorCache:
    """Rows of (chunk id, vector); `alive[i]` is False once row i is retired (its chunk deleted or rewritten)."""

    def __init__(self, graph: bool = False) -> None:
        # `graph`: build the HNSW graph above ANN_MIN_ROWS. Only long-running processes (`sourcerer serve`) do:
        # a one-shot command would exit mid-build, and its queries are served exactly in milliseconds anyway
        self.graph = graph
        self.seq = 0  # the last change-log entry applied
        self.size = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.row_of: dict[int, int] = {}
        self.retired = 0
        self.ann: Any | None = None  # faiss index over rows [0, ann_rows)
        self.ann_rows = 0
        self.generation = 0  # bumped whenever rows are renumbered (a reset or a compaction)
        self._building = False
        self.lock = threading.RLock()

    # --- keeping up with writes ----------------------------------------------------------------------

    def reset(self, seq: int, rows: list[tuple[int, bytes]]) -> None:
        """Replace everything with `rows` (a full load), as of change-log entry `seq`."""
        with self.lock:
            self.generation += 1
            self.seq, self.size, self.retired = seq, 0, 0
            self.ids = np.zeros(0, dtype=np.int64)
            self.matrix = np.zeros((0, 0), dtype=np.float32)
            self.alive = np.zeros(0, dtype=bool)
            self.row_of = {}
            self.ann, self.ann_rows = None, 0
            self._append(rows)
            self._extend_ann()  # a large index opened fresh starts its graph now, not at its first write

    def apply(self, seq: int, touched: list[int], rows: list[tuple[int, bytes]]) -> list[int]:
        """Retire every touched chunk's row, append `rows` (the touched chunks that still have a vector).
        Returns the new rows' positions, so per-caller visibility is computed for them only."""
        with self.lock:
            retire_rows(self, touched)
            start = self.size
            self._append(rows)
            self.seq = seq
            self._extend_ann()
            return list(range(start, self.size))

    def _append(self, rows: list[tuple[int, bytes]]) -> None:
        if not rows:
            return
        vectors = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
        needed = self.size + len(rows)
        if self.matrix.shape[1] != vectors.shape[1] or needed > len(self.ids):
            # headroom: growing copies the whole matrix (seconds at 500k rows), so it must be rare, not the cost
            # of the first write after a load
            capacity = max(needed + needed // 4, int(len(self.ids) * 1.5), 1024)
            matrix = np.zeros((capacity, vectors.shape[1]), dtype=np.float32)
            ids = np.zeros(capacity, dtype=np.int64)
            alive = np.zeros(capacity, dtype=bool)
            if self.size and self.matrix.shape[1] == vectors.shape[1]:
                matrix[: self.size], ids[: self.size], alive[: self.size] = (
                    self.matrix[: self.size],
                    self.ids[: self.size],
                    self.alive[: self.size],
                )
            self.matrix, self.ids, self.alive = matrix, ids, alive
        self.matrix[self.size : needed] = vectors
        for offset, (chunk, _) in enumerate(rows):
            self.ids[self.size + offset] = chunk
            self.alive[self.size + offset] = True
            self.row_of[chunk] = self.size + offset
        self.size = needed

    def compact(self) -> bool:
        """Drop retired rows once they are a quarter of the matrix (at least 10,000); True when rows were
        renumbered (per-caller visibility must then be looked up again).
        The graph is rebuilt in the background; exact search serves meanwhile."""
        with self.lock:
            if compact_rows(self, ("matrix", "ids")) is None:
                return False
            self.ann, self.ann_rows = None, 0
            self._extend_ann()
            return True

    # --- the graph -----------------------------------------------------------------------------------

    def _extend_ann(self) -> None:
        """Add new rows to a built graph; start building one in the background once there are enough rows."""
        if self.ann is not None and self.ann_rows < self.size:
            self.ann.add(self.matrix[self.ann_rows : self.size])
            self.ann_rows = self.size
        elif self.graph and self.ann is None and not self._building and self.size - self.retired >= ANN_MIN_ROWS and _faiss():
            self._building = True
            threading.Thread(target=self._build_ann, name="sourcerer-hnsw", daemon=True).start()

    def _build_ann(self) -> None:
        faiss = _faiss()
        assert faiss is not None
        try:
            with self.lock:
                rows, dim, generation = self.size, self.matrix.shape[1], self.generation
                snapshot = self.matrix[:rows].copy()  # rows never change in place: only appended or retired
            graph = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            graph.add(snapshot)
            _reserve(graph, max(8192, rows // 4))
            with self.lock:
                if self.generation == generation:  # else rows were renumbered meanwhile: this graph is stale
                    graph.add(self.matrix[rows : self.size])
                    self.ann, self.ann_rows = graph, self.size
        except Exception:  # noqa: BLE001 - an accelerator: exact search keeps serving
            log.exception("building the HNSW graph failed; searching exactly")
        finally:
            self._building = False

    # --- searching -----------------------------------------------------------------------------------

    def search(self, query: np.ndarray, visible: np.ndarray, depth: int, also: list[int]) -> tuple[dict[int, float], str]:
        """The `depth` visible rows nearest `query` (chunk id -> cosine), plus the cosines of the chunk ids in
        `also` that are visible; and which path answered ("exact" or "hnsw")."""
        with self.lock:
            size = min(self.size, len(visible))  # rows appended after `visible` was made are not searched yet
            allowed = visible[:size] & self.alive[:size]
            count = int(allowed.sum())
            if not count:
                return {}, "exact"
            # rows below `size` never change in place (appends go past it; growth copies), so the exact scan
            # can run outside the lock, on these references, while writers append
            matrix, ids, row_of = self.matrix, self.ids, dict.get.__get__(self.row_of)
            use_graph = self.ann is not None and self.ann_rows >= size and count > EXACT_VISIBLE_ROWS
            path = "exact"
            if use_graph:
                faiss = _faiss()
                selector = faiss.IDSelectorBitmap(np.packbits(allowed, bitorder="little"))
                if count <= FLAT_VISIBLE_SHARE * size:
                    # few of the graph's rows are the caller's: scan exactly those, in faiss, over the graph's own
                    # copy of the vectors (rows the bitmap excludes are skipped, not computed)
                    path, searched = "exact-filtered", faiss.downcast_index(self.ann.storage)
                    params = faiss.SearchParameters(sel=selector)
                else:
                    # a filtered graph search walks through rows the caller may not see: the fewer it sees, the
                    # wider the beam must be to collect `depth` of its own (measured in bench/scale.py)
                    ef = min(MAX_EF_SEARCH, max(HNSW_EF_SEARCH, 2 * depth, int(depth * size / count)))
                    path, searched = "hnsw", self.ann
                    params = faiss.SearchParametersHNSW(efSearch=ef, sel=selector)
                _, found_rows = searched.search(query[None, :].astype(np.float32), depth, params=params)
                rows = found_rows[0][found_rows[0] >= 0].astype(np.int64)
            extra = [(chunk, row_of(chunk)) for chunk in also]
        if use_graph:
            cosines = matrix[rows] @ query
            found = {int(ids[r]): float(c) for r, c in zip(rows, cosines, strict=True)}
        else:
            rows = np.flatnonzero(allowed)
            # most rows visible: one pass over the matrix in place; few: gather them (never copy it all)
            cosines = (matrix[:size] @ query)[rows] if 2 * count > size else matrix[rows] @ query
            top = np.argpartition(-cosines, depth)[:depth] if len(rows) > depth else np.arange(len(rows))
            found = {int(ids[rows[i]]): float(cosines[i]) for i in top}
        for chunk, row in extra:
            if chunk not in found and row is not None and row < size and allowed[row]:
                found[chunk] = float(matrix[row] @ query)
        return found, path
