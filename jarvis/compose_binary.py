"""Which binary `docker compose` runs, and its identity (resolved path, mtime, size).

The Compose version changes only when that binary does, so Jarvis asks `docker compose version` again
only when the identity changes; a few `stat` calls instead of a subprocess per `jarvis_check_status`.
The docker CLI looks for its `docker-compose` plugin in the config's `cliPluginsExtraDirs`, then in
`$DOCKER_CONFIG/cli-plugins` (default `~/.docker/cli-plugins`), then in the system folders: the first
found wins. The docker CLI itself is part of the identity, as it is the one resolving the plugin.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from jarvis.host import Host

SYSTEM_PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)
COMPOSE_PLUGIN = "docker-compose"

# (resolved path, mtime in ns, size in bytes); None when there is no such file.
FileIdentity = tuple[str, int, int] | None


def docker_config_dir(host: Host | None = None) -> Path:
    """Where the docker CLI keeps its configuration on `host` (by default this process's machine)."""
    host = host or Host.current()
    return Path(host.environ.get("DOCKER_CONFIG") or host.home / ".docker")


def cli_plugin_dirs() -> list[Path]:
    """The folders the docker CLI searches for plugins, in its order."""
    extra: list[str] = []
    try:
        config = json.loads((docker_config_dir() / "config.json").read_text())
        extra = [d for d in config.get("cliPluginsExtraDirs") or [] if isinstance(d, str)]
    except (OSError, ValueError, AttributeError):
        pass  # no config, or one the docker CLI would reject too: the default folders apply
    return [*map(Path, extra), docker_config_dir() / "cli-plugins", *map(Path, SYSTEM_PLUGIN_DIRS)]


def file_identity(path: Path | None) -> FileIdentity:
    if path is None:
        return None
    try:
        resolved = path.resolve(strict=True)
        stat = resolved.stat()
    except OSError:
        return None
    return (str(resolved), stat.st_mtime_ns, stat.st_size)


def compose_plugin_path() -> Path | None:
    return next((d / COMPOSE_PLUGIN for d in cli_plugin_dirs() if (d / COMPOSE_PLUGIN).is_file()), None)


def compose_binary_identity() -> tuple[FileIdentity, FileIdentity]:
    """(the docker CLI on PATH, the Compose plugin it runs): equal identities mean the same Compose version."""
    docker = shutil.which("docker")
    return file_identity(Path(docker) if docker else None), file_identity(compose_plugin_path())
