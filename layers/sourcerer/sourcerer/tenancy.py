"""Tenants, tiers, API keys, scopes and permissions: who may do what, and how much of it.

Keys are random (`sk_` + 32 bytes, URL-safe), shown once, stored only as a SHA-256 hash. A key belongs to one
tenant and carries granted scopes, permissions (`read`, `write`, `admin`) and optional ACL groups.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sourcerer.errors import SourcererError
from sourcerer.store.models import Access, normalize_scope, validate_tenant, within

Permission = Literal["read", "write", "admin"]
PERMISSIONS: tuple[str, ...] = ("read", "write", "admin")
TierName = Literal["free", "pro", "enterprise"]
UNITS = ("queries", "chunks")  # metered monthly


class Tier(BaseModel):
    name: TierName
    monthly_queries: int | None = Field(description="searches + answers per month; None is unlimited")
    monthly_chunks: int | None = Field(description="chunks ingested per month; None is unlimited")
    answer_access: bool
    max_top_k: int
    answer_retention_days: int = Field(ge=1, description="how long the answer log and its audit findings are kept")

    def limit(self, unit: str) -> int | None:
        return {"queries": self.monthly_queries, "chunks": self.monthly_chunks}[unit]


DEFAULT_TIERS: dict[str, Tier] = {
    "free": Tier(
        name="free", monthly_queries=1_000, monthly_chunks=10_000, answer_access=False, max_top_k=10, answer_retention_days=30
    ),
    "pro": Tier(
        name="pro", monthly_queries=50_000, monthly_chunks=500_000, answer_access=True, max_top_k=50, answer_retention_days=90
    ),
    "enterprise": Tier(
        name="enterprise", monthly_queries=None, monthly_chunks=None, answer_access=True, max_top_k=100, answer_retention_days=400
    ),
}


def load_tiers(raw: str | None = None) -> dict[str, Tier]:
    """The defaults, with fields overridden per tier by `SOURCERER_TIERS`, e.g. `{"pro": {"monthly_queries": 100000}}`."""
    tiers = dict(DEFAULT_TIERS)
    raw = raw if raw is not None else os.environ.get("SOURCERER_TIERS")
    if raw:
        for name, fields in json.loads(raw).items():
            if name not in tiers:
                raise ValueError(f"unknown tier {name!r} in SOURCERER_TIERS")
            tiers[name] = tiers[name].model_copy(update=fields)
    return tiers


TIERS: dict[str, Tier] = load_tiers()


class TenantSettings(BaseModel):
    """Per-tenant choices an operator sets with `sourcerer tenants set`."""

    model_config = ConfigDict(extra="forbid")

    store_text: bool = Field(
        default=True,
        description="keep question and answer text in the answer log; false keeps only their SHA-256 hashes "
        "(audits then check receipts but cannot re-verify claims)",
    )


class TenancyError(SourcererError):
    """Base of the access errors; `status` and `code` are what the HTTP layer answers."""

    status = 400
    code = "bad_request"


class Unauthorized(TenancyError):
    status, code = 401, "unauthorized"


class Forbidden(TenancyError):
    status, code = 403, "forbidden"


class UpgradeRequired(TenancyError):
    status, code = 402, "upgrade_required"

    def __init__(self, message: str, required_tier: str = "pro") -> None:
        super().__init__(message)
        self.required_tier = required_tier


class QuotaExceeded(TenancyError):
    status, code = 429, "quota_exceeded"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class NotFound(TenancyError):
    status, code = 404, "not_found"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyRecord(BaseModel):
    """What is stored for a key: never the key itself."""

    key_id: str
    key_hash: str
    tenant: str
    scopes: list[str]
    perms: list[Permission]
    groups: list[str] = Field(default_factory=list)
    created_at: float = Field(default_factory=time.time)
    revoked: bool = False

    def public(self) -> dict:
        return self.model_dump(exclude={"key_hash"})


def new_key(tenant: str, scopes: list[str], perms: list[str], groups: list[str] | None = None) -> tuple[str, KeyRecord]:
    """A fresh key and its record. The key is returned once and never stored."""
    validate_tenant(tenant)
    unknown = [p for p in perms if p not in PERMISSIONS]
    if unknown or not perms:
        raise TenancyError(f"permissions must be some of {', '.join(PERMISSIONS)}")
    grants = [normalize_scope(s, tenant) for s in (scopes or [tenant])]
    for scope in grants:
        if scope != tenant and not scope.startswith(tenant + "/"):
            raise TenancyError(f"scope {scope!r} is outside tenant {tenant!r}: scopes start with the tenant")
    key = "sk_" + secrets.token_urlsafe(32)
    digest = hash_key(key)
    record = KeyRecord(
        key_id="key_" + digest[:16],
        key_hash=digest,
        tenant=tenant,
        scopes=sorted(set(grants)),
        perms=sorted(set(perms)),
        groups=sorted(set(groups or [])),
    )  # type: ignore[arg-type]
    return key, record


@dataclass
class Context:
    """The effective caller: echoed to clients as `context`."""

    tenant: str
    tier: Tier
    key_id: str
    scopes: list[str]
    perms: list[str]
    groups: list[str] = field(default_factory=list)
    settings: TenantSettings = field(default_factory=lambda: TenantSettings())

    def require(self, perm: str) -> None:
        if perm not in self.perms and "admin" not in self.perms:
            raise Forbidden(f"this key lacks the {perm!r} permission")

    def narrow(self, requested: str | None) -> list[str]:
        """The scopes a request may see: the requested one if the key grants it, else all granted scopes."""
        if requested is None or not str(requested).strip("/ "):
            return list(self.scopes)
        try:
            scope = normalize_scope(requested, self.tenant)
        except ValueError as exc:
            raise TenancyError(str(exc)) from exc
        if not any(within(scope, grant) for grant in self.scopes):
            raise Forbidden(f"scope {scope!r} is outside this key's grants")
        return [scope]

    def access(self, scopes: list[str]) -> Access:
        """What this key may write within the scopes a request narrowed to (admins hold every ACL group)."""
        return Access(scopes=tuple(scopes), groups=None if "admin" in self.perms else frozenset(self.groups))

    def may_read(self, scopes: list[str], granted: list[str]) -> bool:
        """Whether every scope in `scopes` lies within one of `granted` (the scopes this request narrowed to)."""
        return bool(scopes) and all(any(within(s, g) for g in granted) for s in scopes)

    def echo(self, scopes: list[str]) -> dict:
        return {"tenant": self.tenant, "tier": self.tier.name, "scopes": scopes, "perms": self.perms}


def month_of(timestamp: float | None = None) -> str:
    return time.strftime("%Y-%m", time.gmtime(timestamp if timestamp is not None else time.time()))


def seconds_to_next_month(timestamp: float | None = None) -> int:
    now = time.gmtime(timestamp if timestamp is not None else time.time())
    year, month = (now.tm_year + 1, 1) if now.tm_mon == 12 else (now.tm_year, now.tm_mon + 1)
    start = time.mktime((year, month, 1, 0, 0, 0, 0, 0, 0)) - time.timezone
    return max(1, int(start - (timestamp if timestamp is not None else time.time())))
