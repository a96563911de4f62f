"""Command line: `jarvis serve` (MCP over stdio), and the same operations for humans.

jarvis serve                     run the MCP server on stdin/stdout (logs go to stderr)
jarvis call TOOL [key=value ...] call one tool in process; prints what the agent would see
jarvis tools                     the tools/list payload and its size in bytes
jarvis setup                     make this machine ready: `docker compose` v2+, the default stack's image
jarvis demo                      setup, then drive the bundled default stack through a real MCP client
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from jarvis.errors import JarvisError
from jarvis.settings import Settings, load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jarvis", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="jarvis.toml (default: $JARVIS_CONFIG, else ./jarvis.toml)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the MCP server over stdio")
    call = commands.add_parser("call", help="call one tool, e.g. jarvis call jarvis_system action=docker_status")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="*", metavar="key=value")
    commands.add_parser("tools", help="print the tools/list payload and its size")
    commands.add_parser("setup", help="install what this machine lacks (docker compose v2+, base image)")
    commands.add_parser("demo", help="setup, then run the main job on the bundled default stack")
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "setup":
            return _setup()
        settings = load_settings(args.config)
        if args.command == "serve":
            return _serve(settings)
        if args.command == "call":
            return anyio.run(_call, settings, args.tool, _parse_arguments(args.arguments))
        if args.command == "tools":
            return anyio.run(_tools, settings)
        from jarvis.demo import run_demo

        return run_demo(args.config)
    except JarvisError as exc:
        print(f"jarvis: {exc}", file=sys.stderr)
        return 2


def _setup() -> int:
    from jarvis.machine_setup import run_setup

    for line in run_setup():
        print(line)
    return 0


def _serve(settings: Settings) -> int:
    from jarvis.server import create_server

    # Libraries that print when debugging is switched on would corrupt the JSON-RPC stream.
    os.environ.pop("PYTHON_ON_WHALES_DEBUG", None)
    logging.getLogger("jarvis").info("serving %s over stdio", settings.project_dir)
    create_server(settings).run("stdio")
    return 0


def _parse_arguments(pairs: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise JarvisError(f"Argument '{pair}' is not key=value.")
        value: Any = raw
        if raw in ("true", "false"):
            value = raw == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        result[key] = value
    return result


async def _call(settings: Settings, tool: str, arguments: dict[str, Any]) -> int:
    from mcp import Client

    from jarvis.server import create_server

    async with Client(create_server(settings)) as client:
        result = await client.call_tool(tool, arguments)
    for block in result.content:
        print(getattr(block, "text", block))
    return 1 if result.is_error else 0


async def _tools(settings: Settings) -> int:
    from mcp import Client

    from jarvis.server import create_server

    async with Client(create_server(settings)) as client:
        listed = await client.list_tools()
    payload = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    print(json.dumps(payload, indent=1))
    print(f"tools/list: {len(payload)} tools, {len(json.dumps(payload))} bytes", file=sys.stderr)
    return 0
