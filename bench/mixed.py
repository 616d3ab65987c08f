"""Readers and writers on one `sourcerer serve`: 16 clients for `--seconds`, 2 of them ingesting new documents
as fast as the server takes them, 14 asking (search and answer in turn), with the bundled model and deferred
embedding — beside the same load on a keyword-only server (`SOURCERER_EMBEDDER=none`, no model work at all),
in the same run. The two servers take turns (`ROUNDS` rounds each, in the order ours, peer, peer, ours, ...), and
the one out of turn is paused with its workers (SIGSTOP), so neither runs beside the other and a slow spell of
the machine falls on both; the ratio is also given round by round. First, on the quiet server, the first search
after an ingest against a search just before it, one client.

Targets (issue 26): search and answer p99 ≤ 2 s; the askers' throughput ≥ 70% of the keyword-only server's;
the first search after an ingest within 1.5× of one before it. The askers' ceiling beside it: the keyword-only
server's CPU per request plus one question embedding (measured on the quiet server, as served) for each question
not asked before (`ceiling`); the embedding is the one model call no cache can skip for a new question. An ingest past the embedding backlog bound is a
429 with Retry-After (counted, and retried after it by the ingesting clients).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import signal
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import EVAL, serve_env, server_cpu_seconds, start_serve, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, scifact_corpus
from bench.metrics import percentile

CLIENTS, WRITERS = 16, 2
ROUNDS = 3  # per server, taken in turns: ours, the peer's, the peer's, ours... (a slower spell hits both)


def _corpus(limit: int, offset: int = 0) -> list[dict]:
    rows = scifact_corpus()[offset : offset + limit]
    return [{"source_uri": f"scifact/{r['_id']}.txt", "text": f"{r['title']}\n\n{r['text']}"} for r in rows]


def _server(embedder: str | None, corpus: list[dict]) -> tuple[object, str, str, Path]:
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.tenancy import new_key
    from sourcerer.store import Document, open_index

    home = Path(tempfile.mkdtemp(prefix="sourcerer-mixed-"))
    index = open_index(f"sqlite:///{home}/index.db", embedder=embedder or "none")
    for doc in corpus:
        index.ingest_document(Document(**doc, tenant="bench", scope="bench/scifact"))
    index.close()
    ledger = SQLiteLedger(home / "ledger.db")
    ledger.create_tenant("bench", "enterprise")
    key, record = new_key("bench", ["bench"], ["read", "write"])
    ledger.put_key(record)
    env = {**serve_env(home), "SOURCERER_ANSWER_CACHE": "false"}
    if embedder is None:
        env["SOURCERER_EMBEDDER"] = "none"
    server, url = start_serve(env, home / "server.log")
    return server, url, key, home


def _pause(server, paused: bool) -> None:
    """Stop (or resume) a server with its workers and their threads, so that it does nothing, its background
    embedder included, while the other server takes its round. The server stays in the bench's session: a
    session of its own would be a scheduling group of its own, and change how the cores are shared with the
    clients."""
    pid = server.pid  # type: ignore[attr-defined]
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for each in [pid, *map(int, children)] if paused else [*map(int, children), pid]:
        os.kill(each, signal.SIGSTOP if paused else signal.SIGCONT)


@dataclass
class Load:
    """One server's share of the run, summed over its rounds. Each client goes on through the questions (and the
    writers through the fresh documents) where its last round stopped, so rounds add up to one run of their
    total length."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"/v1/search": [], "/v1/answer": []})
    ingests: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    asked: set[int] = field(default_factory=set)  # the questions asked: each is embedded once, then cached
    next_item: dict[str, int] = field(default_factory=dict)  # client -> its next question or document
    seconds: float = 0.0
    rounds: list[float] = field(default_factory=list)  # the askers' req/s in each round
    rounds_new: list[float] = field(default_factory=list)  # the share of each round's requests that asked a new question
    cpu: float = 0.0  # the server's CPU seconds over its rounds (all its processes)
    background_cpu: float = 0.0  # of which its background threads' (the embedder, at nice 10)

    @property
    def asker_requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def summary(self) -> dict:
        out: dict = {"seconds": self.seconds, "ingests": self.ingests, "errors": len(self.errors), "error_sample": self.errors[:3]}
        for route, values in self.latencies.items():
            out[route] = {"requests": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99)}
        out["asker_rps"] = self.asker_requests / self.seconds
        out["rounds_rps"] = self.rounds
        out["rounds_new_question_share"] = self.rounds_new
        out["new_question_share"] = len(self.asked) / max(1, self.asker_requests)
        out["server_cpu_ms_per_asker_request"] = 1000 * (self.cpu - self.background_cpu) / max(1, self.asker_requests)
        out["background_cpu_share"] = self.background_cpu / self.seconds / (os.cpu_count() or 1) if self.seconds else 0.0
        return out


def _round(server, url: str, key: str, seconds: float, fresh: list[dict], load: Load) -> None:
    """16 clients for `seconds` (2 ingesting, 14 asking), added to `load`."""
    import httpx

    queries = [q["text"] for q in read_jsonl(EVAL / "scifact" / "queries.jsonl")]
    headers = {"Authorization": f"Bearer {key}"}
    deadline = time.perf_counter() + seconds
    lock = threading.Lock()
    before, known = load.asker_requests, len(load.asked)

    def asker(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
            i = load.next_item.get(f"asker {n}", n)
            while time.perf_counter() < deadline:
                route = ("/v1/search", "/v1/answer")[i % 2]
                started = time.perf_counter()
                response = client.post(route, json={"q": queries[i % len(queries)], "top_k": 8})
                with lock:
                    load.asked.add(i % len(queries))
                    load.latencies[route].append((time.perf_counter() - started) * 1000)
                    if response.status_code != 200:
                        load.errors.append(f"{route} {response.status_code}")
                i += CLIENTS
            load.next_item[f"asker {n}"] = i

    def writer(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
            i = load.next_item.get(f"writer {n}", n)
            while time.perf_counter() < deadline:
                doc = fresh[i % len(fresh)]
                response = client.post("/v1/documents?scope=bench/fresh", json={**doc, "source_uri": f"fresh/{i}.txt"})
                with lock:
                    load.ingests[response.status_code] = load.ingests.get(response.status_code, 0) + 1
                if response.status_code == 429:  # backpressure: wait as told (bounded by the round)
                    time.sleep(min(float(response.headers.get("retry-after", "1")), max(0.0, deadline - time.perf_counter())))
                i += WRITERS
            load.next_item[f"writer {n}"] = i

    cpu_before = server_cpu_seconds(server.pid)
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        jobs = [pool.submit(writer, n) for n in range(WRITERS)] + [pool.submit(asker, n) for n in range(CLIENTS - WRITERS)]
        for job in jobs:
            job.result()
    elapsed = time.perf_counter() - started
    cpu_after = server_cpu_seconds(server.pid)
    load.cpu += cpu_after.total - cpu_before.total
    load.background_cpu += cpu_after.background - cpu_before.background
    load.seconds += elapsed
    load.rounds.append((load.asker_requests - before) / elapsed)
    load.rounds_new.append((len(load.asked) - known) / max(1, load.asker_requests - before))


def _first_after_ingest(url: str, key: str, rounds: int = 5) -> dict:
    """One client: a search, then a 2-chunk ingest, then the same search at once (ms each, median of rounds)."""
    import httpx

    before, after = [], []
    with httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {key}"}) as client:
        for n in range(rounds):
            body = {"q": "How does the drill schedule affect recovery time?", "top_k": 8}
            started = time.perf_counter()
            client.post("/v1/search", json=body).raise_for_status()
            before.append((time.perf_counter() - started) * 1000)
            text = f"# Drill {n}\n\nThe recovery drill {n} ran for {n + 3} hours.\n\n## Result\n\nRecovery took {n + 1} minutes in drill {n}."
            client.post("/v1/documents?scope=bench/drills", json={"source_uri": f"drill-{n}.md", "text": text}).raise_for_status()
            started = time.perf_counter()
            client.post("/v1/search", json=body).raise_for_status()
            after.append((time.perf_counter() - started) * 1000)
    return {"before_ms": statistics.median(before), "after_ms": statistics.median(after)}


def _question_cost(url: str, key: str, rounds: int = 15) -> dict:
    """On the quiet server: a search for a question it has never seen, then the same search again (its embedding
    cached by then). The difference is what one question's embedding costs as served (ms, medians)."""
    import httpx

    fresh, again = [], []
    with httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {key}"}) as client:
        for n in range(rounds):
            body = {"q": f"Which of the {n + 3} trials measured how drug dose {n} changed recovery after surgery?", "top_k": 8}
            for times in (fresh, again):
                started = time.perf_counter()
                client.post("/v1/search", json=body).raise_for_status()
                times.append((time.perf_counter() - started) * 1000)
    return {"fresh_ms": statistics.median(fresh), "cached_ms": statistics.median(again)}


def ceiling(peer_rps: float, embedding_ms: float, new_share: float, cores: int, background_share: float = 0.0) -> float:
    """The askers' throughput a server would reach if it did all the keyword-only server does plus one question
    embedding per question it has not seen: the peer's CPU per request (every core busy, clients included) plus
    the embedding, spread over the cores, less the share of them its background work takes (`background_share`:
    the vectors of what the writers ingest, which the peer never computes). An upper bound: it grants the server
    nothing else to do."""
    per_request_ms = cores * 1000 / peer_rps + embedding_ms * new_share
    return cores * 1000 * (1 - background_share) / per_request_ms


def run(seconds: float = 60, corpus_size: int = 100) -> dict:
    use_bench_cache()
    corpus, fresh = _corpus(corpus_size), _corpus(200, offset=corpus_size)
    data: dict = {"seconds": seconds, "corpus": corpus_size, "clients": CLIENTS, "writers": WRITERS}
    ours_name, peer_name = "bundled model, deferred embedding", "keyword-only server (peer)"
    servers: dict[str, tuple] = {}
    try:
        import httpx

        for name, embedder in ((ours_name, "local"), (peer_name, None)):
            server, url, key, _ = _server(embedder, corpus)
            servers[name] = (server, url, key)
            httpx.post(f"{url}/v1/search", headers={"Authorization": f"Bearer {key}"}, json={"q": "warm up"}, timeout=300)
            _pause(server, True)
        server, url, key = servers[ours_name]
        _pause(server, False)
        # before the load, on the quiet server: after it the backlog is at its bound, and an ingest a 429
        data["first_search_after_ingest"] = _first_after_ingest(url, key)
        data["question_embedding"] = _question_cost(url, key)
        _pause(server, True)
        loads = {ours_name: Load(), peer_name: Load()}
        for turn in range(ROUNDS):
            for name in (ours_name, peer_name) if turn % 2 == 0 else (peer_name, ours_name):
                server, url, key = servers[name]
                _pause(server, False)
                _round(server, url, key, seconds / ROUNDS, fresh, loads[name])
                _pause(server, True)
        for name, load in loads.items():
            data[name] = load.summary()
    finally:
        for server, _, _ in servers.values():
            with contextlib.suppress(OSError):  # a server that is gone already: nothing to resume
                _pause(server, False)
            os.kill(server.pid, signal.SIGTERM)  # type: ignore[attr-defined]
            server.wait(timeout=30)  # type: ignore[attr-defined]
    ours, peer = data["bundled model, deferred embedding"], data["keyword-only server (peer)"]
    rows = [
        [name, d["asker_rps"], d["/v1/search"]["p50"], d["/v1/search"]["p99"], d["/v1/answer"]["p50"], d["/v1/answer"]["p99"], d["errors"], str(d["ingests"])]
        for name, d in (("bundled model, deferred embedding", ours), ("keyword-only server (peer)", peer))
    ]
    first = data["first_search_after_ingest"]
    ratio = ours["asker_rps"] / peer["asker_rps"] if peer["asker_rps"] else float("nan")
    by_round = [o / p if p else float("nan") for o, p in zip(ours["rounds_rps"], peer["rounds_rps"], strict=True)]
    text = table(
        f"Readers and writers — {CLIENTS} clients, {WRITERS} ingesting, over {corpus_size} SciFact abstracts: {seconds:g} s per "
        f"server in {ROUNDS} rounds taken in turns (the server out of turn is paused, its workers stopped)",
        ["server", "askers' req/s", "search p50 ms", "search p99 ms", "answer p50 ms", "answer p99 ms", "errors", "ingests by status"],
        rows,
    )
    text += (
        f"\nAskers' throughput against the keyword-only server: {ratio:.2f} (target ≥ 0.70); round by round "
        f"{', '.join(f'{r:.2f} ({new:.0%} new questions)' for r, new in zip(by_round, ours['rounds_new_question_share'], strict=True))}. "
        f"Search and answer p99: {ours['/v1/search']['p99']:.0f} / {ours['/v1/answer']['p99']:.0f} ms (target ≤ 2,000).\n"
        f"First search after a 2-chunk ingest: {first['after_ms']:.1f} ms against {first['before_ms']:.1f} ms just before "
        f"({first['after_ms'] / first['before_ms']:.2f}×, target ≤ 1.5×).\n"
    )
    data["throughput_ratio"], data["throughput_ratio_by_round"] = ratio, by_round
    cost = data["question_embedding"]
    embedding_ms = max(0.0, cost["fresh_ms"] - cost["cached_ms"])
    cores = os.cpu_count() or 1
    bound = ceiling(peer["asker_rps"], embedding_ms, ours["new_question_share"], cores)
    data["ceiling_rps"], data["ceiling_ratio"] = bound, bound / peer["asker_rps"] if peer["asker_rps"] else float("nan")
    text += (
        f"The limit: a question's embedding costs {embedding_ms:.0f} ms as served ({cost['fresh_ms']:.0f} ms for a new "
        f"question's search against {cost['cached_ms']:.0f} ms for it again), and {ours['new_question_share']:.0%} of the "
        f"askers' requests brought a new question. Doing all the keyword-only server does ({cores * 1000 / peer['asker_rps']:.1f} ms "
        f"of CPU per request on {cores} cores, clients included) plus those embeddings, the askers could reach at most {bound:.1f} req/s: "
        f"{data['ceiling_ratio']:.2f} of the peer's. Ours: {ours['asker_rps'] / bound:.0%} of that ceiling.\n"
    )
    background = ours["background_cpu_share"]
    with_background = ceiling(peer["asker_rps"], embedding_ms, ours["new_question_share"], cores, background)
    data["ceiling_with_background_rps"] = with_background
    data["ceiling_with_background_ratio"] = with_background / peer["asker_rps"] if peer["asker_rps"] else float("nan")
    text += (
        f"Our background embedder (nice 10) took {background:.0%} of the cores, computing the vectors of what the writers "
        f"ingested, work the peer never does; with the rest, the ceiling is {with_background:.1f} req/s "
        f"({data['ceiling_with_background_ratio']:.2f} of the peer's), and ours is {ours['asker_rps'] / with_background:.0%} of it. "
        f"Server CPU per asker request outside the background embedder: ours {ours['server_cpu_ms_per_asker_request']:.1f} ms "
        f"(the question embeddings included), the peer's {peer['server_cpu_ms_per_asker_request']:.1f} ms.\n"
    )
    write_result("mixed", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60, help=f"seconds of load per server, in {ROUNDS} rounds taken in turns")
    parser.add_argument("--corpus", type=int, default=100, help="SciFact abstracts indexed before the load")
    args = parser.parse_args()
    run(args.seconds, args.corpus)
