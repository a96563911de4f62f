"""jarvis_diagnose's health, endpoint and full actions through the real stdio server."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import call, connect
from tests.servers.loopback import closed_port_url, mcp_server, plain_web_server
from tests.stacks import Stack

pytestmark = pytest.mark.docker


async def test_profile_health_over_stdio(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_diagnose", action="profile_health")
        assert not error
        assert "| memory | running | unhealthy |" in text
        assert "memory: ValueError: bad config" in text
        text, error = await call(client, "jarvis_diagnose", action="profile_health", profile="toolbox")
        assert error
        assert "Profiles: essentials, memory, dev-core, data, research" in text


async def test_test_endpoint_by_url_by_profile_and_its_failures(e2e_stack: Stack) -> None:
    with mcp_server() as url, plain_web_server() as web:
        endpoints = f"essentials={url},memory={web}"
        async with connect(e2e_stack, JARVIS_ENDPOINTS=endpoints, JARVIS_ENDPOINT_TIMEOUT="5") as client:
            text, error = await call(client, "jarvis_diagnose", action="test_endpoint", endpoint=url)
            assert not error
            assert "OK" in text.splitlines()[0]
            assert "server: probe-server 1.2.3" in text
            assert "tools (2): echo, add" in text
            text, error = await call(client, "jarvis_diagnose", action="test_endpoint", profile="essentials")
            assert not error
            assert text.startswith(f"## endpoint essentials {url} — OK")
            # A failing endpoint is a finding (text), not a tool error.
            text, error = await call(client, "jarvis_diagnose", action="test_endpoint", profile="memory")
            assert not error
            assert "FAILED at connect/initialize" in text
            text, error = await call(client, "jarvis_diagnose", action="test_endpoint", endpoint=closed_port_url())
            assert not error
            assert "ConnectError" in text
            assert "nothing listens there" in text
            for arguments, message in (
                ({}, "endpoint (an http(s) URL"),
                ({"endpoint": "localhost:6276"}, "Invalid endpoint 'localhost:6276'"),
                ({"profile": "data"}, "Profile 'data' has no endpoint; set JARVIS_ENDPOINTS"),
                ({"profile": "toolbox"}, "Unknown profile 'toolbox'"),
            ):
                text, error = await call(client, "jarvis_diagnose", action="test_endpoint", **arguments)
                assert error, arguments
                assert message in text


async def test_full_report_over_stdio(e2e_stack: Stack) -> None:
    with mcp_server() as url:
        async with connect(e2e_stack, JARVIS_ENDPOINTS=f"research={url},data={closed_port_url()}") as client:
            text, error = await call(client, "jarvis_diagnose", action="full")
    assert not error
    assert "## profile health: 3/5 ok" in text
    assert "## endpoints: 1/2 ok" in text
    assert f"| research | {url} | OK | probe-server 1.2.3 | 2 |" in text
