"""wait=true and exec against the real daemon: a service that becomes healthy after a delay, one that never
does, one that exits; commands run in a container through the engine API (and the docker CLI)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.factory import build_runner
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import InvalidInput, NoContainer
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import call
from tests.stacks import Stack, long_ops_stack, running_stack

pytestmark = pytest.mark.docker


def jarvis_for(stack: Stack, **settings: object) -> ToolContext:
    values = stack.settings(**settings)
    project = ComposeCliProject(values)
    return ToolContext(settings=values, project=project, runner=build_runner(values, project))


@pytest.fixture(scope="module")
def stack(base_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory, _ = long_ops_stack(tmp_path_factory.mktemp("longops") / "stack", build_seconds=1)
    with running_stack(directory, up=False) as started:
        yield started


def test_rebuild_wait_settles_the_healthy_and_names_the_rest_with_their_stderr(stack: Stack) -> None:
    text = call(jarvis_system, jarvis_for(stack, wait_timeout=15), action="rebuild", no_cache=False, wait=True)
    assert "NOT SETTLED within 15s (JARVIS_WAIT_TIMEOUT): never-ready running (unhealthy); 2/4 running or healthy" in (
        text
    )
    assert "exited: exits exited(2)" in text
    assert "## never-ready did not settle — stderr, 1 line" in text
    assert "never-ready: cannot reach the database" in text
    assert "ready-later did not settle" not in text  # it became healthy while Jarvis waited
    assert "| ready-later | running | healthy | - |" in text
    # One service that settles: the wait ends as soon as it is healthy, and says so.
    text = call(jarvis_system, jarvis_for(stack, wait_timeout=60), action="start", service="ready-later", wait=True)
    assert "settled after" in text
    assert "1/1 running or healthy" in text
    call(jarvis_system, jarvis_for(stack), action="stop", service="ready-later")
    text = call(jarvis_system, jarvis_for(stack, wait_timeout=60), action="start", service="ready-later", wait=True)
    assert "settled after" in text
    assert "| ready-later | running | healthy | - |" in text


@pytest.mark.parametrize("observe", ["dockerpy", "whales"])
def test_exec_keeps_streams_apart_with_exit_code_caps_and_timeout(stack: Stack, observe: str) -> None:
    jarvis = jarvis_for(stack, observe_adapter=observe)
    call(jarvis_system, jarvis, action="start", service="never-ready")
    text = call(
        jarvis_system,
        jarvis,
        action="exec",
        service="never-ready",
        command=["sh", "-c", "echo out; echo err >&2; exit 3"],
    )
    assert text.splitlines()[0].startswith("## exec in never-ready: exit 3 (")
    assert "stdout (4 bytes):\n```\nout\n```" in text
    assert "stderr (4 bytes):\n```\nerr\n```" in text
    # A string is split like a shell would, but no shell runs it: `$HOME` stays literal.
    text = call(jarvis_system, jarvis, action="exec", service="never-ready", command="echo '$HOME' a")
    assert "```\n$HOME a\n```" in text
    text = call(jarvis_system, jarvis, action="exec", service="never-ready", command="sh -c 'yes | head -c 100000'")
    assert "stdout (100,000 bytes, last 20,000 shown):" in text
    text = call(jarvis_system, jarvis, action="exec", service="never-ready", command=["sleep", "30"], timeout_s=1)
    assert text.splitlines()[0].startswith("## exec in never-ready: TIMEOUT after 1s: ")
    with pytest.raises(InvalidInput, match=r"never-ready: cannot run 'no-such-program': .*executable file not found"):
        call(jarvis_system, jarvis, action="exec", service="never-ready", command=["no-such-program"])
    with pytest.raises(NoContainer, match="Service exits has no running container"):
        call(jarvis_system, jarvis, action="exec", service="exits", command=["true"])


def test_exec_past_its_timeout_is_killed_in_the_container(stack: Stack) -> None:
    jarvis = jarvis_for(stack)
    call(jarvis_system, jarvis, action="start", service="never-ready")
    text = call(jarvis_system, jarvis, action="exec", service="never-ready", command=["sleep", "71.5"], timeout_s=1)
    assert "TIMEOUT after 1s: the command was killed" in text or "Jarvis may not signal it" in text
    if "was killed" in text:
        left = call(jarvis_system, jarvis, action="exec", service="never-ready", command=["ps"])
        assert "71.5" not in left
