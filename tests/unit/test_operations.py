"""Long operations without Docker: the call budget and the background record (on disk, across a restart), the
client's cancellation reaching the work's thread, a cancelled child process group, exec's argument errors."""

from __future__ import annotations

import dataclasses
import os
import stat
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from jarvis.cancel import CancelToken
from jarvis.child_process import run_in_group
from jarvis.errors import Cancelled, InvalidInput
from jarvis.mcp_server import create_server
from jarvis.operations import Operations, OperationStore, Record
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import ToolSignature
from jarvis.tools import jarvis_system as system_module
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import FakeRunner, call, fake_jarvis
from tests.projects import processes_with


def with_store(context: ToolContext, folder: Path) -> ToolContext:
    return dataclasses.replace(context, operations=Operations(OperationStore(folder)))


async def text_of(client: Client, tool: str, **arguments: Any) -> tuple[str, bool]:
    result = await client.call_tool(tool, arguments)
    return result.content[0].text, bool(result.is_error)  # type: ignore[union-attr]


async def test_an_operation_past_the_budget_goes_on_and_is_fetched_after_a_restart(tmp_path: Path) -> None:
    release = threading.Event()
    runner = FakeRunner(compose_build=lambda *_a, **_k: release.wait(30))
    context = with_store(fake_jarvis(runner, call_budget=0.2), tmp_path / "ops")
    async with Client(create_server(context)) as client:
        text, error = await text_of(client, "jarvis_system", action="rebuild")
        assert not error
        first, so_far, fetch = text.splitlines()
        assert first.startswith("## jarvis_system rebuild: still running after 0.2s (JARVIS_CALL_BUDGET); ")
        operation = first.rsplit(" ", 1)[1]
        assert so_far == "so far: 0s building mcpm-research"
        assert fetch == f"Fetch its progress, then its result: `jarvis_check_status operation={operation}`"
        text, error = await text_of(client, "jarvis_check_status", operation=operation)
        assert not error
        assert text.startswith(f"## operation {operation}: jarvis_system rebuild — RUNNING, ")
        assert "steps: 0s building mcpm-research" in text
        release.set()
        while "RUNNING" in text:
            await anyio.sleep(0.05)
            text, _ = await text_of(client, "jarvis_check_status", operation=operation)
        assert text.splitlines()[0].startswith(f"## operation {operation}: jarvis_system rebuild — DONE after ")
        assert "## rebuild all services\nbuild --no-cache mcpm-research: ok" in text
    record = tmp_path / "ops" / f"{operation}.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    # A new Jarvis (another server, the same state folder) still has the whole result.
    restarted = with_store(fake_jarvis(FakeRunner()), tmp_path / "ops")
    async with Client(create_server(restarted)) as client:
        again, error = await text_of(client, "jarvis_check_status", operation=operation)
    assert not error
    assert again == text


async def test_long_operations_answer_json_like_every_call(tmp_path: Path) -> None:
    """JARVIS_OUTPUT=json: a finished operation, one sent to the background and its fetch share the one shape."""
    release = threading.Event()
    runner = FakeRunner(compose_build=lambda *_a, **_k: release.wait(30))
    context = with_store(fake_jarvis(runner, call_budget=0.2, output="json"), tmp_path / "ops")
    async with Client(create_server(context)) as client:
        detached = await client.call_tool("jarvis_system", {"action": "rebuild", "service": "mcpm-research"})
        shaped = detached.structured_content
        assert shaped is not None
        assert (shaped["success"], shaped["action"], shaped["service"], shaped["host"]) == (
            True, "rebuild", "mcpm-research", "default",
        )  # fmt: skip
        assert "still running after 0.2s" in shaped["data"]["text"]
        assert "\n" not in detached.content[0].text  # type: ignore[union-attr]
        operation = shaped["data"]["text"].splitlines()[0].rsplit(" ", 1)[1]
        release.set()
        context.operations.latest().wait_finished(30)  # type: ignore[union-attr]
        fetched = (await client.call_tool("jarvis_check_status", {"operation": operation})).structured_content
        assert fetched is not None
        assert (fetched["tool"], fetched["operation"]) == ("jarvis_check_status", operation)
        assert " — DONE after " in fetched["data"]["text"]
        finished = await client.call_tool("jarvis_system", {"action": "exec", "service": "mcpm-data",
                                                            "command": ["true"]})  # fmt: skip
        shaped = finished.structured_content
        assert shaped is not None
        assert (shaped["success"], shaped["action"], shaped["service"]) == (True, "exec", "mcpm-data")
        assert "exit 0" in shaped["data"]["text"], shaped


async def test_the_clients_cancellation_stops_the_work_and_says_what_was_stopped(tmp_path: Path) -> None:
    def build(*_args: Any, **_kwargs: Any) -> None:
        assert runner.cancel is not None
        while True:  # a build that only stops when cancelled
            runner.cancel.sleep(0.05, "`docker compose build mcpm-research`")

    runner = FakeRunner(compose_build=build)
    context = with_store(fake_jarvis(runner), tmp_path / "ops")
    async with Client(create_server(context)) as client, anyio.create_task_group() as group:

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if (message or "").startswith("building"):
                group.cancel_scope.cancel()

        await client.call_tool("jarvis_system", {"action": "rebuild"}, progress_callback=on_progress)
    operation = context.operations.latest()
    assert operation is not None
    operation.wait_finished(30)
    assert operation.record.state == "cancelled"
    lines = operation.record.result.splitlines()
    assert lines[0].startswith("## jarvis_system rebuild: CANCELLED after ")
    assert lines[0].endswith("(the client cancelled the call)")
    assert lines[1] == "stopped `docker compose build mcpm-research`"
    assert lines[2] == "steps: 0s building mcpm-research"
    assert lines[3] == system_module.COMPOSE_LEFT


def test_a_cancelled_child_process_group_is_killed_whole(tmp_path: Path) -> None:
    marker = f"{400 + os.getpid() % 100}.{threading.get_ident() % 10000}"
    script = tmp_path / "work.sh"
    script.write_text(f"#!/bin/sh\nsleep {marker} &\nsh -c \"trap '' TERM; sleep {marker}\" &\nsleep {marker}\n")
    script.chmod(0o755)
    cancel = CancelToken()
    seen: list[list[str]] = []

    def cancel_once_running() -> None:
        while len(processes_with(marker)) < 3:
            threading.Event().wait(0.02)
        seen.append(processes_with(marker))
        cancel.cancel("test")

    watcher = threading.Thread(target=cancel_once_running)
    watcher.start()
    with pytest.raises(Cancelled, match=r"stopped `.*work\.sh` \(its process group was killed\)"):
        run_in_group([str(script)], cancel=cancel, timeout=60)
    watcher.join()
    assert len(seen[0]) >= 3  # the child, the background sleeper, and the grandchild that ignores SIGTERM
    assert processes_with(marker) == []


def test_operation_ids_are_checked_and_an_interrupted_operation_says_so(tmp_path: Path) -> None:
    store = OperationStore(tmp_path / "ops")
    operations = Operations(store)
    with pytest.raises(InvalidInput, match=r"Invalid operation '\.\./x': an id is 8 hex digits\. No background"):
        operations.describe("../x")
    with pytest.raises(InvalidInput, match=r"Unknown operation '0badc0de'\."):
        operations.describe("0badc0de")
    dead = Record(id="abcdef12", title="jarvis_system rebuild", started_at="2026-01-01T00:00:00Z", pid=2**22 + 1)
    dead.steps.append((3.0, "building x"))
    store.write(dead)
    text = operations.describe("abcdef12")
    assert "INTERRUPTED: the Jarvis process running it (pid 4194305) stopped before it finished" in text
    assert "last steps: 3s building x" in text
    with pytest.raises(InvalidInput, match=r"Known operations: abcdef12"):
        operations.describe("0badc0de")


def test_exec_arguments_are_checked_and_read_only_mode_removes_it() -> None:
    jarvis = fake_jarvis()
    with pytest.raises(InvalidInput, match="exec needs service: one of mcpm-essentials"):
        call(jarvis_system, jarvis, action="exec", command=["ls"])
    with pytest.raises(InvalidInput, match=r"exec needs command: an argv array"):
        call(jarvis_system, jarvis, action="exec", service="mcpm-data")
    with pytest.raises(InvalidInput, match=r"Invalid timeout_s 0: 1-3600 seconds \(default 30\)"):
        call(jarvis_system, jarvis, action="exec", service="mcpm-data", command=["ls"], timeout_s=0)
    runner = FakeRunner()
    call(jarvis_system, fake_jarvis(runner), action="exec", service="mcpm-data", command="ls -la '/a b'")
    assert runner.called("exec_in_service") == [
        (("mcpm-data", ["ls", "-la", "/a b"]), {"timeout": 30, "max_bytes": 20_000})
    ]
    signature = ToolSignature.of(jarvis_system, system_module.EFFECTS, read_only=True)
    assert "exec" not in signature.effects
    with pytest.raises(InvalidInput, match="Action 'exec' changes things and Jarvis is read-only here"):
        signature.call(jarvis, {"action": "exec", "service": "mcpm-data", "command": ["true"]})
