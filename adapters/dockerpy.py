"""DockerRunner over the engine API, through docker-py.

It serves status and logs: the project's containers are found by Compose's labels in one list call,
and logs are read as the engine's multiplexed frames, whose header says which stream each line came
from, so stdout/stderr filtering is exact and `all` keeps the daemon's order. It can also stop, start
and restart those containers; building images and creating containers is Compose's job, so `build`,
`up` and `down` raise `NotSupported`.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import Container

from adapters.endpoint import daemon_endpoint
from jarvis.concurrency import map_concurrently
from jarvis.errors import DaemonUnavailable, DockerCommandFailed, JarvisError, NoContainer, NotSupported
from jarvis.logtail import RawEntry, last_lines
from jarvis.project import ComposeProject
from jarvis.runner import EngineInfo, ExecResult, LogStream, PublishedPort, ServiceLogs, ServiceStatus

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
_FRAME_HEADER = 8
_STREAMS = {1: "stdout", 2: "stderr"}


@contextlib.contextmanager
def _map_errors(what: str) -> Iterator[None]:
    try:
        yield
    except JarvisError:
        raise
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
        raise DaemonUnavailable(daemon_endpoint(), _root_cause(exc)) from exc
    except NotFound as exc:
        raise NoContainer(f"{what}: {exc.explanation or exc}") from exc
    except APIError as exc:
        raise DockerCommandFailed(f"{what} failed: {exc.explanation or exc}") from exc
    except DockerException as exc:
        # docker-py wraps a failed connection during client construction (API version probe).
        if "Error while fetching server API version" in str(exc):
            raise DaemonUnavailable(daemon_endpoint(), _root_cause(exc)) from exc
        raise DockerCommandFailed(f"{what} failed: {exc}") from exc


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    text = str(exc) or type(exc).__name__
    return text.split("\n")[0][:200]


class DockerPyAdapter:
    name = "dockerpy"

    def __init__(self, project: ComposeProject, client: docker.DockerClient | None = None) -> None:
        self.project = project
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> docker.DockerClient:
        # Built on first use, not at start-up: Jarvis must start and list its tools with no daemon.
        with self._lock:
            if self._client is None:
                self._client = docker.from_env()
                if self._client.api.base_url.startswith("http+docker://"):
                    # Unix socket, named pipe or ssh: no HTTP proxy applies, and requests would otherwise
                    # scan the environment for proxy settings on every call (~0.5 ms each).
                    self._client.api.trust_env = False
            return self._client

    def _containers(self, services: Sequence[str] = ()) -> list[Container]:
        labels = [f"{PROJECT_LABEL}={self.project.spec().name}"]
        if len(services) == 1:
            labels.append(f"{SERVICE_LABEL}={services[0]}")
        found = self.client.containers.list(all=True, sparse=True, filters={"label": labels})
        if services:
            found = [c for c in found if c.attrs.get("Labels", {}).get(SERVICE_LABEL) in services]
        return found

    # Lifecycle: only what the engine API does on existing containers.
    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        raise NotSupported(self.name, "create containers (up)", "whales")

    def compose_down(self, *, remove_images: bool = False) -> None:
        raise NotSupported(self.name, "remove the project (down)", "whales")

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        raise NotSupported(self.name, "build images", "whales")

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        with _map_errors("stop"):
            for container in self._containers(services):
                if container.attrs.get("State") in ("running", "restarting", "paused"):
                    container.stop()

    def compose_start(self, services: Sequence[str] = ()) -> None:
        with _map_errors("start"):
            containers = self._containers(services)
            missing = [s for s in services if not any(_service(c) == s for c in containers)]
            if missing or not containers:
                raise NoContainer(
                    f"No container to start for {', '.join(missing) or 'the project'}; `rebuild` creates it."
                )
            for container in containers:
                if container.attrs.get("State") != "running":
                    container.start()

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        with _map_errors("restart"):
            for container in self._containers(services):
                container.restart()

    # Observation.
    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        with _map_errors("list containers"):
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
        with _map_errors("list containers"):
            containers = self._containers(services)  # one listing shared by every service

        def logs_of(service: str) -> ServiceLogs:
            with _map_errors(f"logs of {service}"):
                own = [c for c in containers if _service(c) == service]
                if not own:
                    raise NoContainer(f"Service {service} has no container; `rebuild` creates it.")
                # Newest container first: after a recreate, the old one may linger while being removed.
                container = max(own, key=lambda c: c.attrs.get("Created", 0))
                kept = last_lines(lambda tail: self._log_entries(container.id, tail), lines, stream)
                if kept:
                    tty = kept[0].stream == "tty"
                else:  # nothing logged: the project's model says whether it runs with a TTY
                    spec = self.project.spec().services.get(service)
                    tty = bool(spec and spec.tty)
                return ServiceLogs(
                    service=service, requested=stream, lines=kept, tty=tty, container=_name(container.attrs)
                )

        return map_concurrently(logs_of, services)

    def _log_entries(self, container_id: str, tail: int) -> Iterator[RawEntry]:
        api = self.client.api
        url = f"{api.base_url}/v{api.api_version}/containers/{container_id}/logs"
        params = {"stdout": 1, "stderr": 1, "timestamps": 1, "tail": tail, "follow": 0}
        with api.get(url, params=params, stream=True) as response:
            if response.status_code >= 400:
                response.raise_for_status()
            yield from _entries(response.iter_content(chunk_size=64 * 1024))

    def exec_in_service(self, service: str, command: Sequence[str]) -> ExecResult:
        with _map_errors(f"exec in {service}"):
            running = [c for c in self._containers([service]) if c.attrs.get("State") == "running"]
            if not running:
                raise NoContainer(f"Service {service} has no running container.")
            code, (out, err) = running[0].exec_run(list(command), demux=True)
            return ExecResult(
                exit_code=code if code is not None else -1,
                stdout=(out or b"").decode(errors="replace"),
                stderr=(err or b"").decode(errors="replace"),
            )

    def engine_info(self) -> EngineInfo:
        with _map_errors("docker version"):
            version = self.client.version()
            return EngineInfo(
                host=daemon_endpoint(),
                version=version.get("Version", "?"),
                api_version=version.get("ApiVersion", "?"),
                os=version.get("Os", ""),
            )


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
