"""One MCP server entry in a client's own format, both ways.

Entries Jarvis writes follow MCPM's naming convention, so `mcpm client ls` and Jarvis agree on who owns what:
`mcpm_<server>` for a server and `mcpm_profile_<profile>` for a profile. Every other entry is the user's and is
never written. A server entry is MCPM's own (`mcpm run <server>`: the store stays the one place holding its
command and secrets) when `mcpm` is on PATH, else the server's command or URL itself, so it works without
MCPM. A profile entry points at the profile's endpoint when Jarvis's stack serves it, else runs
`mcpm profile run <profile>` as MCPM does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jarvis.clients.catalog import Style
from jarvis.store.models import ServerRecord

SERVER_PREFIX = "mcpm_"
PROFILE_PREFIX = "mcpm_profile_"
_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class Launch:
    """How a client starts one MCP server: a command (stdio) or a URL (remote), or a client-specific blob."""

    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    custom: dict[str, Any] | None = None


# Jarvis's own files server (`jarvis files serve`: read, bash, grep with output pruning), wired under this name: the
# switch that gives an agent those tools. It is not an MCPM server, so its entry carries no `mcpm_` prefix.
FILES_SERVER = "jarvis-files"


def server_key(name: str) -> str:
    return FILES_SERVER if name == FILES_SERVER else f"{SERVER_PREFIX}{name}"


def launch_of_files_server(python: str, root: Path) -> Launch:
    """The files server run by the same Python that runs this Jarvis, on `root` (the workspace)."""
    return Launch(command=python, args=["-m", "jarvis", "files", "serve"], env={"JARVIS_FILES_ROOT": str(root)})


def profile_key(name: str) -> str:
    return f"{PROFILE_PREFIX}{name}"


def owner(key: str) -> tuple[Literal["server", "profile"], str] | None:
    """Whose entry `key` is: a Jarvis/MCPM server or profile, or None (the user's own)."""
    if key == FILES_SERVER:
        return "server", FILES_SERVER
    if key.startswith(PROFILE_PREFIX):
        return "profile", key.removeprefix(PROFILE_PREFIX)
    if key.startswith(SERVER_PREFIX):
        return "server", key.removeprefix(SERVER_PREFIX)
    return None


def mcpm_on_path(which: Callable[[str], str | None]) -> bool:
    return which("mcpm") is not None


def launch_of_server(record: ServerRecord, *, via_mcpm: bool, environ: Mapping[str, str]) -> tuple[Launch, list[str]]:
    """`mcpm run <name>` (via_mcpm), or the server's own launch with `${VAR}` env references resolved from
    Jarvis's environment; the names of references that are not set come back so the answer can say so."""
    if via_mcpm:
        return Launch(command="mcpm", args=["run", record.name]), []
    if record.transport == "custom":
        return Launch(custom=dict(record.config or {})), []
    missing: list[str] = []
    env: dict[str, str] = {}
    for key, value in (record.env or {}).items():
        if value == "":
            continue  # as MCPM: an empty value is not passed to the client
        reference = _ENV_REFERENCE.match(value)
        if reference and reference.group(1) in environ:
            value = environ[reference.group(1)]
        elif reference:
            missing.append(key)
        env[key] = value
    headers = {key: str(value) for key, value in (record.headers or {}).items()}
    if record.transport == "remote":
        return Launch(url=record.url, headers=headers), missing
    return Launch(command=record.command, args=list(record.args or []), env=env), missing


def launch_of_profile(profile: str, endpoint: str | None) -> Launch:
    if endpoint:
        return Launch(url=endpoint)
    return Launch(command="mcpm", args=["profile", "run", profile])


def to_client(style: Style, key: str, launch: Launch) -> dict[str, Any]:
    """`launch` as `style` writes it (MCPM's `to_client_format`, with each client's documented remote fields)."""
    if launch.custom is not None:
        return dict(launch.custom)
    if style == "claude-desktop" and launch.url:  # Claude Desktop only starts local servers: bridge with mcp-remote
        args = ["-y", "mcp-remote", launch.url]
        for name, value in launch.headers.items():
            args += ["--header", f"{name}: {value}"]
        return to_client(style, key, Launch(command="npx", args=args))
    if style == "opencode":
        if launch.url:
            return {"type": "remote", "url": launch.url, **_opt("headers", launch.headers), "enabled": True}
        local = {"type": "local", "command": [launch.command, *launch.args]}
        return {**local, **_opt("environment", launch.env), "enabled": True}
    if style == "goose":
        if launch.url:
            entry = {"type": "streamable_http", "uri": launch.url, **_opt("headers", launch.headers)}
        else:
            entry = {"type": "stdio", "cmd": launch.command, "args": launch.args, **_opt("envs", launch.env)}
        return {"name": key, **entry, "enabled": True, "timeout": 300}
    if launch.url:
        url_field = {"windsurf": "serverUrl", "gemini": "httpUrl"}.get(style, "url")
        headers_field = "http_headers" if style == "codex" else "headers"
        entry = {url_field: launch.url, **_opt(headers_field, launch.headers)}
        kind = {"claude-code": "http", "vscode": "http", "continue": "streamable-http", "fiveire": "remote"}
        if style in kind:
            entry = {"type": kind[style], **entry}
    else:
        entry = {"command": launch.command, "args": launch.args, **_opt("env", launch.env)}
        kind = {"claude-code": "stdio", "vscode": "stdio", "fiveire": "local"}
        if style in kind:
            entry = {"type": kind[style], **entry}
    if style == "fiveire":
        entry = {"key": re.sub(r"[^a-zA-Z0-9]", "", key), **entry, "isActive": True}
    if style == "continue":
        entry = {"name": key, **entry}
    return entry


def from_client(entry: Any) -> Launch:
    """Read any client's entry back: a command (a string, or OpenCode's array), or a URL, else custom."""
    if not isinstance(entry, dict):
        return Launch(custom={"value": entry})
    command = entry.get("command", entry.get("cmd"))
    env = entry.get("env") or entry.get("envs") or entry.get("environment") or {}
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        command, args = command[0], command[1:]
    else:
        args = entry.get("args") or []
    if isinstance(command, str) and command and _strings(args) and _string_map(env):
        return Launch(command=command, args=list(args), env=dict(env))
    url = next((entry[k] for k in ("url", "serverUrl", "httpUrl", "uri") if isinstance(entry.get(k), str)), None)
    headers = entry.get("headers") or entry.get("http_headers") or {}
    if url and _string_map(headers):
        return Launch(url=url, headers=dict(headers))
    return Launch(custom=dict(entry))


def _opt(name: str, values: dict[str, str]) -> dict[str, Any]:
    return {name: dict(values)} if values else {}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
