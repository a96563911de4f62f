"""DockerRunner over the Compose CLI, through python-on-whales.

Every command runs with its output captured (`stream_logs=True`): a child writing to our stdout would
corrupt the JSON-RPC stream. Log streams come from the CLI's `docker container logs` of the service's
container: `docker compose logs` (v5) writes both streams to its stdout, while `docker logs` keeps the
container's stdout and stderr on its own two pipes. The order between two pipes is lost, so lines are
re-sorted by the engine's timestamps and results say `approximate`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from python_on_whales import Container, DockerClient
from python_on_whales.client_config import ClientNotFoundError
from python_on_whales.exceptions import DockerException, NoSuchImage
from python_on_whales.utils import run

from adapters.endpoint import daemon_endpoint, missing_context
from jarvis.cancel import CancelToken
from jarvis.child_process import run_in_group
from jarvis.compose_project import COMPOSE_MISSING_HINT, ComposeCliProject, compose_missing, whales_client
from jarvis.concurrency import map_concurrently
from jarvis.docker_hosts import DockerHost
from jarvis.errors import (
    DaemonUnavailable,
    DockerCommandFailed,
    InvalidInput,
    JarvisError,
    NoContainer,
    ProjectError,
    UnknownService,
    quoted,
)
from jarvis.logtail import RawEntry, last_lines, parse_timestamp
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
def _map_errors(what: str, host: DockerHost | None = None) -> Iterator[None]:
    try:
        yield
    except JarvisError:
        raise
    except ClientNotFoundError as exc:
        raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc
    except DockerException as exc:
        output = "\n".join(filter(None, [exc.stdout, exc.stderr]))
        raise _failure(what, output, exc.return_code, host) from exc


def _failure(what: str, output: str, return_code: int | None, host: DockerHost | None = None) -> JarvisError:
    """A failed docker or Compose command as the error an agent can act on; `host`: the named host it ran on."""
    named = host if host is not None and host.endpoint is not None else None
    lowered = output.lower()
    if any(marker in lowered for marker in _UNAVAILABLE_MARKERS):
        # The line that says so: `docker version` prints the client's half on stdout before the error.
        lines = [ln for ln in output.splitlines() if ln.strip()]
        why = next((ln for ln in lines if any(m in ln.lower() for m in _UNAVAILABLE_MARKERS)), "unreachable")
        return DaemonUnavailable(daemon_endpoint(host), why.strip(), named.name if named else None)
    if named is not None and named.kind == "context" and "context not found" in lowered:
        return missing_context(named)
    if compose_missing(output):
        return ProjectError(COMPOSE_MISSING_HINT)
    if "no such service" in lowered:
        return UnknownService(output.strip())
    if "has no container to start" in lowered or "no container found" in lowered:
        return NoContainer(f"{output.strip()}; `rebuild` creates the containers.")
    return DockerCommandFailed(f"{what} failed (exit {return_code})", output)


def _stream(output: object) -> Iterable[tuple[str, bytes]]:
    """What python-on-whales returns with `stream=True`: (source, bytes) pairs; its annotation also admits the
    text it returns without streaming."""
    return cast(Iterable[tuple[str, bytes]], output)


def _services_arg(services: Sequence[str]) -> list[str] | None:
    # python-on-whales treats [] as "do nothing"; our contract says empty means every service.
    return list(services) or None


class WhalesAdapter:
    name = "whales"

    def __init__(
        self, project: ComposeCliProject, client: DockerClient | None = None, host: DockerHost | None = None
    ) -> None:
        self.project = project
        self.host = host
        if client is None:
            client = project.client if host is None else whales_client(project.settings, host)
        self.client = client
        self.cancel: CancelToken | None = None

    def cancellable(self, cancel: CancelToken) -> WhalesAdapter:
        bound = copy.copy(self)
        bound.cancel = cancel
        return bound

    def _compose(self, what: str, *arguments: str, services: Sequence[str] = ()) -> None:
        """Run `docker compose <arguments> <services>` in its own process group (`jarvis.child_process`), so a
        cancelled operation kills it and every helper it started; its output is kept for the error report."""
        with _map_errors(what, self.host):
            argv = [*self.client.client_config.docker_compose_cmd, *arguments, *services]
        try:
            done = run_in_group(argv, cancel=self.cancel)
        except FileNotFoundError as exc:
            raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc
        if done.exit_code != 0:
            raise _failure(what, done.output, done.exit_code, self.host)

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        self._compose("docker compose up", "up", "--detach", *(["--no-deps"] if no_deps else []), services=services)

    def compose_down(self, *, remove_images: bool = False) -> None:
        images = ["--rmi", "local"] if remove_images else []
        self._compose("docker compose down", "down", "--remove-orphans", "--volumes", *images)

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        self._compose("docker compose restart", "restart", services=services)

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        self._compose("docker compose build", "build", *(["--no-cache"] if no_cache else []), services=services)

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        self._compose("docker compose stop", "stop", services=services)

    def compose_start(self, services: Sequence[str] = ()) -> None:
        self._compose("docker compose start", "start", services=services)

    def _containers(self, service: str | None = None) -> list[Container]:
        ids = [c.id for c in self.client.compose.ps(_services_arg([service] if service else []), all=True)]
        return list(self.client.container.inspect(ids)) if ids else []

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        with _map_errors("docker compose ps", self.host):
            return sorted((_status(c) for c in self._containers()), key=lambda s: (s.service, s.container))

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        with _map_errors("docker compose logs", self.host):
            containers = self._containers(service)
            if not containers:
                raise NoContainer(f"Service {service} has no container; `rebuild` creates it.")
            tty = any(bool(c.config.tty) for c in containers)

            container = max(containers, key=lambda c: c.created)

            def read_tail(tail: int) -> list[RawEntry]:
                entries: list[RawEntry] = [
                    ("tty" if tty else "stderr" if source == "stderr" else "stdout", line)
                    for source, line in _stream(
                        self.client.container.logs(container, tail=tail, timestamps=True, stream=True)
                    )
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

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        with _map_errors("docker exec", self.host):
            running = [c for c in self._containers(service) if c.state.running]
            if not running:
                raise NoContainer(f"Service {service} has no running container; `start` or `rebuild` it.")
            container = max(running, key=lambda c: c.created)
            argv = [*self.client.client_config.docker_cmd, "exec", container.name, *command]
        done = run_in_group(argv, timeout=timeout, cancel=self.cancel, apart=True)
        said = done.output + done.errors  # the docker CLI writes the runtime's refusal to stdout
        if done.exit_code in COMMAND_NOT_RUN and command_not_found(said):
            raise InvalidInput(f"Service {service}: cannot run {quoted(command[0])}: {not_run_reason(said)}")
        if done.exit_code not in (0, None) and any(m in done.errors.lower() for m in _UNAVAILABLE_MARKERS):
            raise _failure("docker exec", done.errors, done.exit_code, self.host)
        note = ""
        if done.timed_out:
            note = (
                f"TIMEOUT after {timeout:g}s: the docker CLI was stopped; the command may still run in {container.name}"
            )
        return exec_result(done.exit_code, done.output.encode(), done.errors.encode(), max_bytes, note)

    def engine_info(self) -> EngineInfo:
        with _map_errors("docker version", self.host):
            version = self.client.version()
            server = version.server
            if server is None:
                raise DaemonUnavailable(daemon_endpoint(self.host), "the docker CLI reported no server")
            return EngineInfo(
                host=daemon_endpoint(self.host),
                version=server.version or "?",
                api_version=server.api_version or "?",
                os=server.os or "",
            )

    def image_labels(self, tag: str) -> dict[str, str] | None:
        with _map_errors(f"docker image inspect {tag}", self.host):
            try:
                image = self.client.image.inspect(tag)
            except NoSuchImage:
                return None
            return dict(image.config.labels or {})

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        # Plain `docker build` (buildx may be missing), output captured; `--force-rm`: a failed step leaves no
        # container behind, as docker-py's `forcerm`. python-on-whales' builds have no such flag, so its runner.
        labelled = [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
        with _map_errors(f"docker build of {tag}", self.host):
            run([*self.client.docker_cmd, "build", "--quiet", "--force-rm", "--tag", tag, *labelled, str(context)])


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
