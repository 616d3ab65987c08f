"""A document's original as an HTTP response: whole or one byte range (RFC 9110), labelled so that a browser
never runs it as a page of this origin."""

from __future__ import annotations

import re
from urllib.parse import quote

from aws_lambda_powertools.event_handler import Response

from sourcerer.errors import RangeNotSatisfiable
from sourcerer.service.core import Original

ORIGINAL_CONTENT = {kind: {"schema": {"type": "string", "format": "binary"}} for kind in ("application/pdf", "text/plain")}


def original_response(original: Original, byte_range: str | None) -> Response:
    """A PDF as PDF; anything else as `text/plain` whatever it holds (a document's HTML is data); every original
    with a sandboxing Content-Security-Policy and no sniffing."""
    content, total = original.content, len(original.content)
    name = original.source_uri.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    headers = {
        "Accept-Ranges": "bytes",
        "Cache-Control": "private, max-age=300",
        "Content-Disposition": "inline; filename*=UTF-8''" + quote(name, safe=""),
        "Content-Security-Policy": "sandbox; default-src 'none'",
        "X-Content-Type-Options": "nosniff",
    }
    content_type = "application/pdf" if original.content_type == "application/pdf" else "text/plain; charset=utf-8"
    wanted = parse_range(byte_range, total) if byte_range else None
    status, body = (200, content) if wanted is None else (206, content[wanted[0] : wanted[1] + 1])
    if wanted is not None:
        headers["Content-Range"] = f"bytes {wanted[0]}-{wanted[1]}/{total}"
    # text goes out as text (API Gateway passes it as is); a PDF as bytes, which API Gateway returns as binary for
    # `Accept: application/pdf` (the stack's BinaryMediaTypes)
    return Response(status_code=status, content_type=content_type, body=_as_text(body, content_type), headers=headers)


def _as_text(body: bytes, content_type: str) -> str | bytes:
    """Text as text; a PDF, or a range that cuts a character in two, as the exact bytes."""
    if content_type == "application/pdf":
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body


def parse_range(header: str, total: int) -> tuple[int, int] | None:
    """One `bytes=` range as (first, last), inclusive; None to send the whole content (another unit, several
    ranges, or a malformed header, which a server may ignore). Raises `RangeNotSatisfiable` past the end."""
    match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = match.group(1), match.group(2)
    if first == "":  # the last N bytes
        if int(last) == 0 or total == 0:
            raise RangeNotSatisfiable(f"the original is {total} bytes", total)
        return max(0, total - int(last)), total - 1
    start = int(first)
    if start >= total:
        raise RangeNotSatisfiable(f"the original is {total} bytes", total)
    end = min(int(last), total - 1) if last else total - 1
    return None if end < start else (start, end)
