"""Command line: `jarvis serve` (MCP over stdio), and the same operations for humans.

jarvis serve                     run the MCP server on stdin/stdout (logs go to stderr)
jarvis call TOOL [key=value ...] call one tool in process; prints what the agent would see
                                 (--json: the JSON a program gets with JARVIS_OUTPUT=json)
jarvis tools                     the tools/list payload and its size in bytes
jarvis setup                     make this machine ready: `docker compose` v2+, the default stack's image
jarvis demo                      setup, then drive the bundled default stack through a real MCP client
jarvis files serve               the files MCP server on stdin/stdout: read, bash, grep (JARVIS_FILES_ROOT)
jarvis pruner serve              the built-in output pruner over HTTP (swe-pruner's POST /prune, GET /health)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio

from jarvis.errors import JarvisError, quoted
from jarvis.settings import Settings, load_settings
from jarvis.tool_context import ToolContext

GRACE_ON_SIGTERM = 1.5  # seconds to kill what operations run: MCP clients send SIGKILL 2 s after SIGTERM


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jarvis", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="jarvis.toml (default: $JARVIS_CONFIG, else ./jarvis.toml)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the MCP server over stdio")
    call = commands.add_parser("call", help="call one tool, e.g. jarvis call jarvis_system action=docker_status")
    call.add_argument("--json", action="store_true", help="print the answer as JSON (as JARVIS_OUTPUT=json)")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="*", metavar="key=value")
    commands.add_parser("tools", help="print the tools/list payload and its size")
    commands.add_parser("setup", help="install what this machine lacks (docker compose v2+, base image)")
    commands.add_parser("demo", help="setup, then run the main job on the bundled default stack")
    files = commands.add_parser("files", help="the files MCP server (read, bash, grep) over stdio")
    files.add_argument("files_command", choices=["serve"])
    pruner = commands.add_parser("pruner", help="the built-in output pruner over HTTP (swe-pruner's contract)")
    pruner.add_argument("pruner_command", choices=["serve"])
    pruner.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1")
    pruner.add_argument("--port", type=int, default=8000, help="default 8000")
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "setup":
            return _setup()
        if args.command == "pruner":
            from jarvis.pruning.http_server import serve

            serve(args.host, args.port)
            return 0
        settings = load_settings(args.config)
        if args.command == "serve":
            return _serve(settings)
        if args.command == "files":
            return _serve_files(settings)
        if args.command == "call":
            if args.json:
                settings = settings.model_copy(update={"output": "json"})
            return anyio.run(_call, settings, args.tool, _parse_arguments(args.arguments))
        if args.command == "tools":
            return anyio.run(_tools, settings)
        from jarvis.demo import run_demo

        return run_demo(args.config)
    except JarvisError as exc:
        print(f"jarvis: {exc}", file=sys.stderr)
        return 2


def _setup() -> int:
    from adapters.factory import setup_image_builder
    from jarvis.host import Host
    from jarvis.machine_setup import run_setup

    for line in run_setup(Host.current(), setup_image_builder()):
        print(line)
    return 0


def serving_context(settings: Settings) -> ToolContext:
    """The composition root: the one place that picks the adapters (`adapters.factory`) for the tools, and
    where background operations are kept (Jarvis's state folder)."""
    from adapters.factory import build_hosts
    from jarvis.compose_project import ComposeCliProject
    from jarvis.host import Host
    from jarvis.mcp_server import exit_soon
    from jarvis.operations import Operations, OperationStore, state_folder

    project = ComposeCliProject(settings)
    hosts = build_hosts(settings, project)
    default = hosts.get(None).name
    host = Host.current()
    operations = Operations(OperationStore(state_folder(host.environ, host.home) / "operations"))
    return ToolContext(
        settings,
        project,
        hosts.runner(default),
        host=host,
        operations=operations,
        exit_after_answer=lambda: exit_soon(before=lambda: operations.stop_all("Jarvis restarted")),
        docker_hosts=hosts,
        docker_host=default,
    )


def _serve(settings: Settings) -> int:
    from jarvis.mcp_server import create_server, load_tools
    from jarvis.stdio import serve, take_stdin
    from jarvis.tool_list_cache import cache_folder

    # Libraries that print when debugging is switched on would corrupt the JSON-RPC stream.
    os.environ.pop("PYTHON_ON_WHALES_DEBUG", None)
    logging.getLogger("jarvis").info("serving %s over stdio", settings.project_dir)
    context = serving_context(settings)
    server = create_server(context, cache_folder(context.host.environ, context.host.home))
    # The client went away (stdin closed, or SIGTERM when it stops waiting): what still runs is stopped, its
    # process groups killed (they run in sessions of their own, which the client's group kill does not reach).
    _stop_operations_on_sigterm(context)

    def warm_up() -> None:
        context.warm_in_background(lambda: load_tools(context.settings), after=server.tools_listed)

    try:
        # After the handshake, build in the background what the first call would wait for (`docker compose
        # config`, the tools' modules, the adapters' imports): the handshake is not delayed, and the first
        # call finds it done.
        anyio.run(serve, server, take_stdin(), warm_up)
    finally:
        context.operations.stop_all("Jarvis stopped")
    return 0


def _stop_operations_on_sigterm(context: ToolContext) -> None:
    def stop(signum: int, _frame: object) -> None:
        context.operations.stop_all("Jarvis stopped", wait=GRACE_ON_SIGTERM)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # then end as SIGTERM ends a process

    signal.signal(signal.SIGTERM, stop)


def _serve_files(settings: Settings) -> int:
    from jarvis.files_server.files_mcp_server import create_files_server

    logging.getLogger("jarvis.files").info("serving files under %s over stdio", settings.files_root)
    create_files_server(settings).run("stdio")
    return 0


def _parse_arguments(pairs: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise JarvisError(f"Argument {quoted(pair)} is not key=value.")
        value: Any = raw
        if raw in ("true", "false"):
            value = raw == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        result[key] = value
    return result


class ProgressLine:
    """Progress on stderr: one line rewritten in place on a terminal, plain lines otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = False

    # The SDK's progress callback signature; the message says it all (step and elapsed time).
    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:  # noqa: ARG002
        if self.tty:
            self.stream.write(f"\r\x1b[K{message or ''}")
        else:
            self.stream.write(f"{message or ''}\n")
        self.stream.flush()
        self.shown = True

    def end(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


async def _call(settings: Settings, tool: str, arguments: dict[str, Any]) -> int:
    """One call through the real MCP server in process; progress on stderr; Ctrl-C cancels the call as a
    client's cancellation does, then prints what the cancelled operation reports."""
    from mcp import Client

    from jarvis.mcp_server import create_server

    # A person at a terminal waits to the end (no call budget): this process is the operation's only home.
    context = serving_context(settings.model_copy(update={"call_budget": 0}))
    progress = ProgressLine(sys.stderr)
    result = None
    try:
        async with Client(create_server(context)) as client, anyio.create_task_group() as group:
            group.start_soon(_cancel_on_ctrl_c, group.cancel_scope)
            result = await client.call_tool(tool, arguments, progress_callback=progress)
            group.cancel_scope.cancel()
    finally:
        context.operations.stop_all("jarvis call ended")
    progress.end()
    if result is None:  # Ctrl-C: the server cancelled the operation before the client closed
        operation = context.operations.latest()
        print(operation.record.result if operation and operation.finished else "cancelled")
        return 130
    if settings.output == "json" and result.structured_content is not None:
        print(json.dumps(result.structured_content, indent=1, ensure_ascii=False))
    else:
        for block in result.content:
            print(getattr(block, "text", block))
    return 1 if result.is_error else 0


async def _cancel_on_ctrl_c(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            print("jarvis: cancelling…", file=sys.stderr)
            scope.cancel()
            return


async def _tools(settings: Settings) -> int:
    from mcp import Client

    from jarvis.mcp_server import create_server

    async with Client(create_server(serving_context(settings))) as client:
        listed = await client.list_tools()
    payload = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    print(json.dumps(payload, indent=1))
    print(f"tools/list: {len(payload)} tools, {len(json.dumps(payload))} bytes", file=sys.stderr)
    return 0
