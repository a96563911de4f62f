"""Named Docker hosts as an agent uses them: `jarvis serve` over stdio with JARVIS_HOSTS, a second host on TCP."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import call, connect
from tests.servers.loopback import free_port
from tests.socket_proxy import DockerTcpProxy
from tests.stacks import Stack

pytestmark = pytest.mark.docker


async def test_host_over_stdio(e2e_stack: Stack, tcp_proxy: DockerTcpProxy) -> None:
    gone = f"tcp://127.0.0.1:{free_port()}"
    hosts = f"tcp={tcp_proxy.docker_host},ro={tcp_proxy.docker_host}(ro),gone={gone}"
    async with connect(e2e_stack, JARVIS_HOSTS=hosts, JARVIS_RETRY_TIMEOUT="1") as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
        assert [name for name, properties in tools.items() if "host" in properties] == [
            "jarvis_check_status",
            "jarvis_system",
            "jarvis_diagnose",
        ]
        before = tcp_proxy.accepted
        text, error = await call(client, "jarvis_system", action="docker_status", host="tcp")
        assert not error
        assert text.startswith(f"host: tcp\n{e2e_stack.name}: 4/5 running")
        assert tcp_proxy.accepted > before

        text, error = await call(client, "jarvis_diagnose", action="logs", profile="research", lines=1, host="ro")
        assert not error
        assert text.startswith("host: ro\n## research (mcpm-research) — stderr, 1 line")
        text, error = await call(client, "jarvis_system", action="stop", host="ro")
        assert error
        assert text == (
            "Host ro is read-only ((ro) in JARVIS_HOSTS): stop changes it and is refused there. "
            "On ro: docker_logs, docker_status"
        )

        text, error = await call(client, "jarvis_system", action="docker_status", host="staging")
        assert error
        assert text == "Unknown host 'staging'. Hosts (JARVIS_HOSTS): default, tcp, ro, gone"
        text, error = await call(client, "jarvis_system", action="docker_status", host="gone")
        assert error
        assert text.startswith(f"Docker host gone unavailable at {gone} after ")

        text, error = await call(client, "jarvis_check_status", host="tcp")
        assert not error
        lines = text.splitlines()
        assert lines[0] == "## Jarvis status (host tcp)"
        assert "## hosts: 3/4 reachable" in lines
        assert any(line.startswith(f"| gone | rw | {gone} | UNREACHABLE:") for line in lines)
