"""The README, run as written: every bash and Python block, in order, in a fresh home, against a `sourcerer
serve` started for it. A block that cannot run here (it installs packages, needs Docker, OpenSearch or an AWS
account) carries `<!-- readme-test: skip (why) -->` on the line before it; nothing else is skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fakes import server_log, start_serve

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(?:<!-- readme-test: skip \((?P<why>[^)]+)\) -->\n)?```(?P<lang>bash|python)\n(?P<code>.*?)```", re.S)


def blocks() -> list[tuple[str, str, str | None]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m["lang"], m["code"], m["why"]) for m in BLOCK.finditer(text)]


def test_every_skipped_block_says_why_and_most_blocks_run():
    found = blocks()
    skipped = [why for _, _, why in found if why]
    assert all(len(why) > 10 for why in skipped)
    assert len(found) - len(skipped) >= 6, "the README's runnable examples are the point of this test"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("readme-home")
    env = {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    process, url = start_serve(env)
    try:
        httpx.get(f"{url}/health", timeout=30).raise_for_status()
        yield {**env, "API": url}, process
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_readme_runs_as_written(served):
    env, process = served
    # every block in one shell, in order, so a variable one sets (KEY=...) is there in the next; Python blocks
    # run through the same environment's interpreter
    script = "set -euo pipefail\ntrap 'echo \"README command failed: $BASH_COMMAND\" >&2' ERR\n"
    for lang, code, why in blocks():
        if not why:
            script += code + "\n" if lang == "bash" else f"python3 - <<'PY'\n{code}PY\n"
    result = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{result.stderr[-3000:]}\n--- server ---\n{server_log(process)}"
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    out = result.stdout
    assert "42 seconds" in out  # the failover answer, from the CLI and over HTTP
    assert '"answer_id"' in out and '"audit"' in out  # an answer, then its log entry over HTTP
    assert "3 to 5 business days" in out  # the passages examples
