"""`DockerRunner`: the only seam between Jarvis and Docker, and the typed results it returns.

Like an httpx transport, a runner is one small protocol with interchangeable implementations chosen at
construction (see `jarvis.runner_factory`): the python-on-whales adapter drives the Compose CLI, the
docker-py adapter talks to the engine API. This module imports no adapter.

Contract for every implementation:
- `services` arguments are Compose service names already checked against the project; an empty
  sequence means "every service of the project".
- Failures raise `jarvis.errors.JarvisError` subclasses only; `DaemonUnavailable` is the one that means
  "try again", and the runner factory applies the retry policy to it in one place.
- Nothing is ever written to stdout (it carries JSON-RPC); child processes' output is captured.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

LogStream = Literal["stdout", "stderr", "all"]
LineStream = Literal["stdout", "stderr", "tty"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class PublishedPort(_Model):
    host_ip: str
    host_port: int
    container_port: int
    protocol: str = "tcp"

    def __str__(self) -> str:
        proto = "" if self.protocol == "tcp" else f"/{self.protocol}"
        return f"{self.host_ip}:{self.host_port}->{self.container_port}{proto}"


class ServiceStatus(_Model):
    """One container of a Compose service, as Docker reports it."""

    service: str
    container: str
    state: str  # created | running | paused | restarting | removing | exited | dead
    status: str = ""  # Docker's human text, e.g. "Up 3 minutes (healthy)"
    health: str | None = None  # healthy | unhealthy | starting; None without a healthcheck
    exit_code: int | None = None
    ports: tuple[PublishedPort, ...] = ()
    image: str = ""
    restart_count: int | None = None  # only when asked for (`compose_ps(inspect=True)`): it costs an inspect


class LogLine(_Model):
    stream: LineStream
    text: str
    time: datetime | None = None


class ServiceLogs(_Model):
    service: str
    requested: LogStream
    lines: tuple[LogLine, ...]
    tty: bool = False  # one merged stream: stdout and stderr cannot be told apart
    approximate: bool = False  # streams as the Compose CLI split them, not as the engine recorded them
    container: str = ""


class ExecResult(_Model):
    exit_code: int
    stdout: str
    stderr: str


class EngineInfo(_Model):
    host: str
    version: str
    api_version: str
    os: str = ""


class DockerRunner(Protocol):
    """The seeds' DockerRunner, in Python. Lifecycle calls return when Docker has finished."""

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        """Create and start containers, detached (`up -d`); `no_deps` leaves other services alone."""
        ...

    def compose_down(self, *, remove_images: bool = False) -> None:
        """Remove the project's containers, networks and volumes (and images it built)."""
        ...

    def compose_restart(self, services: Sequence[str] = ()) -> None: ...

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        """Every container of the project, running or not; `inspect` adds restart counts."""
        ...

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None: ...

    def compose_stop(self, services: Sequence[str] = ()) -> None: ...

    def compose_start(self, services: Sequence[str] = ()) -> None: ...

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        """The last `lines` lines OF THE REQUESTED STREAM, oldest first, in the daemon's order."""
        ...

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        """`compose_logs` of several services at once, in order; a service that fails gets its error instead.
        When every service failed because the daemon is unavailable, the runner factory raises that one error
        (and retries it) instead of returning N copies."""
        ...

    def exec_in_service(self, service: str, command: Sequence[str]) -> ExecResult: ...

    def engine_info(self) -> EngineInfo: ...
