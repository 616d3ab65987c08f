"""`sourcerer serve`: the same API on a laptop or a VM, against the embedded index and ledger.

Each HTTP request becomes an API Gateway (REST, proxy) event and goes through the very resolver the Lambda
functions use, so local and cloud behaviour cannot drift. The HTTP side is gunicorn (no hand-written server):
one worker process per core, each with a few threads, the model and index loaded when the worker starts.

Why processes and threads: the embedding model's C engine releases the GIL and holds no shared mutable state,
so threads overlap I/O with inference inside a worker, and one process per core puts every core to work on
the Python parts (JSON, pydantic, scoring), which the GIL would otherwise serialise. Each worker runs its
model with `cores // workers` OpenMP threads (one on 2 cores with 2 workers), set before the model loads,
with a passive wait policy so idle OpenMP threads do not spin. The threads share one resolver, which keeps
each request's state in a context variable (`sourcerer.http.resolver`): Powertools' own keeps it per process.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

from sourcerer.http.events import wants_events
from sourcerer.http.resolver import API_HEADERS, PAGE_HEADERS

log = logging.getLogger("sourcerer.http.serve")
MAX_BODY_BYTES = 8 * 1024 * 1024  # a little over the document limit once base64 and JSON are counted
REQUEST_TIMEOUT_S = 15
THREADS_PER_WORKER = 4
LOCAL_ORIGINS = "http://localhost:*,http://127.0.0.1:*"  # CORS default of `sourcerer serve`
BACKLOG = 2048  # pending connections the kernel holds; 64 clients connecting at once must never be reset


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
    method: str, path: str, headers: dict[str, str], body: str | None, source_ip: str = "127.0.0.1", query: str = ""
) -> dict[str, Any]:
    """An API Gateway REST proxy event for one HTTP request (`path` may carry its query string after `?`)."""
    path, _, inline_query = path.partition("?")
    pairs = parse_qsl(query or inline_query, keep_blank_values=True)
    multi: dict[str, list[str]] = {}
    for key, value in pairs:
        multi.setdefault(key, []).append(value)
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": dict(pairs) or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": uuid.uuid4().hex,
            "stage": "local",
            "httpMethod": method,
            "path": path,
            "resourcePath": path,
            "identity": {"sourceIp": source_ip},
        },
        "body": body,
        "isBase64Encoded": False,
    }


# --- WSGI: one function between gunicorn and the resolver ---------------------------------------------------

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


def _headers(environ: dict[str, Any]) -> dict[str, str]:
    """Request headers from a WSGI environ, named the way HTTP clients write them (X-Sourcerer-Scope)."""
    out = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            out[key[5:].replace("_", "-").title()] = value
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            out[key.replace("_", "-").title()] = environ[key]
    return out


def make_wsgi_app(background_embedding: bool = True) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """The WSGI application: builds the resolver and warms the service (index, ledger, model) at worker start.

    With `background_embedding` (and an embedded index with a model), an ingest answers once the document is
    keyword-searchable and its vectors are filled by a background thread (see `sourcerer.store.background`)."""
    from sourcerer.http.api import build_app, openapi_spec
    from sourcerer.service.wiring import get_service
    from sourcerer.settings import get_settings
    from sourcerer.store.base import EmbeddedIndex

    # one resolver for every thread: each request's state is its own (see http/resolver.py); browsers on any
    # localhost port may call a local server unless SOURCERER_CORS_ORIGINS says otherwise
    app = build_app(cors_origins=get_settings().cors_origins or LOCAL_ORIGINS)
    openapi_spec(app)  # built once, before any request: the docs page and every 404/405 read it
    warm = get_service()
    local = isinstance(warm.index, EmbeddedIndex)
    if local:
        warm.index.serve_long_running()
    if warm.index.embedder is not None:  # the first request must not pay for loading the model
        warm.index.embedder.embed(["warm up"], "query")
        if background_embedding and local:
            from sourcerer.store.background import BackgroundEmbedder

            warm.index.defer_embedding = True
            BackgroundEmbedder(warm.index).start()

    def application(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] in ("GET", "HEAD") and (environ.get("PATH_INFO") or "") in DOCS:
            return _docs(environ, start_response)
        raw_length = environ.get("CONTENT_LENGTH") or "0"
        if not raw_length.isdigit():
            return _reply(start_response, 400, _error_body("bad_request", "Content-Length must be a non-negative integer"))
        if int(raw_length) > MAX_BODY_BYTES:
            return _reply(start_response, 413, _error_body("payload_too_large", "request body too large"))
        sock = environ.get("gunicorn.socket")
        previous = sock.gettimeout() if sock is not None else None
        try:
            if sock is not None:  # a client that stalls mid-body does not keep the thread
                sock.settimeout(REQUEST_TIMEOUT_S)
            data = environ["wsgi.input"].read(int(raw_length)) if int(raw_length) else b""
        except (TimeoutError, OSError):
            return _reply(
                start_response, 408, _error_body("request_timeout", f"the body did not arrive within {REQUEST_TIMEOUT_S} s")
            )
        finally:
            if sock is not None:
                sock.settimeout(previous)
        if len(data) < int(raw_length):
            return _reply(start_response, 400, _error_body("bad_request", "the body ended before Content-Length"))
        try:
            text = data.decode("utf-8") if data else None
        except UnicodeDecodeError as exc:  # never guessed at with replacement characters: the caller re-sends
            return _reply(
                start_response, 400, _error_body("invalid_body", f"the body is not valid UTF-8 ({exc.reason} at byte {exc.start})")
            )
        headers = _headers(environ)
        event = to_event(
            environ["REQUEST_METHOD"],
            # the path as sent (still percent-encoded), as the standard library server passed it: PATH_INFO is
            # decoded as latin-1, which turns a UTF-8 document id into mojibake that no route matches
            (environ.get("RAW_URI") or environ.get("PATH_INFO") or "/").partition("?")[0],
            headers,
            text,
            environ.get("REMOTE_ADDR", "127.0.0.1"),
            environ.get("QUERY_STRING", ""),
        )
        if event["httpMethod"] == "POST" and event["path"] == "/v1/answer" and wants_events(headers.get("Accept")):
            return _streamed(app, event, start_response, environ.get("gunicorn.socket"))
        try:
            result = app.resolve(event, LocalContext())
        except Exception:  # noqa: BLE001 - never a stack trace to a client; the operator gets it
            log.exception("%s %s failed", environ["REQUEST_METHOD"], environ.get("PATH_INFO"))
            return _reply(start_response, 500, _error_body("internal", "internal error"))
        headers = dict(result.get("headers") or {})
        for key, values in (result.get("multiValueHeaders") or {}).items():
            headers[key] = values[-1]
        body = result.get("body") or ""
        if result.get("isBase64Encoded"):  # bytes (a document's original), base64 in the Lambda proxy format
            body = base64.b64decode(body)
        return _reply(start_response, result["statusCode"], body, headers, head=environ["REQUEST_METHOD"] == "HEAD")

    return application


def _peer_closed(sock: Any) -> bool:
    """Whether the client closed its end: the socket reads as at its end (a pipelined request would read as data)."""
    import select
    import socket

    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _streamed(app: Any, event: dict[str, Any], start_response: StartResponse, sock: Any = None) -> Iterable[bytes]:
    """A streamed answer: the resolver runs in a thread whose route hands each event over as it is made
    (`EVENT_SINK`). Until the first event, nothing is sent, so a refused request (401, 402, 422, ...) is answered
    with its status and JSON error as usual; after it, the response is `text/event-stream`, and a failure is an
    `error` event. A client that leaves before the answer's last words stops it (the next event finds the socket
    closed and raises `ClientGone`), so it is not billed for what it did not receive."""
    import queue

    from sourcerer.errors import ClientGone
    from sourcerer.http.events import EVENT_SINK, EVENT_STREAM, sse

    pieces: queue.Queue[str | None] = queue.Queue()
    gone = threading.Event()
    outcome: dict[str, Any] = {}

    def sink(text: str) -> None:
        if gone.is_set() or (sock is not None and _peer_closed(sock)):
            raise ClientGone("the client of this streamed answer disconnected")
        pieces.put(text)

    def run() -> None:
        EVENT_SINK.set(sink)  # this thread's own context: only this request's route sees it
        try:
            outcome["result"] = app.resolve(event, LocalContext())
        except Exception:  # noqa: BLE001 - never a stack trace to a client; the operator gets it
            log.exception("streamed POST /v1/answer failed")
        finally:
            pieces.put(None)

    threading.Thread(target=run, name="sourcerer-stream", daemon=True).start()
    first = pieces.get()
    result = outcome.get("result")
    if first is None:  # refused before any event: the resolver's reply, as for any request
        if result is None:
            return _reply(start_response, 500, _error_body("internal", "internal error"))
        headers = {k: v[-1] for k, v in (result.get("multiValueHeaders") or {}).items()}
        return _reply(start_response, result["statusCode"], result.get("body") or "", headers)
    stream_headers = {"Content-Type": f"{EVENT_STREAM}; charset=utf-8", "Cache-Control": "no-cache", **API_HEADERS}
    start_response("200 OK", list(stream_headers.items()))

    def body() -> Iterable[bytes]:
        try:
            item: str | None = first
            while item is not None:
                yield item.encode("utf-8")
                item = pieces.get()
            final = outcome.get("result")
            if final is None or final["statusCode"] >= 400:  # failed after it began: said in the stream
                error = json.loads(final["body"]) if final is not None else _error_body("internal", "internal error")
                yield sse({"event": "error", **error}).encode("utf-8")
        finally:
            gone.set()

    return body()


DOCS = {  # the playground, the API docs page and its vendored Swagger UI (http/docs/README.md): path -> (file, type)
    "/": ("playground.html", "text/html; charset=utf-8"),
    "/playground": ("playground.html", "text/html; charset=utf-8"),
    "/playground.js": ("playground.js", "text/javascript; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/favicon.ico": ("favicon.svg", "image/svg+xml"),  # browsers ask for it whatever the page says
    "/docs": ("index.html", "text/html; charset=utf-8"),
    "/docs/": ("index.html", "text/html; charset=utf-8"),
    "/docs/swagger-init.js": ("swagger-init.js", "text/javascript; charset=utf-8"),
    "/docs/swagger-ui-bundle.js": ("swagger-ui-bundle.js", "application/javascript"),
    "/docs/swagger-ui.css": ("swagger-ui.css", "text/css"),
    "/docs/pdf.min.mjs": ("pdf.min.mjs", "text/javascript"),  # pdf.js: the playground renders cited PDF pages
    "/docs/pdf.worker.min.mjs": ("pdf.worker.min.mjs", "text/javascript"),
}


def _docs(environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
    """`GET /` (the playground) and `GET /docs` (Swagger UI for this server's spec), from files in the package."""
    from importlib import resources

    name, kind = DOCS[environ.get("PATH_INFO") or ""]
    body = resources.files("sourcerer.http").joinpath("docs", name).read_bytes()
    headers = [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", "public, max-age=3600")]
    start_response("200 OK", headers + list(PAGE_HEADERS.items()))
    return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]


def _reply(
    start_response: StartResponse, status: int, body: Any, headers: dict[str, str] | None = None, head: bool = False
) -> list[bytes]:
    from http import HTTPStatus

    data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
    headers = {k: v for k, v in (headers or {}).items() if k.lower() not in ("content-length", "connection")}
    headers.setdefault("Content-Type", "application/json")
    for name, value in API_HEADERS.items():  # also on the answers this server gives before the API (413, 408)
        headers.setdefault(name, value)
    headers["Content-Length"] = str(len(data))
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    start_response(f"{status} {reason}", list(headers.items()))
    return [] if head else [data]


def _error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def serve_in_thread(host: str = "127.0.0.1") -> tuple[Any, str]:
    """The API on a free port, served from a daemon thread of this process by the standard library's WSGI server:
    for the demo, which runs a handful of requests and must not start worker processes. Returns (server, base URL)."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = make_server(host, 0, make_wsgi_app(background_embedding=False), handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_port}"


# --- gunicorn ---------------------------------------------------------------------------------------------


def default_workers() -> int:
    """One worker per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def model_threads(workers: int) -> int:
    """OpenMP threads per worker's model: the cores shared out, at least one."""
    return max(1, default_workers() // max(1, workers))


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's answer to a request it cannot parse (garbage request line, bad header), as our JSON error
    body instead of its HTML page. Same signature as `gunicorn.util.write_error`, which it replaces."""
    from gunicorn.util import write_nonblock

    code = "bad_request" if status_int < 500 else "internal"
    if "HTTP Version" in mesg:  # HTTP/9.9: the precise status, as the standard library server answered
        status_int, reason, code = 505, "HTTP Version Not Supported", "http_version_not_supported"
    body = json.dumps(_error_body(code, mesg or reason)).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    write_nonblock(sock, head.encode("latin1") + body)


def run(host: str, port: int, workers: int | None = None, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM with `workers` gunicorn processes (default: one per core)."""
    import gunicorn.util
    from gunicorn.app.base import BaseApplication

    workers = workers or default_workers()
    # read by the model's OpenMP runtime when it loads, in each worker (never loaded in this parent process)
    os.environ["OMP_NUM_THREADS"] = str(model_threads(workers))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    gunicorn.util.write_error = write_json_error  # gunicorn's workers call it for requests they cannot parse

    def when_ready(server: Any) -> None:
        bound = server.LISTENERS[0].sock.getsockname()
        if on_ready is not None:
            on_ready(f"http://{host}:{bound[1]}")

    class Server(BaseApplication):
        def load_config(self) -> None:
            settings = {
                "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
                "workers": workers,
                "worker_class": "gthread",
                "threads": THREADS_PER_WORKER,
                "backlog": BACKLOG,
                "timeout": 120,  # a worker silent this long is restarted (a request is at most seconds)
                "graceful_timeout": 10,
                "keepalive": 5,
                # gunicorn's largest: a 512-character scope of 4-byte UTF-8 characters is ~6 KB percent-encoded
                "limit_request_line": 8190,
                "loglevel": "warning",
                "errorlog": "-",
                "accesslog": None,
                "when_ready": when_ready,
            }
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self) -> Callable[..., Any]:
            return make_wsgi_app()

    try:
        Server().run()
    except SystemExit as exc:  # gunicorn exits through SystemExit; a bind failure is a clean error, not a trace
        if exc.code not in (0, None):
            raise SystemExit(f"sourcerer serve: could not start on {host}:{port} (see the messages above)") from None
    sys.stdout.flush()
