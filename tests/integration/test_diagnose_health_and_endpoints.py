"""profile_health on the real default stack; test_endpoint and full against real loopback servers."""

from __future__ import annotations

import socket
import time

import pytest

from adapters.factory import build_runner
from jarvis.compose_project import ComposeCliProject
from jarvis.endpoint_probe import probe
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from jarvis.tools.jarvis_diagnose import test_endpoint as endpoint_report
from tests.fakes import call, fake_jarvis
from tests.servers.loopback import closed_port_url, mcp_server, plain_web_server
from tests.stacks import Stack


def jarvis_for(stack: Stack, **settings: object) -> ToolContext:
    values = stack.settings(**settings)
    project = ComposeCliProject(values)
    return ToolContext(settings=values, project=project, runner=build_runner(values, project))


@pytest.mark.docker
@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_profile_health_reports_state_restarts_exit_code_and_error_lines(default_stack: Stack, observe: str) -> None:
    text = call(jarvis_diagnose, jarvis_for(default_stack, observe_adapter=observe), action="profile_health")
    assert text.startswith("## profile health: 3/5 ok")
    assert "| essentials | running | healthy | 0 | - |" in text
    assert "| memory | running | unhealthy | 0 | - |" in text
    assert "| dev-core | exited | - | 0 | 3 |" in text
    assert "### memory — unhealthy: last error lines of stderr\n```\nmemory: ValueError: bad config\n```" in text
    assert "### dev-core — exited(3): last stderr lines (none look like errors)" in text
    assert "### essentials" not in text  # healthy profiles cost no tokens


@pytest.mark.docker
def test_profile_health_of_one_profile_always_shows_its_stderr(default_stack: Stack) -> None:
    text = call(jarvis_diagnose, jarvis_for(default_stack), action="profile_health", profile="data")
    assert text.startswith("## profile health: 1/1 ok")
    assert "TTY: stdout and stderr are one stream" in text


def test_endpoint_handshake_reports_server_and_bounded_tool_names() -> None:
    with mcp_server(extra_tools=30) as url:
        report = probe(url, 10)
        assert report.ok, report
        assert report.server == "probe-server 1.2.3"
        assert report.tools[:2] == ("echo", "add")
        assert len(report.tools) == 32
        text = endpoint_report(fake_jarvis(), url, None)
    assert f"## endpoint {url} — OK" in text
    assert "tools (32): echo, add, extra_1" in text
    assert "…and 7 more" in text


def test_endpoint_failures_say_where_they_failed() -> None:
    closed = probe(closed_port_url(), 5)
    assert (closed.ok, closed.failed_at) == (False, "connect/initialize")
    assert "ConnectError" in str(closed.error)
    with plain_web_server() as url:
        not_mcp = probe(url, 5)
    assert (not_mcp.ok, not_mcp.failed_at) == (False, "connect/initialize")
    assert not_mcp.server is None


def test_endpoint_timeout_is_bounded() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        report = probe(f"http://127.0.0.1:{silent.getsockname()[1]}/mcp", 1.5)
    assert time.monotonic() - started < 5
    assert report.error == "no answer within 1.5s"


@pytest.mark.docker
def test_full_reports_status_health_and_every_endpoint(default_stack: Stack) -> None:
    with mcp_server() as url:
        endpoints = {"essentials": url, "memory": closed_port_url()}
        text = call(jarvis_diagnose, jarvis_for(default_stack, endpoints=endpoints), action="full")
    assert text.startswith(f"# full diagnostic — project {default_stack.name}\n## profile health: 3/5 ok")
    assert "## endpoints: 1/2 ok" in text
    assert f"| essentials | {url} | OK | probe-server 1.2.3 | 2 |" in text
    assert "| memory | http://127.0.0.1:" in text
    assert "FAILED at connect/initialize: ConnectError" in text
