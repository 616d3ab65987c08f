"""`sourcerer serve`'s own parts: the WSGI adapter, worker sizing, and gunicorn's parse errors as JSON."""

import io
import json
import socket

from sourcerer.http import serve
from sourcerer.http.serve import LocalContext, to_event


def test_each_worker_gets_the_cores_shared_out_and_at_least_one_model_thread(monkeypatch):
    monkeypatch.setattr(serve.os, "sched_getaffinity", lambda _: set(range(8)), raising=False)
    assert serve.default_workers() == 8
    assert serve.model_threads(8) == 1 and serve.model_threads(2) == 4 and serve.model_threads(16) == 1


def test_request_headers_keep_the_names_clients_send():
    environ = {
        "HTTP_AUTHORIZATION": "Bearer sk_x",
        "HTTP_X_SOURCERER_SCOPE": "acme/alpha",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": "12",
        "wsgi.input": io.BytesIO(b""),
    }
    assert serve._headers(environ) == {
        "Authorization": "Bearer sk_x",
        "X-Sourcerer-Scope": "acme/alpha",
        "Content-Type": "application/json",
        "Content-Length": "12",
    }


def test_a_request_gunicorn_cannot_parse_gets_our_json_error():
    left, right = socket.socketpair()
    with left, right:
        serve.write_json_error(left, 400, "Bad Request", "Invalid HTTP Version 'HTTP/9.9'")
        head, _, body = right.recv(4096).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 505 HTTP Version Not Supported") and b"Content-Type: application/json" in head
    assert json.loads(body)["error"]["code"] == "http_version_not_supported"
    left, right = socket.socketpair()
    with left, right:
        serve.write_json_error(left, 431, "Request Header Fields Too Large", "too many headers")
        head, _, body = right.recv(4096).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431") and json.loads(body) == {
        "error": {"code": "bad_request", "message": "too many headers"}
    }


def test_one_resolver_shared_by_many_threads_keeps_each_request_its_own(tmp_path, monkeypatch):
    """Powertools keeps the request being resolved in class attributes; `sourcerer serve` shares one resolver
    between threads, so each request's state lives in a context variable (http/resolver.py)."""
    import concurrent.futures

    from sourcerer.http import api
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.admin import issue_key
    from sourcerer.service.core import Service
    from sourcerer.store.sqlite import SQLiteIndex

    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    monkeypatch.setattr(api, "get_service", lambda: service)
    keys = {t: issue_key(service.ledger, t, [t], ["read"], tier="pro").key for t in ("acme", "globex")}
    app = api.build_app()

    def call(i: int) -> tuple[str, str, str]:
        tenant = ("acme", "globex")[i % 2]
        event = to_event("GET", "/v1/documents", {"Authorization": f"Bearer {keys[tenant]}"}, None)
        event["requestContext"]["requestId"] = f"r{i}"
        body = json.loads(app.resolve(event, LocalContext())["body"])
        return tenant, body["context"]["tenant"], body["context"]["scopes"][0]

    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        seen = list(pool.map(call, range(2000)))
    assert [s for s in seen if not s[0] == s[1] == s[2]] == []


def test_the_spec_is_built_once_even_when_threads_ask_for_it_together():
    """The docs page fetching /openapi.json while another request's 404 looks up the route table: Powertools builds
    the spec in shared state, and two threads building it at once answered 500 (a KeyError)."""
    import concurrent.futures

    from sourcerer.http import api

    app = api.build_app()

    def call(i: int) -> int:
        path = "/openapi.json" if i % 2 else f"/nothing-{i}"
        return app.resolve(to_event("GET", path, {}, None), LocalContext())["statusCode"]

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(call, range(64)))
    assert set(statuses) == {200, 404}


def test_the_powertools_members_the_concurrent_resolver_overrides_are_still_there():
    """`ConcurrentRestResolver` replaces Powertools' per-process request state with a per-request one by overriding
    members Powertools keeps private. Powertools is pinned to one minor version; on an upgrade, this test names
    what moved before any request can read another's caller."""
    import inspect
    from importlib.metadata import version

    from aws_lambda_powertools.event_handler import APIGatewayRestResolver
    from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

    installed = version("aws-lambda-powertools")
    assert installed.startswith("3.37."), f"Powertools {installed}: review http/resolver.py, then move the pin"
    import aws_lambda_powertools.event_handler.api_gateway as api_gateway

    source = inspect.getsource(api_gateway)
    # where Powertools keeps one request's state: what our properties redirect to a per-request context variable
    kept = ("BaseRouter.current_event =", "BaseRouter.lambda_context =", "self.context[", "self.processed_stack_frames")
    assert all(k in source for k in kept), [k for k in kept if k not in source]
    steps = ("_to_proxy_event", "_build_response", "_resolve")  # what our resolve() calls, as Powertools' does
    assert all(hasattr(APIGatewayRestResolver, m) for m in steps), [m for m in steps if not hasattr(APIGatewayRestResolver, m)]
    assert all(m in inspect.getsource(APIGatewayRestResolver.resolve) for m in steps), "Powertools' resolve() changed its steps"
    assert not hasattr(BaseRouter, "_request_state")  # our own member does not shadow one of theirs
