"""Jarvis's settings: one model, read from `jarvis.toml`, overridden by `JARVIS_*` environment variables.

The environment is passed in as a mapping, so tests build settings from explicit values.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jarvis.errors import ConfigError

AdapterName = Literal["whales", "dockerpy"]
COMPOSE_FILE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
DEFAULT_PROFILES = ("essentials", "memory", "dev-core", "data", "research")
# The MCPM daemon's profile ports (original Jarvis, notes §5.3): profile P serves http://localhost:<port>/mcp.
DEFAULT_ENDPOINTS = {
    profile: f"http://localhost:{port}/mcp"
    for profile, port in {"essentials": 6276, "memory": 6277, "dev-core": 6278, "data": 6279, "research": 6281}.items()
}

# setting name -> environment variable; the names are Jarvis's public interface (README, "Configuration").
ENV_NAMES = {
    "project_dir": "JARVIS_PROJECT_DIR",
    "compose_files": "JARVIS_COMPOSE_FILES",
    "project_name": "JARVIS_PROJECT_NAME",
    "profiles": "JARVIS_PROFILES",
    "profile_prefix": "JARVIS_PROFILE_PREFIX",
    "lifecycle_adapter": "JARVIS_LIFECYCLE_ADAPTER",
    "observe_adapter": "JARVIS_OBSERVE_ADAPTER",
    "retry_timeout": "JARVIS_RETRY_TIMEOUT",
    "endpoints": "JARVIS_ENDPOINTS",
    "endpoint_timeout": "JARVIS_ENDPOINT_TIMEOUT",
    "bootstrap_timeout": "JARVIS_BOOTSTRAP_TIMEOUT",
    "mcpm_dir": "JARVIS_MCPM_DIR",
    "workspace_dir": "JARVIS_WORKSPACE_DIR",
    "registry_url": "JARVIS_REGISTRY_URL",
    "registry_timeout": "JARVIS_REGISTRY_TIMEOUT",
}
# Keys only jarvis.toml can set (structured values).
TOML_ONLY = ("build_commands", "test_suites")
_LIST_SEPARATORS = {"compose_files": os.pathsep, "profiles": ","}


def bundled_stacks_dir() -> Path:
    """`compose/` in a source checkout, `jarvis/_compose` inside an installed wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_compose", here.parent / "compose"):
        if candidate.is_dir():
            return candidate
    raise ConfigError("The bundled stacks (compose/) are missing from this installation.")


def default_stack_dir() -> Path:
    return bundled_stacks_dir() / "default"


def holds_compose_file(directory: Path) -> bool:
    return any((directory / name).is_file() for name in COMPOSE_FILE_NAMES)


class SuiteSettings(BaseModel):
    """One `[test_suites.NAME]` table: replaces the fields it sets of a default suite, or defines a new one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[str] | None = Field(default=None, min_length=1)
    cwd: str | None = None  # relative to the workspace
    timeout: float | None = Field(default=None, gt=0, le=24 * 3600)  # seconds
    suites: list[str] | None = None  # a composite suite (like `all`): these suites in turn


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project_dir: Path
    compose_files: tuple[Path, ...] = ()
    project_name: str | None = None
    profiles: tuple[str, ...] = DEFAULT_PROFILES
    profile_prefix: str = "mcpm-"
    lifecycle_adapter: AdapterName = "whales"
    observe_adapter: AdapterName = "dockerpy"
    retry_timeout: float = Field(default=10.0, ge=0, le=600)
    endpoints: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ENDPOINTS))
    endpoint_timeout: float = Field(default=10.0, gt=0, le=300)
    bootstrap_timeout: float = Field(default=120.0, gt=0, le=3600)
    mcpm_dir: Path = Field(default_factory=lambda: Path("~/.config/mcpm").expanduser())
    # component -> commands (argv lists) run by `jarvis_system build`, replacing that component's defaults.
    build_commands: dict[str, list[list[str]]] = Field(default_factory=dict)
    # The code project `jarvis_project` works on (analyze, diff, devops, test); default: the current directory.
    workspace_dir: Path = Field(default_factory=Path.cwd)
    test_suites: dict[str, SuiteSettings] = Field(default_factory=dict)
    # MCPM's registry index (an http(s) URL or a local file), and the deadline for fetching it whole.
    registry_url: str = "https://mcpm.sh/api/servers.json"
    registry_timeout: float = Field(default=5.0, gt=0, le=120)
    # The jarvis.toml these settings were read from, or would be (`jarvis_config set` writes there).
    config_file: Path | None = Field(default=None, exclude=True)

    @field_validator("endpoints")
    @classmethod
    def _endpoints_are_urls(cls, value: dict[str, str]) -> dict[str, str]:
        for profile, url in value.items():
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"profile {profile}: {url!r} is not an http(s) URL (profile=url,profile=url)")
        return value

    def endpoint_for_profile(self, profile: str) -> str | None:
        return self.endpoints.get(profile)

    @field_validator("profiles")
    @classmethod
    def _profiles_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or any(not p for p in value):
            raise ValueError("must be a comma-separated list of profile names")
        return value

    def service_for_profile(self, profile: str) -> str:
        return f"{self.profile_prefix}{profile}"


def load_settings(
    config_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Build settings from a TOML file (`--config`, else `$JARVIS_CONFIG`, else `./jarvis.toml`) and the env."""
    environ = os.environ if environ is None else environ
    cwd = cwd or Path.cwd()
    raw: dict[str, Any] = _read_toml(config_path, environ, cwd)
    for key, env_name in ENV_NAMES.items():
        if env_name in environ and environ[env_name] != "":
            raw[key] = parse_value(key, environ[env_name])
    base = Path(raw["project_dir"]).expanduser() if raw.get("project_dir") else None
    if base is None:
        base = cwd if holds_compose_file(cwd) else default_stack_dir()
    raw["project_dir"] = (cwd / base).resolve()
    if raw.get("mcpm_dir"):
        raw["mcpm_dir"] = Path(raw["mcpm_dir"]).expanduser()
    raw["workspace_dir"] = (cwd / Path(raw.get("workspace_dir") or ".").expanduser()).resolve()
    raw["config_file"] = (cwd / config_file_path(config_path, environ, cwd)[0]).resolve()
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from exc
    files = tuple((settings.project_dir / f).resolve() for f in settings.compose_files)
    settings = settings.model_copy(update={"compose_files": files})
    _check_project(settings)
    return settings


def parse_value(key: str, value: str) -> Any:
    """A setting given as text (an environment variable, or `jarvis_config set`) as its structured value."""
    if key in _LIST_SEPARATORS:
        return [part.strip() for part in value.split(_LIST_SEPARATORS[key]) if part.strip()]
    if key == "endpoints":  # profile=url,profile=url
        return dict(part.strip().partition("=")[::2] for part in value.split(",") if part.strip())
    return value


def config_file_path(config_path: Path | None, environ: Mapping[str, str], cwd: Path) -> tuple[Path, bool]:
    """The jarvis.toml to read: `--config`, else `$JARVIS_CONFIG`, else `./jarvis.toml`; and whether it was named."""
    explicit = config_path or (Path(environ["JARVIS_CONFIG"]) if environ.get("JARVIS_CONFIG") else None)
    return (explicit or cwd / "jarvis.toml"), explicit is not None


def _read_toml(config_path: Path | None, environ: Mapping[str, str], cwd: Path) -> dict[str, Any]:
    path, explicit = config_file_path(config_path, environ, cwd)
    if not path.is_file():
        if explicit:
            raise ConfigError(f"Config file {path} does not exist.")
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from exc
    section = data.get("jarvis", data)
    if not isinstance(section, dict):
        raise ConfigError(f"Config file {path}: [jarvis] must be a table.")
    known = (*ENV_NAMES, *TOML_ONLY)
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ConfigError(f"Config file {path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return dict(section)


def _describe(exc: ValidationError) -> str:
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else "?"
    env_name = ENV_NAMES.get(key, key)
    field = Settings.model_fields.get(key)
    accepted = ""
    if field is not None and get_args(field.annotation):
        options = [a for a in get_args(field.annotation) if isinstance(a, str)]
        if options:
            accepted = f"; accepted values: {', '.join(options)}"
    where = ".".join(str(part) for part in error["loc"]) or key
    return f"{env_name} ({where}): {error['msg']} (got {error.get('input')!r}){accepted}"


def _check_project(settings: Settings) -> None:
    if not settings.project_dir.is_dir():
        raise ConfigError(f"JARVIS_PROJECT_DIR: {settings.project_dir} is not a directory.")
    for file in settings.compose_files:
        if not file.is_file():
            raise ConfigError(f"JARVIS_COMPOSE_FILES: {file} does not exist.")
    if not settings.compose_files and not holds_compose_file(settings.project_dir):
        raise ConfigError(
            f"JARVIS_PROJECT_DIR: {settings.project_dir} holds no compose file "
            f"({', '.join(COMPOSE_FILE_NAMES)}); set JARVIS_COMPOSE_FILES or point it elsewhere."
        )
