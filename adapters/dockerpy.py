"""DockerRunner over the engine API, through docker-py.

It serves status and logs: the project's containers are found by Compose's labels in one list call,
and logs are read as the engine's multiplexed frames, whose header says which stream each line came
from, so stdout/stderr filtering is exact and `all` keeps the daemon's order. It can also stop, start
and restart those containers, and build one image from a folder (`build_image`, for the base image); building
a project's images and creating containers is Compose's job, so `build`, `up` and `down` raise `NotSupported`.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import os
import select
import shlex
import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.utils import socket as docker_socket

from adapters import engine_socket
from adapters.endpoint import daemon_endpoint, docker_client, unix_socket_path
from jarvis.cancel import CancelToken
from jarvis.compose_project import ComposeProject
from jarvis.concurrency import map_concurrently
from jarvis.docker_hosts import DockerHost
from jarvis.errors import (
    Cancelled,
    DaemonUnavailable,
    DockerCommandFailed,
    InvalidInput,
    JarvisError,
    NoContainer,
    NotSupported,
    quoted,
)
from jarvis.logtail import RawEntry, last_lines
from jarvis.runner import (
    COMMAND_NOT_RUN,
    EngineInfo,
    ExecResult,
    LogStream,
    PublishedPort,
    ServiceLogs,
    ServiceStatus,
    command_not_found,
    exec_result,
    not_run_reason,
)

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
_FRAME_HEADER = 8
_STREAMS = {1: "stdout", 2: "stderr"}
EXEC_POLL = 0.2  # seconds between looks at the cancel token while an exec runs


@contextlib.contextmanager
def map_errors(what: str, host: DockerHost | None = None) -> Iterator[None]:
    """docker-py's exceptions as Jarvis's;
    `host`: the named host the client talks to (None: the default host)."""
    named = host.name if host is not None and host.endpoint is not None else None
    try:
        yield
    except JarvisError:
        raise
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
        raise DaemonUnavailable(daemon_endpoint(host), _root_cause(exc), named) from exc
    except engine_socket.EngineUnreachable as exc:
        raise DaemonUnavailable(daemon_endpoint(host), _root_cause(exc), named) from exc
    except engine_socket.EngineRefused as exc:
        failure = NoContainer if exc.status == 404 else DockerCommandFailed
        raise failure(f"{what}: {exc.explanation}") from exc
    except NotFound as exc:
        raise NoContainer(f"{what}: {exc.explanation or exc}") from exc
    except APIError as exc:
        raise DockerCommandFailed(f"{what} failed: {exc.explanation or exc}") from exc
    except DockerException as exc:
        # docker-py wraps a failed connection during client construction (API version probe).
        if "Error while fetching server API version" in str(exc):
            raise DaemonUnavailable(daemon_endpoint(host), _root_cause(exc), named) from exc
        raise DockerCommandFailed(f"{what} failed: {exc}") from exc


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    text = str(exc) or type(exc).__name__
    return text.split("\n")[0][:200]


class _Connection:
    """The docker-py client, built on first use, not at start-up: Jarvis must start and list its tools with no
    daemon. Shared by an adapter and its `cancellable` copies."""

    def __init__(self, client: docker.DockerClient | None, host: DockerHost | None) -> None:
        self.host = host
        self._client = client
        self._lock = threading.Lock()
        # The local engine's socket (None for remote hosts), known once the client is.
        self.unix_socket = unix_socket_path(client) if client is not None else None

    def client(self) -> docker.DockerClient:
        with self._lock:
            if self._client is None:
                self._client = docker_client(self.host)
                if self._client.api.base_url.startswith("http+docker://"):
                    # Unix socket, named pipe or ssh: no HTTP proxy applies, and requests would otherwise
                    # scan the environment for proxy settings on every call (~0.5 ms each).
                    self._client.api.trust_env = False
                self.unix_socket = unix_socket_path(self._client)
            return self._client


class DockerPyImages:
    """An `ImageBuilder` over the engine API; needs no Compose project (`jarvis setup` runs before there is one)."""

    name = "dockerpy"

    def __init__(self, client: docker.DockerClient | None = None, host: DockerHost | None = None) -> None:
        self.host = host
        self._connection = _Connection(client, host)

    @property
    def client(self) -> docker.DockerClient:
        return self._connection.client()

    def image_labels(self, tag: str) -> dict[str, str] | None:
        with map_errors(f"inspect of the image {tag}", self.host):
            try:
                image = self.client.images.get(tag)
            except ImageNotFound:
                return None
            return dict(image.labels or {})

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        with map_errors(f"build of the image {tag}", self.host):
            self.client.images.build(path=str(context), tag=tag, rm=True, forcerm=True, labels=dict(labels))


class DockerPyAdapter(DockerPyImages):
    def __init__(
        self, project: ComposeProject, client: docker.DockerClient | None = None, host: DockerHost | None = None
    ) -> None:
        super().__init__(client, host)
        self.project = project
        self.cancel: CancelToken | None = None

    def cancellable(self, cancel: CancelToken) -> DockerPyAdapter:
        bound = copy.copy(self)  # the same connection
        bound.cancel = cancel
        return bound

    def _check_cancel(self, doing: str) -> None:
        if self.cancel is not None:
            self.cancel.check(doing)

    def _containers(self, services: Sequence[str] = ()) -> list[Container]:
        labels = [f"{PROJECT_LABEL}={self.project.spec().name}"]
        if len(services) == 1:
            labels.append(f"{SERVICE_LABEL}={services[0]}")
        found = self.client.containers.list(all=True, sparse=True, filters={"label": labels})
        if services:
            found = [c for c in found if c.attrs.get("Labels", {}).get(SERVICE_LABEL) in services]
        return list(found)

    # Lifecycle: only what the engine API does on existing containers.
    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        raise NotSupported(self.name, "create containers (up)", "whales")

    def compose_down(self, *, remove_images: bool = False) -> None:
        raise NotSupported(self.name, "remove the project (down)", "whales")

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        raise NotSupported(self.name, "build images", "whales")

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        with map_errors("stop", self.host):
            for container in self._containers(services):
                if container.attrs.get("State") in ("running", "restarting", "paused"):
                    self._check_cancel(f"stopping {_service(container)}")
                    container.stop()

    def compose_start(self, services: Sequence[str] = ()) -> None:
        with map_errors("start", self.host):
            containers = self._containers(services)
            missing = [s for s in services if not any(_service(c) == s for c in containers)]
            if missing or not containers:
                raise NoContainer(
                    f"No container to start for {', '.join(missing) or 'the project'}; `rebuild` creates it."
                )
            for container in containers:
                if container.attrs.get("State") != "running":
                    self._check_cancel(f"starting {_service(container)}")
                    container.start()

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        with map_errors("restart", self.host):
            for container in self._containers(services):
                self._check_cancel(f"restarting {_service(container)}")
                container.restart()

    # Observation.
    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        with map_errors("list containers", self.host):
            statuses = [_status(c.attrs) for c in self._containers()]
        if inspect:
            # The list endpoint has no restart count; one inspect per container, concurrently.
            api = self.client.api
            counts = map_concurrently(lambda s: api.inspect_container(s.container)["RestartCount"], statuses)
            statuses = [
                s.model_copy(update={"restart_count": n}) if isinstance(n, int) else s
                for s, n in zip(statuses, counts, strict=True)
            ]
        return sorted(statuses, key=lambda s: (s.service, s.container))

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        result = self.compose_logs_many([service], lines, stream)[0]
        if isinstance(result, Exception):
            raise result
        return result

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        with map_errors("list containers", self.host):
            containers = self._containers(services)  # one listing shared by every service

        def logs_of(service: str) -> ServiceLogs:
            with map_errors(f"logs of {service}", self.host):
                own = [c for c in containers if _service(c) == service]
                if not own:
                    raise NoContainer(f"Service {service} has no container; `rebuild` creates it.")
                # Newest container first: after a recreate, the old one may linger while being removed.
                container = max(own, key=lambda c: c.attrs.get("Created", 0))
                kept = last_lines(
                    lambda tail: self._log_entries(container.id, tail),
                    lines,
                    stream,
                    read_stream=lambda only, tail: self._log_entries(container.id, tail, only),
                )
                if kept:
                    tty = kept[0].stream == "tty"
                else:  # nothing logged: the project's model says whether it runs with a TTY
                    spec = self.project.spec().services.get(service)
                    tty = bool(spec and spec.tty)
                return ServiceLogs(
                    service=service, requested=stream, lines=kept, tty=tty, container=_name(container.attrs)
                )

        return map_concurrently(logs_of, services)

    def _log_entries(self, container_id: str, tail: int | str, stream: LogStream = "all") -> Iterator[RawEntry]:
        """The last `tail` entries of the log (or "all"), then filtered by the engine to `stream`."""
        api = self.client.api
        path = f"/containers/{container_id}/logs"
        params = {
            "stdout": int(stream != "stderr"),
            "stderr": int(stream != "stdout"),
            "timestamps": 1,
            "tail": tail,
            "follow": 0,
        }
        if socket_path := self._connection.unix_socket:  # the local engine: its socket directly, cheaper per read
            chunks = engine_socket.stream(socket_path, api.api_version, path, params, api.timeout)
            try:
                yield from _entries(chunks)
            finally:
                chunks.close()
            return
        with api.get(f"{api.base_url}/v{api.api_version}{path}", params=params, stream=True) as response:
            if response.status_code >= 400:
                response.raise_for_status()
            yield from _entries(response.iter_content(chunk_size=64 * 1024))

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        """exec_create, then exec_start's raw socket read as multiplexed frames until the command ends, its
        deadline passes or the operation is cancelled; then exec_inspect for the exit code."""
        with map_errors(f"exec in {service}", self.host):
            running = [c for c in self._containers([service]) if c.attrs.get("State") == "running"]
            if not running:
                raise NoContainer(f"Service {service} has no running container; `start` or `rebuild` it.")
            container = max(running, key=lambda c: c.attrs.get("Created", 0))
            api = self.client.api
            exec_id = api.exec_create(container.id, list(command), stdout=True, stderr=True)["Id"]
            streams = {"stdout": _Tail(max_bytes), "stderr": _Tail(max_bytes)}
            sock = api.exec_start(exec_id, socket=True)
            try:
                ended = self._read_exec(sock, time.monotonic() + timeout, streams, f"`{shlex.join(command)}`")
            except Cancelled as exc:
                raise Cancelled(f"{exc}; {_stop_exec(api, exec_id)}") from exc
            finally:
                sock.close()
            exit_code = api.exec_inspect(exec_id).get("ExitCode") if ended else None
        out, err = streams["stdout"], streams["stderr"]
        if exit_code in COMMAND_NOT_RUN and command_not_found(out.text() + err.text()):
            reason = not_run_reason(out.text() + err.text())
            raise InvalidInput(f"Service {service}: cannot run {quoted(command[0])}: {reason}")
        note = "" if ended else _stop_exec(api, exec_id)
        return exec_result(exit_code, out.data(), err.data(), max_bytes, note, sizes=(out.size, err.size))

    def _read_exec(self, sock: Any, deadline: float, streams: dict[str, _Tail], doing: str) -> bool:
        """Read frames into `streams` until the command closes the stream (True) or the deadline passes (False)."""

        def chunks() -> Iterator[bytes]:
            if early := _bytes_read_with_the_headers(sock):
                yield early
            while (remaining := deadline - time.monotonic()) > 0:
                self._check_cancel(doing)
                ready, _, _ = select.select([sock], [], [], min(remaining, EXEC_POLL))
                if ready:
                    chunk = docker_socket.read(sock, 64 * 1024)
                    if not chunk:
                        return
                    yield chunk
            raise _DeadlinePassed

        try:
            for stream, data in _frames(chunks()):
                streams[stream].add(data)
        except _DeadlinePassed:
            return False
        return True

    def engine_info(self) -> EngineInfo:
        with map_errors("docker version", self.host):
            version = self.client.version()
            return EngineInfo(
                host=daemon_endpoint(self.host),
                version=version.get("Version", "?"),
                api_version=version.get("ApiVersion", "?"),
                os=version.get("Os", ""),
            )


class _DeadlinePassed(Exception):
    pass


def _bytes_read_with_the_headers(sock: Any) -> bytes:
    """The exec's first bytes when they arrived in the same packet as the HTTP headers: http.client parsed the
    headers through a buffered reader, which kept them, so reading the raw socket alone would miss them."""
    response = getattr(sock, "_response", None)
    reader = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    raw_socket = getattr(sock, "_sock", None)
    if reader is None or raw_socket is None:
        return b""
    timeout = raw_socket.gettimeout()
    raw_socket.setblocking(False)  # take only what is buffered or already arrived, never wait
    try:
        return bytes(reader.read1(64 * 1024) or b"")
    except OSError:
        return b""
    finally:
        raw_socket.settimeout(timeout)


class _Tail:
    """The last `keep` bytes of a stream, and its whole size."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.size = 0
        self._buffer = bytearray()

    def add(self, data: bytes) -> None:
        self.size += len(data)
        self._buffer += data
        if len(self._buffer) > 2 * self.keep:
            del self._buffer[: -self.keep]

    def data(self) -> bytes:
        return bytes(self._buffer[-self.keep :])

    def text(self) -> str:
        return self.data().decode(errors="replace")


def _stop_exec(api: Any, exec_id: str) -> str:
    """The engine API cannot stop an exec: kill its process from here when this host runs it and allows it."""
    pid = int(api.exec_inspect(exec_id).get("Pid") or 0)
    if pid <= 0:
        return "the command had ended"
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return "the command had ended"
    except PermissionError:
        return f"the command still runs in the container (host pid {pid}; Jarvis may not signal it)"
    return f"the command was killed (host pid {pid})"


def _entries(chunks: Iterator[bytes]) -> Iterator[RawEntry]:
    """Multiplexed frames, or a TTY's raw stream. Engines before API 1.42 send the same content type for
    both, so the first byte decides: a frame starts with its stream id (0-2); a TTY line requested with
    timestamps starts with the year's first digit. This saves an inspect call per read."""
    first = next(chunks, b"")
    if not first:
        return
    rest = itertools.chain([first], chunks)
    yield from (_frames(rest) if first[0] <= 2 else _tty_lines(rest))


def _frames(chunks: Iterator[bytes]) -> Iterator[RawEntry]:
    """Demultiplex the engine's log stream: 8-byte header (stream id, 3 zero bytes, big-endian size)."""
    buffer = bytearray()
    for chunk in chunks:
        buffer += chunk
        offset = 0
        while len(buffer) - offset >= _FRAME_HEADER:
            size = int.from_bytes(buffer[offset + 4 : offset + 8], "big")
            end = offset + _FRAME_HEADER + size
            if end > len(buffer):
                break
            stream = _STREAMS.get(buffer[offset], "stdout")
            yield stream, bytes(buffer[offset + _FRAME_HEADER : end])  # type: ignore[misc]
            offset = end
        del buffer[:offset]


def _tty_lines(chunks: Iterator[bytes]) -> Iterator[RawEntry]:
    """A TTY container's log is one raw stream: split it into lines."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield "tty", line.rstrip(b"\r")
    if pending:
        yield "tty", pending


def _service(container: Container) -> str:
    return str(container.attrs.get("Labels", {}).get(SERVICE_LABEL, ""))


def _name(attrs: dict[str, Any]) -> str:
    names = attrs.get("Names") or [""]
    return str(names[0]).lstrip("/")


def _status(attrs: dict[str, Any]) -> ServiceStatus:
    """From the container list endpoint: State "exited", Status "Exited (3) 2 minutes ago"."""
    text = str(attrs.get("Status", ""))
    state = str(attrs.get("State", "unknown"))
    health = None
    for marker, value in (("(healthy)", "healthy"), ("(unhealthy)", "unhealthy"), ("(health: starting)", "starting")):
        if marker in text:
            health = value
    exit_code = None
    if state in ("exited", "dead") and "(" in text:
        with contextlib.suppress(ValueError):
            exit_code = int(text.split("(", 1)[1].split(")", 1)[0])
    ports = {
        PublishedPort(
            host_ip=p.get("IP") or "0.0.0.0",
            host_port=int(p["PublicPort"]),
            container_port=int(p["PrivatePort"]),
            protocol=p.get("Type", "tcp"),
        )
        for p in attrs.get("Ports") or []
        if p.get("PublicPort")
    }
    return ServiceStatus(
        service=str(attrs.get("Labels", {}).get(SERVICE_LABEL, _name(attrs))),
        container=_name(attrs),
        state=state,
        status=text,
        health=health,
        exit_code=exit_code,
        ports=tuple(sorted(ports, key=lambda p: (p.container_port, p.host_ip))),
        image=str(attrs.get("Image", "")),
    )
