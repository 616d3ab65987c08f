"""Three OpenSearch nodes lose one: no acknowledged write is lost, and searches keep answering.

Three embedded OpenSearch 2.19 nodes (tools/opensearch: one JVM each, 512 MB heap) on 127.0.0.1 form one
cluster; the index has 3 shards and 1 replica. After an initial ingest, one client searches and another
ingests without pause while the elected cluster manager is killed with SIGKILL (the adapter talks to another
node, as an AWS domain's endpoint outlives any one node). The run reports what the adapter saw: errors, the longest gap between
two answered searches or two acknowledged writes, the time to a yellow cluster, and every acknowledged write
checked after recovery.

    python -m bench.opensearch_cluster                 # about a minute; figures in docs/scaling.md
    python -m bench.opensearch_cluster --docs 20 --settle 5

The adapter talks to one node (as to a domain's endpoint on AWS), with opensearch-py's retries: a request that
fails on a dropped connection or times out (30 s) is retried up to 3 times, and bulk items refused with 429
are retried with backoff; what still fails is a `ProviderError`, a 503 at the API, charged nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import table, write_result

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "opensearch"))
import embedded  # noqa: E402 - the embedded node's launcher lives beside its Maven module

TENANT = "acme"


def _document(n: int) -> dict[str, Any]:
    return {
        "tenant": TENANT,
        "source_uri": f"runbooks/drill-{n:04d}.md",
        "text": f"Drill {n}: the failover cutover from the primary region to the standby region took {20 + n % 40} seconds.",
    }


class Stream(threading.Thread):
    """Calls `step(i)` without pause until stopped, timing each call and keeping what failed."""

    def __init__(self, name: str, step: Any) -> None:
        super().__init__(name=name, daemon=True)
        self.step, self.stop = step, threading.Event()
        self.ok: list[tuple[float, float]] = []  # (finished at, seconds taken)
        self.errors: list[str] = []

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                self.step(i)
                self.ok.append((time.monotonic(), time.monotonic() - started))
            except Exception as error:  # noqa: BLE001 - every failure is counted and reported
                self.errors.append(f"{type(error).__name__}: {str(error)[:160]}")
                time.sleep(0.05)
            i += 1

    def longest_gap(self, since: float) -> float:
        stamps = [since] + [t for t, _ in self.ok if t >= since]
        return max((b - a for a, b in zip(stamps, stamps[1:], strict=False)), default=float("inf"))


def run(*, docs: int = 40, settle_s: float = 15, write: bool = True) -> dict[str, Any]:
    from sourcerer.store import open_index

    nodes = embedded.start_cluster(3)
    try:
        # the adapter talks to a node that is not the elected cluster manager; the manager is the one killed
        # (an AWS domain's endpoint never dies with a node), so the cluster also has to elect a new one
        manager = _manager(nodes[0])
        victim = next(n for n in nodes if _name(n) == manager)
        client_node = next(n for n in nodes if n is not victim)
        index = open_index(f"opensearch://{client_node.url.removeprefix('http://')}/drills?engine=lucene", embedder="none")
        index.init(shards=3, replicas=1)
        client = index.client
        client.indices.put_settings(index="drills", body={"index": {"refresh_interval": "200ms"}})
        client.cluster.health(index="drills", params={"wait_for_status": "green", "timeout": "120s"}, request_timeout=130)
        for n in range(docs):
            index.ingest_document(_document(n))
        acknowledged = set(range(docs))
        written = iter(range(docs, 10**6))

        def ingest(_: int) -> None:
            n = next(written)
            index.ingest_document(_document(n))
            acknowledged.add(n)  # only after the write returned: acknowledged

        def search(_: int) -> None:
            if not index.search("failover cutover standby", tenant=TENANT, k=5, mode="keyword"):
                raise AssertionError("a search answered no hits")

        readers, writers = Stream("search", search), Stream("ingest", ingest)
        readers.start(), writers.start()
        time.sleep(3)
        killed_at = time.monotonic()
        victim.kill()
        yellow_at = _wait_for(lambda: _health(client) == ("yellow", 2) or _health(client) == ("green", 2))
        time.sleep(settle_s)
        readers.stop.set(), writers.stop.set()
        readers.join(), writers.join()
        client.indices.refresh(index="drills")
        stored = {d["source_uri"] for d in index.list_documents(TENANT)}
        missing = sorted(n for n in acknowledged if _document(n)["source_uri"] not in stored)
        result = {
            "killed": _name(victim),
            "was_cluster_manager": _name(victim) == manager,
            "seconds_to_yellow": yellow_at - killed_at,
            "searches": len(readers.ok),
            "search_errors": len(readers.errors),
            "search_error_kinds": sorted({e.split(":")[0] for e in readers.errors}),
            "search_p50_ms": statistics.median(s for _, s in readers.ok) * 1000 if readers.ok else None,
            "search_longest_gap_s": readers.longest_gap(killed_at),
            "searches_after_yellow": sum(1 for t, _ in readers.ok if t > yellow_at),
            "writes_acknowledged": len(acknowledged),
            "write_errors": len(writers.errors),
            "write_longest_gap_s": writers.longest_gap(killed_at),
            "writes_after_yellow": sum(1 for t, _ in writers.ok if t > yellow_at),
            "acknowledged_missing": missing,
        }
    finally:
        for node in nodes:
            node.stop()
    rows = [
        ["node killed (SIGKILL)", f"{result['killed']}{' (cluster manager)' if result['was_cluster_manager'] else ''}"],
        ["kill to yellow (2 nodes), s", f"{result['seconds_to_yellow']:.1f}"],
        ["searches answered / errors", f"{result['searches']} / {result['search_errors']}"],
        ["longest gap between answered searches, s", f"{result['search_longest_gap_s']:.2f}"],
        ["writes acknowledged / errors", f"{result['writes_acknowledged']} / {result['write_errors']}"],
        ["longest gap between acknowledged writes, s", f"{result['write_longest_gap_s']:.2f}"],
        ["acknowledged writes missing after recovery", str(len(result["acknowledged_missing"]))],
    ]
    text = table("OpenSearch: three nodes lose one under searches and ingests (3 shards, 1 replica)", ["measure", "value"], rows)
    if write:
        write_result("opensearch_cluster", text, result)
    else:
        print(text)
    return result


def _name(node: embedded.Node) -> str:
    return next(p.split("=", 1)[1] for p in node.process.args if isinstance(p, str) and p.startswith("-Enode.name="))


def _manager(node: embedded.Node) -> str:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{node.url}/_cat/cluster_manager?format=json", timeout=10) as reply:
        return json.loads(reply.read())[0]["node"]


def _health(client: Any) -> tuple[str, int]:
    try:
        health = client.cluster.health(params={"timeout": "2s"}, request_timeout=5)
        return health["status"], health["number_of_nodes"]
    except Exception:  # noqa: BLE001 - while the cluster re-forms, asking can fail
        return "unknown", 0


def _wait_for(condition: Any, timeout_s: float = 120) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.1)
    raise TimeoutError(f"the cluster did not recover within {timeout_s:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=40, help="documents ingested before the kill (default 40)")
    parser.add_argument("--settle", type=float, default=15, help="seconds of traffic after the cluster is yellow (default 15)")
    args = parser.parse_args(argv)
    if embedded.java() is None or not (embedded.built() or embedded.maven()):
        print("opensearch cluster skipped: no Java 17 + Maven for the embedded nodes")
        return 0
    result = run(docs=args.docs, settle_s=args.settle)
    return 0 if not result["acknowledged_missing"] else 1


if __name__ == "__main__":
    sys.exit(main())
