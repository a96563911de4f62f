"""The real docker CLI and Compose: `docker compose version` runs again only when the Compose binary changes;
the warm-up after start fills the project cache and builds the adapters, and does nothing harmful without Docker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.factory import build_runner
from jarvis.compose_binary import compose_plugin_path
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import DaemonUnavailable, ProjectError
from jarvis.settings import Settings, default_stack_dir
from jarvis.tool_context import ToolContext

pytestmark = pytest.mark.docker


def test_compose_version_runs_again_only_when_the_binary_changes(tmp_path: Path, monkeypatch) -> None:
    real = compose_plugin_path()
    assert real is not None
    # A plugin folder of our own whose `docker-compose` logs each call, then runs the real Compose.
    calls = tmp_path / "calls"
    plugin = tmp_path / "cli-plugins" / "docker-compose"
    plugin.parent.mkdir()
    plugin.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    plugin.chmod(0o755)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    project = ComposeCliProject(Settings(project_dir=default_stack_dir()))

    def version_runs() -> int:
        return sum(line.endswith(" version") for line in calls.read_text().splitlines())

    first = project.compose_version()
    assert first.lstrip("v")[:1].isdigit()
    assert project.compose_version() == first
    assert version_runs() == 1

    with plugin.open("a") as script:  # a new binary: another size
        script.write("# updated\n")
    assert project.compose_version() == first
    assert version_runs() == 2

    stat = plugin.stat()  # same size, new mtime
    os.utime(plugin, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    project.compose_version()
    assert version_runs() == 3


def warmed(settings: Settings) -> ToolContext:
    project = ComposeCliProject(settings)
    jarvis = ToolContext(settings=settings, project=project, runner=build_runner(settings, project))
    for thread in jarvis.warm_in_background():
        thread.join(timeout=60)
        assert not thread.is_alive()
    return jarvis


def test_warm_up_loads_the_project_and_builds_the_adapters() -> None:
    jarvis = warmed(Settings(project_dir=default_stack_dir()))
    assert jarvis.project._cached is not None
    assert "mcpm-research" in jarvis.project._cached[1].services
    observe = jarvis.runner.observe  # type: ignore[attr-defined]
    assert observe._adapter is not None
    assert observe._adapter._connection._client is not None  # docker-py's client, API version probed


def test_warm_up_without_docker_does_nothing_and_calls_still_say_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker CLI
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")  # and no daemon
    jarvis = warmed(Settings(project_dir=default_stack_dir(), retry_timeout=0))
    assert jarvis.project._cached is None
    with pytest.raises(ProjectError, match="docker"):
        jarvis.project.spec()
    with pytest.raises(DaemonUnavailable):
        jarvis.runner.engine_info()
