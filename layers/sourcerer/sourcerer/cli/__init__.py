"""The `sourcerer` command line (`sourcerer --help`)."""

from sourcerer.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
