"""Cold start: how long each Lambda function's module takes to import in a fresh interpreter (the part of a cold
start the code decides; the runtime's own start and the layer's unpacking come on top). Median of 5 runs per
function, with tracing on as deployed (Powertools' Tracer imports the X-Ray SDK). Target (issue 26): ≤ 0.8 s each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from bench.common import ROOT, table, write_result

FUNCTIONS = ["ingest/app", "ingest/s3", "ingest/embed", "search/app", "answer/app", "audit/app"]
TARGET_S = 0.8
PROBE = "import time; started = time.perf_counter(); import {module}; print(time.perf_counter() - started)"


def import_seconds(function: str) -> float:
    folder, module = function.split("/")
    env = {**os.environ, "POWERTOOLS_SERVICE_NAME": "sourcerer", "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], cwd=ROOT / "functions" / folder, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def run(repeats: int = 5) -> dict:
    data, rows = {}, []
    for function in FUNCTIONS:
        times = [import_seconds(function) for _ in range(repeats)]
        median = statistics.median(times)
        data[function] = {"median_s": round(median, 3), "min_s": round(min(times), 3), "max_s": round(max(times), 3)}
        rows.append([function, round(median, 3), round(min(times), 3), round(max(times), 3), "met" if median <= TARGET_S else "not met"])
    text = table(
        f"Cold start — import time of each Lambda function, fresh interpreter, median of {repeats} (target ≤ {TARGET_S} s)",
        ["function", "median s", "min s", "max s", "target"],
        rows,
    )
    write_result("coldstart", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    run(parser.parse_args().repeats)
