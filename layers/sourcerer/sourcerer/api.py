"""The HTTP API, defined once with Powertools' resolver: Lambda handlers and `sourcerer serve` both use it.

Routers are grouped by permission boundary (documents: write; search: read; answer: read, pro tiers), so each
Lambda function includes only its own; `build_app()` with no argument includes them all (the local server).
Errors are mapped to HTTP in exactly one place (`_register_errors`).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query
from pydantic import StringConstraints

from sourcerer import __version__
from sourcerer.audit import AGE_PATTERN, parse_since
from sourcerer.errors import ConfigurationError, ProviderError
from sourcerer.ledger import open_ledger
from sourcerer.ledger.base import FindingStatus
from sourcerer.service import (
    DEFAULT_AUDIT_PAGE,
    MAX_AUDIT_PAGE,
    AnswerRequest,
    DocumentRequest,
    MoveRequest,
    SearchRequest,
    Service,
)
from sourcerer.store import open_index
from sourcerer.store.models import SCOPE_PATTERN
from sourcerer.store.parsers import UnsupportedDocument
from sourcerer.tenancy import QuotaExceeded, TenancyError, UpgradeRequired

log = logging.getLogger("sourcerer.api")

ERRORS = {
    400: "invalid input",
    401: "missing, unknown or revoked API key",
    402: "the tenant's tier does not include this",
    403: "scope or permission not granted",
    404: "not found",
    409: "conflicts with a document that exists",
    413: "document too large",
    422: "validation failed",
    429: "monthly quota used up",
    503: "a backend is unavailable",
}


def error_responses(*statuses: int) -> dict[int, dict[str, str]]:
    """OpenAPI `responses` for a route: success plus the errors it can answer (all as `{"error": {...}}`)."""
    return {200: {"description": "success"}, **{s: {"description": ERRORS[s]} for s in statuses}}


@lru_cache(maxsize=1)
def get_service() -> Service:
    """One service per process (Lambda container or local server), built lazily from the environment."""
    return Service(index=open_index(), ledger=open_ledger())


ScopeHeader = Annotated[
    str | None,
    Header(alias="X-Sourcerer-Scope", pattern=SCOPE_PATTERN, max_length=512, description="scope path, e.g. acme/alpha"),
]
ScopeQuery = Annotated[
    str | None, Query(alias="scope", pattern=SCOPE_PATTERN, max_length=512, description="scope path (alternative to the header)")
]
AuthHeader = Annotated[str | None, Header(alias="Authorization", description="Bearer <API key>")]


def _request_id(router: Router) -> str | None:
    return router.current_event.request_context.request_id


documents = Router()


@documents.post(
    "/v1/documents", summary="Ingest a document", tags=["documents"], responses=error_responses(400, 401, 403, 413, 422, 429, 503)
)
def post_document(
    request: Annotated[DocumentRequest, Body()],
    authorization: AuthHeader = None,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
) -> dict[str, Any]:
    service = get_service()
    return service.ingest(service.authenticate(authorization), x_scope or scope, request, _request_id(documents))


@documents.get(
    "/v1/documents", summary="List documents in the key's scopes", tags=["documents"], responses=error_responses(401, 403)
)
def get_documents(authorization: AuthHeader = None, x_scope: ScopeHeader = None, scope: ScopeQuery = None) -> dict[str, Any]:
    service = get_service()
    return service.list_documents(service.authenticate(authorization), x_scope or scope)


@documents.delete(
    "/v1/documents/<document_id>", summary="Delete a document", tags=["documents"], responses=error_responses(401, 403, 404)
)
def delete_document(
    document_id: str, authorization: AuthHeader = None, x_scope: ScopeHeader = None, scope: ScopeQuery = None
) -> dict[str, Any]:
    service = get_service()
    return service.delete_document(service.authenticate(authorization), x_scope or scope, document_id)


@documents.post(
    "/v1/documents/<document_id>/move",
    summary="Move a document to another scope",
    tags=["documents"],
    responses=error_responses(400, 401, 403, 404, 409, 422),
)
def move_document(
    document_id: str,
    request: Annotated[MoveRequest, Body()],
    authorization: AuthHeader = None,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
) -> dict[str, Any]:
    """The key must be able to read the document where it is (scope and ACL groups) and be granted `to_scope`."""
    service = get_service()
    return service.move_document(service.authenticate(authorization), x_scope or scope, document_id, request)


search = Router()


@search.post("/v1/search", summary="Hybrid search", tags=["search"], responses=error_responses(400, 401, 403, 422, 429, 503))
def post_search(
    request: Annotated[SearchRequest, Body()],
    authorization: AuthHeader = None,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
) -> dict[str, Any]:
    service = get_service()
    return service.search(service.authenticate(authorization), x_scope or scope, request, _request_id(search))


@search.get("/v1/usage", summary="This month's usage and quota", tags=["usage"], responses=error_responses(401, 403))
def get_usage(authorization: AuthHeader = None) -> dict[str, Any]:
    service = get_service()
    return service.usage(service.authenticate(authorization))


@search.get("/health", summary="Liveness", tags=["health"])
def health() -> dict[str, Any]:
    return {"status": "ok", "version": __version__}


answers = Router()


@answers.post(
    "/v1/answer", summary="Cited answer or refusal", tags=["answer"], responses=error_responses(400, 401, 402, 403, 422, 429, 503)
)
def post_answer(
    request: Annotated[AnswerRequest, Body()],
    authorization: AuthHeader = None,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
) -> dict[str, Any]:
    service = get_service()
    return service.answer(service.authenticate(authorization), x_scope or scope, request, _request_id(answers))


@answers.get(
    "/v1/answers/<answer_id>",
    summary="A logged answer, its citations with receipts, and its latest audit finding",
    tags=["answer"],
    responses=error_responses(401, 403, 404),
)
def get_answer(
    answer_id: str, authorization: AuthHeader = None, x_scope: ScopeHeader = None, scope: ScopeQuery = None
) -> dict[str, Any]:
    service = get_service()
    return service.get_answer(service.authenticate(authorization), x_scope or scope, answer_id)


@answers.get("/v1/audits", summary="Audit findings (admin)", tags=["audits"], responses=error_responses(400, 401, 403, 422))
def get_audits(
    authorization: AuthHeader = None,
    x_scope: ScopeHeader = None,
    scope: ScopeQuery = None,
    since: Annotated[
        datetime | Annotated[str, StringConstraints(pattern=AGE_PATTERN)] | float | None,
        Query(description="ISO 8601 time, epoch seconds or an age such as 7d (default: the audit window)"),
    ] = None,
    status: Annotated[FindingStatus | None, Query(description="only findings of this status")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE, description="findings per page (oldest first)")] = DEFAULT_AUDIT_PAGE,
) -> dict[str, Any]:
    """Findings oldest first; when `next_since` is not null, pass it as `since` for the next page."""
    service = get_service()
    ctx = service.authenticate(authorization)
    return service.audits(ctx, x_scope or scope, parse_since(since, service.clock()), status, limit)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps({"error": {"code": code, "message": message, **extra}}),
        headers=headers,
    )


def _register_errors(app: APIGatewayRestResolver) -> None:
    """The one place where exceptions become HTTP statuses. No 500 ever carries internals."""

    @app.exception_handler(RequestValidationError)
    def validation(exc: RequestValidationError) -> Response:
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

    @app.exception_handler(TenancyError)
    def tenancy(exc: TenancyError) -> Response:
        extra: dict[str, Any] = {}
        headers = None
        if isinstance(exc, UpgradeRequired):
            extra["required_tier"] = exc.required_tier
        if isinstance(exc, QuotaExceeded):
            headers = {"Retry-After": str(exc.retry_after_s)}
        return _error(exc.status, exc.code, str(exc), headers, **extra)

    @app.exception_handler(UnsupportedDocument)
    def unsupported(exc: UnsupportedDocument) -> Response:
        return _error(400, "unsupported_document", str(exc))

    @app.exception_handler(ValueError)
    def invalid(exc: ValueError) -> Response:
        return _error(400, "invalid_input", str(exc))

    @app.exception_handler(ProviderError)
    def backend(exc: ProviderError) -> Response:
        return _error(503, "backend_unavailable", "a backend service is unavailable; retry later")

    @app.exception_handler(ConfigurationError)
    def configuration(exc: ConfigurationError) -> Response:
        log.error("misconfigured: %s", exc)  # the operator reads the reason in the logs; the client never does
        return _error(503, "misconfigured", "the service is misconfigured; the operator has been told")

    @app.exception_handler(RecursionError)
    def too_deep(exc: RecursionError) -> Response:  # the JSON decoder recurses once per level of nesting
        return _error(400, "invalid_body", "the body is nested too deeply")

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


def build_app(*routers: Router) -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)
    for router in routers or (documents, search, answers):
        app.include_router(router)
    _register_errors(app)
    if not routers:

        @app.get("/openapi.json", summary="This API's OpenAPI document", tags=["health"], include_in_schema=False)
        def openapi() -> dict[str, Any]:
            return json.loads(openapi_spec(app))

    return app


def openapi_spec(app: APIGatewayRestResolver | None = None) -> str:
    return (app or build_app()).get_openapi_json_schema(
        title="Sourcerer API", version=__version__, description="Cited answers or refusals over your documents."
    )
