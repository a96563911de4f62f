"""Loopback HTTP servers started by tests: a real MCP server, a plain web server, and a closed port."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PROBE_SERVER = Path(__file__).with_name("probe_mcp_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/mcp"  # bound then released: nothing listens there


@contextlib.contextmanager
def _serving(command: list[str], port: int, timeout: float = 20) -> Iterator[None]:
    # stderr to a file, not a pipe: a chatty server must never block on a full pipe mid-test.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + timeout
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"{command} did not listen on {port}: {log.read()[-2000:]!r}")
                time.sleep(0.05)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def mcp_server(extra_tools: int = 0) -> Iterator[str]:
    port = free_port()
    with _serving([sys.executable, str(PROBE_SERVER), str(port), str(extra_tools)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def plain_web_server() -> Iterator[str]:
    port = free_port()
    with _serving([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], port):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def static_server(directory: Path) -> Iterator[str]:
    """Serves `directory`'s files over HTTP on loopback; yields the base URL (no trailing slash)."""
    port = free_port()
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(directory)]
    with _serving(command, port):
        yield f"http://127.0.0.1:{port}"
