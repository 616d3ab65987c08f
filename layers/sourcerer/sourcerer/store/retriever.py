"""The one way to retrieve from an index for `ask()`: the library (`index.retriever(...)`), the CLI (`sourcerer ask
--index`, `sourcerer search --rerank`) and the service all search through `IndexRetriever`, so the same question
over the same index gives the same hits and the same trace, whichever way it is asked.

It searches every scope it is given (a key granted several), keeps the best score of a chunk found in more than
one, reranks the best `CANDIDATES` when it has a reranker (or says in the trace why it was skipped), and keeps
the trace of its last search (`last_trace`, the `TracedRetriever` protocol that `ask()` reads) and every hit it
returned (`hits`: what the service logs with an answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR
from sourcerer.retrieval.rerank import CANDIDATES, RERANK_UNAVAILABLE, Reranker, make_reranker, rerank_hits
from sourcerer.scopes import Groups
from sourcerer.store.base import EmbeddedIndex, Index, Mode, check_mode
from sourcerer.store.models import Hit, SearchFilter

CATCH_UP = 4  # chunks: an answer embeds a backlog this small itself (about a document; seconds of model time)


class IndexRetriever:
    def __init__(
        self,
        index: Index,
        *,
        tenant: str,
        scopes: Sequence[str | None] = (None,),
        groups: Groups = None,
        k: int = 8,
        mode: Mode = "hybrid",
        only: SearchFilter | None = None,
        reranker: Reranker | None = None,
        rerank_skipped: str | None = None,
        semantic_floor: float = SEMANTIC_FLOOR,
    ) -> None:
        """`scopes`: the scope subtrees to search (None: the whole tenant). `reranker`: rerank the best
        candidates with it; `rerank_skipped`: why reranking was asked for and not done (said in the trace).
        `semantic_floor`: the similarity a chunk sharing no word with the question needs (`Index.search`); `ask()`
        lowers it to 0 where the reader decides, as it has no retrieval floor then."""
        check_mode(mode)
        self.index, self.tenant, self.scopes = index, tenant, list(scopes) or [None]
        self.groups, self.k, self.mode, self.only = groups, k, mode, only
        self.reranker, self.rerank_skipped = reranker, rerank_skipped
        self.semantic_floor = semantic_floor
        self.last_trace: dict[str, Any] = {}
        self.hits: list[Hit] = []

    def search(self, query: str, k: int | None = None) -> tuple[list[Hit], dict[str, Any]]:
        """The best `k` hits over every scope (reranked when it can) and the trace of this search."""
        k = k or self.k
        depth = max(k, CANDIDATES) if self.reranker is not None else k
        best: dict[str, Hit] = {}
        traces: list[dict[str, Any]] = []
        for scope in self.scopes:
            found = self.index.search(
                query,
                tenant=self.tenant,
                scope=scope,
                groups=self.groups,
                k=depth,
                mode=self.mode,
                only=self.only,
                semantic_floor=self.semantic_floor,
            )
            traces.append(dict(found.trace))
            for hit in found:
                if hit.unit_id not in best or hit.score > best[hit.unit_id].score:
                    best[hit.unit_id] = hit
        hits = sorted(best.values(), key=lambda h: (-h.score, h.unit_id))[:depth]
        trace = merged(traces)
        if self.rerank_skipped:
            trace["rerank"] = {"skipped": self.rerank_skipped}
        elif self.reranker is not None and hits:
            hits, trace["rerank"] = rerank_hits(self.reranker, query, hits)
            if "ms" in trace["rerank"]:
                trace["stages"] = {**(trace.get("stages") or {}), "rerank": trace["rerank"]["ms"]}
        hits = hits[:k]
        self.last_trace = trace
        seen = {h.unit_id for h in self.hits}
        self.hits.extend(h for h in hits if h.unit_id not in seen)  # in place: a copy's hits are its original's
        return hits, trace

    def __call__(self, question: str, k: int | None = None) -> list[dict[str, Any]]:
        """The `Retriever` protocol: passages for `ask()`, best first.

        A passage whose vectors are still pending is weighed on its words alone (`with_known`): computing them
        in the request is the background embedder's work at every request's cost. Except when the whole backlog
        is one small batch (`CATCH_UP`): a lone user asking right after an ingest then gets the answer the
        vectors give, and they are stored, so the background embedder never computes them again."""
        hits, _ = self.search(question, k)
        embedded = self.index if isinstance(self.index, EmbeddedIndex) else None  # the others queue their work
        if embedded is not None and any(h.pending for h in hits) and embedded.pending_embeddings() <= CATCH_UP:
            embedded.embed_pending(limit=CATCH_UP)
            hits, _ = self.search(question, k)
        return [hit.as_passage() for hit in hits]


def index_retriever(
    index: Index,
    *,
    tenant: str,
    scope: str | None = None,
    groups: Groups = None,
    k: int = 8,
    mode: Mode = "hybrid",
    only: SearchFilter | None = None,
    rerank: bool = False,
) -> IndexRetriever:
    """`Index.retriever()`: a retriever for `ask()` bound to one tenant, scope, set of groups and filter;
    `rerank=True` reranks the best candidates with the configured reranker (`SOURCERER_RERANKER`)."""
    reranker = make_reranker(embedder=index.embedder) if rerank else None
    skipped = RERANK_UNAVAILABLE if rerank and reranker is None else None
    return IndexRetriever(
        index, tenant=tenant, scopes=[scope], groups=groups, k=k, mode=mode, only=only, reranker=reranker, rerank_skipped=skipped
    )


def merged(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """One trace for a search over several scopes: the first scope's, with the stage times added up and the
    chunks found without their vectors listed once."""
    if not traces:
        return {}
    trace = dict(traces[0])
    for other in traces[1:]:
        stages = dict(trace.get("stages") or {})
        for name, ms in (other.get("stages") or {}).items():
            stages[name] = round(stages.get(name, 0.0) + ms, 3)
        if stages:
            trace["stages"] = stages
        if other.get("keyword_only"):
            trace["keyword_only"] = list(dict.fromkeys([*(trace.get("keyword_only") or []), *other["keyword_only"]]))
    if len(traces) > 1:
        trace["scopes_searched"] = len(traces)
    return trace
