"""Clients nobody here wrote, each negotiating its own protocol era, drive `jarvis serve` over stdio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.clients.conftest import ERROR, READ, Scenario, check_basics, check_long_operations, run_driver
from tests.fakes import TOOL_NAMES

# client virtualenv -> its driver, and the protocol version the client negotiates
CLIENTS = {
    "fastmcp": ("fastmcp_driver.py", "2026-07-28"),
    "mcp-use": ("mcp_use_driver.py", "2025-11-25"),
    "mcp-cli": ("mcp_cli_driver.py", "2025-06-18"),
}
Reports = Callable[[str], dict[str, Any]]


@pytest.fixture(scope="module")
def report_of(scenario: Scenario) -> Reports:
    """Each client's scenario runs once per module, however many tests read its report."""
    reports: dict[str, dict[str, Any]] = {}

    def report(name: str) -> dict[str, Any]:
        if name not in reports:
            reports[name] = run_driver(name, CLIENTS[name][0], scenario)
        return reports[name]

    return report


@pytest.mark.parametrize("name", list(CLIENTS))
def test_tools_a_read_an_error_and_progress(name: str, report_of: Reports) -> None:
    check_basics(report_of(name), CLIENTS[name][1])


@pytest.mark.parametrize("name", list(CLIENTS))
def test_cancellation_and_a_background_operation(name: str, report_of: Reports) -> None:
    check_long_operations(report_of(name))


def test_mcp_cli_command_line(report_of: Reports) -> None:
    """`mcp-cli tools --raw` and `mcp-cli cmd --tool` (it exits 0 on a tool error: the text says it)."""
    cli = report_of("mcp-cli")["cli"]
    assert cli["tools"] == TOOL_NAMES
    assert READ in cli["read"]
    assert ERROR in cli["error"]
