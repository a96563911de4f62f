"""A real MCP handshake with a profile's endpoint over streamable HTTP, through the `mcp` SDK's client.

initialize → notifications/initialized → tools/list (every page), all inside one deadline. The report
says how far it got, so "the port is closed", "it is not an MCP server" and "its tools fail to load"
read differently.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import BaseModel, ConfigDict


class EndpointReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    ok: bool
    failed_at: str | None = None  # connect/initialize | tools/list
    error: str | None = None
    server: str | None = None  # "name version"
    protocol: str | None = None
    tools: tuple[str, ...] = ()
    seconds: float = 0.0


def probe(url: str, timeout: float, headers: dict[str, str] | None = None) -> EndpointReport:
    """Blocking: runs its own event loop, so handlers call it from their worker thread. `headers` go with
    every request (a share's `Authorization`)."""
    return anyio.run(_probe, url, timeout, headers)


@asynccontextmanager
async def http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP with `headers` on every request (the SDK takes headers only through an HTTP client)."""
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def probe_many(urls: Sequence[str], timeout: float) -> list[EndpointReport]:
    """All at once on one event loop: the whole call takes as long as the slowest endpoint."""
    return anyio.run(_probe_all, list(urls), timeout)


async def _probe_all(urls: list[str], timeout: float) -> list[EndpointReport]:
    reports: list[EndpointReport | None] = [None] * len(urls)

    async def one(index: int) -> None:
        reports[index] = await _probe(urls[index], timeout)

    async with anyio.create_task_group() as group:
        for index in range(len(urls)):
            group.start_soon(one, index)
    return [r for r in reports if r is not None]


async def _probe(url: str, timeout: float, headers: dict[str, str] | None = None) -> EndpointReport:
    started = time.monotonic()
    stage = "connect/initialize"
    server = protocol = None
    try:
        with anyio.fail_after(timeout):
            # mode="legacy": the initialize handshake, as every deployed MCP server speaks it today.
            target = http_transport(url, headers) if headers else url
            async with Client(target, mode="legacy", read_timeout_seconds=timeout) as client:
                info = client.server_info
                server = f"{info.name} {info.version}".strip() if info else "(unnamed)"
                protocol = client.protocol_version
                stage = "tools/list"
                names: list[str] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    names += [tool.name for tool in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
    except TimeoutError:
        return _failed(url, stage, f"no answer within {timeout:g}s", started, server, protocol)
    except Exception as exc:  # any transport or protocol failure is a finding, not a crash
        return _failed(url, stage, describe_failure(exc), started, server, protocol)
    return EndpointReport(
        url=url,
        ok=True,
        server=server,
        protocol=protocol,
        tools=tuple(names),
        seconds=time.monotonic() - started,
    )


def _failed(
    url: str, stage: str, error: str, started: float, server: str | None, protocol: str | None
) -> EndpointReport:
    return EndpointReport(
        url=url,
        ok=False,
        failed_at=stage,
        error=error,
        server=server,
        protocol=protocol,
        seconds=time.monotonic() - started,
    )


def describe_failure(exc: BaseException) -> str:
    """The innermost cause, without task-group wrapping: 'ConnectError: All connection attempts failed'."""
    while True:
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__
