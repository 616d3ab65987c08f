"""`sourcerer serve`: the same API on a laptop, against the embedded index and ledger.

Each HTTP request becomes an API Gateway (REST, proxy) event and goes through the very resolver the Lambda
functions use, so local and cloud behaviour cannot drift.
"""

from __future__ import annotations

import json
import logging
import socket
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

log = logging.getLogger("sourcerer.serve")
MAX_BODY_BYTES = 8 * 1024 * 1024  # a little over the document limit once base64 and JSON are counted
REQUEST_TIMEOUT_S = 15


class LocalContext:
    """The few Lambda context attributes Powertools reads."""

    function_name = "sourcerer-local"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:sourcerer-local"
    memory_limit_in_mb = 1024
    log_group_name = "local"
    log_stream_name = "local"

    def __init__(self) -> None:
        self.aws_request_id = uuid.uuid4().hex

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def to_event(
    method: str, raw_path: str, headers: dict[str, str], body: str | None, source_ip: str = "127.0.0.1"
) -> dict[str, Any]:
    """An API Gateway REST proxy event for one HTTP request."""
    parts = urlsplit(raw_path)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    multi: dict[str, list[str]] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        multi.setdefault(key, []).append(value)
    request_id = uuid.uuid4().hex
    return {
        "resource": parts.path,
        "path": parts.path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": request_id,
            "stage": "local",
            "httpMethod": method,
            "path": parts.path,
            "resourcePath": parts.path,
            "identity": {"sourceIp": source_ip},
        },
        "body": body,
        "isBase64Encoded": False,
    }


def make_server(host: str = "127.0.0.1", port: int = 8080) -> ThreadingHTTPServer:
    from sourcerer.api import build_app

    app = build_app()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = REQUEST_TIMEOUT_S  # socket timeout: a slow or stalled client cannot hold a worker

        def setup(self) -> None:
            super().setup()
            # headers and body leave in separate writes; without TCP_NODELAY, Nagle's algorithm and delayed
            # ACKs add ~40 ms to every keep-alive response
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _handle(self) -> None:
            raw_length = self.headers.get("Content-Length")
            if raw_length is not None and not raw_length.strip().isdigit():
                self.close_connection = True
                self._send(400, _error_body("bad_request", "Content-Length must be a non-negative integer"), {})
                return
            length = int(raw_length or 0)
            if length > MAX_BODY_BYTES:
                self.close_connection = True
                self._send(413, _error_body("payload_too_large", "request body too large"), {})
                return
            try:
                body = self.rfile.read(length).decode("utf-8", "replace") if length else None
            except TimeoutError:  # a client that stalls mid-body does not keep the worker
                self.close_connection = True
                self._send(408, _error_body("request_timeout", f"the body did not arrive within {REQUEST_TIMEOUT_S} s"), {})
                return
            event = to_event(self.command, self.path, {k: v for k, v in self.headers.items()}, body, self.client_address[0])
            try:
                result = app.resolve(event, LocalContext())
            except Exception:  # noqa: BLE001 - never a stack trace to a client; the operator gets it
                log.exception("%s %s failed", self.command, urlsplit(self.path).path)
                self._send(500, _error_body("internal", "internal error"), {})
                return
            headers = dict(result.get("headers") or {})
            for key, values in (result.get("multiValueHeaders") or {}).items():
                headers[key] = values[-1]
            self._send(result["statusCode"], result.get("body") or "", headers)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """What the standard library answers itself (a garbage request line, an oversized header): JSON, not
            an HTML page, and the connection closed."""
            self.close_connection = True
            if self.request_version == "HTTP/0.9":  # a garbage request line: still answer with a status line
                self.request_version = "HTTP/1.1"
            try:
                self._send(code, _error_body("bad_request" if code < 500 else "internal", message or "bad request"), {})
            except OSError:
                pass

        def __getattr__(self, name: str) -> Any:
            # every method, declared or not (TRACE, OPTIONS, HEAD, FOO), goes to the resolver, which answers
            # 405 with `Allow` for a known path and 404 otherwise, instead of the standard library's HTML 501
            if name.startswith("do_"):
                return self._handle
            raise AttributeError(name)

        def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
            self.send_response(status)
            headers.setdefault("Content-Type", "application/json")
            for key, value in headers.items():
                if key.lower() not in ("content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Server((host, port), Handler)


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog; the default of 5 reset connections at 16 clients


def _error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
