"""Every exception Sourcerer raises on purpose, rooted at `SourcererError`. Refusals are never exceptions: they
are normal `Answer` objects with a reason.

The classes say *who* must act, not how a transport shows it: the caller (`InvalidRequest` and the access
errors), the operator (`ConfigurationError`), or nobody but time (`ProviderError`). The HTTP statuses live in one
table in `sourcerer.http.statuses`; the CLI prints the message. Nothing here imports anything of Sourcerer's.
"""

from __future__ import annotations


class SourcererError(Exception):
    """Base class of every exception Sourcerer raises on purpose."""


# --- the operator's to fix ----------------------------------------------------------------------------------


class ConfigurationError(SourcererError):
    """The configuration cannot work: an invalid setting, unknown provider, missing model, incompatible index.
    Never the caller's fault: a service answers 503 and charges nothing."""


class StorageFull(SourcererError):
    """The disk (or database quota) under the index or the ledger is full: nothing more can be written until the
    operator frees space. A service answers 507 and charges nothing; reads still work."""


def storage_failure(exc: BaseException) -> SourcererError | None:
    """The storage failure behind `exc` (or the exception it was raised from), as `StorageFull` for a full disk
    and `ProviderError` for any other I/O error, else None. SQLite says `database or disk is full` (SQLITE_FULL)
    and `disk I/O error`; the OS says ENOSPC, EDQUOT, EIO or EROFS."""
    import errno
    import sqlite3

    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).lower()
        if (isinstance(seen, sqlite3.Error) and "disk is full" in text) or (
            isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT)
        ):
            return StorageFull("the server's storage is full: nothing was written or charged; retry when space is freed")
        if (isinstance(seen, sqlite3.Error) and "disk i/o error" in text) or (
            isinstance(seen, OSError) and seen.errno in (errno.EIO, errno.EROFS)
        ):
            return ProviderError("the server's storage failed to read or write: nothing was charged; retry later")
        seen = seen.__cause__ or seen.__context__
    return None


# --- a backend's (retry later) -------------------------------------------------------------------------------


class ProviderError(SourcererError):
    """A provider (chat model, embedder, grounding endpoint) failed or answered something unusable."""


class TransientProviderError(ProviderError):
    """A failure worth retrying: throttling, a 5xx, a timeout, a dropped connection."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class EmbeddingError(ProviderError):
    """An embedder failed; retrieval falls back to keyword search when this happens."""


class MalformedReply(ProviderError):
    """A model's reply is not the JSON object it was asked for (after the retries it was given). `usage` is
    what the calls that produced it cost, so they can still be counted."""

    def __init__(self, message: str, usage: dict[str, float] | None = None) -> None:
        super().__init__(message)
        self.usage = usage or {}


# --- the caller's -------------------------------------------------------------------------------------------


class InvalidRequest(SourcererError, ValueError):
    """The request cannot be served as given (a bad scope, parameter or document). Also a `ValueError`, so a
    pydantic validator that raises it reports a validation error."""


class UnsupportedDocument(InvalidRequest):
    """The content cannot be parsed as the type it claims (or any type Sourcerer reads)."""


class PayloadTooLarge(InvalidRequest):
    """The document is over the size a request may carry."""


class VerificationUnavailable(InvalidRequest):
    """Verification was requested where no passage text is available to check against (the endpoint path)."""


class Unauthorized(SourcererError):
    """No API key, or one that is unknown or revoked."""


class Forbidden(SourcererError):
    """The key lacks the permission, scope or ACL group the request needs."""


class UpgradeRequired(SourcererError):
    """The tenant's tier does not include this; `required_tier` names the one that does."""

    def __init__(self, message: str, required_tier: str = "pro") -> None:
        super().__init__(message)
        self.required_tier = required_tier


class RetryLater(SourcererError):
    """The request cannot be served now, and can be after `retry_after_s` seconds."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QuotaExceeded(RetryLater):
    """The tenant's monthly quota for a unit is used up until `retry_after_s` from now."""


class EmbeddingBacklog(RetryLater):
    """More chunks wait for their vectors than the index's bound (`SOURCERER_EMBED_BACKLOG`): an ingest is
    refused, untouched and uncharged, until deferred embedding has caught up (backpressure)."""


class RangeNotSatisfiable(SourcererError):
    """A byte range that starts past the end of the content; `length` is the content's length."""

    def __init__(self, message: str, length: int) -> None:
        super().__init__(message)
        self.length = length


class NotFound(SourcererError):
    """Nothing the caller may see has this identity (whether or not something it may not see does)."""


class DocumentNotFound(NotFound):
    """No document the caller may touch has this identity. Also raised when one exists but the caller could
    not read it, so that the answer never reveals that it exists."""


class DocumentConflict(SourcererError):
    """The write would overwrite another document the caller can see (a move onto an occupied identity)."""


class RejectedObject(SourcererError):
    """An uploaded object cannot be ingested (bad key layout, unknown tenant, over quota); the reason says why."""


class ClientGone(SourcererError):
    """The client of a streamed answer went away before its last words: the answer stops and its charge is given
    back (nobody reads the status it gets)."""
