"""One contract, both adapters, the real daemon: what each DockerRunner reports must be what Docker did,
on the default host and on a second host, a TCP endpoint in front of the same daemon (JARVIS_HOSTS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.dockerpy import DockerPyAdapter
from adapters.factory import make_adapter
from adapters.whales import WhalesAdapter
from jarvis.compose_project import ComposeCliProject
from jarvis.docker_hosts import parse_host
from jarvis.errors import NoContainer, NotSupported
from jarvis.runner import DockerRunner
from tests.socket_proxy import DockerTcpProxy
from tests.stacks import Stack

pytestmark = pytest.mark.docker


@pytest.fixture(params=["whales", "dockerpy", "whales@tcp", "dockerpy@tcp"])
def adapter(request: pytest.FixtureRequest, default_stack: Stack) -> Iterator[DockerRunner]:
    name, _, on = request.param.partition("@")
    project = ComposeCliProject(default_stack.settings())
    if not on:
        yield make_adapter(name, project)
        return
    proxy: DockerTcpProxy = request.getfixturevalue("tcp_proxy")
    before = proxy.accepted
    yield make_adapter(name, project, parse_host("tcp", proxy.docker_host))
    assert proxy.accepted > before, "the tcp host's adapter did not go through its endpoint"


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
    command = ["sh", "-c", "echo to-out; echo to-err >&2; echo 123456789 >&2; exit 4"]
    result = adapter.exec_in_service("mcpm-memory", command, timeout=30, max_bytes=10)
    assert (result.exit_code, result.stdout, result.stderr) == (4, "to-out\n", "123456789\n")
    assert (result.stdout_bytes, result.stderr_bytes) == (7, 17)  # stderr cut to its last 10 bytes


def test_exec_output_that_arrives_with_the_response_headers_is_kept(default_stack: Stack) -> None:
    """A network that joins the exec's headers and first output into one packet: http.client buffers those
    bytes while parsing the headers, so a read of the raw socket alone returned empty streams."""
    proxy = DockerTcpProxy(coalesce=0.3)
    proxy.start()
    try:
        project = ComposeCliProject(default_stack.settings())
        adapter = make_adapter("dockerpy", project, parse_host("tcp", proxy.docker_host))
        command = ["sh", "-c", "echo to-out; echo to-err >&2"]
        result = adapter.exec_in_service("mcpm-memory", command, timeout=30, max_bytes=100)
        assert (result.exit_code, result.stdout, result.stderr) == (0, "to-out\n", "to-err\n")
    finally:
        proxy.stop()


def test_engine_info_matches_the_daemon(adapter: DockerRunner, request: pytest.FixtureRequest) -> None:
    import docker

    client = docker.from_env()
    info = adapter.engine_info()
    assert info.api_version == client.version()["ApiVersion"]
    client.close()
    if "@tcp" in request.node.callspec.params["adapter"]:
        assert info.host == request.getfixturevalue("tcp_proxy").docker_host


def test_dockerpy_refuses_what_only_compose_can_do(default_stack: Stack) -> None:
    adapter = DockerPyAdapter(ComposeCliProject(default_stack.settings()))
    for call in (adapter.compose_build, adapter.compose_up, adapter.compose_down):
        with pytest.raises(NotSupported, match="JARVIS_LIFECYCLE_ADAPTER=whales"):
            call()
