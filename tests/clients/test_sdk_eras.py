"""The `mcp` SDK's own client pinned to each protocol era drives `jarvis serve` through the same scenario.

How the SDK client picks a version: `Client(mode="auto")` probes `server/discover` and adopts 2026-07-28;
`mode="legacy"` sends `initialize` with the newest handshake version only (2025-11-25). Older eras are reached
with the SDK's own session: an `initialize` request naming the era, then `adopt()` of the server's answer.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS

from tests.clients.conftest import Scenario, check_basics, check_long_operations, kill_suite
from tests.clients.drivers import scenario as steps


class SdkSession:
    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.protocol = str(session.protocol_version)

    async def tools(self) -> dict[str, dict[str, Any]]:
        return {tool.name: tool.input_schema for tool in (await self.session.list_tools()).tools}

    async def call(
        self, tool: str, arguments: dict[str, Any], on_progress: steps.Progress | None = None
    ) -> steps.Answer:
        result = await self.session.call_tool(tool, arguments, progress_callback=on_progress)
        return "\n".join(getattr(block, "text", "") for block in result.content), bool(result.is_error)

    async def call_then_cancel(
        self, tool: str, arguments: dict[str, Any], ready: Callable[[], bool], on_progress: steps.Progress
    ) -> None:
        await steps.abandon_when_ready(lambda: self.call(tool, arguments, on_progress), ready)


@asynccontextmanager
async def pinned(scenario: Scenario, era: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=scenario.command, args=scenario.args, env=scenario.env,
                                   cwd=str(scenario.workdir))  # fmt: skip
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(steps.STEP_TIMEOUT):
            if era in HANDSHAKE_PROTOCOL_VERSIONS:
                request = types.InitializeRequest(
                    params=types.InitializeRequestParams(
                        protocol_version=era,
                        capabilities=types.ClientCapabilities(),
                        client_info=types.Implementation(name="jarvis-era-test", version="1"),
                    )
                )
                session.adopt(await session.send_request(request, types.InitializeResult))
                await session.send_notification(types.InitializedNotification())
            else:
                await session.discover()
        yield session


@pytest.fixture(scope="module")
def era_reports(scenario: Scenario) -> dict[str, dict[str, Any]]:
    return {}


@pytest.fixture(params=KNOWN_PROTOCOL_VERSIONS)
async def era_report(
    request: pytest.FixtureRequest, scenario: Scenario, era_reports: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """(the era asked for, the scenario's report), the scenario run once per era."""
    era: str = request.param
    if era not in era_reports:
        try:
            async with pinned(scenario, era) as session:
                report = await steps.run(SdkSession(session), scenario.spec())
            era_reports[era] = json.loads(json.dumps(report))  # as the drivers report it
        finally:
            kill_suite(scenario.pidfile)
    return era, era_reports[era]


def test_every_era_lists_reads_fails_and_reports_progress_alike(era_report: tuple[str, dict[str, Any]]) -> None:
    era, report = era_report
    check_basics(report, era)


def test_every_era_cancels_and_fetches_background_operations(era_report: tuple[str, dict[str, Any]]) -> None:
    check_long_operations(era_report[1])


@pytest.mark.parametrize("era", KNOWN_PROTOCOL_VERSIONS)
async def test_json_output_is_the_same_structured_content_on_every_era(scenario: Scenario, era: str) -> None:
    """JARVIS_OUTPUT=json does not depend on the era either (before 2025-06-18 a client may ignore the field)."""
    as_json = dataclasses.replace(scenario, env={**scenario.env, "JARVIS_OUTPUT": "json"})
    async with pinned(as_json, era) as session:
        result = await session.call_tool("jarvis_server", {"action": "list", "limit": 1})
    assert [block.text for block in result.content] == ["servers: 2"]  # type: ignore[union-attr]
    shaped = result.structured_content
    assert shaped is not None
    assert (shaped["success"], shaped["action"]) == (True, "list")
    assert shaped["data"]["servers"]["items"] == [
        {"name": "alpha", "transport": "stdio", "profiles": [], "enabled": True}
    ]
    assert shaped["data"]["servers"]["next_offset"] == 1
