"""Fakes that speak real wire formats on 127.0.0.1: a scripted HTTP server and OpenAI response bodies."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHIPPING = "Standard shipping takes 3 to 5 business days within the continental United States."
RETURNS = "Returns are accepted within 30 days of delivery for a full refund on unused items."


class ScriptedServer:
    """An HTTP server on 127.0.0.1 answering POSTs from a script of (status, body, headers) in order.

    The last scripted response repeats when the script runs out. Every request body is recorded.
    """

    def __init__(self) -> None:
        self.responses: deque[tuple[int, Any, dict[str, str]]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.last: tuple[int, Any, dict[str, str]] = (500, {"error": "no script"}, {})
        self.delay_s = 0.0  # a slow (or hung) upstream: every answer waits this long
        self.chunk_delay_s = 0.0  # between the pieces of a streamed body (a payload given as a list)
        # a model that reads what it is sent: (request body) -> (status, payload, headers), instead of the script
        self.responder: Any = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                server.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                time.sleep(server.delay_s)
                if server.responder is not None:
                    status, payload, headers = server.responder(body)
                else:
                    if server.responses:
                        server.last = server.responses.popleft()
                    status, payload, headers = server.last
                headers = dict(headers)
                self.send_response(status)
                self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
                for key, value in headers.items():
                    self.send_header(key, value)
                if isinstance(payload, list):  # a stream: each piece written and flushed, the body ends at close
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for piece in payload:
                        self.wfile.write(piece if isinstance(piece, bytes) else piece.encode())
                        self.wfile.flush()
                        time.sleep(server.chunk_delay_s)
                    return
                data = payload if isinstance(payload, bytes) else payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def script(self, *responses: tuple) -> None:
        for response in responses:
            status, payload, *rest = response
            self.responses.append((status, payload, rest[0] if rest else {}))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_completion(content: str, prompt_tokens: int = 120, completion_tokens: int = 30) -> dict:
    """A response body in the OpenAI chat completions wire format."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply(answer: str, citations: list, refused: bool = False) -> str:
    return json.dumps({"answer": answer, "citations": citations, "refused": refused})


def streamed_reply(answer: str, citations: list, refused: bool = False) -> str:
    """The reply JSON in the order the prompt asks for (refused, citations, then the answer), as a model streams it."""
    return json.dumps({"refused": refused, "citations": citations, "answer": answer})


def chat_completion_stream(content: str, piece: int = 7, prompt_tokens: int = 120, completion_tokens: int = 30) -> list[str]:
    """`content` as OpenAI chat-completion chunks (server-sent events, `piece` characters each), the usage chunk,
    then `data: [DONE]` — the wire format of `stream: true` with `stream_options.include_usage`."""
    def event(chunk: dict) -> str:
        return "data: " + json.dumps(chunk) + "\n\n"

    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-model"}
    events = [event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
    for at in range(0, len(content), piece):
        delta = {"content": content[at : at + piece]}
        events.append(event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
    events.append(event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    events.append(event({**base, "choices": [], "usage": usage}))
    events.append("data: [DONE]\n\n")
    return events


SSE = {"Content-Type": "text/event-stream"}


class FakeOpenSearch:
    """A loopback HTTP server that records what opensearch-py sends and answers from a routing table.

    `routes[(METHOD, path)]` is a list of (status, body) answered in turn (the last one repeats). Request
    bodies are recorded parsed: JSON objects, or lists of objects for NDJSON (_bulk, _msearch).
    """

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[tuple[int, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length", 0) or 0)
                raw = self.rfile.read(length).decode("utf-8") if length else ""
                body: Any = None
                if raw.strip():
                    lines = [line for line in raw.split("\n") if line.strip()]
                    body = (
                        json.loads(raw)
                        if len(lines) == 1 and not path.endswith(("_bulk", "_msearch"))
                        else [json.loads(line) for line in lines]
                    )
                fake.requests.append({"method": self.command, "path": path, "query": query, "body": body})
                answers = fake.routes.get((self.command, path)) or [(404, {"error": f"no route {self.command} {path}"})]
                status, payload = answers.pop(0) if len(answers) > 1 else answers[0]
                data = b"" if self.command == "HEAD" else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if data:
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def route(self, method: str, path: str, *answers: tuple[int, Any]) -> None:
        self.routes[(method, path)] = list(answers)

    def sent(self, method: str, path: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == method and r["path"] == path]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    """A port free on 127.0.0.1 now (for a server that must come back on the same one)."""
    from embedded import free_ports  # tools/opensearch/embedded.py: a cluster's nodes need the same

    return free_ports(1)[0]


def serve_env(home: Any, **extra: str) -> dict[str, str]:
    """The environment of a `sourcerer serve` subprocess: this one, its home, no model, this venv on PATH."""
    from pathlib import Path

    return {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "SOURCERER_EMBEDDER": "none",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        **extra,
    }


def start_serve(env: dict[str, str], port: int = 0) -> tuple[subprocess.Popen, str]:
    """`sourcerer serve --port PORT` (default 0: any free port) in a subprocess with `env`; returns it and its URL
    once it listens. Its stderr goes to `server.log` under SOURCERER_HOME (a pipe nobody reads would fill and
    stall it); `server_log(process)` reads it back for a failing assertion's message."""
    os.makedirs(env["SOURCERER_HOME"], exist_ok=True)
    log = open(os.path.join(env["SOURCERER_HOME"], "server.log"), "a")  # noqa: SIM115 - lives as long as the server
    process = subprocess.Popen(
        [sys.executable, "-m", "sourcerer.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: a test can kill the server and its workers at once
    )
    process.log_path = log.name  # type: ignore[attr-defined]
    for _ in range(5):
        match = re.search(r"http://127\.0\.0\.1:\d+", process.stdout.readline())  # type: ignore[union-attr]
        if match:
            return process, match.group()
    process.kill()
    raise RuntimeError(f"sourcerer serve did not start: {server_log(process)}")


def server_log(process: subprocess.Popen, tail: int = 4000) -> str:
    with open(process.log_path) as handle:  # type: ignore[attr-defined]
        return handle.read()[-tail:]


class HashedEmbedder:
    """Deterministic, distinct 16-d unit vectors per text (no model), counting the texts it embeds: exact and
    graph search have something to rank, and a test can tell which process did the embedding."""

    model_id = "test:hashed"

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def embed(self, texts, role):
        import hashlib

        import numpy as np

        with self._lock:
            self.calls += len(texts)
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(16) for t in texts]
        matrix = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
        return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)

    def calibrate(self, cosine):
        return (cosine + 1) / 2


def event_stream_message(event_type: str, payload: dict) -> bytes:
    """One message of the AWS event stream encoding (`application/vnd.amazon.eventstream`), as Bedrock's
    ConverseStream sends it: prelude (total and header lengths, CRC32), string headers, JSON payload, CRC32."""
    import binascii
    import struct

    def header(name: str, value: str) -> bytes:
        raw_name, raw_value = name.encode(), value.encode()
        return struct.pack("B", len(raw_name)) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value

    headers = header(":event-type", event_type) + header(":content-type", "application/json") + header(":message-type", "event")
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


def converse_stream(content: str, piece: int = 9) -> list[bytes]:
    """`content` as a ConverseStream response body: messageStart, contentBlockDelta pieces, contentBlockStop,
    messageStop and metadata (usage) events."""
    events = [event_stream_message("messageStart", {"role": "assistant"})]
    for at in range(0, len(content), piece):
        events.append(event_stream_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": content[at : at + piece]}}))
    events.append(event_stream_message("contentBlockStop", {"contentBlockIndex": 0}))
    events.append(event_stream_message("messageStop", {"stopReason": "end_turn"}))
    usage = {"inputTokens": 210, "outputTokens": 25, "totalTokens": 235}
    events.append(event_stream_message("metadata", {"usage": usage, "metrics": {"latencyMs": 12}}))
    return events


EVENT_STREAM = {"Content-Type": "application/vnd.amazon.eventstream"}
