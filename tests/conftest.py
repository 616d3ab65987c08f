"""Shared fixtures: an isolated SOURCERER_HOME, a clean environment, and loopback fake servers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import embedded as embedded_opensearch
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


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    """A real OpenSearch for the whole run, as a base URL without an index name: OPENSEARCH_URL when set (any
    cluster, e.g. an AWS domain), else an embedded node built from tools/opensearch (started once, stopped at the
    end). Without Java the tests that need it skip and say how to run them; with Java, a node that cannot be
    built or started fails them."""
    given = os.environ.get("OPENSEARCH_URL")
    if given:
        yield given
        return
    if embedded_opensearch.java() is None or not (embedded_opensearch.built() or embedded_opensearch.maven()):
        pytest.skip(
            "no Java 17 and Maven: install them (apt-get install openjdk-17-jdk-headless maven) to run the OpenSearch "
            "tests on an embedded node (`make opensearch` starts one), or set OPENSEARCH_URL=opensearch://host:9200"
        )
    node = embedded_opensearch.start()
    yield f"opensearch://{node.url.removeprefix('http://')}?engine={embedded_opensearch.ENGINE}"
    node.stop()


@pytest.fixture
def opensearch_index(opensearch_url) -> Iterator[Callable[..., Any]]:
    """Make fresh OpenSearch indexes on the run's node (`opensearch_index(embedder=...)`); deleted afterwards."""
    from sourcerer.store import open_index

    made = []

    def make(embedder: Any = "none", *, init: bool = True, **init_options: Any) -> Any:
        root, _, query = opensearch_url.partition("?")
        name = f"sourcerer-test-{uuid.uuid4().hex[:10]}"
        index = open_index(f"{root.rstrip('/')}/{name}" + (f"?{query}" if query else ""), embedder=embedder)
        if init:
            index.init(**init_options)
            # writes wait for a refresh (`refresh=wait_for`): refreshing every 100 ms instead of every second
            # keeps the suite fast without changing what a write waits for
            index.client.indices.put_settings(index=name, body={"index": {"refresh_interval": "100ms"}})
        made.append(index)
        return index

    yield make
    for index in made:
        index.client.indices.delete(index=index.index, ignore_unavailable=True)
