"""fastmcp's Client (negotiates 2026-07-28) through `scenario.run`; runs in .venv-clients/fastmcp."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import scenario
from fastmcp import Client
from fastmcp.client.transports import StdioTransport


class FastmcpSession:
    def __init__(self, client: Client[Any]) -> None:
        self.client = client
        self.protocol = str(client.protocol_version)

    async def tools(self) -> dict[str, dict[str, Any]]:
        return {tool.name: tool.input_schema for tool in await self.client.list_tools()}

    async def call(
        self, tool: str, arguments: dict[str, Any], on_progress: scenario.Progress | None = None
    ) -> scenario.Answer:
        result = await self.client.call_tool(tool, arguments, raise_on_error=False, progress_handler=on_progress)
        return "\n".join(getattr(block, "text", "") for block in result.content), result.is_error

    async def call_then_cancel(
        self, tool: str, arguments: dict[str, Any], ready: Callable[[], bool], on_progress: scenario.Progress
    ) -> None:
        await scenario.abandon_when_ready(lambda: self.call(tool, arguments, on_progress), ready)


async def connect(spec: dict[str, Any]) -> dict[str, Any]:
    transport = StdioTransport(spec["command"], spec["args"], env=scenario.server_env(spec), cwd=spec["workdir"])
    async with Client(transport) as client:
        return await scenario.run(FastmcpSession(client), spec)


if __name__ == "__main__":
    scenario.main(connect)
