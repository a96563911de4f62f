"""mcp-cli (negotiates 2025-06-18, its own protocol stack `chuk_mcp`) through `scenario.run`; runs in
.venv-clients/mcp-cli.

The `mcp-cli` command itself is run for what it offers on a command line (`tools --raw`, `cmd --tool`): its
output is reported under `cli` for the test to check. Its command mode shows no progress and cannot cancel, so
the scenario drives mcp-cli's protocol stack, chuk_mcp, which has both.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import scenario
from chuk_mcp import StdioServerParameters, send_initialize, stdio_client
from chuk_mcp.protocol.messages.send_message import CancellationToken, CancelledError, send_message
from chuk_mcp.protocol.messages.tools.send_messages import send_tools_list

CLI_TIMEOUT = 120


class ChukSession:
    def __init__(self, read: Any, write: Any, protocol: str) -> None:
        self.read, self.write, self.protocol = read, write, protocol

    async def tools(self) -> dict[str, dict[str, Any]]:
        listed = await send_tools_list(self.read, self.write)
        tools = listed["tools"] if isinstance(listed, dict) else listed.tools
        return {_field(tool, "name"): _field(tool, "inputSchema") for tool in tools}

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: scenario.Progress | None = None,
        token: CancellationToken | None = None,
    ) -> scenario.Answer:
        result = await send_message(self.read, self.write, "tools/call", {"name": tool, "arguments": arguments},
                                    timeout=scenario.STEP_TIMEOUT, progress_callback=on_progress,
                                    cancellation_token=token)  # fmt: skip
        text = "\n".join(block.get("text", "") for block in result.get("content", []))
        return text, bool(result.get("isError"))

    async def call_then_cancel(
        self, tool: str, arguments: dict[str, Any], ready: Callable[[], bool], on_progress: scenario.Progress
    ) -> None:
        token = CancellationToken()  # chuk_mcp sends notifications/cancelled at its next look at the token
        async with anyio.create_task_group() as group:

            async def call() -> None:
                with contextlib.suppress(CancelledError):
                    await self.call(tool, arguments, on_progress, token)

            group.start_soon(call)
            await scenario.wait_until(ready, scenario.STEP_TIMEOUT)
            token.cancel()


def _field(tool: Any, name: str) -> Any:
    return tool[name] if isinstance(tool, dict) else getattr(tool, name)


def run_cli(spec: dict[str, Any]) -> dict[str, Any]:
    """mcp-cli's command line: the tools as JSON, a read and a tool error (it exits 0 on a tool error)."""
    config = Path(spec["workdir"]) / "mcp-cli-servers.json"
    config.write_text(json.dumps({"mcpServers": {"jarvis": {"command": spec["command"], "args": spec["args"],
                                                            "env": scenario.server_env(spec)}}}))  # fmt: skip
    cli = str(Path(sys.executable).with_name("mcp-cli"))
    common = ["--server", "jarvis", "--config-file", str(config)]

    env = {**scenario.server_env(spec), "HOME": spec["workdir"]}  # mcp-cli keeps its state under HOME

    def output(*args: str) -> str:
        done = subprocess.run([cli, *args, *common], capture_output=True, text=True, timeout=CLI_TIMEOUT,
                              stdin=subprocess.DEVNULL, env=env)  # fmt: skip
        return done.stdout

    listed = output("tools", "--raw")
    tools = json.loads(listed[listed.index("\n[") :])
    read = output("cmd", "--tool", "jarvis_server", "--tool-args", '{"action": "list", "limit": 1}', "--raw", "-o", "-")
    error = output("cmd", "--tool", "jarvis_server", "--tool-args", '{"action": "info", "name": "ghost"}', "--raw",
                   "-o", "-")  # fmt: skip
    return {"tools": [tool["name"] for tool in tools], "read": read, "error": error}


async def connect(spec: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=scenario.server_env(spec))
    async with stdio_client(params) as (read, write):
        initialized = await send_initialize(read, write)
        result = await scenario.run(ChukSession(read, write, str(initialized.protocolVersion)), spec)
    result["cli"] = await anyio.to_thread.run_sync(run_cli, spec)
    return result


if __name__ == "__main__":
    scenario.main(connect)
