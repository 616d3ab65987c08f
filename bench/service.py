"""Service benchmark: `sourcerer serve` on loopback with SciFact ingested — requests/s and p50/p95/p99 for
/v1/search and /v1/answer (extractive) at 1, 4 and 16 concurrent clients (bounded in count and time); the same
requests through the Lambda handlers in-process (the HTTP overhead is the difference); and the cold-start
import time of each function module (`python -X importtime`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import EVAL, ROOT, percentile, read_jsonl, serve_env, start_serve, table, use_bench_cache, write_result

CONCURRENCY = (1, 4, 16)
MAX_SECONDS = 20.0  # per (route, concurrency) cell


def _ingest(home: Path, corpus_limit: int | None) -> None:
    from sourcerer.store import Document, open_index

    index = open_index(f"sqlite:///{home}/index.db", embedder="local")
    for row in read_jsonl(*sorted((EVAL / "scifact").glob("corpus.part-*.jsonl")))[:corpus_limit]:
        index.ingest_document(
            Document(
                source_uri=f"scifact/{row['_id']}.txt",
                text=f"{row['title']}\n\n{row['text']}",
                tenant="bench",
                scope="bench/scifact",
            )
        )


def _key(home: Path) -> str:
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.tenancy import new_key

    ledger = SQLiteLedger(home / "ledger.db")
    ledger.create_tenant("bench", "enterprise")
    key, record = new_key("bench", ["bench"], ["read", "write"])
    ledger.put_key(record)
    return key


def _load(url: str, route: str, bodies: list[dict], headers: dict, clients: int) -> tuple[float, list[float], int]:
    import httpx

    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + MAX_SECONDS
    count = min(len(bodies), 40 * clients)

    def worker(offset: int) -> None:
        nonlocal errors
        with httpx.Client(base_url=url, timeout=60) as client:
            for i in range(offset, count, clients):
                if time.perf_counter() > deadline:
                    return
                started = time.perf_counter()
                response = client.post(route, headers=headers, json=bodies[i])
                latencies.append((time.perf_counter() - started) * 1000)
                errors += response.status_code != 200

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(worker, range(clients)))
    elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, latencies, errors


def _import_time(function: str, env: dict) -> float:
    """Cumulative import time of the function module (seconds), as a cold Lambda container pays it."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import app"],
        cwd=ROOT / "functions" / function,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    total = 0
    for line in result.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and not match.group(2).startswith(" "):
            total = max(total, int(match.group(1)))
    return total / 1e6


def run(corpus_limit: int | None = None) -> dict:
    use_bench_cache()
    home = Path(tempfile.mkdtemp(prefix="sourcerer-service-"))
    started = time.perf_counter()
    _ingest(home, corpus_limit)
    ingest_s = time.perf_counter() - started
    key = _key(home)
    queries = [q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")]
    search_bodies = [{"q": q, "top_k": 10} for q in queries]
    answer_bodies = [{"q": q, "top_k": 5} for q in queries]
    env = serve_env(home)
    server, url = start_serve(env)
    headers = {"Authorization": f"Bearer {key}"}
    rows, data = [], {}
    try:
        import httpx

        httpx.post(f"{url}/v1/search", headers=headers, json=search_bodies[0], timeout=120)  # load the model once
        for route, bodies in (("/v1/search", search_bodies), ("/v1/answer", answer_bodies)):
            for clients in CONCURRENCY:
                rps, latencies, errors = _load(url, route, bodies, headers, clients)
                p = [percentile(latencies, q) for q in (50, 95, 99)]
                rows.append([f"HTTP {route}", clients, len(latencies), rps, *p, errors])
                data[f"http {route} c{clients}"] = {
                    "rps": rps,
                    "p50": p[0],
                    "p95": p[1],
                    "p99": p[2],
                    "n": len(latencies),
                    "errors": errors,
                }
    finally:
        server.terminate()
        server.wait(timeout=10)

    # in-process: the same resolver without HTTP
    os.environ.update({k: v for k, v in env.items() if k.startswith(("SOURCERER_", "POWERTOOLS_"))})
    from sourcerer.api import build_app, get_service
    from sourcerer.serve import LocalContext, to_event

    get_service.cache_clear()
    app = build_app()
    for route, bodies in (("/v1/search", search_bodies), ("/v1/answer", answer_bodies)):
        latencies = []
        for body in bodies[700:740]:  # questions the HTTP runs did not embed yet: both pay the query embedding
            event = to_event("POST", route, {"Authorization": f"Bearer {key}"}, json.dumps(body))
            t = time.perf_counter()
            app.resolve(event, LocalContext())
            latencies.append((time.perf_counter() - t) * 1000)
        p = [percentile(latencies, q) for q in (50, 95, 99)]
        rows.append([f"in-process {route}", 1, len(latencies), 1000 / (sum(latencies) / len(latencies)), *p, 0])
        data[f"in-process {route}"] = {"p50": p[0], "p95": p[1], "p99": p[2]}

    import_env = {**env, "PYTHONPATH": os.pathsep.join(sys.path)}
    imports = [[f, _import_time(f, import_env)] for f in ("search", "answer", "ingest")]
    text = table(
        f"Service — sourcerer serve on loopback, SciFact ingested ({ingest_s:.0f} s to ingest)",
        ["route", "clients", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
        rows,
    )
    text += "\n" + table(
        "Cold-start import time of each function module (target: search ≤ 1.0 s)", ["function", "seconds"], imports
    )
    data["import_s"] = {f: s for f, s in imports}
    write_result("service", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=int, default=None, help="limit the SciFact abstracts ingested (default all)")
    run(parser.parse_args().corpus)
