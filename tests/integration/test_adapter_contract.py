"""One contract, both adapters, the real daemon: what each DockerRunner reports must be what Docker did."""

from __future__ import annotations

import pytest

from adapters.dockerpy import DockerPyAdapter
from adapters.whales import WhalesAdapter
from jarvis.errors import NoContainer, NotSupported
from jarvis.project import ComposeProject
from jarvis.runner import DockerRunner
from jarvis.runner_factory import make_adapter
from tests.stacks import Stack

pytestmark = pytest.mark.docker


@pytest.fixture(params=["whales", "dockerpy"])
def adapter(request: pytest.FixtureRequest, default_stack: Stack) -> DockerRunner:
    return make_adapter(request.param, ComposeProject(default_stack.settings()))


def texts(logs) -> list[str]:
    return [line.text for line in logs.lines]


def test_ps_reports_state_health_exit_code_and_ports(adapter: DockerRunner, default_stack: Stack) -> None:
    statuses = {s.service: s for s in adapter.compose_ps()}
    assert set(statuses) == {"mcpm-essentials", "mcpm-memory", "mcpm-dev-core", "mcpm-data", "mcpm-research"}
    essentials = statuses["mcpm-essentials"]
    assert (essentials.state, essentials.health) == ("running", "healthy")
    (port,) = essentials.ports
    assert (port.host_ip, port.container_port) == ("127.0.0.1", 8080)
    assert port.host_port == default_stack.services.port_for("mcpm-essentials", 8080)
    assert (statuses["mcpm-memory"].state, statuses["mcpm-memory"].health) == ("running", "unhealthy")
    assert (statuses["mcpm-dev-core"].state, statuses["mcpm-dev-core"].exit_code) == ("exited", 3)
    assert statuses["mcpm-data"].health is None
    assert statuses["mcpm-research"].container == f"{default_stack.name}-mcpm-research-1"
    assert statuses["mcpm-research"].image == f"{default_stack.name}-mcpm-research"


def test_stderr_tail_is_exact_although_stdout_wrote_1000_lines_after(adapter: DockerRunner) -> None:
    logs = adapter.compose_logs("mcpm-research", 5, "stderr")
    assert texts(logs) == [f"research err {i}" for i in range(6, 11)]
    assert {line.stream for line in logs.lines} == {"stderr"}
    everything = adapter.compose_logs("mcpm-research", 500, "stderr")
    assert texts(everything) == ["research build 1"] + [f"research err {i}" for i in range(1, 11)]
    assert logs.approximate == isinstance(adapter, WhalesAdapter)


def test_stdout_tail_holds_only_stdout(adapter: DockerRunner) -> None:
    logs = adapter.compose_logs("mcpm-research", 3, "stdout")
    assert texts(logs) == ["research out 998", "research out 999", "research out 1000"]
    assert {line.stream for line in logs.lines} == {"stdout"}
    assert all(line.time is not None for line in logs.lines)


def test_all_keeps_the_order_and_labels_each_stream(adapter: DockerRunner) -> None:
    logs = adapter.compose_logs("mcpm-essentials", 10, "all")
    expected = [(s, f"essentials {s[3:]} {i}") for i in range(1, 6) for s in ("stdout", "stderr")]
    assert [(line.stream, line.text) for line in logs.lines] == expected


def test_tty_service_says_its_streams_are_merged(adapter: DockerRunner) -> None:
    logs = adapter.compose_logs("mcpm-data", 50, "stderr")
    assert logs.tty
    assert {line.stream for line in logs.lines} == {"tty"}
    assert {"data out 1", "data err 1"} <= set(texts(logs))


def test_logs_of_several_services_come_back_in_order_with_failures_in_place(adapter: DockerRunner) -> None:
    stderr_only, tty, missing = adapter.compose_logs_many(["mcpm-research", "mcpm-data", "mcpm-gone"], 2, "stderr")
    assert texts(stderr_only) == ["research err 9", "research err 10"]
    assert tty.tty
    assert not stderr_only.tty
    assert isinstance(missing, NoContainer)


def test_exec_separates_streams_and_returns_the_exit_code(adapter: DockerRunner) -> None:
    result = adapter.exec_in_service("mcpm-memory", ["sh", "-c", "echo to-out; echo to-err >&2; exit 4"])
    assert (result.exit_code, result.stdout, result.stderr) == (4, "to-out\n", "to-err\n")


def test_engine_info_matches_the_daemon(adapter: DockerRunner) -> None:
    import docker

    client = docker.from_env()
    assert adapter.engine_info().api_version == client.version()["ApiVersion"]
    client.close()


def test_dockerpy_refuses_what_only_compose_can_do(default_stack: Stack) -> None:
    adapter = DockerPyAdapter(ComposeProject(default_stack.settings()))
    for call in (adapter.compose_build, adapter.compose_up, adapter.compose_down):
        with pytest.raises(NotSupported, match="JARVIS_LIFECYCLE_ADAPTER=whales"):
            call()
