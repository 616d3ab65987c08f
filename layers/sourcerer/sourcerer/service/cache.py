"""The semantic answer cache: an answer computed for one caller is served again to a caller who would get the
same answer, and to no one else.

The cache key has two parts. The *context* is everything that decides an answer besides the question's wording:
the tenant, the caller's effective scopes and ACL groups (an admin's "all"), the query options (mode, top_k,
filters, thresholds, verification, the synthesiser and judge the budget chose) and the index's version for the
tenant (`Index.version`), which changes on any ingest, replacement, move or delete and when vectors are filled
in. So a caller never receives an answer built from passages it may not see, and any write invalidates the
tenant's entries. The *question* matches when its normalised terms are the same (case, accents, word order,
stop words and inflections aside: the index's own tokenizer), or when its embedding's cosine to a cached
question's is at least `SOURCERER_CACHE_SIMILARITY`. Entries live in the ledger (SQLite locally, DynamoDB with a
TTL) for `SOURCERER_CACHE_TTL_S`. Follow-ups (with history) are never cached: their meaning depends on the turns.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from sourcerer.ledger.base import CachedAnswer, Ledger
from sourcerer.service.billing import AnswerPlan
from sourcerer.service.schemas import AnswerRequest
from sourcerer.service.tenancy import Context
from sourcerer.settings import get_settings
from sourcerer.store.base import Index
from sourcerer.text import terms


def question_key(question: str) -> str:
    """The question's normalised terms: the same key for wordings that differ only in form."""
    return " ".join(sorted(set(terms(question))))


@dataclass
class Lookup:
    entry: CachedAnswer | None
    match: str | None  # "exact" (same terms), "similar" (embedding), or None
    vector: list[float] | None  # the question's embedding, kept with the entry a miss stores


@dataclass
class AnswerCache:
    ledger: Ledger
    index: Index

    def context(self, ctx: Context, scopes: list[str], request: AnswerRequest, plan: AnswerPlan, top_k: int) -> str:
        chosen = {
            "tenant": ctx.tenant,
            "scopes": sorted(scopes),
            "groups": "*" if "admin" in ctx.perms else sorted(ctx.groups),
            "mode": request.mode,
            "top_k": top_k,
            "filter": (request.search_filter() or None) and request.search_filter().model_dump(mode="json"),  # type: ignore[union-attr]
            "rerank": request.rerank,
            "min_score": request.min_score,
            "min_groundedness": request.min_groundedness,
            "verify": plan.verify,
            "chat": str(plan.chat),
            "judge": str(plan.judge),
            "settings": [get_settings().model, get_settings().providers, get_settings().bedrock_model],
            "version": self.index.version(ctx.tenant),
        }
        return hashlib.sha256(json.dumps(chosen, sort_keys=True, default=str).encode()).hexdigest()[:32]

    def lookup(self, ctx: Context, context: str, question: str, now: float) -> Lookup:
        entries = self.ledger.cached_answers(ctx.tenant, context, now)
        key = question_key(question)
        exact = next((e for e in entries if e.key == key), None)
        if exact is not None:  # no embedding needed: an exact hit costs a ledger read
            return Lookup(exact, "exact", None)
        vector = self._vector(question)
        if vector is not None:
            threshold = get_settings().cache_similarity
            best = max(
                ((float(np.dot(vector, e.vector)), e) for e in entries if e.vector and len(e.vector) == len(vector)),
                default=(0.0, None),
                key=lambda pair: pair[0],
            )
            if best[1] is not None and best[0] >= threshold:
                return Lookup(best[1], "similar", vector)
        return Lookup(None, None, vector)

    def store(
        self,
        ctx: Context,
        context: str,
        question: str,
        lookup: Lookup,
        answer: dict[str, Any],
        hits: list[dict[str, Any]],
        now: float,
    ) -> None:
        self.ledger.put_cached_answer(
            CachedAnswer(
                tenant=ctx.tenant,
                context=context,
                key=question_key(question),
                vector=lookup.vector,
                answer=answer,
                hits=hits,
                created_at=now,
                expires_at=now + get_settings().cache_ttl_s,
            )
        )

    def _vector(self, question: str) -> list[float] | None:
        """The question's (unit) embedding from the index's embedder (its cache makes the search's own query
        embedding free), or None on a keyword-only index."""
        embedder = getattr(self.index, "embedder", None)
        if embedder is None:
            return None
        vector = np.asarray(embedder.embed([question], "query")[0], dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return [round(float(x), 6) for x in vector / norm] if norm else None
