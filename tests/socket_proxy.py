"""A proxy in front of the real Docker socket, which a test can stop and start again: on a Unix socket
(`DockerSocketProxy`) or on a TCP port of 127.0.0.1 (`DockerTcpProxy`, a second Docker host).

Pointing DOCKER_HOST (or a JARVIS_HOSTS entry) at it makes "the daemon is briefly gone" reproducible:
stopped, connections fail like a missing daemon (the socket file is removed, the port refuses); started,
it forwards to the real socket again. `accepted` counts the connections it forwarded.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

REAL_SOCKET = "/var/run/docker.sock"


class DockerSocketProxy:
    def __init__(self, path: Path, upstream: str = REAL_SOCKET, *, coalesce: float = 0.0) -> None:
        self.path = path
        self.upstream = upstream
        self.coalesce = coalesce
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self.accepted = 0

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def _listen(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        return listener

    def _unlisten(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def start(self) -> None:
        listener = self._listen()
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self._unlisten()
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def start_after(self, seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, self.start)
        timer.start()
        return timer

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.upstream)
            with self._lock:
                self._connections += [client, upstream]
                self.accepted += 1
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if self.coalesce:
                    data += self._more_within(source, self.coalesce)
                target.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)

    @staticmethod
    def _more_within(source: socket.socket, seconds: float) -> bytes:
        """What else arrives within `seconds`, so it goes out in one send with what came first (as a slow
        network joins an HTTP response's headers and its first body bytes into one packet)."""
        time.sleep(seconds)
        source.setblocking(False)
        try:
            return source.recv(65536)
        except BlockingIOError:
            return b""
        finally:
            source.setblocking(True)


class DockerTcpProxy(DockerSocketProxy):
    """The same proxy listening on 127.0.0.1: a port chosen at the first start and kept across restarts."""

    def __init__(self, upstream: str = REAL_SOCKET, *, coalesce: float = 0.0) -> None:
        super().__init__(Path("/nonexistent"), upstream, coalesce=coalesce)
        self.port = 0

    @property
    def docker_host(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def _listen(self) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        self.port = listener.getsockname()[1]
        return listener

    def _unlisten(self) -> None:
        return None
