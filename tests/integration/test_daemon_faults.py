"""The daemon briefly gone: a socket proxy of our own in front of the real socket, stopped and started."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.factory import build_runner
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import DaemonUnavailable
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_check_status import jarvis_check_status
from tests.socket_proxy import DockerSocketProxy
from tests.stacks import Stack

pytestmark = pytest.mark.docker


@pytest.fixture
def proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DockerSocketProxy]:
    proxy = DockerSocketProxy(tmp_path / "docker.sock")
    proxy.start()
    monkeypatch.setenv("DOCKER_HOST", proxy.docker_host)  # both the docker CLI and docker-py read it
    yield proxy
    proxy.stop()


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_call_succeeds_when_the_daemon_returns_inside_the_retry_window(
    default_stack: Stack, proxy: DockerSocketProxy, observe: str
) -> None:
    runner = build_runner(default_stack.settings(observe_adapter=observe, retry_timeout=10))
    assert len(runner.compose_ps()) == 5  # through the proxy
    proxy.stop()
    timer = proxy.start_after(1.5)
    started = time.monotonic()
    try:
        statuses = runner.compose_ps()
    finally:
        timer.join()
    assert time.monotonic() - started >= 1.4
    assert {s.service for s in statuses} >= {"mcpm-essentials", "mcpm-research"}


def test_lifecycle_call_is_retried_too(default_stack: Stack, proxy: DockerSocketProxy) -> None:
    runner = build_runner(default_stack.settings(retry_timeout=10))
    proxy.stop()
    timer = proxy.start_after(1.5)
    try:
        runner.compose_restart(["mcpm-memory"])  # whales: the compose CLI through the proxy
    finally:
        timer.join()
    assert {s.service: s.state for s in runner.compose_ps()}["mcpm-memory"] == "running"


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_daemon_that_stays_down_fails_clearly_within_the_timeout(
    default_stack: Stack, proxy: DockerSocketProxy, observe: str
) -> None:
    runner = build_runner(default_stack.settings(observe_adapter=observe, retry_timeout=2))
    proxy.stop()
    started = time.monotonic()
    with pytest.raises(DaemonUnavailable) as caught:
        runner.compose_logs("mcpm-research", 5, "stderr")
    elapsed = time.monotonic() - started
    assert 1.0 < elapsed < 2 + 1.5
    message = str(caught.value)
    assert proxy.docker_host in message
    assert "attempts" in message
    assert "docker info" in message


def test_project_is_described_without_a_daemon(default_stack: Stack, proxy: DockerSocketProxy) -> None:
    proxy.stop()
    spec = ComposeCliProject(default_stack.settings()).spec()  # `compose config` needs no daemon
    assert "mcpm-research" in spec.services


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_check_status_with_the_daemon_gone_says_so_first(
    default_stack: Stack, proxy: DockerSocketProxy, observe: str
) -> None:
    settings = default_stack.settings(observe_adapter=observe, retry_timeout=1)
    project = ComposeCliProject(settings)
    jarvis = ToolContext(settings=settings, project=project, runner=build_runner(settings, project))
    assert jarvis_check_status(jarvis).splitlines()[0] == "## Jarvis status"  # through the proxy
    proxy.stop()
    text = jarvis_check_status(jarvis)
    lines = text.splitlines()
    assert lines[0] == "## Jarvis status: Docker unreachable"
    assert lines[1].startswith("Compose: v")
    assert lines[2].startswith(f"Project: {default_stack.name} ")
    assert lines[3].startswith(f"Docker: FAIL Docker daemon unavailable at {proxy.docker_host}")
