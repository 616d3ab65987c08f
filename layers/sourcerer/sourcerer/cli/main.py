"""The `sourcerer` command line: the parser, and one module per audience (`ask` for questions and search,
`index` for what is in the index, `admin` for tenants, keys, audits and the local server)."""

from __future__ import annotations

import argparse
import os
import sys

from sourcerer import __version__
from sourcerer.cli import admin, ask, index
from sourcerer.cli.common import settle_tenant
from sourcerer.errors import SourcererError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sourcerer",
        description="Ask your documents: a cited answer, or a refusal with its reason.",
        epilog="Environment: SOURCERER_API_KEY / OPENROUTER_API_KEY, SOURCERER_MODEL, SOURCERER_ENDPOINT, "
        "SOURCERER_BEDROCK_MODEL, SOURCERER_PROVIDERS, SOURCERER_EMBEDDER, SOURCERER_GROUNDING_URL, "
        "SOURCERER_INDEX, SOURCERER_TABLE, SOURCERER_HOME. See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"sourcerer {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True)

    ask.register(sub)
    index.register(sub)
    admin.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(ask.verify_value(sys.argv[1:] if argv is None else argv))
    try:
        if getattr(args, "settle_tenant", False):
            settle_tenant(args)
        return args.func(args)
    except BrokenPipeError:  # `sourcerer audit --json | head`: the reader left; nothing to say
        try:  # the Python docs' recipe: point stdout at devnull, so the flush at exit does not complain
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (AttributeError, OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:
        print("sourcerer: interrupted", file=sys.stderr)
        return 130
    except (SourcererError, ValueError, FileNotFoundError) as exc:
        if args.debug:
            raise
        print(f"sourcerer: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - never a traceback for a user; --debug shows it
        if args.debug:
            raise
        print(f"sourcerer: error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
