"""The Compose project Jarvis manages: its name and services, as Compose itself resolves them.

`docker compose config` needs no daemon, so the project can be described (and names validated)
even while Docker is down. The result is cached until a compose file changes (`Jarvis.warm_in_background`
fills it after start-up). python-on-whales is imported on first use: `jarvis serve` must answer
`tools/list` without paying for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from jarvis.compose_binary import compose_binary_identity
from jarvis.concurrency import LIBRARY_IMPORTS
from jarvis.docker_hosts import DockerHost
from jarvis.errors import ProjectError, UnknownService, quoted
from jarvis.settings import COMPOSE_FILE_NAMES, Settings

if TYPE_CHECKING:
    import python_on_whales

T = TypeVar("T")

COMPOSE_MISSING_HINT = (
    "`docker compose` (Compose v2+) is not available. Run `jarvis setup`, which installs the Compose "
    "binary shipped with Jarvis as the docker CLI plugin."
)


def compose_missing(output: str) -> bool:
    """Whether the docker CLI answered a `docker compose ...` command without a Compose v2 plugin to run it.

    Without the plugin, `compose` is not a command: the CLI says so ("unknown command"), or, when Compose's
    own flags come first, rejects the first one as its own unknown flag and prints the docker CLI's usage
    (`unknown flag: --project-directory` ... `Run 'docker --help'`), which the plugin itself never prints.
    """
    lowered = output.lower()
    if "is not a docker command" in lowered or "unknown command" in lowered:
        return True
    return "unknown flag" in lowered and "docker --help" in lowered


class ServiceSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    image: str | None = None
    builds: bool = False
    tty: bool = False


class ProjectSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    directory: Path
    services: dict[str, ServiceSpec]

    def check_services(self, names: list[str] | tuple[str, ...]) -> None:
        unknown = [n for n in names if n not in self.services]
        if unknown:
            raise UnknownService(
                f"Unknown service {quoted(unknown[0])} in project {self.name}. Services: {', '.join(self.services)}"
            )


def whales_client(settings: Settings, host: DockerHost | None = None) -> python_on_whales.DockerClient:
    """The one python-on-whales client: Compose flags are built from settings here and nowhere else, and the
    daemon from `host` (`--host` for an endpoint URL, `--context` for a context; the docker CLI takes TLS from
    DOCKER_TLS_VERIFY and DOCKER_CERT_PATH itself)."""
    endpoint = host.endpoint if host is not None else None
    by_context = host is not None and host.kind == "context"
    with LIBRARY_IMPORTS:
        import python_on_whales

    return python_on_whales.DockerClient(
        compose_files=list(settings.compose_files),
        compose_project_name=settings.project_name,
        compose_project_directory=settings.project_dir,
        host=None if by_context else endpoint,
        context=endpoint if by_context else None,
    )


class ComposeProject(Protocol):
    """The project as the tools see it; `ComposeCliProject` asks Compose, tests use a fixed one."""

    def spec(self) -> ProjectSpec:
        """The project's name and services; raises `ProjectError` when Compose cannot read it."""
        ...

    def compose_version(self) -> str:
        """The Compose version, e.g. `2.29.1`; raises `ProjectError` when `docker compose` is missing."""
        ...


class ComposeCliProject:
    """The project as `docker compose config` resolves it (through python-on-whales)."""

    def __init__(self, settings: Settings, client: python_on_whales.DockerClient | None = None) -> None:
        self.settings = settings
        if client is not None:
            self.client = client
        self._lock = threading.Lock()
        self._cached: tuple[tuple[tuple[str, int], ...], ProjectSpec] | None = None
        self._version: tuple[object, str] | None = None

    @cached_property
    def client(self) -> python_on_whales.DockerClient:
        return whales_client(self.settings)

    def spec(self) -> ProjectSpec:
        key = self._files_fingerprint()
        with self._lock:
            if self._cached is None or self._cached[0] != key:
                self._cached = (key, self._load())
            return self._cached[1]

    def compose_version(self) -> str:
        """`docker compose version`, run again only when the Compose binary changes (path, mtime, size)."""
        identity = compose_binary_identity()
        cached = self._version
        if cached is None or cached[0] != identity:
            cached = (identity, self._run_compose_version())
            self._version = cached
        return cached[1]

    def _run_compose_version(self) -> str:
        text = self._compose(lambda client: client.compose.version(), lambda _: ProjectError(COMPOSE_MISSING_HINT))
        return text.strip().removeprefix("Docker Compose version ")

    def _compose(self, call: Callable[[python_on_whales.DockerClient], T], failed: Callable[[str], ProjectError]) -> T:
        """One Compose CLI call: no docker CLI, no Compose plugin, or Compose failing (`failed(its stderr)`)
        become `ProjectError`s."""
        with LIBRARY_IMPORTS:
            from python_on_whales.client_config import ClientNotFoundError
            from python_on_whales.exceptions import DockerException
        try:
            return call(self.client)
        except DockerException as exc:
            stderr = (exc.stderr or "").strip()
            if compose_missing(f"{exc.stdout or ''}\n{stderr}"):
                raise ProjectError(COMPOSE_MISSING_HINT) from exc
            raise failed(stderr) from exc
        except ClientNotFoundError as exc:
            raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc

    def _files_fingerprint(self) -> tuple[tuple[str, int], ...]:
        files = list(self.settings.compose_files) or [self.settings.project_dir / n for n in COMPOSE_FILE_NAMES]
        files.append(self.settings.project_dir / ".env")
        return tuple((str(f), f.stat().st_mtime_ns) for f in files if f.is_file())

    def _load(self) -> ProjectSpec:
        directory = self.settings.project_dir
        config: dict[str, Any] = self._compose(
            lambda client: client.compose.config(return_json=True),
            lambda stderr: ProjectError(f"Compose rejected the project in {directory}: {stderr}"),
        )
        services = {
            name: ServiceSpec(
                name=name,
                image=body.get("image"),
                builds="build" in body,
                tty=bool(body.get("tty")),
            )
            for name, body in (config.get("services") or {}).items()
        }
        return ProjectSpec(name=config["name"], directory=self.settings.project_dir, services=services)
