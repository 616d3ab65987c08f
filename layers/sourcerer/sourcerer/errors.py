"""Typed exceptions. Refusals are never exceptions: they are normal `Answer` objects with a reason.

Exceptions are for misconfiguration and for failures the caller must know about.
"""

from __future__ import annotations


class SourcererError(Exception):
    """Base class of every exception Sourcerer raises on purpose."""


class ConfigurationError(SourcererError):
    """The configuration cannot work: unknown provider, missing model, incompatible index."""


class VerificationUnavailable(SourcererError):
    """Verification was requested where no passage text is available to check against (the endpoint path)."""


class ProviderError(SourcererError):
    """A provider (chat model, embedder, grounding endpoint) failed or answered something unusable."""


class EmbeddingError(ProviderError):
    """An embedder failed; retrieval falls back to keyword search when this happens."""


class DocumentNotFound(SourcererError):
    """No document the caller may touch has this identity. Also raised when one exists but the caller could
    not read it, so that the answer never reveals that it exists."""


class DocumentConflict(SourcererError):
    """The write would overwrite another document the caller can see (a move onto an occupied identity)."""
