"""Tool handlers on a fake runner: validation, routing and formatting, no daemon needed."""

import re

import pytest

from adapters.factory import RoutedRunner
from jarvis.errors import DaemonUnavailable, DockerCommandFailed, InvalidInput, NoContainer, UnknownService
from jarvis.runner import LogLine, ServiceLogs, ServiceStatus
from jarvis.tools.jarvis_check_status import jarvis_check_status
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import SERVICES, FakeRunner, call, fake_jarvis, running


def test_invalid_action_lists_every_valid_action() -> None:
    with pytest.raises(InvalidInput) as caught:
        call(jarvis_system, fake_jarvis(), action="explode")
    assert str(caught.value) == (
        "Invalid action 'explode'. Valid actions: bootstrap, restart, restart_infra, rebuild, stop, start, "
        "docker_logs, docker_status, build, exec"
    )
    with pytest.raises(InvalidInput, match=r"Valid actions: profile_health, test_endpoint, logs, full, config_sync$"):
        call(jarvis_diagnose, fake_jarvis(), action="share")


def test_unknown_service_lists_the_project_services() -> None:
    runner = FakeRunner()
    with pytest.raises(UnknownService) as caught:
        call(jarvis_system, fake_jarvis(runner), action="stop", service="mcp-daemon")
    assert "Unknown service 'mcp-daemon'" in str(caught.value)
    assert ", ".join(SERVICES) in str(caught.value)
    assert runner.calls == []  # nothing reached Docker


@pytest.mark.parametrize("name", ["x; rm -rf /", "--all", "$(id)"])
def test_names_that_could_inject_are_just_unknown_services(name: str) -> None:
    with pytest.raises(UnknownService):
        call(jarvis_system, fake_jarvis(), action="docker_logs", service=name)


def test_rebuild_one_service_builds_without_cache_then_ups_it_alone() -> None:
    runner = FakeRunner()
    progress: list[tuple[float, float, str]] = []
    text = call(
        jarvis_system,
        fake_jarvis(runner),
        action="rebuild",
        service="mcpm-research",
        progress=lambda d, t, m: progress.append((d, t, m)),
    )
    assert runner.called("compose_build") == [((["mcpm-research"],), {"no_cache": True})]
    assert runner.called("compose_up") == [((["mcpm-research"],), {"no_deps": True})]
    assert "build --no-cache mcpm-research: ok" in text
    assert "| mcpm-research | running |" in text
    assert "mcpm-memory" not in text
    assert [p[0] for p in progress] == [0, 1, 2, 3]


def test_rebuild_all_with_cache_and_image_only_service() -> None:
    runner = FakeRunner()
    call(jarvis_system, fake_jarvis(runner), action="rebuild", no_cache=False)
    assert runner.called("compose_build") == [((["mcpm-research"],), {"no_cache": False})]
    assert runner.called("compose_up") == [(([],), {"no_deps": False})]
    text = call(jarvis_system, fake_jarvis(FakeRunner()), action="rebuild", service="mcpm-memory")
    assert "nothing to build, image only" in text


def test_build_failure_is_an_error_and_nothing_is_started() -> None:
    from jarvis.errors import DockerCommandFailed

    def fail(*_a: object, **_k: object) -> None:
        raise DockerCommandFailed("docker compose build failed (exit 1)", "Step 2/3 : COPY missing.txt")

    runner = FakeRunner(compose_build=fail)
    with pytest.raises(DockerCommandFailed, match=r"COPY missing\.txt"):
        call(jarvis_system, fake_jarvis(runner), action="rebuild")
    assert runner.called("compose_up") == []


def test_stop_lists_stopped_services_and_flags_survivors() -> None:
    rows = [ServiceStatus(service="mcpm-memory", container="c1", state="exited", exit_code=137), running("mcpm-data")]
    runner = FakeRunner(compose_ps=lambda: rows)
    text = call(jarvis_system, fake_jarvis(runner), action="stop")
    assert runner.called("compose_stop") == [(([],), {})]
    assert "stopped: mcpm-memory" in text
    assert "STILL RUNNING: mcpm-data" in text


def test_start_reports_services_that_did_not_come_up_and_missing_containers() -> None:
    rows = [ServiceStatus(service="mcpm-dev-core", container="c", state="exited", exit_code=3), running("mcpm-data")]
    text = call(jarvis_system, fake_jarvis(FakeRunner(compose_ps=lambda: rows)), action="start")
    assert "running: mcpm-data" in text
    assert "NOT RUNNING: mcpm-dev-core exited(3)" in text
    assert "no container (use rebuild): mcpm-essentials" in text


def test_docker_status_is_a_compact_table() -> None:
    rows = [ServiceStatus(service="mcpm-memory", container="c", state="running", health="unhealthy")]
    text = call(jarvis_system, fake_jarvis(FakeRunner(compose_ps=lambda: rows)), action="docker_status")
    assert text.splitlines()[0] == "fake: 1/5 running"
    assert "| mcpm-memory | running | unhealthy | - |" in text
    assert "| mcpm-research | no container | - | - |" in text


@pytest.mark.parametrize(("lines", "expected"), [(None, 50), (1, 1), (500, 500), (100000, 500)])
def test_lines_default_and_cap(lines: int | None, expected: int) -> None:
    runner = FakeRunner()
    text = call(jarvis_diagnose, fake_jarvis(runner), action="logs", profile="research", lines=lines)
    assert runner.called("compose_logs") == [(("mcpm-research", expected, "stderr"), {})]
    assert ("capped at 500" in text) == (lines == 100000)


@pytest.mark.parametrize("lines", [0, -5])
def test_bad_lines_are_rejected(lines: int) -> None:
    with pytest.raises(InvalidInput, match="lines must be 1-500"):
        call(jarvis_system, fake_jarvis(), action="docker_logs", lines=lines)


def test_log_type_is_validated_and_defaults_to_stderr() -> None:
    with pytest.raises(InvalidInput, match="Valid log_types: stderr, stdout, all"):
        call(jarvis_diagnose, fake_jarvis(), action="logs", profile="research", log_type="both")
    runner = FakeRunner()
    call(jarvis_diagnose, fake_jarvis(runner), action="logs", profile="memory", log_type="stdout")
    assert runner.called("compose_logs")[0][0] == ("mcpm-memory", 50, "stdout")


def test_unknown_profile_lists_profiles() -> None:
    with pytest.raises(UnknownService, match="Profiles: essentials, memory, dev-core, data, research"):
        call(jarvis_diagnose, fake_jarvis(), action="logs", profile="toolbox")
    with pytest.raises(InvalidInput, match="profile is required"):
        call(jarvis_diagnose, fake_jarvis(), action="logs")


def test_aggregate_covers_every_profile_and_a_failure_does_not_hide_the_others() -> None:
    def logs(service: str, lines: int, stream: str) -> ServiceLogs:
        if service == "mcpm-dev-core":
            raise NoContainer("Service mcpm-dev-core has no container")
        return ServiceLogs(service=service, requested=stream, lines=(LogLine(stream="stderr", text=f"{service} boom"),))

    text = call(jarvis_diagnose, fake_jarvis(FakeRunner(compose_logs=logs)), action="logs", aggregate=True, lines=5)
    headers = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h.split(" ")[1] for h in headers] == ["essentials", "memory", "dev-core", "data", "research"]
    assert "## dev-core — ERROR\nService mcpm-dev-core has no container" in text
    assert "mcpm-research boom" in text


def test_aggregate_with_the_daemon_gone_is_one_error() -> None:
    def down(*_a: object) -> ServiceLogs:
        raise DaemonUnavailable("unix:///x.sock", "refused")

    fake = FakeRunner(compose_logs=down)
    routed = RoutedRunner(lifecycle=fake, observe=fake, retry_timeout=0)  # the rule lives in the runner factory
    with pytest.raises(DaemonUnavailable):
        call(jarvis_diagnose, fake_jarvis(routed), action="logs", aggregate=True)


def test_profiles_and_prefix_come_from_settings() -> None:
    runner = FakeRunner()
    jarvis = fake_jarvis(runner, profiles=("essentials",), profile_prefix="mcpm-")
    call(jarvis_diagnose, jarvis, action="logs", aggregate=True)
    assert [c[0][0] for c in runner.called("compose_logs")] == ["mcpm-essentials"]


def test_check_status_reports_a_down_daemon_as_a_finding() -> None:
    def down() -> None:
        raise DaemonUnavailable("unix:///x.sock", "refused")

    text = call(jarvis_check_status, fake_jarvis(FakeRunner(engine_info=down)))
    assert text.splitlines()[0] == "## Jarvis status: Docker unreachable"
    assert "Docker: FAIL Docker daemon unavailable at unix:///x.sock" in text
    assert "Compose: v5.0.0" in text


def test_check_status_first_line_names_a_docker_error_and_stays_plain_when_all_is_well() -> None:
    def refused(**_: object) -> None:
        raise DockerCommandFailed("docker compose ps failed", "permission denied")

    text = call(jarvis_check_status, fake_jarvis(FakeRunner(compose_ps=refused)))
    assert text.splitlines()[0] == "## Jarvis status: Docker error"
    assert "Docker: FAIL docker compose ps failed" in text
    assert call(jarvis_check_status, fake_jarvis()).splitlines()[0] == "## Jarvis status"


def test_profile_health_picks_error_lines_and_flags_missing_containers() -> None:
    def ps(**_: object) -> list[ServiceStatus]:
        return [running("mcpm-essentials", restart_count=2), running("mcpm-memory", health="unhealthy")]

    def logs(service: str, lines: int, stream: str) -> ServiceLogs:
        texts = ["starting", "Traceback (most recent call last):", "KeyError: 'x'", "listening"]
        return ServiceLogs(
            service=service, requested=stream, lines=tuple(LogLine(stream="stderr", text=t) for t in texts)
        )

    runner = FakeRunner(compose_ps=ps, compose_logs=logs)
    text = call(
        jarvis_diagnose, fake_jarvis(runner, profiles=("essentials", "memory", "data")), action="profile_health"
    )
    assert text.startswith("## profile health: 1/3 ok")
    assert "| essentials | running | - | 2 | - |" in text
    assert "| data | no container | - | - | - |" in text
    expected = "Traceback (most recent call last):\nKeyError: 'x'"
    assert f"### memory — unhealthy: last error lines of stderr\n```\n{expected}\n```" in text
    assert "### data — no container" in text
    assert runner.called("compose_logs")[0][0] == ("mcpm-essentials", 50, "stderr")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "endpoint (an http(s) URL"),
        ({"endpoint": "ftp://x/mcp"}, "Invalid endpoint 'ftp://x/mcp'"),
        ({"endpoint": "http://x/mcp", "profile": "memory"}, "either endpoint or profile"),
        ({"profile": "nope"}, "Unknown profile 'nope'. Profiles: essentials"),
    ],
)
def test_test_endpoint_rejects_bad_input_naming_what_is_valid(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        call(jarvis_diagnose, fake_jarvis(), action="test_endpoint", **arguments)
