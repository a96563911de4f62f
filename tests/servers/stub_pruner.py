"""A stub swe-pruner HTTP endpoint on 127.0.0.1 with one path per behaviour, served from a thread of the test process.

/ok        200 {"pruned_code": <the code's lines that contain the query's first word>}
/content   200 {"content": "pruned via content"}
/text      200 {"text": "pruned via text"}
/slow      answers after `slow_seconds` (past the pruner timeout)
/trickle   a valid answer sent a byte at a time, `trickle_seconds` apart: each read is quick, the whole is slow
/error     500
/badjson   200 with a body that is not JSON
/notext    200 {"score": 0.5} (no text field)
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, **body})
        match self.path:
            case "/ok":
                word = body["query"].split()[0]
                kept = [line for line in body["code"].splitlines() if word in line]
                self._json(200, {"pruned_code": "\n".join(kept), "score": 0.9})
            case "/content":
                self._json(200, {"content": "pruned via content"})
            case "/text":
                self._json(200, {"text": "pruned via text"})
            case "/slow":
                time.sleep(self.server.slow_seconds)
                self._json(200, {"pruned_code": "too late"})
            case "/trickle":
                self._trickle(200, json.dumps({"pruned_code": "too late"}).encode())
            case "/error":
                self._json(500, {"detail": "Model not loaded"})
            case "/badjson":
                self._send(200, b"<html>not json</html>", "text/html")
            case "/notext":
                self._json(200, {"score": 0.5})
            case _:
                self._json(404, {"detail": "no such path"})

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that timed out has gone
            self.wfile.write(body)

    def _trickle(self, status: int, body: bytes) -> None:
        head = f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self.close_connection = True
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up: stop
            for byte in head.encode() + body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.server.trickle_seconds)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows stderr of failing tests only
        pass


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True
    slow_seconds = 3.0
    trickle_seconds = 0.05
    requests: list[dict[str, Any]]


@contextlib.contextmanager
def stub_pruner() -> Iterator[_StubServer]:
    """The running stub; its base URL is `f"http://127.0.0.1:{server.server_port}"`."""
    server = _StubServer(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
