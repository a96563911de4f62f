"""Long operations through the real stdio server and the real daemon: progress during a build, the client's
cancellation killing the build's process group, an operation past JARVIS_CALL_BUDGET fetched when done (also
after Jarvis restarts), and Ctrl-C in `jarvis call`."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import call, connect
from tests.projects import processes_with
from tests.stacks import Stack, long_ops_stack, running_stack

pytestmark = pytest.mark.docker


@pytest.fixture
def slow_stack(base_image: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Stack, str]]:
    """The long-operations stack with a build step sleeping `request.param` seconds (default 60)."""
    seconds = getattr(request, "param", 60)
    directory, marker = long_ops_stack(tmp_path / "stack", build_seconds=seconds)
    with running_stack(directory, up=False) as stack:
        yield stack, marker


def gone_within(check: Callable[[], list[str]], seconds: float) -> list[str]:
    """What `check` still finds once it finds nothing, or when `seconds` have passed (killing is asynchronous)."""
    deadline = time.monotonic() + seconds
    while (found := check()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def compose_processes(stack: Stack) -> list[str]:
    return processes_with(f"--project-name {stack.name}")


@pytest.mark.parametrize("slow_stack", [8], indirect=True)
async def test_progress_arrives_while_a_build_runs(slow_stack: tuple[Stack, str], tmp_path: Path) -> None:
    stack, _ = slow_stack
    seen: list[tuple[float, str]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message or ""))

    async with connect(stack, XDG_STATE_HOME=str(tmp_path / "state")) as client:
        result = await client.call_tool(
            "jarvis_system", {"action": "rebuild", "service": "slow-build"}, progress_callback=on_progress
        )
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    assert "build --no-cache slow-build: ok" in text
    building = [message for _, message in seen if message.startswith("building slow-build (")]
    assert len(building) >= 2, seen  # the step, then at least one heartbeat while the 8 s build runs
    values = [value for value, _ in seen]
    assert values == sorted(set(values)), seen
    assert any(message.startswith("up -d slow-build (") for _, message in seen), seen


async def test_the_clients_cancellation_kills_the_build_and_leaves_a_state_docker_status_explains(
    slow_stack: tuple[Stack, str], tmp_path: Path
) -> None:
    stack, marker = slow_stack
    running: list[str] = []
    async with connect(stack, XDG_STATE_HOME=str(tmp_path / "state")) as client:
        async with anyio.create_task_group() as group:

            async def cancel_once_the_build_step_runs() -> None:
                while not processes_with(marker):
                    await anyio.sleep(0.1)
                running.extend(compose_processes(stack))
                group.cancel_scope.cancel()

            group.start_soon(cancel_once_the_build_step_runs)
            await client.call_tool("jarvis_system", {"action": "rebuild", "service": "slow-build"})
        assert running, "docker compose build was running"
        assert gone_within(lambda: compose_processes(stack) + processes_with(marker), 30) == []
        text, error = await call(client, "jarvis_system", action="docker_status")
    assert not error
    assert "| slow-build | no container | - | - |" in text


@pytest.mark.parametrize("slow_stack", [6], indirect=True)
async def test_an_operation_past_the_call_budget_is_fetched_when_done_and_after_a_restart(
    slow_stack: tuple[Stack, str], tmp_path: Path
) -> None:
    stack, _ = slow_stack
    state = str(tmp_path / "state")
    async with connect(stack, XDG_STATE_HOME=state, JARVIS_CALL_BUDGET="2") as client:
        text, error = await call(client, "jarvis_system", action="rebuild", service="slow-build")
        assert not error
        assert "still running after 2s (JARVIS_CALL_BUDGET); it goes on in the background as operation " in text
        operation = text.splitlines()[0].rsplit(" ", 1)[1]
        assert f"`jarvis_check_status operation={operation}`" in text
        text, _ = await call(client, "jarvis_check_status", operation=operation)
        assert " — RUNNING, " in text.splitlines()[0]
        while " — RUNNING, " in text:
            await anyio.sleep(0.5)
            text, _ = await call(client, "jarvis_check_status", operation=operation)
    assert " — DONE after " in text.splitlines()[0]
    assert "## rebuild slow-build\nbuild --no-cache slow-build: ok" in text
    assert "| slow-build | running | - | - |" in text
    record = Path(state) / "jarvis" / "operations" / f"{operation}.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    async with connect(stack, XDG_STATE_HOME=state) as restarted:
        again, error = await call(restarted, "jarvis_check_status", operation=operation)
    assert not error
    assert again == text


def test_ctrl_c_in_jarvis_call_cancels_the_operation_and_prints_what_was_stopped(
    slow_stack: tuple[Stack, str], tmp_path: Path
) -> None:
    stack, marker = slow_stack
    env = {
        **os.environ,
        "JARVIS_PROJECT_DIR": str(stack.directory),
        "JARVIS_PROJECT_NAME": stack.name,
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    command = [sys.executable, "-m", "jarvis", "call", "jarvis_system", "action=rebuild", "service=slow-build"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        progress = []
        for line in process.stderr:  # plain lines: stderr is not a terminal
            progress.append(line)
            if line.startswith("building slow-build"):
                break
        assert gone_within(lambda: [] if processes_with(marker) else ["not yet"], 60) == []
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "\r" not in "".join(progress)
    assert out.startswith("## jarvis_system rebuild service=slow-build: CANCELLED after ")
    assert "stopped `" in out
    assert "build --no-cache slow-build` (its process group was killed)" in out
    assert gone_within(lambda: compose_processes(stack) + processes_with(marker), 30) == []


async def test_a_background_operation_is_stopped_with_jarvis_and_says_so(
    slow_stack: tuple[Stack, str], tmp_path: Path
) -> None:
    stack, marker = slow_stack
    state = str(tmp_path / "state")
    async with connect(stack, XDG_STATE_HOME=state, JARVIS_CALL_BUDGET="1") as client:
        text, _ = await call(client, "jarvis_system", action="rebuild", service="slow-build")
        operation = text.splitlines()[0].rsplit(" ", 1)[1]
        while not processes_with(marker):
            await anyio.sleep(0.1)
    # The client closed Jarvis's stdin (and then signalled it): the build's process group went with it.
    assert gone_within(lambda: compose_processes(stack) + processes_with(marker), 30) == []
    async with connect(stack, XDG_STATE_HOME=state) as restarted:
        text, error = await call(restarted, "jarvis_check_status", operation=operation)
    assert not error
    first, *rest = text.splitlines()
    assert first.startswith(f"## operation {operation}: jarvis_system rebuild service=slow-build — CANCELLED after ")
    assert rest[0].endswith("(Jarvis stopped)")
    assert "build --no-cache slow-build` (its process group was killed)" in rest[1]
