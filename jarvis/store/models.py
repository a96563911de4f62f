"""MCPM 2.x records as Jarvis reads and writes them (mirroring `mcpm.core.schema`, without importing mcpm).

Every model keeps fields it does not know (`extra="allow"`) and dumps only the fields the file had or Jarvis
set (`exclude_unset`), so a record Jarvis did not change is written back as it was read.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jarvis.errors import InvalidInput, quoted

Transport = Literal["stdio", "remote", "custom"]
# config.json keys Jarvis checks, and their valid values (`mcpm config set` accepts only these).
CONFIG_VALUES = {"node_executable": ("npx", "bunx", "pnpm dlx", "yarn dlx")}


class ServerRecord(BaseModel):
    """One entry of servers.json. MCPM tells the kinds apart by their fields: `command` (stdio),
    `url` (remote: streamable HTTP or SSE), `config` (custom, copied from a client's file)."""

    model_config = ConfigDict(extra="allow")

    name: str
    profile_tags: list[str] = Field(default_factory=list)
    enabled: bool | None = None
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, Any] | None = None
    config: dict[str, Any] | None = None

    @property
    def transport(self) -> Transport:
        if self.command is not None:
            return "stdio"
        if self.url is not None:
            return "remote"
        return "custom"

    def dump(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    @classmethod
    def stdio(cls, name: str, command: str, args: list[str], env: dict[str, str]) -> ServerRecord:
        """A new record with exactly the fields `mcpm new --type stdio` writes."""
        return cls(name=name, profile_tags=[], enabled=None, command=command, args=args, env=env)

    @classmethod
    def remote(cls, name: str, url: str, headers: dict[str, Any]) -> ServerRecord:
        return cls(name=name, profile_tags=[], enabled=None, url=url, headers=headers)


class ProfileMeta(BaseModel):
    """One entry of profiles_metadata.json; a profile's members are the servers tagged with its name."""

    model_config = ConfigDict(extra="allow")

    name: str
    api_key: str | None = None
    description: str | None = None

    def dump(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    @classmethod
    def new(cls, name: str, description: str | None = None) -> ProfileMeta:
        return cls(name=name, api_key=None, description=description)


def check_config_value(key: str, value: object) -> None:
    """A config.json value as `jarvis_config set` and an import both require it."""
    valid = CONFIG_VALUES[key]
    if value not in valid:
        raise InvalidInput(f"Invalid {key} {quoted(value)}. Valid values: {', '.join(valid)}")


# An HTTP header name (RFC 9110 token); an environment variable name is anything but empty, `=` or NUL.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def check_launch(
    command: str | None = None,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    url: str | None = None,
    headers: dict[str, Any] | None = None,
) -> None:
    """What a server record may hold to be started or called: text a process or an HTTP request can carry (no NUL
    byte, no lone surrogate), env names a process accepts, headers that cannot inject another header."""
    texts = {"command": command, "url": url, **{f"args[{i}]": a for i, a in enumerate(args or [])}}
    texts |= {f"env {quoted(k)}": v for k, v in (env or {}).items()}
    texts |= {f"headers {quoted(k)}": v for k, v in (headers or {}).items() if isinstance(v, str)}
    for where, text in texts.items():
        if text is not None:
            _plain(where, text)
    for name in env or {}:
        if not name or "=" in name or "\x00" in name:
            raise InvalidInput(f"Invalid env name {quoted(name)}: not empty, without '=' or NUL.")
    for name, value in (headers or {}).items():
        if not _HEADER_NAME.fullmatch(name):
            raise InvalidInput(f"Invalid header name {quoted(name)}: letters, digits and !#$%&'*+.^_`|~- only.")
        if isinstance(value, str) and ("\r" in value or "\n" in value):
            raise InvalidInput(f"Invalid header {name}: a value cannot hold a line break.")


def _plain(where: str, text: str) -> None:
    if "\x00" in text:
        raise InvalidInput(f"{where} {quoted(text)} holds a NUL byte, which no process or request can carry.")
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{where} {quoted(text)} is not valid text (a lone surrogate).") from exc
