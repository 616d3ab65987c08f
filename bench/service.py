"""Service benchmark: `sourcerer serve` (gunicorn, one worker per core) on loopback with SciFact abstracts
ingested — requests/s and p50/p95/p99 for /v1/search and /v1/answer (extractive, `verify: true`) at 1, 16 and
64 concurrent clients (bounded in count and time), each cell beside the CPU ceiling measured in the same run:
the server's CPU-seconds per request (all its processes, from /proc) give the most requests per second the
cores could serve (cores ÷ CPU-seconds per request), and the cell's throughput is shown as a share of it.
Then in-process: an answer against one query embedding; and each Lambda function's cold import and first
request (the local model included, as the embedded stores run it).
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

from bench.common import EVAL, ROOT, serve_env, server_cpu_seconds, start_serve, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, scifact_corpus
from bench.metrics import percentile

CONCURRENCY = (1, 16, 64)
DEFAULT_CORPUS = 150  # abstracts: the bundled model embeds ~7 texts/s here, and each abstract is ~14 texts (chunk and sentences)
MAX_SECONDS = 20.0  # per (route, concurrency) cell


def ingest_corpus(home: Path, corpus_limit: int | None) -> None:
    from sourcerer.store import Document, open_index

    index = open_index(f"sqlite:///{home}/index.db", embedder="local")
    for row in scifact_corpus()[:corpus_limit]:
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
    from sourcerer.service.tenancy import new_key

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
    count = min(len(bodies), max(60, 8 * clients))

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


def _first_request(function: str, event: dict, env: dict) -> dict:
    """A cold function container: import the module, then handle one event (the model loads here)."""
    code = (
        "import json, sys, time\n"
        "t = time.perf_counter()\n"
        "import app\n"
        "imported = time.perf_counter() - t\n"
        "from sourcerer.http.serve import LocalContext\n"
        "t = time.perf_counter()\n"
        "response = app.lambda_handler(json.loads(sys.stdin.read()), LocalContext())\n"
        "print(json.dumps({'import_s': imported, 'first_request_s': time.perf_counter() - t, 'status': response['statusCode']}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(event),
        cwd=ROOT / "functions" / function,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return json.loads(result.stdout.strip().splitlines()[-1]) if result.returncode == 0 else {"error": result.stderr[-300:]}


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


def run(corpus_limit: int | None = DEFAULT_CORPUS) -> dict:
    use_bench_cache()
    home = Path(tempfile.mkdtemp(prefix="sourcerer-service-"))
    started = time.perf_counter()
    ingest_corpus(home, corpus_limit)
    ingest_s = time.perf_counter() - started
    key = _key(home)
    queries = [q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")]
    # disjoint questions per route and for the in-process runs: a question embedded once is cached (per process
    # and on disk), so each measured request pays its own query embedding
    search_bodies = [{"q": q, "top_k": 10} for q in queries[:520]]
    answer_bodies = [{"q": q, "top_k": 5, "verify": True} for q in queries[520:1040]]
    env = serve_env(home)
    env.pop("OMP_NUM_THREADS", None)  # `serve` sets it per worker from the worker count
    server, url = start_serve(env)
    headers = {"Authorization": f"Bearer {key}"}
    cores = len(os.sched_getaffinity(0))
    rows, data = [], {}
    try:
        import httpx

        for body in search_bodies[:4]:  # every worker loads its model and vectors, and its reader (0.7 s, once: the
            # cold start below; without this the answer cells' p95 held it)
            httpx.post(f"{url}/v1/search", headers=headers, json=body, timeout=120)
            httpx.post(f"{url}/v1/answer", headers=headers, json={**body, "top_k": 5, "verify": True}, timeout=120)
        for route, bodies in (("/v1/search", search_bodies), ("/v1/answer", answer_bodies)):
            for clients in CONCURRENCY:
                load_before, cpu_before = os.getloadavg()[0], server_cpu_seconds(server.pid).total
                # a question embedded in an earlier cell is cached: each cell asks its own variant of each
                cell = bodies if clients == CONCURRENCY[0] else [{**b, "q": f"{b['q']} (cell {clients})"} for b in bodies]
                rps, latencies, errors = _load(url, route, cell, headers, clients)
                cpu_per_request = (server_cpu_seconds(server.pid).total - cpu_before) / max(1, len(latencies))
                ceiling = cores / cpu_per_request if cpu_per_request else float("nan")
                p = [percentile(latencies, q) for q in (50, 95, 99)]
                rows.append(
                    [
                        f"HTTP {route}",
                        clients,
                        len(latencies),
                        rps,
                        *p,
                        errors,
                        cpu_per_request * 1000,
                        ceiling,
                        rps / ceiling,
                        load_before,
                    ]
                )
                data[f"http {route} c{clients}"] = {
                    "rps": rps,
                    "p50": p[0],
                    "p95": p[1],
                    "p99": p[2],
                    "n": len(latencies),
                    "errors": errors,
                    "cpu_ms_per_request": cpu_per_request * 1000,
                    "ceiling_rps": ceiling,
                    "share_of_ceiling": rps / ceiling,
                    "load_before": load_before,
                }
    finally:
        server.terminate()
        server.wait(timeout=20)

    # in-process: the same resolver without HTTP; an answer against one query embedding of a new question
    os.environ.update({k: v for k, v in env.items() if k.startswith(("SOURCERER_", "POWERTOOLS_"))})
    from sourcerer.http.api import build_app, get_service
    from sourcerer.http.serve import LocalContext, to_event

    get_service.cache_clear()
    app = build_app()
    model = get_service().index.embedder
    # questions no run above embedded: every call pays the query embedding. Each request is timed right after one
    # embedding of another new text of the same length, so the ratio is of two figures taken in the same moments
    # (timed apart, a machine that slowed down between the two decided the verdict)
    embeds, fresh = [], queries[1040:]
    for body in search_bodies[:4]:  # the reader loads once, as in the workers
        app.resolve(to_event("POST", "/v1/answer", {"Authorization": f"Bearer {key}"}, json.dumps({**body, "top_k": 5})), LocalContext())
    for route, bodies in (
        ("/v1/search", [{"q": q, "top_k": 10} for q in fresh[:25]]),
        ("/v1/answer", [{"q": q, "top_k": 5, "verify": True} for q in fresh[25:69]]),
    ):
        latencies = []
        for body in bodies:
            t = time.perf_counter()
            model.inner.embed([body["q"][::-1]], "query")  # as long as the question, never asked
            if route == "/v1/answer":
                embeds.append((time.perf_counter() - t) * 1000)
            event = to_event("POST", route, {"Authorization": f"Bearer {key}"}, json.dumps(body))
            t = time.perf_counter()
            app.resolve(event, LocalContext())
            latencies.append((time.perf_counter() - t) * 1000)
        p = [percentile(latencies, q) for q in (50, 95, 99)]
        rows.append([f"in-process {route}", 1, len(latencies), 1000 / (sum(latencies) / len(latencies)), *p, 0, "", "", "", ""])
        data[f"in-process {route}"] = {"p50": p[0], "p95": p[1], "p99": p[2]}
    embed_p50 = percentile(embeds, 50)
    data["query_embedding_p50_ms"] = embed_p50
    data["answer_over_embedding"] = data["in-process /v1/answer"]["p50"] / embed_p50

    import_env = {**env, "PYTHONPATH": os.pathsep.join(sys.path)}
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    event["headers"] = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    cold = []
    for function, path, body in (
        ("search", "/v1/search", {"q": queries[5], "top_k": 8}),
        ("answer", "/v1/answer", {"q": queries[5], "top_k": 5}),
    ):
        first = _first_request(function, {**event, "path": path, "resource": path, "body": json.dumps(body)}, import_env)
        cold.append(
            [
                function,
                _import_time(function, import_env),
                first.get("import_s"),
                first.get("first_request_s"),
                first.get("status"),
            ]
        )
    cold.append(["ingest", _import_time("ingest", import_env), "", "", ""])
    text = table(
        f"Service — sourcerer serve ({cores} cores, one gunicorn worker each) on loopback, {corpus_limit or 'all'} SciFact abstracts ingested ({ingest_s:.0f} s)",
        [
            "route",
            "clients",
            "requests",
            "req/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "errors",
            "CPU ms/req",
            "ceiling req/s",
            "share of ceiling",
            "load before",
        ],
        rows,
    )
    text += (
        f"\nceiling = cores ÷ CPU-seconds per request (all server processes, /proc), measured in the same cell."
        f"\nin-process answer p50 ÷ one query embedding p50 ({embed_p50:.1f} ms, each timed just before its answer): {data['answer_over_embedding']:.2f}×\n"
    )
    text += "\n" + table(
        "Cold start of each function (import of the module, then the first request with the local model loading)",
        ["function", "import s (-X importtime)", "import s (wall)", "first request s", "status"],
        cold,
    )
    data["cold"] = {c[0]: {"import_s": c[1], "wall_import_s": c[2], "first_request_s": c[3]} for c in cold}
    write_result("service", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--corpus", type=int, default=DEFAULT_CORPUS, help=f"SciFact abstracts ingested (default {DEFAULT_CORPUS})"
    )
    run(parser.parse_args().corpus)
