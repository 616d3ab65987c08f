"""The HTTP face of Sourcerer's errors: one table from exception types to (status, code), and what each status
means in the OpenAPI spec. The most specific class in an exception's MRO wins; anything not here is a 500."""

from __future__ import annotations

from sourcerer.errors import (
    ClientGone,
    ConfigurationError,
    DocumentConflict,
    EmbeddingBacklog,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    ProviderError,
    QuotaExceeded,
    RangeNotSatisfiable,
    StorageFull,
    Unauthorized,
    UnsupportedDocument,
    UpgradeRequired,
)

# The one mapping from exception types to (status, code); the most specific class in an exception's MRO wins.
STATUS: dict[type[Exception], tuple[int, str]] = {
    InvalidRequest: (400, "bad_request"),
    UnsupportedDocument: (400, "unsupported_document"),
    PayloadTooLarge: (413, "payload_too_large"),
    Unauthorized: (401, "unauthorized"),
    UpgradeRequired: (402, "upgrade_required"),
    Forbidden: (403, "forbidden"),
    NotFound: (404, "not_found"),
    DocumentConflict: (409, "conflict"),
    RangeNotSatisfiable: (416, "range_not_satisfiable"),
    QuotaExceeded: (429, "quota_exceeded"),
    EmbeddingBacklog: (429, "embedding_backlog"),
    ClientGone: (499, "client_gone"),  # nginx's "client closed request": logged, sent to nobody
    ProviderError: (503, "backend_unavailable"),
    StorageFull: (507, "insufficient_storage"),
    ConfigurationError: (503, "configuration_error"),
}

ERRORS = {
    400: "invalid input",
    401: "missing, unknown or revoked API key",
    402: "the tenant's tier does not include this",
    403: "scope or permission not granted",
    404: "not found",
    409: "conflicts with a document that exists",
    413: "document too large",
    415: "the body is not JSON (Content-Type)",
    416: "the requested byte range is outside the content (Content-Range says its length)",
    422: "validation failed",
    429: "monthly quota used up, or (ingest) too many chunks waiting for their vectors; Retry-After says when to retry",
    500: "internal error (the body carries a request id for the operator)",
    503: "a backend is unavailable, or the service is misconfigured",
    507: "the server's storage is full (nothing was written or charged)",
}


def status_of(exc: BaseException) -> tuple[int, str] | None:
    """(status, code) of the most specific class of `exc` in `STATUS`, or None (an internal error)."""
    return next((STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS), None)
