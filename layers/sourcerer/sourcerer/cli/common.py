"""What the CLI's commands share: index options, comma lists and progress bars."""

from __future__ import annotations

import argparse
from typing import Any


def tenant_name(value: str) -> str:
    """argparse type for --tenant: a bad name fails at once, in one line, exit 2 (not per file later)."""
    from sourcerer.scopes import validate_tenant

    try:
        return validate_tenant(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def scope_path(value: str) -> str:
    """argparse type for --scope: its spelling is checked at once (its tenant prefix when the command runs)."""
    from sourcerer.scopes import normalize_scope

    try:
        normalize_scope(value, "tenant")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def settle_tenant(args: argparse.Namespace) -> None:
    """The tenant of an index command, said out loud: --tenant, else the first segment of --scope (`--scope
    acme/alpha` is tenant acme), else `local`. A scope outside its tenant is refused: no key could reach it."""
    from sourcerer.errors import InvalidRequest
    from sourcerer.scopes import normalize_scope, within

    if args.tenant is None:
        args.tenant = normalize_scope(args.scope, "local").split("/")[0] if args.scope else "local"
        args.tenant_given = "from --scope" if args.scope else "the default"
    else:
        args.tenant_given = "--tenant"
    if args.scope and not within(normalize_scope(args.scope, args.tenant), args.tenant):
        raise InvalidRequest(
            f"scope {args.scope} is outside tenant {args.tenant}: a tenant's scopes are {args.tenant} and below it "
            f"({args.tenant}/...), and no key of {args.tenant} could ever reach it"
        )


def require_known_tenant(index: Any, tenant: str) -> None:
    """A question to a tenant that holds nothing is a mistake (a typo, most often), not a refusal: exit 2."""
    from sourcerer.errors import InvalidRequest

    if not index.list_documents(tenant):
        raise InvalidRequest(f"tenant {tenant} holds no documents in this index (see `sourcerer documents list --tenant ...`)")


def groups(value: str | None) -> list[str]:
    return [g.strip() for g in (value or "").split(",") if g.strip()]


def open_index_of(args: argparse.Namespace) -> Any:
    from sourcerer.store import open_index

    return open_index(args.index)


FILTER_KEYS = ("source_uri", "document_id", "created_after", "created_before")


def search_filter(args: argparse.Namespace, question: str) -> Any:
    """The query object's filter from --plane, --modality and --filter, validated exactly as the HTTP API validates
    it (the same `Query` model): `--filter source_uri=handbook/`, `document_id=ID[,ID]`, `created_after=ISO time`,
    `created_before=...`; any other `key=value` is metadata equality (a JSON value such as true or 3, else text)."""
    import json

    from pydantic import ValidationError

    from sourcerer.errors import InvalidRequest
    from sourcerer.service.schemas import Query

    filters: dict[str, Any] = {}
    for item in args.filter or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidRequest(f"--filter takes key=value, not {item!r}")
        key = key.strip()
        if key == "document_id":
            filters[key] = [v.strip() for v in value.split(",") if v.strip()]
        elif key in FILTER_KEYS:
            filters[key] = value
        else:
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
            filters.setdefault("metadata", {})[key] = parsed if isinstance(parsed, (str, int, float, bool)) else value
    body: dict[str, Any] = {"q": question or "?", "filters": filters or None}
    if args.plane:
        body["planes"] = args.plane
    if args.modality:
        body["modalities"] = args.modality
    try:
        return Query.model_validate(body).search_filter()
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise InvalidRequest(f"{where}: {problem['msg']}") from exc


def bar(done: int, total: int, width: int = 24) -> str:
    filled = int(width * done / max(total, 1))
    return "█" * filled + "·" * (width - filled)


def index_options(parser: argparse.ArgumentParser, search: bool = True) -> None:
    parser.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    parser.add_argument(
        "--tenant", type=tenant_name, help="tenant (default: the first segment of --scope, else local)"
    )
    parser.set_defaults(settle_tenant=True)
    parser.add_argument("--scope", type=scope_path, help="scope path, e.g. acme/alpha (searches see it and everything below it)")
    if search:
        parser.add_argument("--groups", help="comma-separated ACL groups the caller holds")
        parser.add_argument(
            "--mode", choices=["hybrid", "keyword", "semantic"], default="hybrid", help="search mode (default hybrid)"
        )
        parser.add_argument(
            "--plane",
            action="append",
            choices=["text", "audio", "doc_visual"],
            help="search only this plane: text, audio (transcripts), doc_visual (PDF pages); repeat for several",
        )
        parser.add_argument(
            "--modality", action="append", metavar="TYPE", help="only documents of this content type, e.g. text/vtt"
        )
        parser.add_argument(
            "--filter",
            action="append",
            metavar="KEY=VALUE",
            help="source_uri=PREFIX, document_id=ID[,ID], created_after=ISO, created_before=ISO, or metadata KEY=VALUE",
        )
        parser.add_argument(
            "--rerank",
            action="store_true",
            help="search deeper and reorder the candidates with the reranker SOURCERER_RERANKER names (default: local)",
        )
