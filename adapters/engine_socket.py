"""Streamed reads of a local engine's API straight over its Unix socket, with the standard library's http.client.

Log reads are most of what `jarvis_diagnose logs` costs, and through requests each one pays about 0.6 ms of
CPU more (session, adapter and pool machinery) than the request itself; with several services read at once
that is most of the time, since the reads share one interpreter. Each read here opens its own connection
(a Unix socket connects in microseconds): a read stopped early closes its connection, so no unread bytes can
ever reach another read. Remote hosts (tcp, TLS, ssh) keep docker-py's transport.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Generator, Mapping
from urllib.parse import urlencode

CHUNK = 64 * 1024


class EngineUnreachable(Exception):
    """The socket could not be reached, or the connection broke during the read."""


class EngineRefused(Exception):
    """The engine answered with an HTTP error (e.g. 404: no such container)."""

    def __init__(self, status: int, explanation: str) -> None:
        super().__init__(f"{status}: {explanation}")
        self.status = status
        self.explanation = explanation


class _UnixConnection(http.client.HTTPConnection):
    # HTTP/1.0: the engine then sends the body as it is, up to the connection's end, instead of one HTTP chunk
    # per log entry (a read of 1,000 entries was 1,000 chunk parses in Python); one read per connection anyway.
    _http_vsn = 10
    _http_vsn_str = "HTTP/1.0"

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def stream(
    socket_path: str, api_version: str, path: str, params: Mapping[str, object], timeout: float
) -> Generator[bytes]:
    """GET `/v<api_version><path>?<params>` and yield the body as it arrives (chunked transfer decoded).
    Closing the iterator closes the connection."""
    connection = _UnixConnection(socket_path, timeout)
    try:
        try:
            connection.request("GET", f"/v{api_version}{path}?{urlencode(params)}")
            response = connection.getresponse()
            if response.status >= 400:
                raise EngineRefused(response.status, _explanation(response.read(CHUNK)))
            while chunk := response.read1(CHUNK):
                yield chunk
        except (OSError, http.client.HTTPException) as exc:
            raise EngineUnreachable(f"{socket_path}: {exc or type(exc).__name__}") from exc
    finally:
        connection.close()


def _explanation(body: bytes) -> str:
    """The engine's `{"message": ...}`, else the body's text."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        message = json.loads(text).get("message")
    except (ValueError, AttributeError):
        return text[:300]
    return str(message or text)[:300]
