"""The HTTP API, defined once with Powertools' resolver: Lambda handlers and `sourcerer serve` both use it.

Routers are grouped by permission boundary (documents: write; search: read; answer: read, pro tiers), so each
Lambda function includes only its own; `build_app()` with no argument includes them all (the local server).
Routes are thin: one dependency (`caller`) authenticates, the use case runs in `sourcerer.service`, and the
route returns its response model, so the OpenAPI spec documents every body. Exceptions become HTTP in exactly
one place, the `STATUS` table; anything not in it is a logged 500 that carries a request id and no internals.
Why it is long: every route of the API lives here, so the spec is built from one module.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Depends, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestUnsupportedContentType, RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from pydantic import BaseModel, StringConstraints

from sourcerer import __version__
from sourcerer.errors import (
    ConfigurationError,
    ProviderError,
    RangeNotSatisfiable,
    RetryLater,
    SourcererError,
    UpgradeRequired,
    storage_failure,
)
from sourcerer.http.events import EVENT_SINK, EVENT_STREAM, sse, wants_events
from sourcerer.http.originals import ORIGINAL_CONTENT, original_response
from sourcerer.http.resolver import ConcurrentRestResolver, cors_from
from sourcerer.http.statuses import ERRORS, STATUS, status_of  # noqa: F401 - STATUS: the table, for readers of this module
from sourcerer.ledger.base import FindingStatus
from sourcerer.scopes import SCOPE_PATTERN
from sourcerer.service.audit import AGE_PATTERN, parse_since
from sourcerer.service.core import DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE
from sourcerer.service.schemas import (
    AnswerLookup,
    AnswerRequest,
    AnswerResponse,
    AuditPage,
    DeleteResponse,
    DocumentList,
    DocumentRequest,
    Error,
    HandoffLookup,
    HandoffPage,
    Health,
    IngestResponse,
    MoveRequest,
    MoveResponse,
    SearchRequest,
    SearchResponse,
    UsageResponse,
)
from sourcerer.service.tenancy import Context
from sourcerer.service.wiring import get_service
from sourcerer.settings import get_settings

log = logging.getLogger("sourcerer.http.api")


def responses(success: type[BaseModel], *statuses: int) -> dict[int, dict[str, Any]]:
    """OpenAPI `responses` of a route: its success body, and its errors."""
    return {200: {"description": "success", "content": {"application/json": {"model": success}}}, **errors(*statuses)}


def errors(*statuses: int) -> dict[int, dict[str, Any]]:
    """A route's errors, all one `Error` body (500 and 507, a full disk under the index or the ledger, on every route)."""
    return {s: {"description": ERRORS[s], "content": {"application/json": {"model": Error}}} for s in (*statuses, 500, 507)}


@dataclass(frozen=True)
class Call:
    """Who is calling (authenticated from `Authorization: Bearer <key>`) and the request's id (for metering)."""

    ctx: Context
    request_id: str | None


def caller(request: Request) -> Call:
    """Resolved once per request, before the route, from the request itself."""
    event = request.resolved_event
    request_id = event.request_context.request_id if isinstance(event, APIGatewayProxyEvent) else None
    return Call(ctx=get_service().authenticate(request.headers.get("authorization")), request_id=request_id)


Caller = Annotated[Call, Depends(caller)]
BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]  # every route but /health
ScopeHeader = Annotated[
    str | None,
    Header(alias="X-Sourcerer-Scope", pattern=SCOPE_PATTERN, max_length=512, description="scope path, e.g. acme/alpha"),
]
SinceQuery = Annotated[
    datetime | Annotated[str, StringConstraints(pattern=AGE_PATTERN)] | float | None,
    Query(description="ISO 8601 time, epoch seconds or an age such as 7d (default: the audit window)"),
]
ScopeQuery = Annotated[
    str | None, Query(alias="scope", pattern=SCOPE_PATTERN, max_length=512, description="scope path (alternative to the header)")
]


documents = Router()


@documents.post(
    "/v1/documents",
    security=BEARER,
    summary="Ingest a document",
    tags=["documents"],
    responses=responses(IngestResponse, 400, 401, 403, 404, 413, 415, 422, 429, 503),
)
def post_document(
    request: Annotated[DocumentRequest, Body()], call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None
) -> IngestResponse:
    return get_service().ingest(call.ctx, x_scope or scope, request, call.request_id)


@documents.get(
    "/v1/documents",
    security=BEARER,
    summary="List documents in the key's scopes",
    tags=["documents"],
    responses=responses(DocumentList, 400, 401, 403, 422, 503),
)
def get_documents(call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None) -> DocumentList:
    return get_service().list_documents(call.ctx, x_scope or scope)


@documents.delete(
    "/v1/documents/<document_id>",
    security=BEARER,
    summary="Delete a document",
    tags=["documents"],
    responses=responses(DeleteResponse, 400, 401, 403, 404, 422, 503),
)
def delete_document(document_id: str, call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None) -> DeleteResponse:
    return get_service().delete_document(call.ctx, x_scope or scope, document_id)


@documents.get(
    "/v1/documents/<document_id>/original",
    security=BEARER,
    summary="The bytes a document was ingested from (PDF as PDF, everything else as plain text)",
    tags=["documents"],
    responses={
        200: {"description": "the original", "content": ORIGINAL_CONTENT},
        206: {"description": "the requested byte range (`Range: bytes=...`)", "content": ORIGINAL_CONTENT},
        **errors(400, 401, 403, 404, 416, 422, 503),
    },
)
def get_original(
    document_id: str,
    call: Caller,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
    byte_range: Annotated[str | None, Header(alias="Range", description="one range, e.g. bytes=0-1023")] = None,
):  # no return annotation: Powertools would serialise the bytes as text
    """What citations' `original` links point at: the document's bytes, for a key that can read the document
    (scope and ACL groups). A text document is served as `text/plain` whatever it holds, and every original
    with a sandboxing `Content-Security-Policy`: a document's contents are data, never a page of this origin."""
    return original_response(get_service().original(call.ctx, x_scope or scope, document_id), byte_range)


@documents.post(
    "/v1/documents/<document_id>/move",
    security=BEARER,
    summary="Move a document to another scope",
    tags=["documents"],
    responses=responses(MoveResponse, 400, 401, 403, 404, 409, 415, 422, 503),
)
def move_document(
    document_id: str, request: Annotated[MoveRequest, Body()], call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None
) -> MoveResponse:
    """The key must be able to read the document where it is (scope and ACL groups) and be granted `to_scope`."""
    return get_service().move_document(call.ctx, x_scope or scope, document_id, request)


search = Router()


@search.post(
    "/v1/search",
    security=BEARER,
    summary="Hybrid search",
    tags=["search"],
    responses=responses(SearchResponse, 400, 401, 403, 415, 422, 429, 503),
)
def post_search(
    request: Annotated[SearchRequest, Body()], call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None
) -> SearchResponse:
    return get_service().search(call.ctx, x_scope or scope, request, call.request_id)


@search.get(
    "/v1/usage",
    security=BEARER,
    summary="This month's usage and quota",
    tags=["usage"],
    responses=responses(UsageResponse, 401, 403, 422, 503),
)
def get_usage(call: Caller) -> UsageResponse:
    return get_service().usage(call.ctx)


@search.get("/health", summary="Liveness", tags=["health"], responses=responses(Health, 422))
def health() -> Health:
    return Health(status="ok", version=__version__)


answers = Router()


@answers.post(
    "/v1/answer",
    security=BEARER,
    summary="Cited answer or refusal",
    tags=["answer"],
    responses=responses(AnswerResponse, 400, 401, 402, 403, 415, 422, 429, 503),
)
def post_answer(
    request: Annotated[AnswerRequest, Body()],
    call: Caller,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
    accept: Annotated[
        str | None,
        Header(
            alias="Accept",
            description="text/event-stream: the answer as server-sent events (retrieve, citation, delta, verdict, "
            "reset, then done with this response), shown as it is made on sourcerer serve",
        ),
    ] = None,
) -> AnswerResponse | str:  # str: the events' text (a Response of text/event-stream)
    service = get_service()
    if not wants_events(accept):
        return service.answer(call.ctx, x_scope or scope, request, call.request_id)
    sink, sent = EVENT_SINK.get(), []

    def send(event: dict[str, Any]) -> None:
        sent.append(sse(event))
        if sink is not None:
            sink(sent[-1])

    service.answer(call.ctx, x_scope or scope, request, call.request_id, on_event=send)
    return Response(  # type: ignore[return-value] - the same answer as events; its body validates as text
        status_code=200, content_type=EVENT_STREAM, body="".join(sent), headers={"Cache-Control": "no-cache"}
    )


@answers.get(
    "/v1/answers/<answer_id>",
    security=BEARER,
    summary="A logged answer, its citations with receipts, and its latest audit finding",
    tags=["answer"],
    responses=responses(AnswerLookup, 400, 401, 403, 404, 422, 503),
)
def get_answer(answer_id: str, call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None) -> AnswerLookup:
    return get_service().get_answer(call.ctx, x_scope or scope, answer_id)


@answers.get(
    "/v1/audits",
    security=BEARER,
    summary="Audit findings (admin)",
    tags=["audits"],
    responses=responses(AuditPage, 400, 401, 403, 422, 503),
)
def get_audits(
    call: Caller,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
    since: SinceQuery = None,
    status: Annotated[FindingStatus | None, Query(description="only findings of this status")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE, description="findings per page (oldest first)")] = DEFAULT_AUDIT_PAGE,
) -> AuditPage:
    """Findings oldest first; when `next_since` is not null, pass it as `since` for the next page."""
    service = get_service()
    return service.audits(call.ctx, x_scope or scope, parse_since(since, service.clock()), status, limit)


@answers.get(
    "/v1/handoffs",
    security=BEARER,
    summary="Hand-offs of refused or partial answers (admin)",
    tags=["handoffs"],
    responses=responses(HandoffPage, 400, 401, 403, 422, 503),
)
def get_handoffs(
    call: Caller,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
    since: SinceQuery = None,
    limit: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE, description="hand-offs per page (oldest first)")] = DEFAULT_AUDIT_PAGE,
) -> HandoffPage:
    """Hand-offs oldest first; when `next_since` is not null, pass it as `since` for the next page."""
    service = get_service()
    return service.handoffs(call.ctx, x_scope or scope, parse_since(since, service.clock()), limit)


@answers.get(
    "/v1/handoffs/<answer_id>",
    security=BEARER,
    summary="One hand-off: the question, the conversation, the closest passages and what would answer it",
    tags=["handoffs"],
    responses=responses(HandoffLookup, 400, 401, 403, 404, 422, 503),
)
def get_handoff(answer_id: str, call: Caller, x_scope: ScopeHeader = None, scope: ScopeQuery = None) -> HandoffLookup:
    return get_service().get_handoff(call.ctx, x_scope or scope, answer_id)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps({"error": {"code": code, "message": message, **extra}}),
        headers=headers,
    )


def _register_errors(app: APIGatewayRestResolver) -> None:
    @app.exception_handler(RequestValidationError)
    def validation(exc: RequestValidationError) -> Response:
        # the body is validated before the route's `caller` runs: a caller without a valid key learns that first,
        # not the shape of a request it may not make
        if app.current_event.path.startswith("/v1/"):
            try:
                get_service().authenticate(app.current_event.headers.get("authorization"))
            except SourcererError as unauthorized:
                return known(unauthorized)
        if _not_json(app):  # a form or text body is parsed as one and fails validation: it is the wrong type
            return unsupported_media_type(exc)  # type: ignore[arg-type]
        errors = exc.errors()
        if any(e.get("type") == "extra_forbidden" and tuple(e.get("loc", ()))[-1:] == ("scope",) for e in errors):
            return _error(400, "scope_in_body", "the scope comes from the X-Sourcerer-Scope header or ?scope=, never the body")
        if any(
            e.get("type") == "json_invalid"
            or (tuple(e.get("loc", ())) == ("body",) and e.get("type") in ("missing", "model_attributes_type"))
            for e in errors
        ):
            return _error(400, "invalid_body", "the body must be a JSON object")
        details = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in errors]
        return _error(422, "validation_error", "the request does not match the schema", detail=details)

    @app.exception_handler(SourcererError)
    def known(exc: SourcererError) -> Response:
        status, code = status_of(exc) or (500, "internal_error")
        if status == 500:
            return internal(exc)
        if isinstance(exc, ConfigurationError):  # the operator reads the reason in the log; the client never does
            log.error("misconfigured: %s", exc)
            return _error(status, code, "the service is misconfigured; the operator has been told")
        if isinstance(exc, ProviderError):
            log.warning("backend unavailable: %s", exc)
            return _error(status, code, "a backend service is unavailable; retry later")
        if isinstance(exc, UpgradeRequired):
            return _error(status, code, str(exc), required_tier=exc.required_tier)
        if isinstance(exc, RetryLater):
            return _error(status, code, str(exc), {"Retry-After": str(exc.retry_after_s)})
        if isinstance(exc, RangeNotSatisfiable):
            return _error(status, code, str(exc), {"Content-Range": f"bytes */{exc.length}"})
        return _error(status, code, str(exc))

    @app.exception_handler(RecursionError)
    def too_deep(exc: RecursionError) -> Response:  # the JSON decoder recurses once per level of nesting
        return _error(400, "invalid_body", "the body is nested too deeply")

    @app.exception_handler(RequestUnsupportedContentType)
    def unsupported_media_type(exc: RequestUnsupportedContentType) -> Response:
        return _error(415, "unsupported_media_type", "send the body as Content-Type: application/json")

    @app.exception_handler(ServiceError)
    def resolver_error(exc: ServiceError) -> Response:  # what the resolver itself answers (e.g. a body too large)
        return _error(exc.status_code, "bad_request" if exc.status_code < 500 else "internal_error", str(exc.msg))

    @app.exception_handler(Exception)
    def internal(exc: Exception) -> Response:
        if _not_json(app):  # the resolver's form parser raises bare ValueErrors on a malformed body it cannot read
            return unsupported_media_type(exc)  # type: ignore[arg-type]
        storage = storage_failure(exc)
        if storage is not None:  # a full disk is the operator's to fix, and the caller's to retry: never a 500
            log.error("storage failure: %s", exc)
            status, code = status_of(storage) or (503, "backend_unavailable")
            return _error(status, code, str(storage))
        request_id = _current_request_id(app)
        log.error("internal error in request %s", request_id, exc_info=exc)
        return _error(
            500, "internal_error", "an internal error occurred; quote the request id to the operator", request_id=request_id
        )

    @app.not_found
    def not_found(exc: Exception) -> Response:
        allowed = allowed_methods(app, app.current_event.path)
        if allowed:
            return _error(
                405,
                "method_not_allowed",
                f"{app.current_event.http_method} is not allowed here; use {', '.join(allowed)}",
                {"Allow": ", ".join(allowed)},
            )
        return _error(404, "not_found", "no such route")


def _not_json(app: APIGatewayRestResolver) -> bool:
    """Whether the request carries a body that is not JSON (every body this API takes is JSON)."""
    try:
        event = app.current_event
        kind = (event.headers.get("content-type") or "").split(";")[0].strip().lower()
        return bool(event.body) and bool(kind) and kind != "application/json" and not kind.endswith("+json")
    except Exception:  # noqa: BLE001 - no event to read it from
        return False


def _current_request_id(app: APIGatewayRestResolver) -> str:
    try:
        return app.current_event.request_context.request_id or uuid.uuid4().hex
    except Exception:  # noqa: BLE001 - no event to read it from
        return uuid.uuid4().hex


def allowed_methods(app: APIGatewayRestResolver, path: str) -> list[str]:
    """The methods the spec declares for `path` (empty when no route matches it): a 405 names them in `Allow`."""
    return sorted({method for pattern, methods in _route_table(app) if pattern.fullmatch(path) for method in methods})


@lru_cache(maxsize=8)
def _route_table(app: APIGatewayRestResolver) -> tuple[tuple[re.Pattern[str], frozenset[str]], ...]:
    paths = json.loads(openapi_spec(app))["paths"]
    return tuple(
        (re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(route))), frozenset(m.upper() for m in methods))
        for route, methods in paths.items()
    )


def build_app(*routers: Router, cors_origins: str | None = None) -> APIGatewayRestResolver:
    """The resolver with `routers` (default: all). CORS for `cors_origins` patterns, else SOURCERER_CORS_ORIGINS
    (unset: no CORS headers, which a browser on another origin cannot pass)."""
    if cors_origins is None:
        try:
            cors_origins = get_settings().cors_origins
        except ConfigurationError:  # built at import in Lambda: every request answers the 503 instead
            cors_origins = None
    cors = cors_from(cors_origins)
    app = ConcurrentRestResolver(enable_validation=True, cors=cors)  # safe to share between a server's threads
    app.configure_openapi(
        title="Sourcerer API",
        version=__version__,
        description="Cited answers or refusals over your documents.",
        security_schemes={"bearerAuth": HTTPBearer(description="an API key from `sourcerer keys create`")},
    )
    for router in routers or (documents, search, answers):
        app.include_router(router)
    _register_errors(app)
    if not routers:

        @app.get("/openapi.json", summary="This API's OpenAPI document", tags=["health"], include_in_schema=False)
        def openapi() -> dict[str, Any]:
            return json.loads(openapi_spec(app))

    return app


_SPEC_LOCK = threading.Lock()


def openapi_spec(app: APIGatewayRestResolver | None = None) -> str:
    """The spec as served and committed (docs/openapi.json), without the resolver's default validation-error
    schemas: no route answers with them (every error is one `Error` body). Built once per app, one thread at a
    time: Powertools builds it in shared state, and two server threads building it at once (the docs page asking
    for the spec while another request looked up its route's methods) raised a KeyError, a 500."""
    with _SPEC_LOCK:
        return _spec_of(app or build_app())


@lru_cache(maxsize=8)
def _spec_of(app: APIGatewayRestResolver) -> str:
    spec = json.loads(app.get_openapi_json_schema())
    schemas = spec.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        if f'"#/components/schemas/{unused}"' not in json.dumps({k: v for k, v in spec.items() if k != "components"}):
            schemas.pop(unused, None)
    return json.dumps(spec, indent=4)
