"""`jarvis demo`: Jarvis's main job on the bundled default stack, through a real MCP client over stdio.

It starts `jarvis serve` as a subprocess, as Claude Code or Cursor would, and prints what the agent sees
for each call. The stack is left running; `jarvis call jarvis_system action=stop` stops it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("jarvis_system", {"action": "rebuild"}),
    ("jarvis_system", {"action": "docker_status"}),
    ("jarvis_diagnose", {"action": "logs", "profile": "research", "lines": 5}),
    ("jarvis_diagnose", {"action": "logs", "profile": "essentials", "log_type": "all", "lines": 6}),
    ("jarvis_diagnose", {"action": "logs", "aggregate": True, "lines": 2}),
    ("jarvis_system", {"action": "stop", "service": "mcpm-memory"}),
    ("jarvis_system", {"action": "start", "service": "mcpm-memory"}),
    ("jarvis_system", {"action": "explode"}),
    ("jarvis_check_status", {}),
]


def run_demo(config: Path | None = None) -> int:
    return anyio.run(_demo, config)


async def _demo(config: Path | None) -> int:
    args = ["-m", "jarvis", *(["--config", str(config)] if config else []), "serve"]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    failures = 0
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        print(f"# Jarvis over MCP stdio: {len(tools)} tools: {', '.join(t.name for t in tools)}\n")
        for name, arguments in CALLS:
            shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            result = await client.call_tool(name, arguments)
            text = "\n".join(getattr(block, "text", "") for block in result.content)
            print(f"→ {name}({shown}){'  [isError]' if result.is_error else ''}\n{text}\n")
            expected_error = arguments.get("action") == "explode"
            failures += int(result.is_error != expected_error)
    print("The stack keeps running; stop it with: jarvis call jarvis_system action=stop")
    return 1 if failures else 0
