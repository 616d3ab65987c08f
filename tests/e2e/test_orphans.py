"""A `kill -9` of `sourcerer ingest` takes its parse workers with it: none is left blocked on a pipe, holding the
index open (they ask the kernel to kill them when their parent dies)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").exists() or (os.cpu_count() or 1) < 2, reason="needs Linux /proc and 2 cores (a parse pool)")
def test_parse_workers_die_with_a_killed_ingest(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(400):  # enough files for a process pool, and to be mid-ingest when it is killed
        (folder / f"note-{n:03d}.md").write_text(f"# Note {n}\n\n" + "The failover cutover took 42 seconds. " * 200)
    env = {**os.environ, "SOURCERER_HOME": str(tmp_path / "home"), "SOURCERER_EMBEDDER": "none"}
    ingest = subprocess.Popen(
        [sys.executable, "-m", "sourcerer.cli", "ingest", str(folder), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and not workers:
        workers = children(ingest.pid)
        time.sleep(0.05)
    assert workers, "the ingest never started its parse pool"
    ingest.send_signal(signal.SIGKILL)
    ingest.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.1)
    left = [w for w in workers if alive(w)]
    for pid in left:  # do not leave them behind on a failing run either
        os.kill(pid, signal.SIGKILL)
    assert left == [], "parse workers outlived their killed parent"
