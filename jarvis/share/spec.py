"""What the engine hands a proxy process (`ProxySpec`, a 0600 JSON file the proxy deletes once read) and what
the proxy answers when it serves or gives up (`ProxyReady`, written atomically beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TunnelKind = Literal["ssh", "bore", "command"]


class Member(BaseModel):
    """One shared MCP server: a command to run (stdio) or a URL to reach (streamable HTTP or SSE)."""

    model_config = ConfigDict(frozen=True)

    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)


class TunnelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: TunnelKind
    argv: list[str]  # `{port}` in an argument becomes the share's local port
    public_host: str | None = None  # ssh: the relay's host, for "Allocated port N"
    timeout: float


class ProxySpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    share_id: str
    target: str  # "server NAME" or "profile NAME"
    members: list[Member]
    prefix_names: bool  # a profile share names tools `<server>_<tool>`
    bind: str
    port: int = 0  # 0: a free one
    token: str | None  # None: no auth
    tunnel: TunnelSpec | None = None
    member_timeout: float
    ready_file: Path


class ProxyReady(BaseModel):
    ok: bool
    error: str | None = None
    port: int = 0
    public_url: str | None = None
    served: list[str] = Field(default_factory=list)
    failed: dict[str, str] = Field(default_factory=dict)  # member -> why it did not start

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
