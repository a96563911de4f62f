"""The MCP server: declares Jarvis's tools, routes each call to its handler in `jarvis.tools`.

A call's path: the SDK checks argument types → the tool function below → `run_tool` runs the plain
handler in a worker thread inside the one error boundary → the handler asks the DockerRunner → text.
Every anticipated failure (`JarvisError`) becomes a tool error the agent can act on (`isError: true`);
Docker is contacted per call, never at start-up, so the server starts and lists tools with no daemon.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from jarvis import __version__
from jarvis.clients.catalog import CLIENTS
from jarvis.context import Jarvis
from jarvis.errors import JarvisError
from jarvis.project import ComposeProject
from jarvis.runner import DockerRunner
from jarvis.runner_factory import build_runner
from jarvis.settings import Settings
from jarvis.tools import build, check_status, client, config, diagnose, project, server, system
from jarvis.tools import profile as profiles  # `profile` is a parameter name of jarvis_profile
from jarvis.tools.args import LINES_MAX

log = logging.getLogger("jarvis.server")

# Honest annotations: what each tool can do to the user's machine.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
# Writes MCPM's files and may fetch MCPM's public registry.
STORE_AND_REGISTRY = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)


def _enum(description: str | None, values: tuple[str, ...]) -> Any:
    """A string parameter whose schema lists its values; the handler checks them, naming the valid ones."""
    return Field(description=description, json_schema_extra={"enum": list(values)})


Lines = Annotated[
    int | None, Field(description=f"Log lines, default 50, max {LINES_MAX}", json_schema_extra={"minimum": 1})
]


def text_result(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


async def run_tool(call: Callable[[], str]) -> CallToolResult:
    """The one error boundary: a `JarvisError` becomes a tool error; the server keeps serving."""
    try:
        return text_result(await anyio.to_thread.run_sync(call))
    except JarvisError as exc:
        log.info("tool error: %s", str(exc).splitlines()[0])
        return text_result(str(exc), error=True)


def progress_reporter(ctx: Context) -> system.Progress:
    """Progress from a worker thread; a no-op unless the client sent a progress token."""

    def report(done: float, total: float, message: str) -> None:
        anyio.from_thread.run(ctx.report_progress, done, total, message)

    return report


def exit_soon(delay: float = 1.0) -> None:
    """`restart`: let the SDK write the answer to stdout, then end the process so the client respawns it."""

    def leave() -> None:
        log.info("restart requested: exiting")
        sys.stdout.flush()
        os._exit(0)  # no interpreter teardown: the stdio transport's threads would otherwise block it

    timer = threading.Timer(delay, leave)
    timer.daemon = True
    timer.start()


def declare_tools(jarvis: Jarvis, exit_after_answer: Callable[[], None] = exit_soon) -> list[Tool]:
    async def jarvis_system(
        action: Annotated[str, _enum(None, system.ACTIONS)],
        service: Annotated[str | None, Field(description="Compose service; empty = all")] = None,
        lines: Lines = None,
        no_cache: Annotated[bool | None, Field(description="No build cache; rebuild default true, build false")] = None,
        component: Annotated[str | None, _enum("For build, default all", build.COMPONENTS)] = None,
        ctx: Context = None,  # type: ignore[assignment]  (injected by the SDK)
    ) -> CallToolResult:
        report = progress_reporter(ctx)
        result = await run_tool(
            lambda: system.handle(
                jarvis,
                action=action,
                service=service,
                lines=lines,
                no_cache=no_cache,
                component=component,
                progress=report,
            )
        )
        if action == "restart" and not result.is_error:
            exit_after_answer()
        return result

    async def jarvis_diagnose(
        action: Annotated[str, _enum(None, diagnose.ACTIONS)],
        profile: Annotated[str | None, Field(description="Profile name")] = None,
        endpoint: Annotated[str | None, Field(description="MCP URL for test_endpoint")] = None,
        log_type: Annotated[str | None, _enum("Stream, default stderr", diagnose.LOG_TYPES)] = None,
        aggregate: Annotated[bool | None, Field(description="Logs of all profiles")] = None,
        lines: Lines = None,
        auto_fix: Annotated[bool | None, Field(description="config_sync: repair")] = None,
    ) -> CallToolResult:
        return await run_tool(
            lambda: diagnose.handle(
                jarvis,
                action=action,
                profile=profile,
                endpoint=endpoint,
                log_type=log_type,
                aggregate=aggregate,
                lines=lines,
                auto_fix=auto_fix,
            )
        )

    async def jarvis_project(
        action: Annotated[str, _enum(None, project.ACTIONS)],
        path: Annotated[str | None, Field(description="Project folder, default the workspace")] = None,
        staged: Annotated[bool | None, Field(description="diff: staged changes")] = None,
        suite: Annotated[str | None, Field(description="test: go|node|integration|python|all; default found")] = None,
        project_type: Annotated[str | None, _enum("devops/test: override detection", project.PROJECT_TYPES)] = None,
        force: Annotated[bool | None, Field(description="devops: overwrite existing files")] = None,
        enable_ai_review: Annotated[bool | None, Field(description="devops: add PR Agent workflow")] = None,
        verbose: Annotated[bool | None, Field(description="test: more output")] = None,
        package: Annotated[str | None, Field(description="test: package or path")] = None,
        ctx: Context = None,  # type: ignore[assignment]  (injected by the SDK)
    ) -> CallToolResult:
        report = progress_reporter(ctx)
        return await run_tool(
            lambda: project.handle(
                jarvis,
                action=action,
                path=path,
                staged=staged,
                suite=suite,
                project_type=project_type,
                force=force,
                enable_ai_review=enable_ai_review,
                verbose=verbose,
                package=package,
                progress=report,
            )
        )

    async def jarvis_server(
        action: Annotated[str, _enum(None, server.ACTIONS)],
        name: Annotated[str | None, Field(description="Server name")] = None,
        query: Annotated[str | None, Field(description="search words")] = None,
        type: Annotated[str | None, _enum("create: transport", server.TYPES)] = None,
        command: Annotated[str | None, Field(description="stdio command")] = None,
        args: Annotated[list[str] | str | None, Field(description="stdio args; a string is shell-split")] = None,
        env: Annotated[dict[str, str] | None, Field(description="stdio env; edit merges")] = None,
        url: Annotated[str | None, Field(description="remote URL")] = None,
        headers: Annotated[dict[str, str] | None, Field(description="remote headers; edit merges")] = None,
        replace: Annotated[bool | None, Field(description="edit: replace env/headers")] = None,
    ) -> CallToolResult:
        return await run_tool(
            lambda: server.handle(
                jarvis,
                action=action,
                name=name,
                query=query,
                type=type,
                command=command,
                args=args,
                env=env,
                url=url,
                headers=headers,
                replace=replace,
            )
        )

    async def jarvis_profile(
        action: Annotated[str, _enum(None, profiles.ACTIONS)],
        name: Annotated[str | None, Field(description="Profile name")] = None,
        new_name: Annotated[str | None, Field(description="edit: rename to")] = None,
        add_servers: Annotated[list[str] | str | None, Field(description="create/edit: servers to add")] = None,
        remove_servers: Annotated[list[str] | str | None, Field(description="edit: servers to remove")] = None,
        description: Annotated[str | None, Field(description="create/edit")] = None,
        profile: Annotated[str | None, Field(description="restart: one profile")] = None,
    ) -> CallToolResult:
        return await run_tool(
            lambda: profiles.handle(
                jarvis,
                action=action,
                name=name,
                new_name=new_name,
                add_servers=add_servers,
                remove_servers=remove_servers,
                description=description,
                profile=profile,
            )
        )

    async def jarvis_client(
        action: Annotated[str, _enum(None, client.ACTIONS)],
        client_name: Annotated[str | None, _enum(None, tuple(CLIENTS))] = None,
        add_server: Annotated[list[str] | str | None, Field(description="edit: servers")] = None,
        remove_server: Annotated[list[str] | str | None, Field(description="edit: servers")] = None,
        add_profile: Annotated[list[str] | str | None, Field(description="edit: profiles")] = None,
        remove_profile: Annotated[list[str] | str | None, Field(description="edit: profiles")] = None,
        config_path: Annotated[str | None, Field(description="config: set the file ('default' resets)")] = None,
    ) -> CallToolResult:
        return await run_tool(
            lambda: client.handle(
                jarvis,
                action=action,
                client_name=client_name,
                add_server=add_server,
                remove_server=remove_server,
                add_profile=add_profile,
                remove_profile=remove_profile,
                config_path=config_path,
            )
        )

    async def jarvis_config(
        action: Annotated[str, _enum(None, config.ACTIONS)],
        key: Annotated[str | None, Field(description="get/set: setting; list shows all")] = None,
        value: Annotated[str | None, Field(description="set: lists comma-separated")] = None,
        path: Annotated[str | None, Field(description="export: also write here; import: read from")] = None,
        data: Annotated[str | dict[str, Any] | None, Field(description="import: the exported JSON")] = None,
        include_secrets: Annotated[bool | None, Field(description="export: keep secret values")] = None,
    ) -> CallToolResult:
        return await run_tool(
            lambda: config.handle(
                jarvis,
                action=action,
                key=key,
                value=value,
                path=path,
                data=data,
                include_secrets=include_secrets,
            )
        )

    async def jarvis_check_status() -> CallToolResult:
        return await run_tool(lambda: check_status.handle(jarvis))

    tools = [
        Tool.from_function(
            jarvis_check_status,
            name="jarvis_check_status",
            description="Health of Docker, Compose and every service of the stack.",
            annotations=READ_ONLY,
        ),
        Tool.from_function(
            jarvis_system,
            name="jarvis_system",
            description="Compose stack: lifecycle, logs, status, builds; restart restarts Jarvis itself.",
            annotations=DESTRUCTIVE,
        ),
        Tool.from_function(
            jarvis_diagnose,
            name="jarvis_diagnose",
            description="Debug MCP profiles: health, endpoint handshake, exact logs, full report, config sync.",
            annotations=READ_ONLY,
        ),
        Tool.from_function(
            jarvis_project,
            name="jarvis_project",
            description="Code project: analyze, diff, devops files, run test suites with timeouts.",
            annotations=DESTRUCTIVE,
        ),
        Tool.from_function(
            jarvis_server,
            name="jarvis_server",
            description="MCP servers in MCPM's store: list, info, create, edit, uninstall, search, install, usage.",
            annotations=STORE_AND_REGISTRY,
        ),
        Tool.from_function(
            jarvis_profile,
            name="jarvis_profile",
            description="MCPM profiles: list, create, edit (rename, add/remove servers), delete, suggest, restart.",
            annotations=DESTRUCTIVE,
        ),
        Tool.from_function(
            jarvis_client,
            name="jarvis_client",
            description="AI clients' MCP config files: list, edit (add/remove servers, profiles), import, config.",
            annotations=DESTRUCTIVE,
        ),
        Tool.from_function(
            jarvis_config,
            name="jarvis_config",
            description="Settings (Jarvis, MCPM): get, set, list; migrate legacy files; export/import all.",
            annotations=DESTRUCTIVE,
        ),
    ]
    for tool in tools:
        tool.parameters = compact_schema(tool.parameters)
    return tools


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


def create_server(
    settings: Settings,
    runner: DockerRunner | None = None,
    project: ComposeProject | None = None,
    exit_after_answer: Callable[[], None] = exit_soon,
) -> MCPServer:
    project = project or ComposeProject(settings)
    jarvis = Jarvis(settings=settings, project=project, runner=runner or build_runner(settings, project))
    return MCPServer("jarvis", version=__version__, tools=declare_tools(jarvis, exit_after_answer))
