"""What the CLI's commands share: index options, comma lists and progress bars."""

from __future__ import annotations

import argparse
from typing import Any


def groups(value: str | None) -> list[str]:
    return [g.strip() for g in (value or "").split(",") if g.strip()]


def open_index_of(args: argparse.Namespace) -> Any:
    from sourcerer.store import open_index

    return open_index(args.index)


def bar(done: int, total: int, width: int = 24) -> str:
    filled = int(width * done / max(total, 1))
    return "█" * filled + "·" * (width - filled)


def index_options(parser: argparse.ArgumentParser, search: bool = True) -> None:
    parser.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    parser.add_argument("--tenant", default="local", help="tenant (default: local)")
    parser.add_argument("--scope", help="scope path, e.g. acme/alpha (searches see it and everything below it)")
    if search:
        parser.add_argument("--groups", help="comma-separated ACL groups the caller holds")
        parser.add_argument(
            "--mode", choices=["hybrid", "keyword", "semantic"], default="hybrid", help="search mode (default hybrid)"
        )
