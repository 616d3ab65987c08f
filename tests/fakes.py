"""Fakes that speak real wire formats on 127.0.0.1: a scripted HTTP server and OpenAI response bodies."""

from __future__ import annotations

import json
import threading
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
                if server.responses:
                    server.last = server.responses.popleft()
                status, payload, headers = server.last
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
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
