"""The semantic answer cache: an answer computed for one caller is served again to a caller who would get the
same answer, and to no one else.

The cache key has two parts. The *context* is everything that decides an answer besides the question's wording:
the tenant, the caller's effective scopes and ACL groups (an admin's "all"), the query options (mode, top_k,
filters, thresholds, verification, the synthesiser and judge the budget chose) and the index's version for the
tenant (`Index.version`), which changes on any ingest, replacement, move or delete and when vectors are filled
in. So a caller never receives an answer built from passages it may not see, and any write invalidates the
tenant's entries. The *question* matches, and a hit is served, only when it is the same question:

* *exact*: the same words in the same order (case, width, accents, punctuation and spacing aside; stop words,
  negations and numbers are words like any other), so "Who did not confirm recovery?" is not "Who confirmed
  recovery?" and "Was A before B?" is not "Was B before A?";
* *similar*: its embedding's cosine to a cached question's is at least `SOURCERER_CACHE_SIMILARITY`, *and* both
  carry the same distinguishing tokens in the same order (numbers, identifiers, names, months, negations: what a
  question about project B or about April shares with one about project A or March except the answer), *and*
  it is not the cached question's content words in another order.

Answers that were degraded (an extractive fallback while an LLM is configured, a judge that failed over, a
provider error) are never stored: they would outlive the outage. Entries live in the ledger (SQLite locally,
DynamoDB with a TTL) for `SOURCERER_CACHE_TTL_S`. Follow-ups (with history) are never cached: their meaning
depends on the turns.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from sourcerer.ledger.base import AnswerCacheStore, CachedAnswer
from sourcerer.scopes import group_list
from sourcerer.service.billing import AnswerPlan
from sourcerer.service.schemas import AnswerRequest
from sourcerer.service.tenancy import Context
from sourcerer.settings import Settings
from sourcerer.store.base import Index
from sourcerer.synthesis.days import MONTHS
from sourcerer.text import NEGATIONS as ENGLISH_NEGATIONS
from sourcerer.text import terms


def _folded(text: str) -> str:
    """Case, width and accents aside (NFKC, casefold, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def question_key(question: str) -> str:
    """The exact key: the question's words in order, case, width, accents, punctuation and spacing aside."""
    return " ".join(re.findall(r"\w+", _folded(question)))


# negations beside English's (the tokenizer's list, sourcerer.text.NEGATIONS): German, French, Spanish,
# Portuguese, Italian
NEGATIONS = ENGLISH_NEGATIONS | frozenset(
    "nicht kein keine keinen nie niemals ohne ne pas jamais aucun aucune sans nunca ningun ninguna ningún ninguno "
    "sin nao não nem nenhum sem non mai senza nessuno".split()
)
_CJK_NEGATIONS = ("不", "没", "沒", "無", "无", "未", "非", "ない", "ません", "なかった", "않", "없", "못")
_SENTENCE_END = ".!?。！？:;"


def distinguishing(question: str) -> tuple[str, ...]:
    """What two wordings of one question must share, in order: numbers and identifiers (any token with a digit,
    a lone capital letter, inner capitals: `A`, `Q3`, `SKU-42`, `iOS`), names (capitalised words that do not
    start a sentence), months and negations, including the ones written inside CJK words."""
    text = unicodedata.normalize("NFKC", question)
    found: list[str] = []
    for match in re.finditer(r"[\w'’-]+", text):
        word = match.group(0).strip("'’-")
        if not word:
            continue
        low = _folded(word).replace("’", "'")
        before = text[: match.start()].rstrip()
        starts_sentence = not before or before[-1] in _SENTENCE_END
        if (
            any(ch.isdigit() for ch in word)
            or (len(word) == 1 and word.isupper())
            or any(ch.isupper() for ch in word[1:])
            or (word[0].isupper() and not starts_sentence)
            or low in NEGATIONS
            or low in MONTHS
        ):
            found.append(low)
        found += [f"neg:{n}" for n in _CJK_NEGATIONS if n in word]
    return tuple(found)


def same_question(cached: str, asked: str) -> bool:
    """Whether a similar-by-embedding question may be served `cached`'s answer: the same distinguishing tokens in
    the same order, and not the same content words rearranged ("Was A before B" is not "Was B before A")."""
    if not cached or distinguishing(cached) != distinguishing(asked):
        return False
    before, after = terms(cached), terms(asked)
    return not (sorted(before) == sorted(after) and before != after)


def degraded(answer: Any) -> bool:
    """An answer produced while something failed: a fallback provider or the extractive fallback while an LLM is
    configured, or a judge that failed over. It is served, but never cached: it would outlive the outage."""
    provider = str(getattr(answer, "provider", "") or "")
    notes = getattr(getattr(answer, "trace", None), "notes", []) or []
    return "fallback" in provider or any(" failed" in note or "deadline" in note for note in notes)


@dataclass
class Lookup:
    entry: CachedAnswer | None
    match: str | None  # "exact" (same terms), "similar" (embedding), or None
    vector: list[float] | None  # the question's embedding, kept with the entry a miss stores


@dataclass
class AnswerCache:
    ledger: AnswerCacheStore
    index: Index
    settings: Settings

    def context(self, ctx: Context, scopes: list[str], request: AnswerRequest, plan: AnswerPlan, top_k: int) -> str:
        groups = group_list(ctx.reads_with())  # None: every group (an administrator)
        chosen = {
            "tenant": ctx.tenant,
            "scopes": sorted(scopes),
            "groups": "*" if groups is None else groups,
            "mode": request.mode,
            "top_k": top_k,
            "filter": (request.search_filter() or None) and request.search_filter().model_dump(mode="json"),  # type: ignore[union-attr]
            "rerank": request.rerank,
            "min_score": request.min_score,
            "min_groundedness": request.min_groundedness,
            "verify": plan.verify,
            "chat": str(plan.chat),
            "judge": str(plan.judge),
            "settings": [self.settings.model, self.settings.providers, self.settings.bedrock_model],
            "version": self.index.version(ctx.tenant),
        }
        return hashlib.sha256(json.dumps(chosen, sort_keys=True, default=str).encode()).hexdigest()[:32]

    def lookup(self, ctx: Context, context: str, question: str, now: float) -> Lookup:
        exact = self.ledger.cached_answer(ctx.tenant, context, question_key(question), now)
        if exact is not None:  # no embedding and no scan: an exact hit costs one keyed ledger read
            return Lookup(exact, "exact", None)
        vector = self._vector(question)
        if vector is None:
            return Lookup(None, None, None)
        # the nearest entry over the threshold that is the same question: cosines of all at once, the costly
        # token comparison only for the few that are near enough (it ran on every entry, 15 ms an answer), and
        # only the answer that matched read whole
        cached = [c for c in self.ledger.cached_questions(ctx.tenant, context, now) if c.vector is not None and len(c.vector) == len(vector)]
        if cached:
            cosines = np.vstack([c.vector for c in cached if c.vector is not None]) @ np.asarray(vector, dtype=np.float32)
            for i in np.argsort(-cosines, kind="stable"):
                if cosines[i] < self.settings.cache_similarity:
                    break
                if same_question(cached[i].question, question):
                    entry = self.ledger.cached_answer(ctx.tenant, context, cached[i].key, now)  # gone since: a miss
                    return Lookup(entry, "similar" if entry else None, vector)
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
                question=question,
                vector=lookup.vector,
                answer=answer,
                hits=hits,
                created_at=now,
                expires_at=now + self.settings.cache_ttl_s,
            )
        )

    def _vector(self, question: str) -> list[float] | None:
        """The question's (unit) embedding from the index's embedder (its cache makes the search's own query
        embedding free), or None on a keyword-only index."""
        embedder = self.index.embedder
        if embedder is None:
            return None
        vector = np.asarray(embedder.embed([question], "query")[0], dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return [round(float(x), 6) for x in vector / norm] if norm else None
