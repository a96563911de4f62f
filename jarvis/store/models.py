"""MCPM 2.x records as Jarvis reads and writes them (mirroring `mcpm.core.schema`, without importing mcpm).

Every model keeps fields it does not know (`extra="allow"`) and dumps only the fields the file had or Jarvis
set (`exclude_unset`), so a record Jarvis did not change is written back as it was read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Transport = Literal["stdio", "remote", "custom"]


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
