"""The operator's use cases: tenants, their tiers and settings, and API keys. The CLI (`sourcerer tenants`,
`sourcerer keys`, `sourcerer serve`'s local admin key), the demo and the tests all call these, so the rules
(a known tier, settings that validate, scopes inside the tenant) are written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sourcerer.errors import InvalidRequest, NotFound
from sourcerer.ledger.base import KeyRecord, Ledger, TenantRecord
from sourcerer.scopes import validate_tenant
from sourcerer.service.tenancy import TenantSettings, new_key, tier_named


@dataclass(frozen=True)
class IssuedKey:
    """A new key: `key` is shown once and never stored."""

    key: str
    record: KeyRecord
    tier: str

    def shown(self) -> dict[str, Any]:
        r = self.record
        return {
            "key": self.key,
            "key_id": r.key_id,
            "tenant": r.tenant,
            "tier": self.tier,
            "scopes": r.scopes,
            "perms": r.perms,
            "groups": r.groups,
        }


def tenant_view(tenant: TenantRecord) -> dict[str, Any]:
    """A tenant as the ledger stores it, with its settings complete (defaults filled in)."""
    return {**tenant, "settings": TenantSettings.model_validate(tenant.get("settings") or {}).model_dump()}


def create_tenant(ledger: Ledger, tenant: str, tier: str = "free") -> dict[str, Any]:
    """Create a tenant, or move an existing one to `tier` (its settings are kept)."""
    tier_named(tier)
    return tenant_view(ledger.create_tenant(validate_tenant(tenant), tier))


def update_tenant(ledger: Ledger, tenant: str, tier: str | None = None, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Change an existing tenant's tier and/or settings (`NotFound` when it does not exist)."""
    current = ledger.get_tenant(tenant)
    if current is None:
        raise NotFound(f"no tenant {tenant}: run `sourcerer tenants create` first")
    if settings:
        try:
            merged = TenantSettings.model_validate({**(current.get("settings") or {}), **settings})
        except ValidationError as exc:
            raise InvalidRequest(f"invalid tenant settings: {exc.errors()[0]['msg']}") from exc
        ledger.update_tenant_settings(tenant, merged.model_dump(exclude_unset=True))
    if tier:
        tier_named(tier)
        ledger.create_tenant(tenant, tier)
    return tenant_view(ledger.get_tenant(tenant) or current)


def issue_key(
    ledger: Ledger,
    tenant: str,
    scopes: list[str] | None = None,
    perms: list[str] | None = None,
    groups: list[str] | None = None,
    tier: str | None = None,
) -> IssuedKey:
    """A new key for `tenant` (created on `tier`, or moved to it, when a tier is given)."""
    if tier:
        create_tenant(ledger, tenant, tier)
    current = ledger.get_tenant(tenant)
    if current is None:
        raise NotFound(f"no tenant {tenant}: pass a tier or run `sourcerer tenants create` first")
    key, record = new_key(tenant, scopes or [], perms or ["read"], groups)
    ledger.put_key(record)
    return IssuedKey(key=key, record=record, tier=current["tier"])


def list_keys(ledger: Ledger, tenant: str) -> list[dict[str, Any]]:
    current = ledger.get_tenant(tenant)
    tier = current["tier"] if current is not None else None
    return [{**k.public(), "tier": tier} for k in ledger.list_keys(tenant)]


def local_admin_key(ledger: Ledger, tenant: str) -> IssuedKey | None:
    """The first admin key of `sourcerer serve`'s tenant (created on enterprise if it is new), or None when one
    exists already: a restart does not mint keys (`sourcerer keys create --perms admin` makes another)."""
    if ledger.get_tenant(tenant) is None:
        create_tenant(ledger, tenant, "enterprise")
    if any("admin" in k.perms and not k.revoked for k in ledger.list_keys(tenant)):
        return None
    return issue_key(ledger, tenant, [tenant], ["read", "write", "admin"])
