"""Load and faults, measured on loopback (bounded in count and time):

1. `/v1/search` and `/v1/answer` against `sourcerer serve` at 1, 16 and 64 clients, each for `--seconds`, while
   another client keeps ingesting documents: req/s, p50/p95/p99, errors, and how often "database is locked"
   appeared (in a response or in the server's log). Target: zero errors, zero locks, at every level.
2. The quota under 50 requests racing for the last 5 units, on SQLite and on DynamoDB (moto): exact?
3. S3 events duplicated, reordered and redriven from the dead-letter queue: does the index end equal to the
   bucket, with no duplicate chunk?
4. `kill -9` of `sourcerer serve` during requests and of `sourcerer ingest` at random moments: do the index
   and the ledger reopen consistent, and does a re-ingest report `unchanged` for every completed document?
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import EVAL, serve_env, start_serve, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, scifact_corpus
from bench.metrics import percentile

LEVELS = (1, 16, 64)
LOCKED = "database is locked"


def _corpus(limit: int) -> list[dict]:
    rows = scifact_corpus()[:limit]
    return [{"source_uri": f"scifact/{r['_id']}.txt", "text": f"{r['title']}\n\n{r['text']}"} for r in rows]


def _setup(home: Path, corpus: list[dict]) -> str:
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.tenancy import new_key
    from sourcerer.store import Document, open_index

    index = open_index(f"sqlite:///{home}/index.db", embedder="local")
    for doc in corpus:
        index.ingest_document(Document(**doc, tenant="bench", scope="bench/scifact"))
    ledger = SQLiteLedger(home / "ledger.db")
    ledger.create_tenant("bench", "enterprise")
    key, record = new_key("bench", ["bench"], ["read", "write"])
    ledger.put_key(record)
    return key


# --- 1. load -----------------------------------------------------------------------------------------------


def _level(url: str, route: str, bodies: list[dict], headers: dict, clients: int, seconds: float) -> dict:
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        with httpx.Client(base_url=url, timeout=300) as client:
            i = offset
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    response = client.post(route, headers=headers, json=bodies[i % len(bodies)])
                    if response.status_code != 200:
                        errors.append(f"{response.status_code} {response.text[:200]}")
                except httpx.HTTPError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                latencies.append((time.perf_counter() - started) * 1000)
                i += clients

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(worker, range(clients)))
    elapsed = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "errors": len(errors),
        "locked": sum(LOCKED in e for e in errors),
        "error_sample": errors[:3],
    }


def _ingesting(url: str, headers: dict, stop: threading.Event, written: list[int]) -> None:
    """Keeps writing: a new version of one of ten documents every half second, while the load runs."""
    import httpx

    with httpx.Client(base_url=url, timeout=300) as client:
        n = 0
        while not stop.is_set():
            text = f"# Bulletin {n % 10}\n\nBulletin number {n} says the cafeteria opens at {n % 12 + 7} o'clock."
            response = client.post(
                "/v1/documents?scope=bench/bulletins", headers=headers, json={"source_uri": f"bulletin-{n % 10}.md", "text": text}
            )
            written.append(response.status_code)
            n += 1
            stop.wait(0.5)


def load(home: Path, key: str, seconds: float) -> tuple[list[list], dict]:
    queries = [q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")]
    bodies = {"/v1/search": [{"q": q, "top_k": 10} for q in queries], "/v1/answer": [{"q": q, "top_k": 5} for q in queries]}
    log = home / "serve.log"
    server, url = start_serve(serve_env(home), log)
    headers = {"Authorization": f"Bearer {key}"}
    rows, data = [], {}
    try:
        import httpx

        httpx.post(f"{url}/v1/search", headers=headers, json=bodies["/v1/search"][0], timeout=300)  # load the model
        for route in ("/v1/search", "/v1/answer"):
            for clients in LEVELS:
                stop, written = threading.Event(), []
                writer = threading.Thread(target=_ingesting, args=(url, headers, stop, written))
                writer.start()
                cell = _level(url, route, bodies[route], headers, clients, seconds)
                stop.set()
                writer.join()
                cell["ingests"] = len(written)
                cell["ingest_errors"] = sum(s != 200 for s in written)
                rows.append(
                    [route, clients, cell["requests"], cell["rps"], cell["p50"], cell["p95"], cell["p99"], cell["errors"]]
                    + [cell["locked"], f"{cell['ingests']} ({cell['ingest_errors']} failed)"]
                )
                data[f"{route} c{clients}"] = cell
    finally:
        server.terminate()
        server.wait(timeout=30)
    data["server_log_locked"] = log.read_text(errors="replace").count(LOCKED)
    return rows, data


# --- 2. quota races ------------------------------------------------------------------------------------------


def _race(ledger) -> tuple[int, int, int]:
    from sourcerer.ledger.base import UsageRecord

    ledger.create_tenant("racer", "free")
    ledger.consume("racer", "queries", 995, 1000, "2026-12")
    barrier = threading.Barrier(50)
    results: list[bool] = []

    def request(n: int) -> None:
        record = UsageRecord(tenant="racer", route="POST /v1/search", request_id=f"r{n}", units={"queries": 1}, timestamp=1e9 + n)
        barrier.wait()
        results.append(ledger.charge(record, "queries", 1, 1000, "2026-12"))

    threads = [threading.Thread(target=request, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results.count(True), ledger.usage("racer", "2026-12")["queries"], len(ledger.usage_records("racer"))


def quota_races(home: Path) -> list[list]:
    import boto3
    from moto import mock_aws
    from sourcerer.ledger.dynamodb import DynamoDBLedger, table_definition
    from sourcerer.ledger.sqlite import SQLiteLedger

    rows = [["SQLite", *_race(SQLiteLedger(home / "race.db"))]]
    os.environ.update({"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"})
    with mock_aws():
        resource = boto3.resource("dynamodb")
        resource.create_table(**table_definition("race"))
        ledger = DynamoDBLedger("race", resource=resource)
        lock = threading.Lock()  # moto's tables are not thread-safe; the condition expressions decide the race
        client = ledger.table.meta.client
        for name in ("transact_write_items", "update_item"):
            original = getattr(client, name)
            setattr(client, name, lambda *a, _o=original, **k: _locked(lock, _o, *a, **k))
        rows.append(["DynamoDB (moto)", *_race(ledger)])
    return [
        [store, won, used, records, "exact" if (won, used, records) == (5, 1000, 5) else "WRONG"]
        for store, won, used, records in rows
    ]


def _locked(lock: threading.Lock, call, *args, **kwargs):
    with lock:
        return call(*args, **kwargs)


# --- 3. S3 event order ---------------------------------------------------------------------------------------


def s3_orders(home: Path) -> list[list]:
    """The scenarios of tests/unit/test_s3_event_order.py, every delivery order, counted."""
    import boto3
    from moto import mock_aws

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))
    import test_s3_event_order as scenarios  # noqa: PLC0415 - the same scenarios the tests replay
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.s3ingest import handle_record
    from sourcerer.store.sqlite import SQLiteIndex

    rows = []
    os.environ.update({"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"})
    for name, steps in scenarios.SCENARIOS.items():
        with mock_aws():
            s3 = boto3.client("s3")
            s3.create_bucket(Bucket=scenarios.BUCKET)
            s3.put_bucket_versioning(Bucket=scenarios.BUCKET, VersioningConfiguration={"Status": "Enabled"})
            events = scenarios._run(s3, steps)
            expected = scenarios._bucket_text(s3)
            orders = scenarios._deliveries(events)
            equal = duplicates = dlq = 0
            for n, order in enumerate(orders):
                index = SQLiteIndex(home / f"s3-{name}-{n}.db", embedder=None)
                ledger = SQLiteLedger(home / f"s3-{name}-{n}-ledger.db")
                ledger.create_tenant("acme", "pro")
                for event in order:
                    try:
                        handle_record(event, index=index, ledger=ledger, s3=s3)
                    except Exception:  # noqa: BLE001 - counted: it would have gone to the DLQ
                        dlq += 1
                chunks = index.search("failover cutover", tenant="acme", k=10, mode="keyword")
                documents = index.list_documents("acme")
                duplicates += len(chunks) > 1
                wanted = None if expected is None else expected.decode().split("\n\n")[1].strip()
                equal += (documents == [] and chunks == []) if wanted is None else [c.text for c in chunks] == [wanted]
                index.close()
        rows.append([name, len(events), len(orders), equal, duplicates, dlq])
    return rows


# --- 4. kill -9 ----------------------------------------------------------------------------------------------


def _consistent(home: Path) -> list[str]:
    """What is wrong with the index and ledger files, if anything."""
    problems = []
    index = sqlite3.connect(home / "index.db")
    if index.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        problems.append("index integrity_check failed")
    mismatched = index.execute(
        "SELECT count(*) FROM documents d WHERE d.chunks != (SELECT count(*) FROM chunks c WHERE c.tenant=d.tenant AND c.document_id=d.document_id)"
    ).fetchone()[0]
    if mismatched:
        problems.append(f"{mismatched} documents whose chunk count disagrees with their chunks")
    if (
        index.execute("SELECT count(*) FROM chunks").fetchone()[0]
        != index.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    ):
        problems.append("chunks and the full-text index disagree")
    index.close()
    ledger = sqlite3.connect(home / "ledger.db")
    if ledger.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        problems.append("ledger integrity_check failed")
    ledger.close()
    from sourcerer.ledger.sqlite import SQLiteLedger

    ledger = SQLiteLedger(home / "ledger.db")
    counted = sum(ledger.usage("bench", m).get("queries", 0) for m in {time.strftime("%Y-%m", time.gmtime())})
    recorded = sum(r.units.get("queries", 0) for r in ledger.usage_records("bench"))
    if counted != recorded:
        problems.append(f"ledger: {counted} queries counted, {recorded} in usage records")
    return problems


def kill_serve(home: Path, key: str, rounds: int, rng: random.Random) -> tuple[int, list[str]]:
    import httpx

    survived, problems = 0, []
    for _ in range(rounds):
        server, url = start_serve(serve_env(home))
        stop = threading.Event()

        def hammer(url: str = url, stop: threading.Event = stop) -> None:
            with httpx.Client(base_url=url, timeout=30) as client:
                while not stop.is_set():
                    try:
                        client.post(
                            "/v1/search", headers={"Authorization": f"Bearer {key}"}, json={"q": "cancer cells", "top_k": 5}
                        )
                    except httpx.HTTPError:
                        return

        workers = [threading.Thread(target=hammer) for _ in range(8)]
        for w in workers:
            w.start()
        time.sleep(rng.uniform(2.0, 5.0))
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        stop.set()
        for w in workers:
            w.join()
        found = _consistent(home)
        survived += not found
        problems += found
    return survived, problems


def kill_ingest(home: Path, corpus: list[dict], rounds: int, rng: random.Random) -> tuple[int, list[str]]:
    folder = home / "to-ingest"
    folder.mkdir(exist_ok=True)
    for doc in corpus:
        (folder / Path(doc["source_uri"]).name).write_text(doc["text"])
    env = serve_env(home)
    command = [sys.executable, "-m", "sourcerer.cli", "ingest", str(folder), "--tenant", "bench", "--scope", "bench/killed"]
    survived, problems = 0, []
    for round_ in range(rounds):
        for doc in corpus[round_::rounds]:  # new content each round, so there is something left to ingest
            (folder / Path(doc["source_uri"]).name).write_text(doc["text"] + f"\nRevision {round_}.")
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(rng.uniform(1.0, 6.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        found = _consistent(home)
        db = sqlite3.connect(home / "index.db")
        completed = {r[0] for r in db.execute("SELECT source_uri FROM documents WHERE scope='bench/killed'")}
        db.close()
        report = subprocess.run(command + ["--json"], capture_output=True, text=True, env=env, timeout=3600)
        import json

        outcome = {Path(f["path"]).as_posix(): f["status"] for f in json.loads(report.stdout)["files"]}
        for uri in completed:
            status = outcome.get(uri)
            if status not in ("unchanged", "replaced"):
                found.append(f"{uri}: completed before the kill, re-ingest said {status}")
        survived += not found
        problems += found
    return survived, problems


def run(seconds: float = 60.0, corpus_limit: int = 300, rounds: int = 5) -> dict:
    use_bench_cache()
    home = Path(tempfile.mkdtemp(prefix="sourcerer-load-"))
    corpus = _corpus(corpus_limit)
    key = _setup(home, corpus)
    rng = random.Random(2026)
    load_rows, data = load(home, key, seconds)
    races = quota_races(home)
    orders = s3_orders(home)
    serve_ok, serve_problems = kill_serve(home, key, rounds, rng)
    ingest_ok, ingest_problems = kill_ingest(home, corpus[:40], rounds, rng)
    text = table(
        f"Load — sourcerer serve on loopback, {len(corpus)} SciFact abstracts, {seconds:.0f} s per cell, ingest running",
        ["route", "clients", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "db locked", "ingests"],
        load_rows,
    )
    text += f"\n'database is locked' in the server log: {data['server_log_locked']}\n"
    text += "\n" + table(
        "Quota: 50 requests racing for the last 5 units", ["ledger", "granted", "used", "usage records", "verdict"], races
    )
    text += "\n" + table(
        "S3 events: every delivery order, each event twice, newest first then the oldest redriven",
        ["scenario", "events", "orders", "index = bucket", "duplicate chunks", "to the DLQ"],
        orders,
    )
    text += "\n" + table(
        "kill -9 (index and ledger reopened and checked after each)",
        ["process", "rounds", "consistent", "problems"],
        [
            ["sourcerer serve during requests", rounds, serve_ok, "; ".join(serve_problems[:3]) or "none"],
            ["sourcerer ingest at random moments", rounds, ingest_ok, "; ".join(ingest_problems[:3]) or "none"],
        ],
    )
    data.update(
        {
            "quota": races,
            "s3": orders,
            "kill_serve": {"rounds": rounds, "consistent": serve_ok, "problems": serve_problems},
            "kill_ingest": {"rounds": rounds, "consistent": ingest_ok, "problems": ingest_problems},
        }
    )
    write_result("load", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="per (route, clients) cell (default 60)")
    parser.add_argument("--corpus", type=int, default=300, help="SciFact abstracts ingested first (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="kill -9 rounds per process (default 5)")
    args = parser.parse_args()
    run(args.seconds, args.corpus, args.rounds)
