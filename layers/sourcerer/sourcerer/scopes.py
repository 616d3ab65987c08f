"""Tenant and scope vocabulary: how tenants and scope paths are spelled, which scope lies within which, the
permissions a key can hold, and the write rule (`Access`) every index enforces.

The lowest layer of the service side: the index, the ledger, the service and the HTTP API all speak it, and it
imports nothing of theirs. Bad spellings raise `InvalidRequest` (also a `ValueError`, so pydantic validators
that call these report validation errors).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sourcerer.errors import InvalidRequest

Permission = Literal["read", "write", "admin"]
PERMISSIONS: tuple[str, ...] = ("read", "write", "admin")

_SCOPE_SEGMENT = re.compile(r"^[\w.\-@]+$", re.UNICODE)
# exactly what `normalize_scope` accepts, for API schemas: segments joined by "/" (never `.` or `..` alone),
# outer slashes and spaces allowed (tests/unit/test_tenancy.py checks the two agree on generated spellings)
_SEGMENT = r"(?:[\w\-@][\w.\-@]*|\.[\w\-@][\w.\-@]*|\.\.[\w.\-@]+)"  # no look-ahead: pydantic's regex has none
SCOPE_PATTERN = rf"^[ /]*(?:{_SEGMENT}(?:/{_SEGMENT})*)?[ /]*$"


def normalize_scope(scope: str | None, tenant: str) -> str:
    """A scope path such as `acme/alpha/backend`: segments of letters, digits, `.`, `-`, `_`, `@`.

    No scope means the tenant's root (`tenant`). Leading/trailing slashes are dropped; empty, `.` and `..`
    segments are refused, so a scope can never be widened by its spelling.
    """
    if scope is None or not str(scope).strip("/ "):
        return tenant
    parts = str(scope).strip("/ ").split("/")
    for part in parts:
        if part in ("", ".", "..") or not _SCOPE_SEGMENT.match(part):
            raise InvalidRequest(f"invalid scope {scope!r}: use segments of letters, digits, '.', '-', '_' or '@' joined by '/'")
    return "/".join(parts)


def scope_ancestors(scope: str) -> list[str]:
    """`acme/alpha/backend` -> [`acme`, `acme/alpha`, `acme/alpha/backend`]."""
    parts = scope.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def within(scope: str, grant: str) -> bool:
    """Whether `scope` is `grant` or below it (`acme/alpha/x` is within `acme/alpha`; `acme/alphabet` is not)."""
    return scope == grant or scope.startswith(grant + "/")


class EveryGroup:
    """The ACL groups an administrator reads with: every group (`EVERY_GROUP`). A search given no groups (None or
    empty) sees only chunks without an ACL."""

    def __repr__(self) -> str:
        return "EVERY_GROUP"


EVERY_GROUP = EveryGroup()
Groups = Iterable[str] | EveryGroup | None  # what a search reads with


def group_list(groups: Groups) -> list[str] | None:
    """A search's groups as a sorted list, or None for every group."""
    return None if isinstance(groups, EveryGroup) else sorted(set(groups or []))


@dataclass(frozen=True)
class Access:
    """Who is writing, for the write rule every path enforces: a caller may create, replace, move or delete a
    document only if it could read it (a granted scope covers the document's current scope, and it holds one
    of the document's ACL groups when it has any), and the target scope lies within its grants.

    `groups=None` holds every group (an administrator, the CLI's operator, the bucket owner on S3 ingest).
    """

    scopes: tuple[str, ...]
    groups: frozenset[str] | None = None

    @classmethod
    def everything(cls, tenant: str) -> Access:
        return cls(scopes=(tenant,), groups=None)

    def may_write_to(self, scope: str) -> bool:
        return any(within(scope, grant) for grant in self.scopes)

    def may_touch(self, scope: str, acl: list[str] | tuple[str, ...]) -> bool:
        """Whether an existing document at `scope` with these ACL groups may be replaced, moved or deleted."""
        return self.may_write_to(scope) and (not acl or self.groups is None or bool(self.groups & set(acl)))


def validate_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not tenant or not _SCOPE_SEGMENT.match(tenant):
        raise InvalidRequest(f"invalid tenant {tenant!r}: letters, digits, '.', '-', '_' or '@'")
    return tenant
