"""Streamed answers on `sourcerer serve`: time to the first byte, to the first valid citation and to the final
event, beside the same answer not streamed — extractive, and through an OpenAI-compatible model (a fake on
127.0.0.1 that writes its reply at a model's pace: first token after `--first-token-ms`, then a chunk every
`--chunk-ms`), at 1 and 16 clients.

The model's reply quotes the first three sentences of the sources it is sent, each citing its source, so every
answer is cited and supported; the bundled handbook is the corpus, searched with the bundled model (the 4 best sections,
no retrieval floor, so the model writes from several).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import signal
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path

from bench.common import serve_env, start_serve, table, write_result
from bench.metrics import percentile

QUESTIONS = [
    "How long did the failover cutover take?",
    "When is chat support available?",
    "How fast does the on-call engineer acknowledge a page?",
    "How long do refunds take?",
]


class PacedModel:
    """An OpenAI-compatible chat endpoint that writes like a model: streamed (SSE) or whole after the same time."""

    def __init__(self, first_token_s: float, chunk_s: float, chunk_chars: int = 8) -> None:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                content = model.reply(body["messages"][-1]["content"])
                pieces = [content[i : i + chunk_chars] for i in range(0, len(content), chunk_chars)]
                time.sleep(first_token_s)
                self.send_response(200)
                if body.get("stream"):
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for piece in pieces:
                        chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(chunk_s)
                    usage = {"prompt_tokens": 300, "completion_tokens": len(pieces)}
                    self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n".encode())
                    return
                time.sleep(chunk_s * len(pieces))  # the same writing time, delivered at once
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/chat/completions"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def reply(prompt: str) -> str:
        """The first three sentences of the sources, in their order, each citing its source."""
        sentences: list[tuple[str, int]] = []
        for number, text in re.findall(r'<source id="(\d+)"[^>]*>\n(.*?)\n</source>', prompt, re.S):
            body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
            sentences += [(s.rstrip("."), int(number)) for s in re.split(r"(?<=[.!?])\s+", body.strip()) if s]
        chosen = sentences[:3]
        answer = " ".join(f"{s} [{n}]." for s, n in chosen)
        return json.dumps({"refused": False, "citations": sorted({n for _, n in chosen}), "answer": answer})


def _timed(client, question: str, streamed: bool) -> dict[str, float]:
    started = time.perf_counter()
    marks: dict[str, float] = {}
    if not streamed:
        response = client.post("/v1/answer", json={"q": question, "top_k": 4, "min_score": 0})
        assert response.status_code == 200, response.text
        marks["done"] = time.perf_counter() - started
        return marks
    with client.stream("POST", "/v1/answer", json={"q": question, "top_k": 4, "min_score": 0}, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            now = time.perf_counter() - started
            marks.setdefault("first_byte", now)
            if line.startswith("event: citation"):
                marks.setdefault("first_citation", now)
            if line.startswith("event: done"):
                marks["done"] = now
    return marks


def _level(url: str, key: str, clients: int, requests: int, streamed: bool) -> dict[str, float]:
    import httpx

    def worker(n: int) -> list[dict[str, float]]:
        out = []
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as client:
            for i in range(requests):
                out.append(_timed(client, QUESTIONS[(n + i) % len(QUESTIONS)], streamed))
        return out

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        marks = [m for batch in pool.map(worker, range(clients)) for m in batch]
    return {
        f"{name}_p50_ms": percentile([m[name] * 1000 for m in marks if name in m], 50)
        for name in ("first_byte", "first_citation", "done")
    }


def run(requests: int = 6, first_token_ms: float = 300, chunk_ms: float = 15) -> dict:
    import httpx
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.tenancy import new_key

    model = PacedModel(first_token_ms / 1000, chunk_ms / 1000)
    handbook = {p.name: p.read_text(encoding="utf-8") for p in resources.files("sourcerer").joinpath("data/handbook").iterdir()}
    rows, data = [], {"requests_per_client": requests, "first_token_ms": first_token_ms, "chunk_ms": chunk_ms, "levels": {}}
    for synthesiser, extra in (
        ("extractive", {"SOURCERER_PROVIDERS": "extractive"}),
        ("LLM (paced fake)", {"SOURCERER_PROVIDERS": "openai", "SOURCERER_API_KEY": "sk-bench", "SOURCERER_ENDPOINT": model.url, "SOURCERER_MODEL": "paced"}),
    ):
        home = Path(tempfile.mkdtemp(prefix="sourcerer-stream-"))
        env = {**serve_env(home), "SOURCERER_ANSWER_CACHE": "false", **extra}
        ledger = SQLiteLedger(home / "ledger.db")
        ledger.create_tenant("bench", "enterprise")
        key, record = new_key("bench", ["bench"], ["read", "write"])
        ledger.put_key(record)
        server, url = start_serve(env, home / "server.log")
        try:
            with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as client:
                for name, text in handbook.items():
                    client.post("/v1/documents", json={"source_uri": name, "text": text}).raise_for_status()
                for question in QUESTIONS:  # warm: each question's embedding is cached before either is timed
                    _timed(client, question, False)
            for clients in (1, 16):
                whole = _level(url, key, clients, requests, streamed=False)
                streamed = _level(url, key, clients, requests, streamed=True)
                rows.append([synthesiser, clients, streamed["first_byte_p50_ms"], streamed["first_citation_p50_ms"], streamed["done_p50_ms"], whole["done_p50_ms"]])
                data["levels"][f"{synthesiser}, {clients} clients"] = {"streamed": streamed, "not_streamed": whole}
        finally:
            os.kill(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    model.httpd.shutdown()
    text = table(
        f"Streaming — POST /v1/answer on sourcerer serve, p50 over {requests} requests per client (the LLM: first token "
        f"after {first_token_ms:g} ms, a chunk every {chunk_ms:g} ms)",
        ["synthesiser", "clients", "streamed: first byte ms", "first valid citation ms", "final event ms", "not streamed ms"],
        rows,
    )
    text += (
        "\nThe first byte is the retrieve event (the hits), sent before synthesis; the first valid citation comes with the "
        "first sentence the gate could check; an extractive answer is made at once, so its citation comes with its end.\n"
    )
    write_result("streaming", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=6, help="requests per client at each level (default 6)")
    parser.add_argument("--first-token-ms", type=float, default=300)
    parser.add_argument("--chunk-ms", type=float, default=15)
    args = parser.parse_args()
    run(args.requests, args.first_token_ms, args.chunk_ms)
