"""Schemathesis over the committed spec against `sourcerer serve`: every phase (examples, coverage, fuzzing,
stateful), a bounded and seeded run, zero failures. Responses are checked against the schema, status codes
against the documented ones, and schema-valid requests must be accepted (see st_hooks.py for the one
documented exception)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.tenancy import new_key

ROOT = Path(__file__).resolve().parents[2]
SEED = 20261201
MAX_EXAMPLES = 25


@pytest.fixture
def served(tmp_path):
    home = tmp_path / "home"
    env = {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "SOURCERER_EMBEDDER": "none",  # the fuzzer exercises the HTTP surface, not the model
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "test",
    }
    process, url = start_serve(env)
    ledger = SQLiteLedger(home / "ledger.db")
    ledger.create_tenant("acme", "pro")
    secret, record = new_key("acme", ["acme"], ["read", "write", "admin"])
    ledger.put_key(record)
    yield url, secret, env
    process.terminate()
    process.wait(timeout=10)


def test_schemathesis_finds_no_failure_in_any_phase(served, tmp_path):
    url, secret, env = served
    st = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")
    assert st, "schemathesis is in the dev extra: pip install -e '.[dev]'"
    run = subprocess.run(
        [
            st,
            "run",
            str(ROOT / "docs" / "openapi.json"),
            "--url",
            url,
            "-H",
            f"Authorization: Bearer {secret}",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--exclude-checks",
            "positive_data_acceptance",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            str(SEED),
            "--generation-deterministic",
            "--workers",
            "1",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**env, "SCHEMATHESIS_HOOKS": "st_hooks", "PYTHONPATH": str(Path(__file__).parent)},
    )
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary
    assert re.search(r"\d+ generated", summary), summary
    print(summary[-1500:])
