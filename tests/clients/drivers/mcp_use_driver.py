"""mcp-use's MCPClient (negotiates 2025-11-25, on `mcp` 1.x) through `scenario.run`; runs in .venv-clients/mcp-use.

mcp-use's own `call_tool` sends no progress token and has no way to cancel, so progress and the cancellation go
through the `mcp` 1.x ClientSession that mcp-use's connector holds for this connection.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")

import anyio
import scenario
from mcp import types
from mcp_use import MCPClient


class McpUseSession:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.wire = session.connector.client_session  # mcp 1.x ClientSession
        self.protocol = str(session.session_info.protocolVersion)

    async def tools(self) -> dict[str, dict[str, Any]]:
        return {tool.name: tool.inputSchema for tool in await self.session.list_tools()}

    async def call(
        self, tool: str, arguments: dict[str, Any], on_progress: scenario.Progress | None = None
    ) -> scenario.Answer:
        if on_progress is None:
            result = await self.session.call_tool(tool, arguments)
        else:
            result = await self.wire.call_tool(tool, arguments, progress_callback=on_progress)
        return "\n".join(getattr(block, "text", "") for block in result.content), bool(result.isError)

    async def call_then_cancel(
        self, tool: str, arguments: dict[str, Any], ready: Callable[[], bool], on_progress: scenario.Progress
    ) -> None:
        request_id = self.wire._request_id  # the id the next request takes (mcp 1.x numbers them in order)
        async with anyio.create_task_group() as group:
            group.start_soon(self.call, tool, arguments, on_progress)
            await scenario.wait_until(ready, scenario.STEP_TIMEOUT)
            cancelled = types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=request_id, reason="test: cancelled by the client")
            )
            await self.wire.send_notification(types.ClientNotification(cancelled))
            group.cancel_scope.cancel()


async def connect(spec: dict[str, Any]) -> dict[str, Any]:
    config = {"mcpServers": {"jarvis": {"command": spec["command"], "args": spec["args"],
                                        "env": scenario.server_env(spec)}}}  # fmt: skip
    client = MCPClient.from_dict(config)
    try:
        session = await client.create_session("jarvis")
        return await scenario.run(McpUseSession(session), spec)
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    scenario.main(connect)
