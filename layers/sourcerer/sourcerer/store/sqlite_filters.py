"""The SQL that keeps a search to what its caller may see (tenant, scope subtree, ACL groups) and what it asked
for (a `SearchFilter`): the SQLite index's visibility rule, as `store/opensearch.py`'s `access_filter` is
OpenSearch's. Chunks are `c`, their documents `d`."""

from __future__ import annotations

import json
from typing import Any

from sourcerer.scopes import Groups, group_list, normalize_scope, validate_tenant
from sourcerer.store.models import SearchFilter


def visibility_sql(
    tenant: str, scope: str | None, groups: Groups, only: SearchFilter | None = None
) -> tuple[str, list[Any]]:
    """SQL that keeps only what this caller may see (the tenant, the scope subtree, the ACL groups) and what
    the search asked for (`only`)."""
    validate_tenant(tenant)
    sql = "c.tenant = ?"
    args: list[Any] = [tenant]
    if scope is not None:
        sql += " AND EXISTS (SELECT 1 FROM chunk_scopes s WHERE s.scope = ? AND s.chunk = c.id)"
        args.append(normalize_scope(scope, tenant))
    groups = group_list(groups)
    if groups is None:  # every group: an administrator
        pass
    elif groups:
        marks = ",".join("?" * len(groups))
        sql += f" AND (c.acl = '[]' OR EXISTS (SELECT 1 FROM chunk_groups g WHERE g.grp IN ({marks}) AND g.chunk = c.id))"
        args += groups
    else:
        sql += " AND c.acl = '[]'"
    if only is not None and not only.empty:
        more, extra = _asked_for(tenant, only)
        sql += more
        args += extra
    return sql, args


def _asked_for(tenant: str, only: SearchFilter) -> tuple[str, list[Any]]:
    """The SQL of a `SearchFilter`: locator kinds on the chunk, the rest on its document."""
    sql, args = "", []
    kinds = only.kinds()
    if kinds is not None:
        sql += f" AND json_extract(c.locator, '$.kind') IN ({','.join('?' * len(kinds))})"
        args += kinds
    conditions, values = [], []
    if only.content_types is not None:
        conditions.append(f"d.content_type IN ({','.join('?' * len(only.content_types))})")
        values += list(only.content_types)
    if only.source_uri_prefix is not None:
        conditions.append("substr(d.source_uri, 1, ?) = ?")
        values += [len(only.source_uri_prefix), only.source_uri_prefix]
    if only.document_ids is not None:
        conditions.append(f"d.document_id IN ({','.join('?' * len(only.document_ids))})")
        values += list(only.document_ids)
    for key, value in sorted((only.metadata or {}).items()):
        # json_extract gives SQL values: a JSON true is 1, so booleans compare as integers
        conditions.append("json_extract(d.metadata, ?) = ?")
        values += ["$." + json.dumps(key), int(value) if isinstance(value, bool) else value]
    if only.created_after is not None:
        conditions.append("d.created_at >= ?")
        values.append(only.created_after)
    if only.created_before is not None:
        conditions.append("d.created_at < ?")
        values.append(only.created_before)
    if conditions:
        sql += (
            " AND c.document_id IN (SELECT d.document_id FROM documents d WHERE d.tenant = ? AND "
            + " AND ".join(conditions)
            + ")"
        )
        args += [tenant, *values]
    return sql, args
