"""Tenants, tiers, API keys and callers: who may do what, and how much of it.

Keys are random (`sk_` + 32 bytes, URL-safe), shown once, stored only as a SHA-256 hash (`KeyRecord` in the
ledger). A key belongs to one tenant and carries granted scopes, permissions (`read`, `write`, `admin`) and
optional ACL groups. Tiers are defaults overridden by the `SOURCERER_TIERS` setting; the ledger stores a
tenant's tier name and settings, and this module says what they mean.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sourcerer.errors import ConfigurationError, Forbidden, InvalidRequest
from sourcerer.ledger.base import KeyRecord, TenantRecord
from sourcerer.scopes import EVERY_GROUP, PERMISSIONS, Access, Groups, Permission, normalize_scope, validate_tenant, within
from sourcerer.settings import get_settings

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


def load_tiers(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, Tier]:
    """The defaults, with fields overridden per tier, e.g. `{"pro": {"monthly_queries": 100000}}` (the
    `SOURCERER_TIERS` setting). A bad override is the operator's: `ConfigurationError`."""
    table = dict(DEFAULT_TIERS)
    for name, fields in (overrides or {}).items():
        if name not in table:
            raise ConfigurationError(f"SOURCERER_TIERS names an unknown tier {name!r}")
        try:
            table[name] = Tier.model_validate({**table[name].model_dump(), **fields, "name": name})
        except ValidationError as exc:
            raise ConfigurationError(f"SOURCERER_TIERS is not valid for {name!r}: {exc.errors()[0]['msg']}") from exc
    return table


def tiers() -> dict[str, Tier]:
    """The tiers of this process's settings."""
    return _tiers(json.dumps(get_settings().tiers, sort_keys=True))


@lru_cache(maxsize=4)
def _tiers(overrides: str) -> dict[str, Tier]:
    return load_tiers(json.loads(overrides))


def tier_named(name: str) -> Tier:
    known = tiers()
    if name not in known:
        raise InvalidRequest(f"tier must be one of {', '.join(known)}")
    return known[name]


class TenantSettings(BaseModel):
    """Per-tenant choices an operator sets with `sourcerer tenants set`."""

    model_config = ConfigDict(extra="forbid")

    store_text: bool = Field(
        default=True,
        description="keep question and answer text in the answer log; false keeps only their SHA-256 hashes "
        "(audits then check receipts but cannot re-verify claims)",
    )


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key(tenant: str, scopes: list[str], perms: list[str], groups: list[str] | None = None) -> tuple[str, KeyRecord]:
    """A fresh key and its record. The key is returned once and never stored."""
    validate_tenant(tenant)
    unknown = [p for p in perms if p not in PERMISSIONS]  # checked here, so the record below holds Permissions
    if unknown or not perms:
        raise InvalidRequest(f"permissions must be some of {', '.join(PERMISSIONS)}")
    grants = [normalize_scope(s, tenant) for s in (scopes or [tenant])]
    for scope in grants:
        if scope != tenant and not scope.startswith(tenant + "/"):
            raise InvalidRequest(f"scope {scope!r} is outside tenant {tenant!r}: scopes start with the tenant")
    key = "sk_" + secrets.token_urlsafe(32)
    digest = hash_key(key)
    record = KeyRecord(
        key_id="key_" + digest[:16],
        key_hash=digest,
        tenant=tenant,
        scopes=sorted(set(grants)),
        perms=sorted(set(cast(list[Permission], perms))),
        groups=sorted(set(groups or [])),
    )
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

    @classmethod
    def of(cls, record: KeyRecord, tenant: TenantRecord) -> Context:
        """The caller a key record names, with its tenant's tier and settings as the ledger stores them."""
        return cls(
            tenant=record.tenant,
            tier=tier_named(tenant["tier"]),
            key_id=record.key_id,
            scopes=record.scopes,
            perms=list(record.perms),
            groups=record.groups,
            settings=TenantSettings.model_validate(tenant["settings"] or {}),
        )

    def require(self, perm: str) -> None:
        if perm not in self.perms and "admin" not in self.perms:
            raise Forbidden(f"this key lacks the {perm!r} permission")

    def narrow(self, requested: str | None) -> list[str]:
        """The scopes a request may see: the requested one if the key grants it, else all granted scopes."""
        if requested is None or not str(requested).strip("/ "):
            return list(self.scopes)
        scope = normalize_scope(requested, self.tenant)
        if not any(within(scope, grant) for grant in self.scopes):
            raise Forbidden(f"scope {scope!r} is outside this key's grants")
        return [scope]

    # --- the visibility rule, stated once: an administrator reads every ACL group; any other key, its own. Listing,
    # search, answers, originals, deletes, moves and the answer cache all go through the three methods below.

    def reads_with(self) -> Groups:
        """The ACL groups this key searches with."""
        return EVERY_GROUP if "admin" in self.perms else list(self.groups)

    def may_see(self, acl: list[str]) -> bool:
        """Whether a document with these ACL groups is visible to this key (what `reads_with` finds)."""
        return not acl or "admin" in self.perms or bool(set(acl) & set(self.groups))

    def access(self, scopes: list[str]) -> Access:
        """What this key may read and write within the scopes a request narrowed to (the same rule)."""
        return Access(scopes=tuple(scopes), groups=None if "admin" in self.perms else frozenset(self.groups))

    def may_read(self, scopes: list[str], granted: list[str]) -> bool:
        """Whether every scope in `scopes` lies within one of `granted` (the scopes this request narrowed to)."""
        return bool(scopes) and all(any(within(s, g) for g in granted) for s in scopes)

    def echo(self, scopes: list[str]) -> dict[str, Any]:
        return {"tenant": self.tenant, "tier": self.tier.name, "scopes": scopes, "perms": self.perms}


def month_of(timestamp: float | None = None) -> str:
    return time.strftime("%Y-%m", time.gmtime(timestamp if timestamp is not None else time.time()))


def seconds_to_next_month(timestamp: float | None = None) -> int:
    now = time.gmtime(timestamp if timestamp is not None else time.time())
    year, month = (now.tm_year + 1, 1) if now.tm_mon == 12 else (now.tm_year, now.tm_mon + 1)
    start = time.mktime((year, month, 1, 0, 0, 0, 0, 0, 0)) - time.timezone
    return max(1, int(start - (timestamp if timestamp is not None else time.time())))
