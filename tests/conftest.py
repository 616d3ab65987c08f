"""Shared fixtures: an isolated SOURCERER_HOME, a clean environment, and loopback fake servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes import RETURNS, SHIPPING, ScriptedServer

SOURCERER_ENV = (
    "SOURCERER_API_KEY",
    "OPENROUTER_API_KEY",
    "SOURCERER_MODEL",
    "SOURCERER_ENDPOINT",
    "SOURCERER_BEDROCK_MODEL",
    "SOURCERER_PROVIDERS",
    "SOURCERER_EMBEDDER",
    "SOURCERER_EMBED_ENDPOINT",
    "SOURCERER_EMBED_MODEL",
    "SOURCERER_GROUNDING_URL",
    "SOURCERER_EXTRACTIVE_FALLBACK",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test sees the developer's keys; local state goes to one temporary home per session."""
    for name in SOURCERER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path_factory.getbasetemp() / "home"))
    monkeypatch.setenv("SOURCERER_BACKOFF_S", "0.01")


@pytest.fixture
def seed_passages() -> list[dict]:
    return [{"text": SHIPPING, "source": "Shipping Policy"}, {"text": RETURNS, "source": "Returns Policy"}]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()
