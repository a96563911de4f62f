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

from jarvis.docker_hosts import DockerHost, configured_hosts
from jarvis.errors import ConfigError, InvalidInput, quoted
from jarvis.user_files import user_path

AdapterName = Literal["whales", "dockerpy"]
# `markdown`: dense text for agents; `json`: structuredContent (success, timestamp, ids, data) and a one-line text.
OutputName = Literal["markdown", "json"]
PrunerName = Literal["builtin", "http", "off"]
COMPOSE_FILE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
DEFAULT_PROFILES = ("essentials", "memory", "dev-core", "data", "research")
# The ports the MCPM daemon serves each default profile on: profile P answers at http://localhost:<port>/mcp.
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
    "wait_timeout": "JARVIS_WAIT_TIMEOUT",
    "call_budget": "JARVIS_CALL_BUDGET",
    "mcpm_dir": "JARVIS_MCPM_DIR",
    "workspace_dir": "JARVIS_WORKSPACE_DIR",
    "registry_url": "JARVIS_REGISTRY_URL",
    "registry_timeout": "JARVIS_REGISTRY_TIMEOUT",
    "tools": "JARVIS_TOOLS",
    "read_only": "JARVIS_READ_ONLY",
    "hosts": "JARVIS_HOSTS",
    "host_timeout": "JARVIS_HOST_TIMEOUT",
    "output": "JARVIS_OUTPUT",
    "share_bind": "JARVIS_SHARE_BIND",
    "share_relay": "JARVIS_SHARE_RELAY",
    "share_ssh_options": "JARVIS_SHARE_SSH_OPTIONS",
    "pruner": "JARVIS_PRUNER",
    "pruner_url": "JARVIS_PRUNER_URL",
    "pruner_timeout": "JARVIS_PRUNER_TIMEOUT",
    "prune_max_input_bytes": "JARVIS_PRUNE_MAX_INPUT_BYTES",
    "files_root": "JARVIS_FILES_ROOT",
}
# Keys only jarvis.toml can set (structured values).
TOML_ONLY = ("build_commands", "test_suites", "share_tunnel_command")
_LIST_SEPARATORS = {"compose_files": os.pathsep, "profiles": ",", "tools": ","}


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
    # `wait=true` on rebuild, start, restart_infra: seconds to wait for the services to settle.
    wait_timeout: float = Field(default=120.0, gt=0, le=3600)
    # Seconds a long operation may hold its call before it goes on in the background (0: hold to the end);
    # under Codex's default 300 s per call.
    call_budget: float = Field(default=240.0, ge=0, le=24 * 3600)
    mcpm_dir: Path = Field(default_factory=lambda: Path("~/.config/mcpm").expanduser())
    # component -> commands (argv lists) run by `jarvis_system build`, replacing that component's defaults.
    build_commands: dict[str, list[list[str]]] = Field(default_factory=dict)
    # The code project `jarvis_project` works on (analyze, diff, devops, test); default: the current directory.
    workspace_dir: Path = Field(default_factory=Path.cwd)
    test_suites: dict[str, SuiteSettings] = Field(default_factory=dict)
    # MCPM's registry index (an http(s) URL or a local file), and the deadline for fetching it whole.
    registry_url: str = "https://mcpm.sh/api/servers.json"
    registry_timeout: float = Field(default=5.0, gt=0, le=120)
    # The tools served (names with or without `jarvis_`; empty = all), checked when the server is built.
    tools: tuple[str, ...] = ()
    # Serve only what changes nothing: writing actions leave the schemas and are refused.
    read_only: bool = False
    # Named Docker hosts: name -> endpoint, optionally followed by (ro); the default host is always there.
    hosts: dict[str, str] = Field(default_factory=dict)
    # Seconds jarvis_check_status waits for each host's answer (asked once, all hosts at the same time).
    host_timeout: float = Field(default=5.0, gt=0, le=120)
    output: OutputName = "markdown"
    # jarvis_share: the address shares listen on; the ssh relay (`[user@]host[:port]`, or `bore`'s server) and
    # extra `ssh` arguments (shell-split, e.g. `-i ~/.ssh/relay_key`); a custom tunnel command with `{port}`.
    share_bind: str = "127.0.0.1"
    share_relay: str | None = None
    share_ssh_options: str = ""
    share_tunnel_command: str | None = None
    # Output pruning (`context_focus_question`): which pruner; unset means `http` when a URL is set, else `builtin`.
    pruner: PrunerName | None = None
    pruner_url: str | None = None  # a swe-pruner compatible `POST /prune` endpoint
    pruner_timeout: float = Field(default=5.0, gt=0, le=300)
    # Larger outputs are returned whole: pruning them would cost more time than it saves.
    prune_max_input_bytes: int = Field(default=2 * 1024 * 1024, ge=1)
    # The folder the files server (`jarvis files serve`) reads and runs commands in; default: the current directory.
    files_root: Path = Field(default_factory=Path.cwd)
    # The jarvis.toml these settings were read from, or would be (`jarvis_config set` writes there).
    config_file: Path | None = Field(default=None, exclude=True)

    @field_validator("endpoints")
    @classmethod
    def _endpoints_are_urls(cls, value: dict[str, str]) -> dict[str, str]:
        for profile, url in value.items():
            if not url.startswith(("http://", "https://")):
                raise ValueError(
                    f"profile {quoted(profile)}: {quoted(url)} is not an http(s) URL (profile=url,profile=url)"
                )
        return value

    @field_validator("hosts")
    @classmethod
    def _hosts_are_endpoints(cls, value: dict[str, str]) -> dict[str, str]:
        configured_hosts(value)  # raises ValueError naming the host and what is accepted
        return value

    def docker_hosts(self) -> tuple[DockerHost, ...]:
        return configured_hosts(self.hosts)

    @field_validator("share_tunnel_command")
    @classmethod
    def _tunnel_command_has_port(cls, value: str | None) -> str | None:
        if value is not None and "{port}" not in value:
            raise ValueError("must contain {port}, where the share's local port goes")
        return value

    @field_validator("pruner_url")
    @classmethod
    def _pruner_url_is_http(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/prune)")
        return value or None

    @property
    def effective_pruner(self) -> PrunerName:
        return self.pruner or ("http" if self.pruner_url else "builtin")

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
    _check_paths(raw)
    base = Path(raw["project_dir"]).expanduser() if raw.get("project_dir") else None
    if base is None:
        base = cwd if holds_compose_file(cwd) else default_stack_dir()
    raw["project_dir"] = (cwd / base).resolve()
    if raw.get("mcpm_dir"):
        raw["mcpm_dir"] = Path(raw["mcpm_dir"]).expanduser()
    raw["workspace_dir"] = (cwd / Path(raw.get("workspace_dir") or ".").expanduser()).resolve()
    raw["files_root"] = (cwd / Path(raw.get("files_root") or ".").expanduser()).resolve()
    raw["config_file"] = (cwd / config_file_path(config_path, environ, cwd)[0]).resolve()
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from exc
    files = tuple((settings.project_dir / f).resolve() for f in settings.compose_files)
    settings = settings.model_copy(update={"compose_files": files})
    _check_project(settings)
    return settings


def _check_paths(raw: dict[str, Any]) -> None:
    """Path settings are text a file system call can take (no NUL byte, no over-long name, a known `~user`)."""
    paths = [(key, raw[key]) for key in ("project_dir", "mcpm_dir", "workspace_dir") if raw.get(key)]
    files = raw.get("compose_files")
    paths += [("compose_files", file) for file in files] if isinstance(files, list) else []
    registry = raw.get("registry_url")
    if isinstance(registry, str) and not registry.startswith(("http://", "https://")):
        paths.append(("registry_url", registry.removeprefix("file://")))
    for key, value in paths:
        where = f"{ENV_NAMES[key]} ({key})"
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be a path (got {quoted(value)})")
        try:
            user_path(value, where, Path.home())
        except InvalidInput as exc:
            raise ConfigError(str(exc)) from exc


def parse_value(key: str, value: str) -> Any:
    """A setting given as text (an environment variable, or `jarvis_config set`) as its structured value."""
    if key in _LIST_SEPARATORS:
        return [part.strip() for part in value.split(_LIST_SEPARATORS[key]) if part.strip()]
    if key in ("endpoints", "hosts"):  # profile=url,profile=url / name=endpoint,name=endpoint
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
    return f"{env_name} ({where}): {error['msg']} (got {quoted(error.get('input'))}){accepted}"


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
