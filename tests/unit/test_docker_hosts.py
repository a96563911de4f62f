"""Named Docker hosts without a daemon: `JARVIS_HOSTS` parsing, which runner a call reaches, read-only hosts,
unknown hosts, results naming the host, and check_status's table of every host."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from adapters.endpoint import docker_client
from jarvis.cancel import CancelToken
from jarvis.compose_project import whales_client
from jarvis.docker_hosts import DockerHost, DockerHosts, configured_hosts, parse_host
from jarvis.errors import ConfigError, DaemonUnavailable, InvalidInput, NoContainer, ReadOnlyHost
from jarvis.mcp_server import create_server
from jarvis.runner import EngineInfo
from jarvis.settings import Settings, load_settings
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_check_status import jarvis_check_status
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_system import EFFECTS as SYSTEM_EFFECTS
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import FakeRunner, call, fake_jarvis

HOSTS = {"lab": "tcp://10.0.0.5:2375", "prod": "ssh://ops@prod.example(ro)"}


def with_hosts(entries: dict[str, str], **settings: Any) -> tuple[ToolContext, dict[str, FakeRunner], list[Any]]:
    """A context whose hosts each have their own FakeRunner; `built` records (host, retry window) per build."""
    runners: dict[str, FakeRunner] = {}
    built: list[Any] = []

    def build(host: DockerHost, retry_timeout: float) -> FakeRunner:
        built.append((host.name, retry_timeout))
        return runners.setdefault(host.name, FakeRunner())

    context = fake_jarvis(hosts=entries, **settings)
    hosts = DockerHosts(context.settings.docker_hosts(), build, context.settings.retry_timeout)
    context = dataclasses.replace(context, runner=hosts.runner(None), docker_hosts=hosts)
    return context, runners, built


# JARVIS_HOSTS


def test_every_endpoint_form_and_the_read_only_mark() -> None:
    hosts = configured_hosts(
        {"a": "unix:///run/other.sock", "b": "tcp://10.0.0.5:2376 (ro)", "c": "ssh://me@box", "d": "my-ctx"}
    )
    assert [(h.name, h.endpoint, h.kind, h.read_only) for h in hosts] == [
        ("default", None, "default", False),
        ("a", "unix:///run/other.sock", "unix", False),
        ("b", "tcp://10.0.0.5:2376", "tcp", True),
        ("c", "ssh://me@box", "ssh", False),
        ("d", "my-ctx", "context", False),
    ]


def test_a_host_named_default_replaces_dockers_own_choice() -> None:
    (default,) = configured_hosts({"default": "unix:///var/run/docker.sock(ro)"})
    assert (default.name, default.endpoint, default.read_only) == ("default", "unix:///var/run/docker.sock", True)


def test_jarvis_hosts_from_the_environment_and_from_jarvis_toml(tmp_path: Path) -> None:
    env = {"JARVIS_PROJECT_DIR": str(tmp_path), "JARVIS_HOSTS": "lab=tcp://10.0.0.5:2375, prod=my-ctx(ro)"}
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    settings = load_settings(environ=env, cwd=tmp_path)
    assert settings.hosts == {"lab": "tcp://10.0.0.5:2375", "prod": "my-ctx(ro)"}
    (tmp_path / "jarvis.toml").write_text('[hosts]\nlab = "ssh://me@lab"\n')
    from_file = load_settings(environ={"JARVIS_PROJECT_DIR": str(tmp_path)}, cwd=tmp_path)
    assert [h.endpoint for h in from_file.docker_hosts()] == [None, "ssh://me@lab"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("lab=http://10.0.0.5", "host lab: 'http://10.0.0.5' is not an endpoint; accepted: unix:///path, tcp://"),
        ("lab=tcp://", "host lab: 'tcp://' has no address after the scheme"),
        ("lab", "host lab: '' is not an endpoint"),
        ("la b=tcp://x:1", "host name 'la b'"),
        ("lab=my ctx", "'my ctx' is not an endpoint"),
    ],
)
def test_a_bad_entry_stops_start_up_naming_the_key_and_what_is_accepted(
    tmp_path: Path, value: str, message: str
) -> None:
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"JARVIS_PROJECT_DIR": str(tmp_path), "JARVIS_HOSTS": value}, cwd=tmp_path)
    assert str(caught.value).startswith("JARVIS_HOSTS (hosts): ")
    assert message in str(caught.value)


def test_parse_host_takes_what_docker_takes_as_a_context_name() -> None:
    assert parse_host("x", "desktop-linux").kind == "context"
    assert parse_host("x", "remote.v2+tls").kind == "context"


# Which runner a call reaches


def test_runners_are_built_on_first_use_one_per_host_and_kept() -> None:
    jarvis, runners, built = with_hosts(HOSTS, retry_timeout=7)
    assert built == [("default", 7)]
    call(jarvis_system, jarvis, action="docker_status", host="lab")
    call(jarvis_system, jarvis, action="docker_status", host="lab")
    assert built == [("default", 7), ("lab", 7)]
    assert runners["lab"].called("compose_ps")
    assert not runners["default"].called("compose_ps")
    assert jarvis.docker_hosts.runner("lab") is jarvis.docker_hosts.runner("lab")


def test_without_host_the_default_host_answers() -> None:
    jarvis, runners, _ = with_hosts(HOSTS)
    call(jarvis_diagnose, jarvis, action="logs", profile="research")
    assert runners["default"].called("compose_logs")
    assert set(runners) == {"default"}


def test_an_unknown_host_is_an_error_naming_the_configured_ones() -> None:
    jarvis, runners, _ = with_hosts(HOSTS)
    for handler, arguments in [
        (jarvis_system, {"action": "docker_status"}),
        (jarvis_diagnose, {"action": "profile_health"}),
        (jarvis_check_status, {}),
    ]:
        with pytest.raises(InvalidInput) as caught:
            call(handler, jarvis, host="staging", **arguments)
        assert str(caught.value) == "Unknown host 'staging'. Hosts (JARVIS_HOSTS): default, lab, prod"
    assert all(not runner.calls for runner in runners.values())


async def test_an_unknown_host_is_a_tool_error_over_mcp() -> None:
    jarvis, _, _ = with_hosts(HOSTS)
    async with Client(create_server(jarvis)) as client:
        result = await client.call_tool("jarvis_system", {"action": "docker_status", "host": "nope"})
    assert result.is_error
    assert "Hosts (JARVIS_HOSTS): default, lab, prod" in result.content[0].text


# Read-only hosts

WRITING = [action for action, effect in SYSTEM_EFFECTS.items() if effect == "writes"]


def test_the_actions_a_read_only_host_refuses_are_the_brief_s() -> None:
    assert sorted(WRITING) == sorted(
        ["bootstrap", "restart", "restart_infra", "rebuild", "stop", "start", "build", "exec"]
    )


@pytest.mark.parametrize("action", WRITING)
def test_a_read_only_host_refuses_every_change_before_doing_anything(action: str) -> None:
    jarvis, runners, _ = with_hosts(HOSTS)
    restarted: list[bool] = []
    jarvis = dataclasses.replace(jarvis, exit_after_answer=lambda: restarted.append(True))
    with pytest.raises(ReadOnlyHost) as caught:
        call(jarvis_system, jarvis, action=action, host="prod")
    assert str(caught.value) == (
        f"Host prod is read-only ((ro) in JARVIS_HOSTS): {action} changes it and is refused there. "
        "On prod: docker_logs, docker_status"
    )
    assert "prod" not in runners
    assert not restarted


def test_a_read_only_host_serves_status_and_logs() -> None:
    jarvis, runners, _ = with_hosts(HOSTS)
    status = call(jarvis_system, jarvis, action="docker_status", host="prod")
    logs = call(jarvis_system, jarvis, action="docker_logs", service="mcpm-research", host="prod")
    diagnose = call(jarvis_diagnose, jarvis, action="logs", profile="research", host="prod")
    assert status.startswith("host: prod\nfake: 5/5 running")
    assert "mcpm-research e" in logs
    assert diagnose.startswith("host: prod\n## research (mcpm-research) — stderr")
    assert {name for name, _, _ in runners["prod"].calls} == {"compose_ps", "compose_logs"}


def test_a_read_only_default_host_is_refused_by_every_tool_that_changes_it() -> None:
    jarvis, runners, _ = with_hosts({"default": "unix:///var/run/docker.sock(ro)"})
    with pytest.raises(ReadOnlyHost, match="Host default is read-only"):
        call(jarvis_profile, jarvis, action="restart", name="research")  # no host parameter: the runner refuses
    assert not runners["default"].called("compose_restart")
    bound = jarvis.runner.cancellable(CancelToken())  # what a long operation runs with: still read-only
    for refused in (
        lambda r: r.compose_up(),
        lambda r: r.compose_down(),
        lambda r: r.exec_in_service("x", ["ls"], timeout=1, max_bytes=1),
        lambda r: r.build_image("jarvis/x:1", Path("."), {}),
    ):
        for runner in (jarvis.runner, bound):
            with pytest.raises(ReadOnlyHost):
                refused(runner)
    assert runners["default"].calls == []
    assert bound.image_labels("jarvis/busybox:1") is None  # reads pass through
    assert runners["default"].called("image_labels")


# Results name the host


def test_results_name_the_host_only_when_several_are_configured() -> None:
    single = call(jarvis_system, fake_jarvis(), action="docker_status")
    assert single.startswith("fake: 5/5 running")
    assert call(jarvis_system, fake_jarvis(), action="docker_status", host="default") == single
    jarvis, _, _ = with_hosts(HOSTS)
    assert call(jarvis_system, jarvis, action="docker_status").startswith("host: default\nfake: 5/5 running")
    assert call(jarvis_system, jarvis, action="docker_status", host="lab").startswith("host: lab\n")


def test_errors_name_the_host_too() -> None:
    def gone(*_a: object) -> None:
        raise NoContainer("Service mcpm-research has no container; `rebuild` creates it.")

    jarvis, runners, _ = with_hosts(HOSTS)
    jarvis.docker_hosts.runner("lab").handlers["compose_logs"] = gone  # type: ignore[attr-defined]
    with pytest.raises(NoContainer) as caught:
        call(jarvis_diagnose, jarvis, action="logs", profile="research", host="lab")
    assert str(caught.value).startswith("host lab: Service mcpm-research has no container")
    assert runners["lab"].called("compose_logs")


def test_an_unavailable_named_host_is_named_once_with_its_own_hint() -> None:
    def down() -> None:
        raise DaemonUnavailable("tcp://10.0.0.5:2375", "connection refused", "lab")

    jarvis, _, _ = with_hosts(HOSTS)
    jarvis.docker_hosts.runner("lab").handlers["compose_ps"] = down  # type: ignore[attr-defined]
    with pytest.raises(DaemonUnavailable) as caught:
        call(jarvis_system, jarvis, action="docker_status", host="lab")
    assert str(caught.value) == (
        "Docker host lab unavailable at tcp://10.0.0.5:2375: connection refused. Check that its daemon is running "
        "and reachable from here, and its entry in JARVIS_HOSTS."
    )


# check_status


def test_check_status_reports_every_host_each_within_the_host_timeout() -> None:
    release = threading.Event()

    def silent() -> EngineInfo:
        release.wait(30)
        return EngineInfo(host="x", version="0", api_version="0")

    def refused() -> None:
        raise DaemonUnavailable("tcp://10.0.0.9:2375", "connection refused", "off")

    entries = {**HOSTS, "off": "tcp://10.0.0.9:2375", "quiet": "tcp://10.0.0.8:2375"}
    jarvis, _, built = with_hosts(entries, host_timeout=0.3)
    jarvis.docker_hosts.runner("off", retry_timeout=0).handlers["engine_info"] = refused  # type: ignore[attr-defined]
    jarvis.docker_hosts.runner("quiet", retry_timeout=0).handlers["engine_info"] = silent  # type: ignore[attr-defined]
    try:
        text = call(jarvis_check_status, jarvis, host="lab")
    finally:
        release.set()
    lines = text.splitlines()
    assert lines[0] == "## Jarvis status (host lab)"
    assert "## hosts: 3/5 reachable" in lines
    assert "| default | rw | unix:///fake.sock | ok 1 (API 1.41) |" in lines
    assert "| prod | ro | unix:///fake.sock | ok 1 (API 1.41) |" in lines
    assert "| off | rw | tcp://10.0.0.9:2375 | UNREACHABLE: connection refused |" in lines
    assert "| quiet | rw | tcp://10.0.0.8:2375 | UNREACHABLE: no answer within 0.3s (JARVIS_HOST_TIMEOUT) |" in lines
    assert ("quiet", 0) in built  # asked once, not retried


def test_check_status_with_one_host_has_no_host_table() -> None:
    text = call(jarvis_check_status, fake_jarvis())
    assert text.splitlines()[0] == "## Jarvis status"
    assert "## hosts" not in text


# Clients per endpoint (no connection is made)


def test_the_compose_cli_gets_host_or_context_as_the_endpoint_says() -> None:
    settings = Settings.model_validate({"project_dir": Path("/fake")})
    default = whales_client(settings).client_config
    assert (default.host, default.context) == (None, None)
    tcp = whales_client(settings, parse_host("lab", "tcp://10.0.0.5:2375")).client_config
    assert (tcp.host, tcp.context) == ("tcp://10.0.0.5:2375", None)
    ssh = whales_client(settings, parse_host("b", "ssh://me@box(ro)")).client_config
    assert (ssh.host, ssh.context) == ("ssh://me@box", None)
    context = whales_client(settings, parse_host("c", "my-ctx")).client_config
    assert (context.host, context.context) == (None, "my-ctx")


def test_a_context_that_does_not_exist_is_a_config_error_not_the_local_socket() -> None:
    with pytest.raises(ConfigError) as caught:
        docker_client(parse_host("lab", "jarvis-no-such-context-9f3a"))
    assert "host lab names the docker context 'jarvis-no-such-context-9f3a', which does not exist" in str(caught.value)


def test_an_ssh_host_through_docker_py_without_paramiko_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "paramiko" else real(name, *a))
    with pytest.raises(ConfigError) as caught:
        docker_client(parse_host("box", "ssh://me@box"))
    assert "pip install 'jarvis[ssh]'" in str(caught.value)
    assert "JARVIS_OBSERVE_ADAPTER=whales" in str(caught.value)
