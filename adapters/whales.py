"""DockerRunner over the Compose CLI, through python-on-whales.

Every command runs with its output captured (`stream_logs=True`): a child writing to our stdout would
corrupt the JSON-RPC stream. Log streams come from the CLI's `docker container logs` of the service's
container: `docker compose logs` (v5) writes both streams to its stdout, while `docker logs` keeps the
container's stdout and stderr on its own two pipes. The order between two pipes is lost, so lines are
re-sorted by the engine's timestamps and results say `approximate`.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime

from python_on_whales import Container, DockerClient
from python_on_whales.client_config import ClientNotFoundError
from python_on_whales.exceptions import DockerException

from adapters.endpoint import daemon_endpoint
from jarvis.concurrency import map_concurrently
from jarvis.errors import (
    DaemonUnavailable,
    DockerCommandFailed,
    JarvisError,
    NoContainer,
    ProjectError,
    UnknownService,
)
from jarvis.logtail import RawEntry, last_lines, parse_timestamp
from jarvis.project import COMPOSE_MISSING_HINT, ComposeProject
from jarvis.runner import EngineInfo, ExecResult, LogStream, PublishedPort, ServiceLogs, ServiceStatus

# What the docker CLI and Compose print when the daemon is not there (socket missing, refused, reset).
_UNAVAILABLE_MARKERS = (
    "cannot connect to the docker daemon",
    "failed to connect to the docker api",
    "error during connect",
    "connection refused",
    "connection reset by peer",
    "is the docker daemon running",
)


@contextlib.contextmanager
def _map_errors(what: str) -> Iterator[None]:
    try:
        yield
    except JarvisError:
        raise
    except ClientNotFoundError as exc:
        raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc
    except DockerException as exc:
        output = "\n".join(filter(None, [exc.stdout, exc.stderr]))
        lowered = output.lower()
        if any(marker in lowered for marker in _UNAVAILABLE_MARKERS):
            why = next((ln for ln in output.splitlines() if ln.strip()), "unreachable")
            raise DaemonUnavailable(daemon_endpoint(), why.strip()) from exc
        if "is not a docker command" in lowered or "unknown command" in lowered:
            raise ProjectError(COMPOSE_MISSING_HINT) from exc
        if "no such service" in lowered:
            raise UnknownService(output.strip()) from exc
        if "has no container to start" in lowered or "no container found" in lowered:
            raise NoContainer(f"{output.strip()}; `rebuild` creates the containers.") from exc
        raise DockerCommandFailed(f"{what} failed (exit {exc.return_code})", output) from exc


def _drain(output: Iterable[tuple[str, bytes]] | None, keep: int = 200) -> str:
    """Consume a streamed command, keeping the tail of its output for error reports."""
    tail: deque[str] = deque(maxlen=keep)
    for _source, line in output or ():
        tail.append(line.decode("utf-8", errors="replace").rstrip("\n"))
    return "\n".join(tail)


def _services_arg(services: Sequence[str]) -> list[str] | None:
    # python-on-whales treats [] as "do nothing"; our contract says empty means every service.
    return list(services) or None


class WhalesAdapter:
    name = "whales"

    def __init__(self, project: ComposeProject, client: DockerClient | None = None) -> None:
        self.project = project
        self.client = client or project.client

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        with _map_errors("docker compose up"):
            _drain(
                self.client.compose.up(_services_arg(services), detach=True, dependencies=not no_deps, stream_logs=True)
            )

    def compose_down(self, *, remove_images: bool = False) -> None:
        with _map_errors("docker compose down"):
            _drain(
                self.client.compose.down(
                    remove_orphans=True,
                    volumes=True,
                    remove_images="local" if remove_images else None,
                    stream_logs=True,
                )
            )

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        with _map_errors("docker compose restart"):
            self.client.compose.restart(_services_arg(services))

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        with _map_errors("docker compose build"):
            _drain(self.client.compose.build(_services_arg(services), cache=not no_cache, stream_logs=True))

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        with _map_errors("docker compose stop"):
            _drain(self.client.compose.stop(_services_arg(services), stream_logs=True))

    def compose_start(self, services: Sequence[str] = ()) -> None:
        with _map_errors("docker compose start"):
            _drain(self.client.compose.start(_services_arg(services), stream_logs=True))

    def _containers(self, service: str | None = None) -> list[Container]:
        ids = [c.id for c in self.client.compose.ps(_services_arg([service] if service else []), all=True)]
        return list(self.client.container.inspect(ids)) if ids else []

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        with _map_errors("docker compose ps"):
            return sorted((_status(c) for c in self._containers()), key=lambda s: (s.service, s.container))

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        with _map_errors("docker compose logs"):
            containers = self._containers(service)
            if not containers:
                raise NoContainer(f"Service {service} has no container; `rebuild` creates it.")
            tty = any(bool(c.config.tty) for c in containers)

            container = max(containers, key=lambda c: c.created)

            def read_tail(tail: int) -> list[RawEntry]:
                entries: list[RawEntry] = [
                    ("tty" if tty else "stderr" if source == "stderr" else "stdout", line)
                    for source, line in self.client.container.logs(container, tail=tail, timestamps=True, stream=True)
                ]
                # The CLI's two pipes lose their relative order; the engine's timestamps restore most of it.
                return sorted(entries, key=_entry_time)

            return ServiceLogs(
                service=service,
                requested=stream,
                lines=last_lines(read_tail, lines, stream),
                tty=tty,
                approximate=not tty,
                container=container.name,
            )

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        # One CLI process per service: `compose logs a b` would merge them into one stream.
        return map_concurrently(lambda service: self.compose_logs(service, lines, stream), services)

    def exec_in_service(self, service: str, command: Sequence[str]) -> ExecResult:
        with _map_errors("docker exec"):
            containers = [c for c in self._containers(service) if c.state.running]
            if not containers:
                raise NoContainer(f"Service {service} has no running container.")
            out: list[bytes] = []
            err: list[bytes] = []
            try:
                for source, chunk in self.client.container.execute(containers[0], list(command), stream=True):
                    (err if source == "stderr" else out).append(chunk)
                code = 0
            except DockerException as exc:
                if exc.stderr and not err:
                    err.append(exc.stderr.encode())
                code = exc.return_code
            return ExecResult(
                exit_code=code,
                stdout=b"".join(out).decode(errors="replace"),
                stderr=b"".join(err).decode(errors="replace"),
            )

    def engine_info(self) -> EngineInfo:
        with _map_errors("docker version"):
            version = self.client.version()
            server = version.server
            if server is None:
                raise DaemonUnavailable(daemon_endpoint(), "the docker CLI reported no server")
            return EngineInfo(
                host=daemon_endpoint(),
                version=server.version or "?",
                api_version=server.api_version or "?",
                os=server.os or "",
            )


def _status(container: Container) -> ServiceStatus:
    state = container.state
    health = state.health.status if state.health else None
    ports: list[PublishedPort] = []
    for key, bindings in (container.network_settings.ports or {}).items():
        port, _, proto = key.partition("/")
        for binding in bindings or []:
            if binding.get("HostPort"):
                ports.append(
                    PublishedPort(
                        host_ip=binding.get("HostIp") or "0.0.0.0",
                        host_port=int(binding["HostPort"]),
                        container_port=int(port),
                        protocol=proto or "tcp",
                    )
                )
    labels = container.config.labels or {}
    status = state.status or "unknown"
    return ServiceStatus(
        service=labels.get("com.docker.compose.service", container.name),
        container=container.name,
        state=status,
        status=_status_text(status, state.started_at, state.exit_code, health),
        health=health,
        exit_code=state.exit_code if status in ("exited", "dead") else None,
        ports=tuple(sorted(ports, key=lambda p: (p.container_port, p.host_ip))),
        image=container.config.image or "",
        restart_count=container.restart_count,
    )


def _status_text(state: str, started: datetime | None, exit_code: int | None, health: str | None) -> str:
    if state == "running":
        since = f" since {started:%Y-%m-%d %H:%M:%S}" if started else ""
        return f"Up{since}" + (f" ({health})" if health else "")
    if state in ("exited", "dead"):
        return f"Exited ({exit_code})"
    return state.capitalize()


def _entry_time(entry: RawEntry) -> datetime:
    stamp = entry[1][:40].split(b" ", 1)[0].decode("ascii", errors="replace")
    return parse_timestamp(stamp) or datetime.min.replace(tzinfo=UTC)
