"""Response shaping: from the library's answers and the ledger's records to the API's response models, and
from a served answer to the record the answer log keeps."""

from __future__ import annotations

from typing import Any

from sourcerer.ledger.base import AnswerRecord, Finding, HandoffRecord, LoggedCitation, new_answer_id, sha256_of
from sourcerer.models import Answer, Citation, Structured
from sourcerer.service.schemas import (
    AnswerBody,
    CitationView,
    FieldView,
    FindingView,
    HandoffView,
    HitView,
    LoggedAnswer,
    NotAudited,
    StructuredView,
)
from sourcerer.service.tenancy import Context
from sourcerer.store.models import Hit


def hit_views(hits: list[Hit]) -> list[HitView]:
    return [HitView.model_validate(h.model_dump()) for h in hits]


def citation_view(c: Citation) -> CitationView:
    """A citation as the API shows it: where and what it quotes, with its receipt (not the whole chunk again)."""
    return CitationView(
        index=c.index,
        unit_id=c.unit_id,
        source_uri=c.source_uri,
        original=c.original,
        label=c.label,
        locator=c.locator,
        quote=c.quote,
        quote_spans=c.quote_spans,
        receipt=c.receipt,
        answer_spans=c.answer_spans,
    )


def structured_view(structured: Structured) -> StructuredView:
    return StructuredView(
        data=structured.data,
        fields=[
            FieldView(
                path=f.path,
                text=f.text,
                refused=f.refused,
                reason=f.reason,
                citations=[citation_view(c) for c in f.citations],
                faithfulness=f.faithfulness,
            )
            for f in structured.fields
        ],
    )


def answer_body(answer: Answer) -> AnswerBody:
    return AnswerBody(
        text=answer.answer,
        refused=answer.refused,
        reason=answer.reason,
        citations=[citation_view(c) for c in answer.citations],
        faithfulness=answer.faithfulness,
        nli_faithfulness=answer.groundedness,
        extractive=answer.extractive,
        provider=answer.provider,
        structured=structured_view(answer.structured) if answer.structured is not None else None,
    )


def handoff_view(record: HandoffRecord) -> HandoffView:
    """A hand-off as the API shows it (without the ACL groups of the key that asked)."""
    return HandoffView.model_validate(record.model_dump(exclude={"groups", "tenant", "expires_at"}))


def finding_view(finding: Finding) -> FindingView:
    """A finding as the API shows it (without its fingerprint and expiry)."""
    return FindingView.model_validate(finding.model_dump(exclude={"fingerprint", "expires_at"}))


def logged_answer(record: AnswerRecord) -> LoggedAnswer:
    """What a tenant may read of its answer log: not the ACL groups of the key that asked, nor audit internals."""
    fields: dict[str, Any] = record.model_dump(exclude={"groups", "audit"})
    audit = finding_view(record.audit) if record.audit is not None else NotAudited(status="not_audited")
    return LoggedAnswer.model_validate({**fields, "audit": audit})


def answer_record(ctx: Context, scopes: list[str], question: str, answer: Answer, hits: list[Hit], now: float) -> AnswerRecord:
    """The answer log's record of a served answer: enough to find every cited chunk again and prove whether it
    changed. With the tenant's `store_text: false` only the hashes of the texts are kept."""
    by_unit = {h.unit_id: h for h in hits}
    keep_text = ctx.settings.store_text
    faithfulness = answer.faithfulness
    if faithfulness is not None and not keep_text:  # claim texts are answer text: keep only the verdict
        faithfulness = faithfulness.model_copy(update={"unsupported": [], "claims": []})
    return AnswerRecord(
        answer_id=new_answer_id(now),
        tenant=ctx.tenant,
        scopes=scopes,
        key_id=ctx.key_id,
        groups=ctx.groups,
        question=question if keep_text else None,
        question_sha256=sha256_of(question),
        answer=answer.answer if keep_text else None,
        answer_sha256=sha256_of(answer.answer),
        text_stored=keep_text,
        refused=answer.refused,
        reason=answer.reason,
        citations=[
            LoggedCitation(
                index=c.index,
                unit_id=c.unit_id,
                document_id=by_unit[c.unit_id].document_id if c.unit_id in by_unit else None,
                position=by_unit[c.unit_id].position if c.unit_id in by_unit else None,
                source_uri=c.source_uri,
                label=c.label,
                locator=c.locator,
                receipt=c.receipt,
            )
            for c in answer.citations
        ],
        faithfulness=faithfulness,
        provider=answer.provider,
        extractive=answer.extractive,
        created_at=now,
        expires_at=int(now + ctx.tier.answer_retention_days * 86400),
    )
