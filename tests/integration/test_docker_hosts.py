"""Named Docker hosts against the real daemon: a second host on TCP (a proxy of our own on 127.0.0.1), the same
host read-only, a host where nothing listens, a host that is down for a while, and a docker context."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from adapters.factory import build_hosts
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import ConfigError, DaemonUnavailable, ReadOnlyHost
from jarvis.mcp_server import create_server
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_check_status import jarvis_check_status
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import call
from tests.servers.loopback import free_port
from tests.socket_proxy import DockerTcpProxy
from tests.stacks import Stack

pytestmark = pytest.mark.docker


def jarvis_on(stack: Stack, hosts: dict[str, str], **settings: object) -> ToolContext:
    """What `jarvis serve` composes: every host with its own runner, the default one first."""
    values = stack.settings(hosts=hosts, **settings)
    project = ComposeCliProject(values)
    docker_hosts = build_hosts(values, project)
    return ToolContext(values, project, docker_hosts.runner(None), docker_hosts=docker_hosts)


@pytest.fixture
def down_proxy() -> Iterator[DockerTcpProxy]:
    """A host that is down until the test starts it."""
    proxy = DockerTcpProxy()
    proxy.start()
    proxy.stop()  # the port is kept for the next start
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_status_and_logs_through_the_tcp_host_name_it(
    default_stack: Stack, tcp_proxy: DockerTcpProxy, observe: str
) -> None:
    jarvis = jarvis_on(default_stack, {"tcp": tcp_proxy.docker_host}, observe_adapter=observe)
    before = tcp_proxy.accepted
    status = call(jarvis_system, jarvis, action="docker_status", host="tcp")
    assert status.startswith(f"host: tcp\n{default_stack.name}: 4/5 running")
    logs = call(jarvis_diagnose, jarvis, action="logs", profile="research", lines=2, host="tcp")
    assert logs.startswith("host: tcp\n## research (mcpm-research) — stderr, 2 lines")
    assert "research err 10" in logs
    assert tcp_proxy.accepted > before
    default = call(jarvis_system, jarvis, action="docker_status")
    assert default.startswith(f"host: default\n{default_stack.name}: 4/5 running")


def test_stop_and_start_through_the_tcp_host(default_stack: Stack, tcp_proxy: DockerTcpProxy) -> None:
    jarvis = jarvis_on(default_stack, {"tcp": tcp_proxy.docker_host})
    before = tcp_proxy.accepted
    stopped = call(jarvis_system, jarvis, action="stop", service="mcpm-data", host="tcp")
    try:
        assert "stopped: mcpm-data" in stopped
    finally:
        started = call(jarvis_system, jarvis, action="start", service="mcpm-data", host="tcp")
    assert "running: mcpm-data" in started
    assert tcp_proxy.accepted > before  # the compose CLI went through the tcp host


def test_a_read_only_host_serves_status_and_logs_and_changes_nothing(
    default_stack: Stack, tcp_proxy: DockerTcpProxy
) -> None:
    jarvis = jarvis_on(default_stack, {"ro": f"{tcp_proxy.docker_host}(ro)"})
    before = default_stack.container_ids()
    for action in ("stop", "start", "restart_infra", "rebuild", "build", "bootstrap", "restart"):
        with pytest.raises(ReadOnlyHost, match=f"Host ro is read-only .*: {action} changes it"):
            call(jarvis_system, jarvis, action=action, host="ro")
    assert call(jarvis_system, jarvis, action="docker_status", host="ro").startswith("host: ro\n")
    logs = call(jarvis_system, jarvis, action="docker_logs", service="mcpm-research", lines=1, host="ro")
    assert "research out 1000" in logs
    assert default_stack.container_ids() == before


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_an_unreachable_host_fails_after_its_retry_window_naming_it(default_stack: Stack, observe: str) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    jarvis = jarvis_on(default_stack, {"gone": endpoint}, observe_adapter=observe, retry_timeout=2)
    with pytest.raises(DaemonUnavailable) as caught:
        call(jarvis_system, jarvis, action="docker_status", host="gone")
    message = str(caught.value)
    assert message.startswith(f"Docker host gone unavailable at {endpoint} after ")
    assert " attempts over " in message
    assert "its entry in JARVIS_HOSTS" in message
    assert call(jarvis_system, jarvis, action="docker_status").startswith("host: default\n")  # the others answer


def test_check_status_lists_every_host(default_stack: Stack, tcp_proxy: DockerTcpProxy) -> None:
    gone = f"tcp://127.0.0.1:{free_port()}"
    hosts = {"tcp": tcp_proxy.docker_host, "ro": f"{tcp_proxy.docker_host} (ro)", "gone": gone}
    jarvis = jarvis_on(default_stack, hosts, retry_timeout=30)
    text = call(jarvis_check_status, jarvis, host="tcp")
    lines = text.splitlines()
    assert lines[0] == "## Jarvis status (host tcp)"
    assert f"at {tcp_proxy.docker_host}" in lines[3]
    assert "## hosts: 3/4 reachable" in lines
    engine = jarvis.runner.engine_info()
    docker = f"ok {engine.version} (API {engine.api_version})"
    assert f"| tcp | rw | {tcp_proxy.docker_host} | {docker} |" in lines
    assert f"| ro | ro | {tcp_proxy.docker_host} | {docker} |" in lines
    # Asked once, not retried for 30 s: the refusal itself is reported, not a timeout.
    assert f"| gone | rw | {gone} | UNREACHABLE: [Errno 111] Connection refused |" in lines


async def test_a_host_that_is_down_never_holds_up_calls_to_another(
    default_stack: Stack, tcp_proxy: DockerTcpProxy, down_proxy: DockerTcpProxy
) -> None:
    jarvis = jarvis_on(default_stack, {"tcp": tcp_proxy.docker_host, "flaky": down_proxy.docker_host}, retry_timeout=60)
    async with Client(create_server(jarvis)) as client:
        flaky: list[str] = []

        async def ask_flaky() -> None:
            result = await client.call_tool("jarvis_system", {"action": "docker_status", "host": "flaky"})
            flaky.append(result.content[0].text)

        async with anyio.create_task_group() as group:
            group.start_soon(ask_flaky)
            await anyio.sleep(0.5)  # flaky's call is retrying now
            answer = await client.call_tool("jarvis_system", {"action": "docker_status", "host": "tcp"})
            assert answer.content[0].text.startswith("host: tcp\n")
            assert flaky == []  # still retrying while tcp answered
            down_proxy.start()  # flaky comes back inside its retry window
        assert flaky[0].startswith(f"host: flaky\n{default_stack.name}: ")


def test_a_docker_context_is_a_host(
    default_stack: Stack, tcp_proxy: DockerTcpProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A context made with `docker context create` in a docker config folder of the test's own."""
    config = tmp_path / "docker-config"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({}))
    plugins = Path.home() / ".docker" / "cli-plugins"
    if plugins.is_dir():
        (config / "cli-plugins").symlink_to(plugins)  # the compose plugin, where `jarvis setup` put it
    monkeypatch.setenv("DOCKER_CONFIG", str(config))  # read by the docker CLI and by docker-py
    subprocess.run(
        ["docker", "context", "create", "jarvis-hosts-test", "--docker", f"host={tcp_proxy.docker_host}"],
        check=True,
        capture_output=True,
    )
    for observe in ("dockerpy", "whales"):
        jarvis = jarvis_on(default_stack, {"ctx": "jarvis-hosts-test"}, observe_adapter=observe)
        before = tcp_proxy.accepted
        text = call(jarvis_system, jarvis, action="docker_status", host="ctx")
        assert text.startswith(f"host: ctx\n{default_stack.name}: 4/5 running"), observe
        assert tcp_proxy.accepted > before, observe
    missing = jarvis_on(default_stack, {"ctx": "jarvis-no-such-context"})
    with pytest.raises(ConfigError, match="docker context 'jarvis-no-such-context', which does not exist"):
        call(jarvis_system, missing, action="docker_status", host="ctx")
