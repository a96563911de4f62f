"""The MCP server: a table of Jarvis's tools, and the one binding that serves a plain handler as an MCP tool.

A call's path: the SDK hands over the arguments → `bind`'s tool function → `run_tool` runs, in a worker
thread and inside the one error boundary, the handler's `ToolSignature` (which validates the arguments
against the handler's own signature) and then the handler → the handler asks the DockerRunner → text.
Every anticipated failure (`JarvisError`) becomes a tool error the agent can act on (`isError: true`);
Docker is contacted per call, never at start-up, so the server starts and lists tools with no daemon.

A long action (a tool's `LONG`: rebuild, build, bootstrap, restart_infra, exec, test) runs as an operation
(`jarvis.operations`) instead, followed by `run_long`: a progress notification at each step and at least every
`HEARTBEAT` seconds, the client's cancellation passed on to the operation's cancel token (the SDK only cancels
this coroutine; the work's thread must be told), and after `JARVIS_CALL_BUDGET` seconds an answer naming the
operation, which goes on in the background.

`JARVIS_OUTPUT=json` changes only the last step: the same text or error becomes `structuredContent` (seed
003's shape: success, timestamp, the resource ids from the call's arguments, data or error) with a one-line
text beside it. No tool publishes an `outputSchema`, in either mode.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool

from jarvis import __version__
from jarvis.answer import data_of
from jarvis.errors import ConfigError, JarvisError
from jarvis.operations import Operation, Operations
from jarvis.settings import Settings
from jarvis.tool_arguments import LoadedOnFirstCall
from jarvis.tool_context import ToolContext
from jarvis.tool_list_cache import Listed, cached_tool_list, digest
from jarvis.tool_signature import Effect, Handler, ToolSignature

log = logging.getLogger("jarvis.mcp_server")

# What each tool can do to the user's machine, as MCP's four hints.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
# Writes MCPM's files and may fetch MCPM's public registry.
STORE_AND_REGISTRY = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)
# config_sync auto_fix=true adds metadata and drops repeated tags (never removes a server): a write, not a loss.
WRITES_SAFELY = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: each tool has one entry
class ToolEntry:
    """One tool. Its handler is the function `name` of the module `jarvis/tools/<name>.py`, which also holds
    `EFFECTS` (per action: reads or writes) and, for tools with long actions, `LONG` (each long action with
    what a cancellation leaves behind). The module is imported on the tool's first use, not at start-up: a
    start answers `tools/list` from the cached list (`jarvis.tool_list_cache`)."""

    name: str
    description: str
    annotations: ToolAnnotations
    # JSON answers: the resource ids, parameter -> id (`name` is a server or a profile, depending on the tool),
    # and whether the tool works on a Docker host (its answers always say which).
    ids: Mapping[str, str] = field(default_factory=dict)
    on_host: bool = False

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(f"jarvis.tools.{self.name}")

    @property
    def handler(self) -> Handler:
        handler: Handler = getattr(self.module, self.name)
        return handler

    @property
    def effects(self) -> Mapping[Any, Effect] | None:
        return getattr(self.module, "EFFECTS", None)

    @property
    def long(self) -> Mapping[Any, str] | None:
        return getattr(self.module, "LONG", None)

    def signature(self, read_only: bool) -> ToolSignature:
        return _signature(self, read_only)


@cache
def _signature(entry: ToolEntry, read_only: bool) -> ToolSignature:
    """Built once per tool and mode: a pydantic model from the handler's annotations."""
    signature = ToolSignature.of(entry.handler, entry.effects, read_only=read_only)
    if entry.long and not set(entry.long) <= {*signature.effects, *signature.refused}:
        raise TypeError(f"{entry.name}: LONG names an action the tool does not have")
    return signature


TOOLS = (
    ToolEntry(
        "jarvis_check_status",
        "Docker, Compose, stack services.",
        READ_ONLY,
        ids={"operation": "operation"},
        on_host=True,
    ),
    ToolEntry(
        "jarvis_system",
        "Compose stack ops; restart = Jarvis.",
        DESTRUCTIVE,
        ids={"service": "service"},
        on_host=True,
    ),
    ToolEntry(
        "jarvis_diagnose",
        "MCP profiles: health, endpoints, logs.",
        WRITES_SAFELY,
        ids={"profile": "profile"},
        on_host=True,
    ),
    ToolEntry(
        "jarvis_project",
        "Code project: analyze, diff, CI, tests.",
        DESTRUCTIVE,
        ids={"path": "path", "suite": "suite"},
    ),
    ToolEntry(
        "jarvis_server",
        "MCPM's servers and registry.",
        STORE_AND_REGISTRY,
        ids={"name": "server"},
    ),
    ToolEntry(
        "jarvis_profile",
        "MCPM profiles and their services.",
        DESTRUCTIVE,
        ids={"name": "profile"},
    ),
    ToolEntry(
        "jarvis_client",
        "MCP entries in AI clients' configs.",
        DESTRUCTIVE,
        ids={"client_name": "client"},
    ),
    ToolEntry(
        "jarvis_config",
        "Settings; MCPM migrate/export/import.",
        DESTRUCTIVE,
        ids={"key": "key"},
    ),
    ToolEntry(
        "jarvis_share",
        "Share MCPM servers/profiles over HTTP.",
        # Opens a port, and with a tunnel reaches a relay: what the share exposes is the open world.
        ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True),
        ids={"name": "server", "profile": "profile"},
    ),
)


def text_result(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


# How an answer (or an error's text) becomes the call's result: `text_result` or a `JsonAnswers`.
Render = Callable[..., CallToolResult]
DEFAULT_HOST = "default"  # the Docker host Jarvis is configured with (DOCKER_HOST, the docker context)


@dataclass(frozen=True)
class JsonAnswers:
    """`JARVIS_OUTPUT=json`: one call's answer as structuredContent in seed 003's shape, and a one-line text
    (the answer's first line) for clients that show only text."""

    entry: ToolEntry
    arguments: Mapping[str, Any]

    def __call__(self, text: str, *, error: bool = False) -> CallToolResult:
        shaped: dict[str, Any] = {"success": not error, "timestamp": datetime.now(UTC).isoformat(timespec="seconds")}
        shaped["tool"] = self.entry.name
        shaped.update(self.ids())
        if error:
            shaped["error"] = str(text)
        else:
            shaped["data"] = dict(data_of(text))
        first = next((line for line in str(text).splitlines() if line.strip()), "")
        line = first.lstrip("# ").strip() or ("error" if error else "ok")
        return CallToolResult(content=[TextContent(type="text", text=line)], structured_content=shaped, is_error=error)

    def ids(self) -> dict[str, Any]:
        """The action and the resources the call named (as given, even when invalid: an error says which)."""
        wanted = {"action": "action", **self.entry.ids, "host": "host"}
        given = {parameter: value for parameter, value in self.arguments.items() if value not in (None, "")}
        found = {key: given[parameter] for parameter, key in wanted.items() if isinstance(given.get(parameter), str)}
        if self.entry.on_host:
            found.setdefault("host", DEFAULT_HOST)
        return found


async def run_tool(call: Callable[[], str], render: Render = text_result) -> CallToolResult:
    """The one error boundary: a `JarvisError` becomes a tool error; the server keeps serving."""
    try:
        return render(await anyio.to_thread.run_sync(call))
    except JarvisError as exc:
        log.info("tool error: %s", str(exc).splitlines()[0])
        return render(str(exc), error=True)


HEARTBEAT = 5.0  # seconds between progress notifications while an operation runs (clients want one per 10 s)
CANCEL_WAIT = 30.0  # seconds a cancelled operation gets to kill what it runs before the call gives up on it


async def run_long(
    ctx: Context, operation: Operation, operations: Operations, budget: float, render: Render = text_result
) -> CallToolResult:
    """Follow a long operation: progress while it runs, its result when it ends, or after `budget` seconds
    (0: none) an answer naming it, each rendered by `render` as any call's answer. A cancelled call cancels
    the operation, and waits (shielded) until it has stopped."""
    try:
        return await _follow(ctx, operation, operations, budget, render)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            operation.cancel.cancel("the client cancelled the call")
            await anyio.to_thread.run_sync(operation.wait_finished, CANCEL_WAIT)
        log.info("operation %s cancelled by the client", operation.id)
        raise


async def _follow(
    ctx: Context, operation: Operation, operations: Operations, budget: float, render: Render
) -> CallToolResult:
    started = anyio.current_time()
    sent_step, sent_at, sent_value = "", -HEARTBEAT, 0.0
    while True:
        now = anyio.current_time()
        seen = operation.version
        if operation.finished:
            return render(operation.record.result, error=operation.failed)
        if budget and now - started >= budget:
            return render(operations.detach(operation, budget))
        if operation.step != sent_step or now - sent_at >= HEARTBEAT:
            sent_value = max(sent_value + 0.1, round(operation.elapsed, 1))  # progress must increase
            await ctx.report_progress(sent_value, None, operation.progress_line())
            sent_step, sent_at = operation.step, now
        pause = HEARTBEAT - (now - sent_at)
        if budget:
            pause = min(pause, budget - (now - started))
        await anyio.to_thread.run_sync(operation.wait, seen, max(pause, 0.01), abandon_on_cancel=True)


def _title(name: str, arguments: Mapping[str, Any]) -> str:
    given = " ".join(f"{key}={value}" for key, value in arguments.items() if value is not None and key != "action")
    return " ".join(filter(None, [name, str(arguments.get("action") or ""), given]))[:200]


def exit_soon(delay: float = 1.0, before: Callable[[], None] = lambda: None) -> None:
    """`restart`: let the SDK write the answer to stdout, run `before` (stop the running operations), then end
    the process so the client respawns it."""

    def leave() -> None:
        log.info("restart requested: exiting")
        before()
        sys.stdout.flush()
        os._exit(0)  # no interpreter teardown: the stdio transport's threads would otherwise block it

    timer = threading.Timer(delay, leave)
    timer.daemon = True
    timer.start()


def listing(entry: ToolEntry, *, read_only: bool = False) -> dict[str, Any] | None:
    """What `tools/list` shows of `entry` (name, description, input schema, hints), or None when read-only
    mode leaves it no action. Builds the tool's signature: the part of a start the cache saves."""
    signature = entry.signature(read_only)
    if signature.serves_nothing:
        return None
    annotations = entry.annotations
    if signature.only_reads:
        annotations = READ_ONLY.model_copy(update={"open_world_hint": entry.annotations.open_world_hint})
    listed: dict[str, Any] = {
        "name": entry.name,
        "description": entry.description,
        "inputSchema": compact_schema(signature.json_schema()),
    }
    hints = published(annotations)
    if hints is not None:
        listed["annotations"] = hints.model_dump(by_alias=True, exclude_none=True)
    return listed


def bind(entry: ToolEntry, context: ToolContext, listed: Mapping[str, Any], *, read_only: bool = False) -> Tool:
    """`entry`'s handler as an SDK tool, published as `listed` (from `listing`, perhaps cached).

    The handler's module and signature are loaded on the first call. The SDK receives a pass-through argument
    model (every parameter `Any`): it still parses JSON-looking strings as it does for any tool, and the
    handler's `ToolSignature` then validates, so a bad value is a tool error in Jarvis's words, naming the
    valid values.
    """
    as_json = context.settings.output == "json"

    async def call(ctx: Context, **arguments: Any) -> CallToolResult:
        render: Render = JsonAnswers(entry, arguments) if as_json else text_result
        signature, long = entry.signature(read_only), entry.long
        action = arguments.get("action")
        if long is None or not isinstance(action, str) or action not in long:
            return await run_tool(lambda: signature.call(context, arguments), render)

        def work(operation: Operation) -> str:
            runner = context.runner.cancellable(operation.cancel)
            bound = dataclasses.replace(context, progress=operation.report, cancel=operation.cancel, runner=runner)
            return signature.call(bound, arguments)

        operation = context.operations.start(_title(entry.name, arguments), work, long[action])
        return await run_long(ctx, operation, context.operations, context.settings.call_budget, render)

    hints = listed.get("annotations")
    return Tool(
        fn=call,
        name=entry.name,
        title=None,
        description=listed["description"],
        parameters=listed["inputSchema"],
        fn_metadata=LoadedOnFirstCall(arg_model=ArgModelBase, load=lambda: entry.signature(read_only).model),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations.model_validate(hints) if hints else None,
    )


# MCP's defaults for the four hints: a client applies them to a hint that is not sent.
HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}


def published(annotations: ToolAnnotations) -> ToolAnnotations | None:
    """The hints that say something: the same meaning in fewer bytes on every connection. A hint equal to
    MCP's default is left out, and so are `destructive` and `idempotent` on a read-only tool (MCP gives them
    meaning only when the tool writes)."""
    unsaid = {hint for hint, default in HINT_DEFAULTS.items() if getattr(annotations, hint) == default}
    if annotations.read_only_hint:
        unsaid |= {"destructive_hint", "idempotent_hint"}
    said = annotations.model_copy(update=dict.fromkeys(unsaid))
    return said if said.model_dump(exclude_none=True) else None


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop what costs tokens on every connection and tells a model nothing: titles, `null` branches
    of optional parameters and `default: null`."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        branches = [b for b in prop.get("anyOf", []) if b.get("type") != "null"]
        compact = {k: v for k, v in prop.items() if k not in ("anyOf", "title", "default")}
        if len(branches) == 1:
            compact = {**branches[0], **compact}
        elif branches:
            compact["anyOf"] = branches
        if prop.get("default") is not None:
            compact["default"] = prop["default"]
        properties[name] = compact
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        result["required"] = schema["required"]
    return result


def chosen_tools(names: tuple[str, ...]) -> list[ToolEntry]:
    """`JARVIS_TOOLS`: the tools to serve, with or without the `jarvis_` prefix; empty = all of them."""
    if not names:
        return list(TOOLS)
    by_name = {entry.name: entry for entry in TOOLS}
    wanted = [name if name.startswith("jarvis_") else f"jarvis_{name}" for name in names]
    unknown = [name for name, full in zip(names, wanted, strict=True) if full not in by_name]
    if unknown:
        valid = ", ".join(entry.name.removeprefix("jarvis_") for entry in TOOLS)
        raise ConfigError(f"JARVIS_TOOLS: unknown tool(s) {', '.join(unknown)}; valid: {valid}")
    return [entry for entry in TOOLS if entry.name in wanted]


def tool_list(entries: list[ToolEntry], read_only: bool) -> Listed:
    listed = (listing(entry, read_only=read_only) for entry in entries)
    return [tool for tool in listed if tool is not None]


def declare_tools(context: ToolContext, cache: Path | None = None) -> list[Tool]:
    """The served tools; their published list read from `cache` (a folder) when it holds this set-up's."""
    settings = context.settings
    entries = chosen_tools(settings.tools)
    shape = (",".join(entry.name for entry in entries), f"read_only={settings.read_only}")
    if cache is None:
        listed = tool_list(entries, settings.read_only)
    else:
        listed = cached_tool_list(cache, digest(shape), lambda: tool_list(entries, settings.read_only))
    by_name = {entry.name: entry for entry in entries}
    return [bind(by_name[tool["name"]], context, tool, read_only=settings.read_only) for tool in listed]


def load_tools(settings: Settings) -> None:
    """Import the served tools and build their signatures, as their first calls would (the warm-up)."""
    for entry in chosen_tools(settings.tools):
        entry.signature(settings.read_only)


class JarvisServer(MCPServer):
    """The SDK's server, which also says when it has first listed its tools (`tools_listed`): the warm-up
    waits for it, so it does not compete with the answer a client waits for first."""

    def __init__(self, tools: list[Tool]) -> None:
        super().__init__("jarvis", version=__version__, tools=tools)
        self.tools_listed = threading.Event()

    async def list_tools(self) -> list[MCPTool]:
        try:
            return await super().list_tools()
        finally:
            self.tools_listed.set()


def create_server(context: ToolContext, tool_list_cache: Path | None = None) -> JarvisServer:
    """The MCP server for `context` (settings, project, runner, host), which the caller composes; with
    `tool_list_cache` (a folder), the published tool list is kept there between starts."""
    return JarvisServer(declare_tools(context, tool_list_cache))
