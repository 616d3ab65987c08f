"""Shared helpers for the benchmarks: data paths, loading, tables, results files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = Path(os.environ.get("SOURCERER_EVAL_DIR", ROOT.parent / "shared" / "eval"))
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache"


def use_bench_cache() -> None:
    """Embeddings are cached on disk under bench/.cache so reruns are fast (the model is slow on 2 cores)."""
    os.environ.setdefault("SOURCERER_HOME", str(CACHE))


def table(title: str, header: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in header]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [f"## {title}", ""]
    lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(lines) + "\n"


def stamp() -> dict[str, str]:
    """Which code and when: every result file carries it, so a figure can be traced to the commit that made it."""
    from datetime import datetime, timezone

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", ""
    return {"commit": (commit or "unknown") + ("+changes" if dirty else ""), "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def write_result(name: str, text: str, data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    run = stamp()
    data = {**data, "run": run}
    text = text.rstrip("\n") + f"\n\n_Run at commit {run['commit']} on {run['date']}._\n"
    (RESULTS / f"{name}.md").write_text(text, encoding="utf-8")
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    print(text)


MODES = ("bundled model", "bundled model, no reader", "lexical only")


class answer_mode:
    """Run a block with the bundled models (`bundled model`: the e5 embeddings and the reading model,
    `SOURCERER_READER=on`), the embeddings with the sentence models deciding (the default, "no reader": the reader
    only picks the answering sentence among their best, confirms an answer from under the retrieval floor and
    judges relevance in verification), those models with the reader switched off (`bundled model, reader off`,
    `SOURCERER_READER=off`), or no model at all (`lexical only`)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> str:
        self.saved = {name: os.environ.get(name) for name in ("SOURCERER_EMBEDDER", "SOURCERER_READER")}
        for name in self.saved:
            os.environ.pop(name, None)
        if self.mode == "lexical only":
            os.environ["SOURCERER_EMBEDDER"] = "none"
        elif self.mode == "bundled model":
            os.environ["SOURCERER_READER"] = "on"
        elif self.mode == "bundled model, reader off":
            os.environ["SOURCERER_READER"] = "off"
        return self.mode

    def __exit__(self, *exc: object) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True)
class ServerCPU:
    total: float  # user + system CPU seconds of a process and all its descendants (gunicorn's master and workers)
    background: float  # the part of it spent by threads running below normal priority (the background embedder)


def server_cpu_seconds(pid: int) -> ServerCPU:
    """What a server has spent on the CPU so far. A thread's share is read from its own stat line, where its nice
    value is too: a thread that lowered its priority (nice > 0) works in the background."""
    tick = os.sysconf("SC_CLK_TCK")
    total = background = 0.0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime: every thread's, the ended ones too
            for task in Path(f"/proc/{current}/task").iterdir():
                thread = (task / "stat").read_text().rsplit(")", 1)[1].split()
                if int(thread[16]) > 0:  # nice
                    background += (int(thread[11]) + int(thread[12])) / tick
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return ServerCPU(total, background)


def serve_env(home: Path) -> dict[str, str]:
    """The environment `sourcerer serve` runs under in the benchmarks: embedded stores under `home`, no LLM."""
    return {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "SOURCERER_INDEX": f"sqlite:///{home}/index.db",
        "SOURCERER_PROVIDERS": "extractive",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "bench",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "OMP_NUM_THREADS": "1",
    }


def start_serve(env: dict[str, str], log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """`sourcerer serve --port 0` under `env` (its stderr to `log`, a file: a pipe nobody reads would fill and
    stall the server); returns the process and its URL once it listens."""
    stderr = open(log, "a") if log is not None else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the server
    server = subprocess.Popen(
        [sys.executable, "-m", "sourcerer.cli", "serve", "--port", "0", "--no-admin-key"],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=env,
    )
    line = server.stdout.readline()  # type: ignore[union-attr]
    match = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not match:
        raise RuntimeError(f"sourcerer serve did not start: {line} (log: {log})")
    return server, match.group()
