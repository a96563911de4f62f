"""A Unix-socket proxy in front of the real Docker socket, which a test can stop and start again.

Pointing DOCKER_HOST at it makes "the daemon is briefly gone" reproducible: stopped, the socket file
is removed (connections fail like a missing daemon); started, it forwards to the real socket again.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

REAL_SOCKET = "/var/run/docker.sock"


class DockerSocketProxy:
    def __init__(self, path: Path, upstream: str = REAL_SOCKET) -> None:
        self.path = path
        self.upstream = upstream
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
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
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)
