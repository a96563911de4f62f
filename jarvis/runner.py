"""`DockerRunner`: the only seam between Jarvis and Docker, and the typed results it returns.

Like an httpx transport, a runner is one small protocol with interchangeable implementations chosen at
construction (see `adapters.factory`): the python-on-whales adapter drives the Compose CLI, the
docker-py adapter talks to the engine API. This module imports no adapter.

Contract for every implementation:
- `services` arguments are Compose service names already checked against the project; an empty
  sequence means "every service of the project".
- Failures raise `jarvis.errors.JarvisError` subclasses only; `DaemonUnavailable` is the one that means
  "try again", and the runner factory applies the retry policy to it in one place.
- Nothing is ever written to stdout (it carries JSON-RPC); child processes' output is captured.
- A runner bound to a cancel token (`cancellable`) stops its call in progress when the token is set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from jarvis.cancel import CancelToken

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
    exit_code: int | None  # None: the command outlived its timeout (`note` says what became of it)
    stdout: str  # the stream's last `max_bytes` bytes, decoded
    stderr: str
    stdout_bytes: int = 0  # the whole stream's size: more than what is kept when it was cut
    stderr_bytes: int = 0
    note: str = ""


# What the runtime answers when an exec's command cannot start: exit 126 and this text (missing or not executable).
COMMAND_NOT_RUN = (126, 127)
_RUNTIME_REFUSED = "oci runtime exec failed"


def command_not_found(output: str) -> bool:
    return _RUNTIME_REFUSED in output.lower()


def not_run_reason(output: str) -> str:
    """The runtime's reason, without its boilerplate: `exec: "nope": executable file not found in $PATH`."""
    text = output.strip()
    start = text.find("exec: ")
    return text[start:].removesuffix(": unknown") if start >= 0 else text


def exec_result(
    exit_code: int | None,
    stdout: bytes,
    stderr: bytes,
    max_bytes: int,
    note: str = "",
    sizes: tuple[int, int] | None = None,
) -> ExecResult:
    """An exec's result with each stream cut to its last `max_bytes` bytes; `sizes` are the whole streams' sizes
    when what is given was already cut."""
    stdout_bytes, stderr_bytes = sizes or (len(stdout), len(stderr))
    return ExecResult(
        exit_code=exit_code,
        stdout=stdout[-max_bytes:].decode(errors="replace"),
        stderr=stderr[-max_bytes:].decode(errors="replace"),
        stdout_bytes=stdout_bytes,
        stderr_bytes=stderr_bytes,
        note=note,
    )


class EngineInfo(_Model):
    host: str
    version: str
    api_version: str
    os: str = ""


class ImageBuilder(Protocol):
    """Local images, for the image Jarvis's bundled stack builds FROM (`jarvis setup`, `jarvis_system bootstrap`).
    Failures raise `JarvisError` subclasses only (`DaemonUnavailable` when the daemon cannot be reached)."""

    def image_labels(self, tag: str) -> dict[str, str] | None:
        """The labels of the local image `tag` (empty when it has none), or None when there is no such image."""
        ...

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        """Build the image `tag` from the folder `context` (its Dockerfile at the root) with `labels`, pulling
        nothing. A failed build raises `DockerCommandFailed`."""
        ...


class DockerRunner(ImageBuilder, Protocol):
    """Jarvis's one seam to Docker. Lifecycle calls return when Docker has finished.

    Common to every method: an empty `services` means every service of the project; names were checked
    against the project first; failures raise `JarvisError` subclasses only (`DaemonUnavailable` when the
    daemon cannot be reached, which the runner factory retries; `NotSupported` from an adapter that cannot do
    the operation at all); nothing is written to stdout.
    """

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        """Create and start the services' containers, detached (`up -d`); running ones whose configuration
        did not change are left alone. `no_deps` leaves the services they depend on untouched."""
        ...

    def compose_down(self, *, remove_images: bool = False) -> None:
        """Remove the project's containers, networks and volumes, and with `remove_images` the images it built.
        A project with nothing running is not an error."""
        ...

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        """Restart the services' existing containers; a service without a container is left as it is."""
        ...

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        """Every container of the project, running or not, sorted by service then container name;
        `inspect` fills `restart_count` (one more engine call per container)."""
        ...

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        """Build the images of the services that have a build section; `no_cache` rebuilds every layer.
        A failed build raises `DockerCommandFailed` with the tail of the build's output."""
        ...

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        """Stop the services' containers (they are kept, so `compose_start` can start them again)."""
        ...

    def compose_start(self, services: Sequence[str] = ()) -> None:
        """Start the services' existing, stopped containers; raises `NoContainer` when there is none to start."""
        ...

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        """The last `lines` lines OF THE REQUESTED STREAM, oldest first, in the daemon's order, each labelled
        with its stream; `tty` says stdout and stderr were one stream. Raises `NoContainer` without one."""
        ...

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        """`compose_logs` of several services at once, in order; a service that fails gets its error instead.
        When every service failed because the daemon is unavailable, the runner factory raises that one error
        (and retries it) instead of returning N copies."""
        ...

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        """Run `command` (an argv list, no shell) in the service's running container (the newest, if several);
        its exit code, and its stdout and stderr kept apart, each cut to its last `max_bytes` bytes (the sizes
        say what was cut). A non-zero exit is a result, not an error. After `timeout` seconds (or when the
        runner's cancel token is set) the command is stopped where the adapter can, and the result has no
        exit code and a note saying what became of it. Raises `NoContainer` when the service has no running
        container, and `InvalidInput` when the container has no such command."""
        ...

    def engine_info(self) -> EngineInfo:
        """Where the daemon is (its host), its version and API version; raises `DaemonUnavailable` when absent."""
        ...

    def cancellable(self, cancel: CancelToken) -> DockerRunner:
        """This runner for one long operation: when `cancel` is set, a call in progress stops (a child process's
        whole group is killed, a wait ends) and raises `Cancelled` saying what was stopped; what Docker already
        did stays done (`compose_ps` shows it). Cheap: it shares this runner's connections."""
        ...
