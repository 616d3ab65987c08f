"""Environment settings, read when needed (never at import time) so tests can set them per case."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_ENDPOINT = "https://openrouter.ai/api/v1/chat/completions"
DEFAULT_MODEL = "google/gemini-3-flash-preview"


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def home() -> Path:
    """Where local state (embedding cache, index, ledger) lives: `SOURCERER_HOME`, default `./.sourcerer/`."""
    return Path(env("SOURCERER_HOME", ".sourcerer") or ".sourcerer")


def api_key() -> str | None:
    return env("SOURCERER_API_KEY") or env("OPENROUTER_API_KEY")
