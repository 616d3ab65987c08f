"""A full disk under `sourcerer serve`: writes answer 507 with a clear error (never a 500), nothing is charged
for them, and reads keep working. The server's home is a small tmpfs (needs root to mount; skipped otherwise)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from fakes import serve_env, server_log, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key
from sourcerer.service.tenancy import month_of


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(disk: Path) -> None:
    """Leave the disk with no free block: a file grows until the filesystem refuses. Unbuffered: a buffered file
    kept the bytes the disk refused and raised again when closed (when the server wrote at the same moment)."""
    with open(disk / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
    try:  # the last partial block too (opening the file may already fail)
        with open(disk / "filler2", "wb", buffering=0) as handle:
            while True:
                handle.write(b"\0" * 512)
    except OSError:
        pass


def test_a_full_disk_is_a_507_that_charges_nothing(small_disk):
    home = small_disk / "home"
    env = serve_env(home)
    process, url = start_serve(env)
    try:
        ledger = SQLiteLedger(home / "ledger.db")
        key = issue_key(ledger, "acme", ["acme"], ["read", "write"], tier="pro").key
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, timeout=30) as client:
            first = client.post("/v1/documents", json={"source_uri": "a.md", "text": "The failover took 42 seconds."}, headers=headers)
            assert first.status_code == 200, first.text
            before = ledger.usage("acme", month_of())
            fill(small_disk)
            for n in range(5):  # every write, and every metered read, now meets the full disk
                text = f"Document {n}. " + "The standby region took over in 42 seconds. " * 200
                wrote = client.post("/v1/documents", json={"source_uri": f"d{n}.md", "text": text}, headers=headers)
                assert wrote.status_code == 507, (wrote.status_code, wrote.text, server_log(process))
                assert wrote.json()["error"]["code"] == "insufficient_storage" and "nothing was written or charged" in wrote.text
                searched = client.post("/v1/search", json={"q": "failover"}, headers=headers)
                assert searched.status_code in (200, 507), searched.text
                assert "Traceback" not in searched.text
            assert ledger.usage("acme", month_of()) == before  # charged nothing that was not delivered
            listed = client.get("/v1/documents", headers=headers)
            assert listed.status_code == 200 and [d["source_uri"] for d in listed.json()["documents"]] == ["a.md"]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
