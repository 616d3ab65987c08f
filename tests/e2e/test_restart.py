"""`sourcerer serve` starts again at once after a crash: its busy-port check binds as the server does
(SO_REUSEADDR), so the dead server's connections lingering in TIME_WAIT do not hold the port for a minute."""

from __future__ import annotations

import os
import signal

import httpx
from fakes import free_port, serve_env, server_log, start_serve


def test_serve_restarts_on_the_same_port_right_after_kill_9(tmp_path):
    env = serve_env(tmp_path / "home")
    port = free_port()
    for _ in range(3):
        process, url = start_serve(env, port=port)
        assert url == f"http://127.0.0.1:{port}", server_log(process)
        with httpx.Client(base_url=url, timeout=10) as client:  # keep-alive connections the crash cuts
            assert all(client.get("/health").status_code == 200 for _ in range(5))
            os.killpg(process.pid, signal.SIGKILL)  # the server and its workers, as a crash takes them
            process.wait(timeout=10)
        # closing the client after the server died leaves the server's side of each connection in TIME_WAIT
    process, url = start_serve(env, port=port)
    try:
        assert httpx.get(f"{url}/health", timeout=10).json()["status"] == "ok"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
