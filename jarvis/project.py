"""The Compose project Jarvis manages: its name and services, as Compose itself resolves them.

`docker compose config` needs no daemon, so the project can be described (and names validated)
even while Docker is down. The result is cached until a compose file changes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import python_on_whales
from pydantic import BaseModel, ConfigDict
from python_on_whales.client_config import ClientNotFoundError
from python_on_whales.exceptions import DockerException

from jarvis.errors import ProjectError, UnknownService
from jarvis.settings import COMPOSE_FILE_NAMES, Settings

COMPOSE_MISSING_HINT = (
    "`docker compose` (Compose v2+) is not available. Run `jarvis setup`, which installs the Compose "
    "binary shipped with Jarvis as the docker CLI plugin."
)


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
                f"Unknown service '{unknown[0]}' in project {self.name}. Services: {', '.join(self.services)}"
            )


def whales_client(settings: Settings) -> python_on_whales.DockerClient:
    """The one python-on-whales client: Compose flags are built from settings here and nowhere else."""
    return python_on_whales.DockerClient(
        compose_files=list(settings.compose_files),
        compose_project_name=settings.project_name,
        compose_project_directory=settings.project_dir,
    )


class ComposeProject:
    def __init__(self, settings: Settings, client: python_on_whales.DockerClient | None = None) -> None:
        self.settings = settings
        self.client = client or whales_client(settings)
        self._lock = threading.Lock()
        self._cached: tuple[tuple[tuple[str, int], ...], ProjectSpec] | None = None

    def spec(self) -> ProjectSpec:
        key = self._files_fingerprint()
        with self._lock:
            if self._cached is None or self._cached[0] != key:
                self._cached = (key, self._load())
            return self._cached[1]

    def compose_version(self) -> str:
        try:
            text = self.client.compose.version()
        except DockerException as exc:
            raise ProjectError(COMPOSE_MISSING_HINT) from exc
        except ClientNotFoundError as exc:
            raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc
        return text.strip().removeprefix("Docker Compose version ")

    def _files_fingerprint(self) -> tuple[tuple[str, int], ...]:
        files = list(self.settings.compose_files) or [self.settings.project_dir / n for n in COMPOSE_FILE_NAMES]
        files.append(self.settings.project_dir / ".env")
        return tuple((str(f), f.stat().st_mtime_ns) for f in files if f.is_file())

    def _load(self) -> ProjectSpec:
        try:
            config = self.client.compose.config(return_json=True)
        except DockerException as exc:
            stderr = (exc.stderr or "").strip()
            if "is not a docker command" in stderr or "unknown command" in stderr:
                raise ProjectError(COMPOSE_MISSING_HINT) from exc
            raise ProjectError(f"Compose rejected the project in {self.settings.project_dir}: {stderr}") from exc
        except ClientNotFoundError as exc:
            raise ProjectError("The `docker` CLI is not on PATH; install Docker.") from exc
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
