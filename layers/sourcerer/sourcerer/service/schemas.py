"""The API's own shapes: request bodies, response bodies and the one error body. The domain models (answers,
citations, traces) live in the library; these say what crosses the wire, so the OpenAPI spec documents every
2xx and error body and the drift test keeps code and spec one. Why it is long: every
shape that crosses the wire is in one module, so a reader of the spec finds each one here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from sourcerer.handoff import Handoff
from sourcerer.ledger.base import CitationCheck, ClaimCheck, FindingStatus, LoggedCitation
from sourcerer.models import MAX_HISTORY_TURNS, MAX_QUESTION_CHARS, MAX_TURN_CHARS, Faithfulness, Locator, Trace
from sourcerer.scopes import SCOPE_PATTERN
from sourcerer.store.models import PLANES, Plane, SearchFilter

# --- request models (the API's own shapes; the domain models live in the library) ------------------


def _whole(value: Any) -> Any:
    """JSON has one number type: 8.0 is the integer 8. Strings and booleans stay errors (the models are strict)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole)]
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
# the content types the parsers read (`store/parsers.EXTENSIONS`; a test keeps the two the same)
ContentType = Literal[
    "application/json",
    "application/pdf",
    "application/x-ndjson",
    "application/x-subrip",
    "text/csv",
    "text/html",
    "text/markdown",
    "text/plain",
    "text/tab-separated-values",
    "text/vtt",
]


MAX_METADATA_DEPTH = 4


def _depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar is 0, {"a": 1} is 1)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


class DocumentRequest(BaseModel):
    # strict: "5", true or "yes" are not numbers or booleans; exactly one of `text` and `content_base64`
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"oneOf": [{"required": ["text"]}, {"required": ["content_base64"]}]},
    )

    source_uri: str = Field(min_length=1, max_length=2048, pattern=r"\S", description="the document's identity in its scope")
    text: str = Field(default=None, min_length=1, pattern=r"\S", description="the content as text")  # type: ignore[assignment]
    content_base64: str = Field(default=None, min_length=4, pattern=BASE64, description="the content as base64 bytes (PDF)")  # type: ignore[assignment]
    content_type: ContentType | None = Field(
        default=None, description="the parser to use; default from the source_uri's extension, else PDF or plain text"
    )
    acl: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(
        default_factory=dict, description=f"the document's metadata: JSON nested at most {MAX_METADATA_DEPTH} levels"
    )

    @field_validator("metadata")
    @classmethod
    def _shallow(cls, value: dict[str, Any]) -> dict[str, Any]:
        if _depth(value) > MAX_METADATA_DEPTH:
            raise ValueError(f"metadata may nest at most {MAX_METADATA_DEPTH} levels")
        return value

    @model_validator(mode="after")
    def _one_content(self) -> DocumentRequest:
        if (self.text is None) == (self.content_base64 is None):
            raise ValueError("give exactly one of text or content_base64")
        return self


class MoveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    to_scope: str = Field(
        min_length=1, max_length=512, pattern=SCOPE_PATTERN, description="the scope to move the document to, e.g. acme/beta"
    )


def _iso_text(value: Any) -> Any:
    """A time is an ISO 8601 string (parsed by pydantic, not strictly: strict mode takes no strings for times)."""
    if not isinstance(value, str):
        raise ValueError("give the time as an ISO 8601 string, e.g. 2026-11-01T00:00:00Z")
    return value


IsoTime = Annotated[AwareDatetime, BeforeValidator(_iso_text), Field(strict=False)]


class Filters(BaseModel):
    """Which documents a search may return (every given condition must hold)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    source_uri: str | None = Field(default=None, min_length=1, max_length=2048, description="source_uri prefix")
    document_id: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, min_length=1, max_length=100, description="only these documents"
    )
    metadata: dict[str, str | int | float | bool] | None = Field(
        default=None, max_length=20, description='metadata equality, e.g. {"lang": "en"}'
    )
    created_after: IsoTime | None = Field(default=None, description="first ingested at or after (ISO 8601 with a time zone)")
    created_before: IsoTime | None = Field(default=None, description="first ingested before (ISO 8601 with a time zone)")


class Budget(BaseModel):
    """What a request may spend: optional stages (LLM synthesis, verification) are skipped to stay within it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # constraints before the validator: that order keeps them in the JSON schema (minimum/maximum)
    max_ms: Annotated[int, Field(ge=1, le=120_000), BeforeValidator(_whole)] | None = Field(
        default=None, description="milliseconds"
    )
    max_cost_usd: Annotated[float, Field(ge=0)] | None = Field(default=None, description="estimated dollars")


class Query(BaseModel):
    """The query object `/v1/search` and `/v1/answer` share (and the CLI's --plane, --filter, --rerank)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    q: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    top_k: WholeNumber = Field(default=8, ge=1, le=100, description="hits wanted; capped at the tier's maximum")
    mode: Literal["hybrid", "keyword", "semantic"] = "hybrid"
    planes: list[Plane] = Field(
        default_factory=lambda: list(PLANES),
        min_length=1,
        description="text (documents), audio (transcripts), doc_visual (PDF pages with boxes); default all",
    )
    modalities: list[ContentType] | None = Field(default=None, min_length=1, description="content types to include")
    filters: Filters | None = None
    rerank: bool = Field(default=False, description="reorder the candidates with the configured reranker")
    budget: Budget | None = None

    def search_filter(self) -> SearchFilter | None:
        f = self.filters or Filters()
        only = SearchFilter(
            planes=tuple(sorted(set(self.planes))),
            content_types=tuple(self.modalities) if self.modalities else None,
            source_uri_prefix=f.source_uri,
            document_ids=tuple(f.document_id) if f.document_id else None,
            metadata=f.metadata,
            created_after=f.created_after.timestamp() if f.created_after else None,
            created_before=f.created_before.timestamp() if f.created_before else None,
        )
        return None if only.empty else only


class SearchRequest(Query):
    # Swagger UI fills "Try it out" from this: a request that finds something in the demo handbook
    model_config = ConfigDict(json_schema_extra={"examples": [{"q": "failover cutover time", "top_k": 5, "mode": "hybrid"}]})


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["user", "assistant"]
    text: str = Field(max_length=MAX_TURN_CHARS)


About = Annotated[str, StringConstraints(max_length=500)]


class StringField(BaseModel):
    """A string of the answer: it carries its own citations."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["string"]
    description: About | None = Field(default=None, description="what it holds: the question its field answers")


class ListField(BaseModel):
    """A list of strings (each an item with its own citations)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["array"]
    items: StringField
    description: About | None = None


class ObjectField(BaseModel):
    """An object inside the answer (one level deep): strings and lists of strings."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["object"]
    properties: dict[str, StringField | ListField] = Field(min_length=1, max_length=10)
    description: About | None = None


class ResponseSchema(BaseModel):
    """The shape of a structured answer, as JSON Schema: at most 10 fields, objects one level deep of at most 10."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["object"] = "object"
    properties: dict[str, StringField | ListField | ObjectField] = Field(min_length=1, max_length=10)


class AnswerRequest(Query):
    # Swagger UI fills "Try it out" from this: a question the demo handbook answers, verified
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"q": "How long did the failover cutover take?", "top_k": 8, "verify": "strict"}]}
    )

    answer: Literal[True] = Field(default=True, description="true: this query wants an answer (the only value here)")
    verify: bool | Literal["strict", "partial"] = Field(
        default=False,
        description="true: judge each claim; strict: refuse an unfaithful answer; partial: keep the supported claims "
        "and replace each unsupported one with [removed: why]",
    )
    history: list[Turn] = Field(default_factory=list, max_length=MAX_HISTORY_TURNS, description="earlier turns, oldest first")
    min_score: float | None = Field(
        default=None, ge=0.0, le=1.0, description="refuse when the best passage scores under this (default: 0.2, none where the reading model decides)"
    )
    min_groundedness: float | None = Field(
        default=None, ge=0.0, le=1.0, description="refuse (no_citation) when fewer of the answer's sentences are cited"
    )
    response_schema: ResponseSchema | None = Field(
        default=None,
        description="a JSON Schema object of strings, lists of strings and objects of them: the answer comes back in "
        "that shape (answer.structured), each string with its own enforced [n] markers, or null where refused",
    )
    handoff: bool = Field(
        default=False,
        description="on a refusal, or a partial answer with removed claims: store a hand-off for a person (GET "
        "/v1/handoffs) and post it to the configured webhook or queue",
    )


# --- responses ------------------------------------------------------------------------------------------------


class CallerContext(BaseModel):
    """The effective caller, echoed on every response: which tenant, tier, scopes and permissions applied."""

    tenant: str
    tier: str
    scopes: list[str]
    perms: list[str]


class ValidationIssue(BaseModel):
    loc: list[str | int]
    msg: str | None = None
    type: str | None = None


class ErrorDetail(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. quota_exceeded")
    message: str = Field(description="what went wrong, for a person")
    detail: list[ValidationIssue] | None = Field(default=None, description="validation_error only: each problem")
    required_tier: str | None = Field(default=None, description="upgrade_required only: the tier that includes this")
    request_id: str | None = Field(default=None, description="internal_error only: quote it to the operator")


class Error(BaseModel):
    """Every error response, whatever its status."""

    error: ErrorDetail


class IngestResponse(BaseModel):
    document_id: str
    chunks: int = Field(description="chunks the document has now")
    status: Literal["ingested", "replaced", "unchanged"]
    context: CallerContext


class DocumentInfo(BaseModel):
    document_id: str
    source_uri: str
    label: str
    scope: str
    acl: list[str]
    metadata: dict[str, Any]
    chunks: int
    content_type: str | None = Field(description="the parser used: declared, else from the source's extension")
    content_hash: str
    created_at: float
    updated_at: float


class DocumentList(BaseModel):
    documents: list[DocumentInfo]
    embedding_backlog: int | None = Field(
        default=None,
        description="this tenant's chunks still waiting for their vectors (found by keyword until then); null where "
        "the index embeds at ingest",
    )
    context: CallerContext


class DeleteResponse(BaseModel):
    document_id: str
    deleted: bool
    context: CallerContext


class MoveResponse(BaseModel):
    document_id: str = Field(description="the document's identity in its new scope")
    previous_document_id: str
    scope: str
    status: Literal["moved", "unchanged"]
    context: CallerContext


class HitView(BaseModel):
    """A search hit as the API shows it (the stored sentence offsets and vectors stay inside)."""

    unit_id: str
    document_id: str
    source_uri: str
    label: str
    text: str
    score: float
    locator: Locator
    receipt: str = Field(description="sha256: of `text`")
    scope: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    position: int = Field(description="the chunk's place in its document, from 0")


class SearchStage(BaseModel):
    stage: str
    ms: float
    units: dict[str, float] = Field(default_factory=dict)
    detail: dict[str, Any] = Field(default_factory=dict, description="what the index did: mode, candidates, timings")


class SearchTrace(BaseModel):
    stages: list[SearchStage]
    total_ms: float
    est_cost_usd: float
    cache: Literal["hit", "miss", "off"] = "off"


class SearchResponse(BaseModel):
    hits: list[HitView]
    trace: SearchTrace
    context: CallerContext


class CitationView(BaseModel):
    index: int = Field(description="the inline marker number, [index] in the answer text")
    unit_id: str | None
    source_uri: str | None
    original: str | None = Field(
        default=None, description="GET it with the key: the cited document's original bytes, with the fragment of the cited place"
    )
    label: str
    locator: Locator
    quote: str | None = Field(
        description="the cited sentence(s), in order: ' … ' where text between two is left out, ' / ' at a line break "
        "after a line without a stop; `locator` points at them"
    )
    quote_spans: list[tuple[int, int]]
    receipt: str = Field(description="sha256: of the cited chunk text")
    answer_spans: list[tuple[int, int]] = Field(description="[start, end) of each marker of this citation in `text`")


class FieldView(BaseModel):
    """One string of a structured answer: its text with [n] markers that number its own citations, or null and
    the reason it was refused."""

    path: str
    text: str | None
    refused: bool
    reason: str | None
    citations: list[CitationView]
    faithfulness: Faithfulness | None


class StructuredView(BaseModel):
    data: dict[str, Any] = Field(description="the object in the requested shape; refused fields are null")
    fields: list[FieldView]


class AnswerBody(BaseModel):
    text: str = Field(description="the answer with [n] markers, or the refusal message")
    refused: bool
    reason: str | None = Field(description="why it refused (see the README's refusal reasons); null when answered")
    citations: list[CitationView]
    faithfulness: Faithfulness | None = Field(description="the verification verdict, when verify was asked")
    nli_faithfulness: float | None = Field(
        description="groundedness: the share of the answer's sentences with a valid citation marker (null on refusals)"
    )
    extractive: bool
    provider: str
    structured: StructuredView | None = Field(default=None, description="with response_schema: the answer in that shape")


class AnswerResponse(BaseModel):
    answer_id: str = Field(description="GET /v1/answers/{answer_id} returns it with its latest audit finding")
    answer: AnswerBody
    hits: list[HitView]
    trace: Trace
    context: CallerContext
    handoff: Handoff | None = Field(
        default=None, description="the hand-off stored for this answer (with handoff: true, on a refusal or removed claims)"
    )


class HandoffView(BaseModel):
    """A stored hand-off as the API shows it."""

    answer_id: str = Field(description="the answer it hands off (GET /v1/answers/{answer_id})")
    scopes: list[str]
    key_id: str | None
    bundle: Handoff
    created_at: float
    delivered: list[str] = Field(description="where it was posted besides the ledger: webhook, queue")


class HandoffLookup(BaseModel):
    handoff: HandoffView
    context: CallerContext


class HandoffPage(BaseModel):
    handoffs: list[HandoffView]
    next_since: float | None = Field(description="pass as `since` for the next page; null on the last one")
    context: CallerContext


class FindingView(BaseModel):
    """An audit's verdict on one answer."""

    answer_id: str
    tenant: str
    scopes: list[str]
    status: FindingStatus
    claims: list[ClaimCheck]
    citations: list[CitationCheck]
    checked_at: float
    judge: str | None
    detail: str


class NotAudited(BaseModel):
    """An answer no audit has checked yet."""

    status: Literal["not_audited"]


class LoggedAnswer(BaseModel):
    """A logged answer as its tenant may read it: texts only where the tenant keeps them (else their hashes)."""

    answer_id: str
    tenant: str
    scopes: list[str]
    key_id: str | None
    question: str | None
    question_sha256: str
    answer: str | None
    answer_sha256: str
    text_stored: bool
    refused: bool
    reason: str | None
    citations: list[LoggedCitation]
    faithfulness: Faithfulness | None
    provider: str
    extractive: bool
    created_at: float
    expires_at: int
    audit: FindingView | NotAudited = Field(description="the latest audit finding")


class AnswerLookup(BaseModel):
    answer: LoggedAnswer
    context: CallerContext


class AuditPage(BaseModel):
    findings: list[FindingView]
    next_since: float | None = Field(description="pass as `since` for the next page; null on the last one")
    context: CallerContext


class UnitUsage(BaseModel):
    used: int
    quota: int | None = Field(description="null: unlimited")


class UsageResponse(BaseModel):
    month: str
    tier: str
    units: dict[str, UnitUsage]


class Health(BaseModel):
    status: Literal["ok"]
    version: str
