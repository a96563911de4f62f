"""bootstrap and build against the real daemon: a stack brought up from nothing, twice, and a real image build."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from adapters.factory import build_runner
from jarvis.compose_project import ComposeCliProject
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import call
from tests.stacks import Stack, copy_default_stack, running_stack

pytestmark = pytest.mark.docker


def jarvis_for(stack: Stack, **settings: object) -> ToolContext:
    values = stack.settings(**settings)
    project = ComposeCliProject(values)
    return ToolContext(settings=values, project=project, runner=build_runner(values, project))


def test_bootstrap_brings_the_stack_up_waits_and_is_safe_twice(base_image: str, tmp_path: Path) -> None:
    directory = copy_default_stack(tmp_path / "default")
    with running_stack(directory, up=False) as stack:
        # mcpm-memory's healthcheck always fails: it never settles, and the wait ends at the timeout.
        jarvis = jarvis_for(stack, mcpm_dir=tmp_path / "mcpm", bootstrap_timeout=20)
        steps: list[str] = []
        text = call(jarvis_system, jarvis, action="bootstrap", progress=lambda _done, _total, msg: steps.append(msg))
        assert f"mcpm: {tmp_path / 'mcpm'}: created" in text
        assert "mcpm: servers.json: created (empty)" in text
        assert "docker compose: ok" in text
        assert (
            "NOT SETTLED within 20s (JARVIS_BOOTSTRAP_TIMEOUT): mcpm-memory running (unhealthy); 3/5 running or healthy"
        ) in text
        assert "exited: mcpm-dev-core exited(3)" in text
        assert "## mcpm-memory did not settle — stderr" in text
        assert "memory: ValueError: bad config" in text
        assert "| mcpm-essentials | running | healthy |" in text
        assert "waiting for mcpm-memory" in steps
        assert steps[-1] == "done"
        assert json.loads((tmp_path / "mcpm" / "profiles_metadata.json").read_text()) == {}
        before = stack.container_ids()
        again = call(
            jarvis_system, jarvis_for(stack, mcpm_dir=tmp_path / "mcpm", bootstrap_timeout=1), action="bootstrap"
        )
        assert "mcpm: servers.json: kept (0 entries)" in again
        running = {k: v for k, v in before.items() if k != "mcpm-dev-core"}
        assert {k: v for k, v in stack.container_ids().items() if k in running} == running  # untouched


def test_bootstrap_says_when_the_stack_does_not_settle_in_time(base_image: str, tmp_path: Path) -> None:
    directory = copy_default_stack(tmp_path / "default")
    with running_stack(directory, up=False) as stack:
        text = call(
            jarvis_system, jarvis_for(stack, mcpm_dir=tmp_path / "m", bootstrap_timeout=0.1), action="bootstrap"
        )
        assert "NOT SETTLED within 0.1s (JARVIS_BOOTSTRAP_TIMEOUT)" in text


def test_build_daemon_really_builds_the_stack_image(default_stack: Stack, tmp_path: Path) -> None:
    client = docker.from_env()
    image = f"{default_stack.name}-mcpm-research"
    old_id = client.images.get(image).id
    text = call(
        jarvis_system,
        jarvis_for(default_stack, mcpm_dir=tmp_path / "m"),
        action="build",
        component="daemon",
        no_cache=True,
    )
    assert text.startswith("## build daemon — ok")
    assert "docker compose build --no-cache mcpm-research: ok" in text
    assert client.images.get(image).id != old_id  # no cache: a new image, not the old one
    client.close()
