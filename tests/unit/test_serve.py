"""`sourcerer serve`'s own parts: the WSGI adapter, worker sizing, and gunicorn's parse errors as JSON."""

import io
import json
import socket

from sourcerer.http import serve


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
