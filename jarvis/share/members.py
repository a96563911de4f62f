"""Client sessions to the shared servers, and the MCP server that forwards every request to them.

A server share passes names through unchanged. A profile share names tools and prompts `<server>_<name>` and
resource URIs `scheme://<server>/rest`, as MCPM (through FastMCP's mounting) does. A tool call is forwarded
with a progress callback that relays each `notifications/progress` to the caller, and runs inside the front
request's task: when the caller cancels, the SDK cancels that task, and the member's client session sends
`notifications/cancelled` for the abandoned request.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from jarvis.endpoint_probe import describe_failure as describe
from jarvis.endpoint_probe import http_transport
from jarvis.share.spec import Member

log = logging.getLogger("jarvis.share")
T = TypeVar("T")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


@dataclass
class Connected:
    member: Member
    client: Client


@asynccontextmanager
async def connect_all(
    members: Sequence[Member], timeout: float
) -> AsyncIterator[tuple[list[Connected], dict[str, str]]]:
    """Start every member at once and keep them until the block ends. A member that does not answer the
    handshake within `timeout` is reported (name -> why), not fatal. Each session is opened and closed by its
    own task: anyio requires a cancel scope to be left by the task that entered it."""
    connected: dict[str, Connected] = {}
    failed: dict[str, str] = {}
    stop = anyio.Event()

    async def hold(member: Member, ready: anyio.Event) -> None:
        # The deadline covers the handshake only; it is lifted once the session is up.
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as handshake:
            try:
                async with _client(member) as client:
                    handshake.deadline = math.inf
                    connected[member.name] = Connected(member, client)
                    ready.set()
                    await stop.wait()
            except Exception as exc:  # whatever a broken server does, the others are still served
                failed.setdefault(member.name, describe(exc))
                if ready.is_set():
                    log.warning("member %s stopped: %s", member.name, describe(exc))
            finally:
                ready.set()
        if handshake.cancelled_caught:
            failed[member.name] = f"no MCP handshake within {timeout:g}s"

    async with anyio.create_task_group() as group:
        events = [anyio.Event() for _ in members]
        for member, ready in zip(members, events, strict=True):
            group.start_soon(hold, member, ready)
        for ready in events:
            await ready.wait()
        for name, why in failed.items():
            log.warning("member %s did not start: %s", name, why)
        try:
            yield [connected[m.name] for m in members if m.name in connected], dict(failed)
        finally:
            stop.set()


def _client(member: Member) -> Client:
    # mode="legacy": the initialize handshake every deployed MCP server speaks today.
    if member.command is not None:
        params = StdioServerParameters(command=member.command, args=member.args, env=_resolve(member.env))
        return Client(params, mode="legacy")
    if member.url is None:
        raise ValueError(f"{member.name} has neither a command nor a url")
    headers = _resolve(member.headers)
    if member.url.rstrip("/").endswith("/sse"):
        return Client(sse_client(member.url, headers=headers), mode="legacy")
    return Client(http_transport(member.url, headers), mode="legacy")


def _resolve(values: dict[str, str]) -> dict[str, str]:
    """`${VAR}` from the environment, as MCPM resolves it when it runs a server."""
    return {k: _ENV_REFERENCE.sub(lambda m: os.environ.get(m.group(1), ""), v) for k, v in values.items()}


class Router:
    """Front names to (member, the member's own name), both ways."""

    def __init__(self, members: Sequence[Connected], prefix: bool) -> None:
        self.members = {c.member.name: c for c in members}
        self.prefix = prefix
        # Longest first, so `a_b` wins over `a` for the tool `a_b_tool`.
        self._by_length = sorted(self.members, key=len, reverse=True)

    def name(self, member: str, name: str) -> str:
        return f"{member}_{name}" if self.prefix else name

    def uri(self, member: str, uri: str) -> str:
        if not self.prefix:
            return uri
        scheme, sep, rest = uri.partition("://")
        return f"{scheme}://{member}/{rest}" if sep else f"{member}/{uri}"

    def find_name(self, front: str) -> tuple[Connected, str]:
        if not self.prefix:
            return self._only(), front
        for member in self._by_length:
            if front.startswith(member + "_") and len(front) > len(member) + 1:
                return self.members[member], front[len(member) + 1 :]
        raise MCPError(INVALID_PARAMS, f"Unknown name '{front}': names are <server>_<name>")

    def find_uri(self, front: str) -> tuple[Connected, str]:
        if not self.prefix:
            return self._only(), front
        scheme, sep, rest = front.partition("://")
        member, slash, original = (rest if sep else front).partition("/")
        if slash and member in self.members:
            return self.members[member], f"{scheme}://{original}" if sep else original
        raise MCPError(INVALID_PARAMS, f"Unknown resource '{front}': URIs are scheme://<server>/path")

    def _only(self) -> Connected:
        return next(iter(self.members.values()))


async def _gather(
    router: Router, fetch: Callable[[Connected], Awaitable[list[T]]], what: str
) -> list[tuple[Connected, T]]:
    """Every member's items, members in order; a member that fails is left out and logged."""
    results: dict[str, list[T]] = {}

    async def one(connected: Connected) -> None:
        try:
            results[connected.member.name] = await fetch(connected)
        except MCPError as exc:
            if exc.code != METHOD_NOT_FOUND:  # a server without resources or prompts lists none
                log.warning("%s of %s failed: %s", what, connected.member.name, exc)
        except Exception as exc:
            log.warning("%s of %s failed: %s", what, connected.member.name, describe(exc))

    async with anyio.create_task_group() as group:
        for connected in router.members.values():
            group.start_soon(one, connected)
    return [(c, item) for c in router.members.values() for item in results.get(c.member.name, [])]


async def _pages(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            return items


def build_server(name: str, members: Sequence[Connected], prefix: bool) -> Server[Any]:
    router = Router(members, prefix)

    async def list_tools(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None) -> Any:
        found = await _gather(router, lambda c: _pages(lambda cur: c.client.list_tools(cursor=cur), "tools"), "tools")
        tools = [t.model_copy(update={"name": router.name(c.member.name, t.name)}) for c, t in found]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> Any:
        connected, original = router.find_name(params.name)

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        try:
            return await connected.client.call_tool(original, params.arguments, progress_callback=relay)
        except MCPError:
            raise
        except Exception as exc:
            return _unavailable(connected, exc)

    async def list_resources(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None) -> Any:
        found = await _gather(
            router, lambda c: _pages(lambda cur: c.client.list_resources(cursor=cur), "resources"), "resources"
        )
        resources = [r.model_copy(update={"uri": router.uri(c.member.name, str(r.uri))}) for c, r in found]
        return types.ListResourcesResult(resources=resources)

    async def list_templates(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None) -> Any:
        found = await _gather(
            router,
            lambda c: _pages(lambda cur: c.client.list_resource_templates(cursor=cur), "resource_templates"),
            "resource templates",
        )
        templates = [t.model_copy(update={"uri_template": router.uri(c.member.name, t.uri_template)}) for c, t in found]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(_ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> Any:
        connected, original = router.find_uri(str(params.uri))
        result = await connected.client.read_resource(original)
        contents = [c.model_copy(update={"uri": params.uri}) for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def list_prompts(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None) -> Any:
        found = await _gather(
            router, lambda c: _pages(lambda cur: c.client.list_prompts(cursor=cur), "prompts"), "prompts"
        )
        prompts = [p.model_copy(update={"name": router.name(c.member.name, p.name)}) for c, p in found]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(_ctx: ServerRequestContext, params: types.GetPromptRequestParams) -> Any:
        connected, original = router.find_name(params.name)
        return await connected.client.get_prompt(original, params.arguments)

    return Server(
        name,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _unavailable(connected: Connected, exc: BaseException) -> types.CallToolResult:
    text = f"{connected.member.name} is unavailable: {describe(exc)}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
