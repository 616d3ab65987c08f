"""Shared fixtures: an isolated SOURCERER_HOME, a clean environment, and loopback fake servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes import RETURNS, SHIPPING, ScriptedServer
from sourcerer.settings import Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test sees the developer's keys; local state goes to one temporary home per session."""
    for name in Settings.variables():  # every variable the settings model reads, so the list cannot drift
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


@pytest.fixture
def openai(server, monkeypatch) -> ScriptedServer:
    """The scripted server as the configured OpenAI-compatible chat endpoint (model `test-model`)."""
    monkeypatch.setenv("SOURCERER_API_KEY", "sk-test")
    monkeypatch.setenv("SOURCERER_ENDPOINT", server.url + "/v1/chat/completions")
    monkeypatch.setenv("SOURCERER_MODEL", "test-model")
    return server
