"""The composition root: the one place that builds the service from the settings. Lambda functions (API, S3
ingest, audit) and `sourcerer serve` all get their service here, so none of them imports another's code."""

from __future__ import annotations

from functools import lru_cache

from sourcerer.ledger import open_ledger
from sourcerer.service.core import Service
from sourcerer.settings import get_settings
from sourcerer.store import open_index


@lru_cache(maxsize=1)
def get_service() -> Service:
    """One service per process (Lambda container or server worker), built at first use from the settings. A
    misconfiguration raises `ConfigurationError` here and is not cached: the next request tries again."""
    return Service(index=open_index(), ledger=open_ledger(), settings=get_settings())
