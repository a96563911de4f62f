"""Jarvis as agents use it: `jarvis serve` in a subprocess, the `mcp` SDK client over stdio, a real stack."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import get_args

import pytest
from mcp import Client

from jarvis.tools.jarvis_system import Action as SystemAction
from tests.e2e.conftest import call, connect, server_params
from tests.fakes import TOOL_NAMES
from tests.stacks import Stack

pytestmark = pytest.mark.docker


async def test_tools_list_over_stdio(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == TOOL_NAMES


async def test_status_and_check_status(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_system", action="docker_status")
        assert not error
        assert text.startswith(f"{e2e_stack.name}: 4/5 running")
        port = e2e_stack.services.port_for("mcpm-essentials", 8080)
        assert f"| mcpm-essentials | running | healthy | 127.0.0.1:{port}->8080 |" in text
        assert "| mcpm-dev-core | exited(3) | - | - |" in text
        text, error = await call(client, "jarvis_check_status")
        assert not error
        assert "Docker: ok" in text
        assert "Compose: v" in text
        assert "| mcpm-memory | running | unhealthy | - |" in text


async def test_diagnose_logs_exact_streams(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_diagnose", action="logs", profile="research", lines=3)
        assert not error
        assert "## research (mcpm-research) — stderr, 3 lines" in text
        assert [ln.split(" ", 1)[1] for ln in text.splitlines() if "research err" in ln] == [
            "research err 8",
            "research err 9",
            "research err 10",
        ]
        assert "research out" not in text
        text, _ = await call(client, "jarvis_diagnose", action="logs", profile="research", log_type="stdout", lines=2)
        assert "research out 999" in text
        assert "research out 1000" in text
        assert "research err" not in text
        text, _ = await call(client, "jarvis_diagnose", action="logs", profile="essentials", log_type="all", lines=4)
        assert [ln.split(" ", 1)[1] for ln in text.splitlines() if " essentials " in ln and not ln.startswith("#")] == [
            "O essentials out 4",
            "E essentials err 4",
            "O essentials out 5",
            "E essentials err 5",
        ]
        text, _ = await call(client, "jarvis_diagnose", action="logs", profile="data")
        assert "one merged stream" in text


async def test_aggregate_logs_every_profile(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_diagnose", action="logs", aggregate=True, lines=1)
        assert not error
        assert [ln for ln in text.splitlines() if ln.startswith("## ")] == [
            "## essentials (mcpm-essentials) — stderr, 1 line",
            "## memory (mcpm-memory) — stderr, 1 line",
            "## dev-core (mcpm-dev-core) — stderr, 1 line",
            "## data (mcpm-data) — stderr, 1 line",
            "## research (mcpm-research) — stderr, 1 line",
        ]
        assert "memory: ValueError: bad config" in text


async def test_docker_logs_of_one_service_all_streams(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_system", action="docker_logs", service="mcpm-dev-core", lines=600)
        assert not error
        assert "lines capped at 500 (asked 600)" in text
        assert "E dev-core err 2" in text
        assert "O dev-core out 4" in text


async def test_errors_name_the_valid_values(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_system", action="reboot")
        assert error
        assert text == "Invalid action 'reboot'. Valid actions: " + ", ".join(get_args(SystemAction))
        text, error = await call(client, "jarvis_system", action="stop", service="mcp-daemon")
        assert error
        assert "Services: mcpm-data, mcpm-dev-core, mcpm-essentials, mcpm-memory, mcpm-research" in text
        text, error = await call(client, "jarvis_diagnose", action="logs", profile="toolbox")
        assert error
        assert "Profiles: essentials, memory, dev-core, data, research" in text
        text, error = await call(client, "jarvis_diagnose", action="logs", profile="research", lines=0)
        assert error
        assert "lines must be 1-500" in text


async def test_stop_and_start_one_service_leave_the_others_alone(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        before = e2e_stack.container_ids()
        text, error = await call(client, "jarvis_system", action="stop", service="mcpm-memory")
        assert not error
        assert "stopped: mcpm-memory" in text
        text, error = await call(client, "jarvis_system", action="start", service="mcpm-memory")
        assert not error
        assert "running: mcpm-memory" in text
        after = e2e_stack.container_ids()
        assert {k: v for k, v in after.items() if k != "mcpm-memory"} == {
            k: v for k, v in before.items() if k != "mcpm-memory"
        }


async def test_rebuild_one_service_really_rebuilds_it_and_only_it(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        (e2e_stack.directory / "research" / "banner.txt").write_text("research build 2\n")
        before = e2e_stack.container_ids()
        progress: list[float] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(done)

        result = await client.call_tool(
            "jarvis_system", {"action": "rebuild", "service": "mcpm-research"}, progress_callback=on_progress
        )
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.is_error, text
        assert "build --no-cache mcpm-research: ok" in text
        assert "up -d --no-deps: ok" in text
        assert progress
        assert progress == sorted(set(progress))  # steps and heartbeats, always increasing
        after = e2e_stack.container_ids()
        assert after["mcpm-research"][0] != before["mcpm-research"][0]
        assert {k: v for k, v in after.items() if k != "mcpm-research"} == {
            k: v for k, v in before.items() if k != "mcpm-research"
        }
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text, _ = await call(client, "jarvis_diagnose", action="logs", profile="research", lines=20)
            if "research err 10" in text:
                break
        assert "research build 2" in text


async def test_restart_infra_restarts_every_service(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        before = e2e_stack.container_ids()
        text, error = await call(client, "jarvis_system", action="restart_infra")
        assert not error
        assert text.startswith("## restart_infra\nrestarted;")
        after = e2e_stack.container_ids()
        assert set(after) == set(before)
        assert all(after[s][1] != before[s][1] for s in before)  # every container started again
        assert all(after[s][0] == before[s][0] for s in before)  # restarted, not recreated


async def test_dead_daemon_is_a_clear_error_and_the_server_keeps_serving(e2e_stack: Stack, tmp_path) -> None:
    dead = f"unix://{tmp_path}/no-daemon.sock"
    params = server_params(e2e_stack.directory, e2e_stack.name, DOCKER_HOST=dead, JARVIS_RETRY_TIMEOUT="1")
    async with Client(params) as dead_client:
        assert len((await dead_client.list_tools()).tools) == len(TOOL_NAMES)  # starts and lists tools without a daemon
        started = time.monotonic()
        text, error = await call(dead_client, "jarvis_system", action="docker_status")
        assert error
        assert time.monotonic() - started < 5
        assert f"Docker daemon unavailable at {dead}" in text
        assert "Check that Docker is installed and running" in text
        text, error = await call(dead_client, "jarvis_diagnose", action="logs", profile="research")
        assert error
        assert "unavailable" in text
        text, error = await call(dead_client, "jarvis_system", action="explode")
        assert error
        assert "Valid actions" in text


def raw_server(params, requests: list[dict], stderr: int) -> subprocess.Popen[str]:
    """`jarvis serve` with the given JSON-RPC lines written to its stdin (left open)."""
    process = subprocess.Popen(
        [params.command, *params.args],
        env=params.env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    assert process.stdin is not None
    for request in requests:
        process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    return process


def test_stdout_carries_only_json_rpc(e2e_stack: Stack, tmp_path) -> None:
    """Raw stdio: every byte on stdout must be a JSON-RPC message, including around failures and rebuild."""
    params = server_params(e2e_stack.directory, e2e_stack.name, JARVIS_RETRY_TIMEOUT="1")
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "jarvis_system", "arguments": {"action": "rebuild"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "jarvis_system", "arguments": {"action": "nope"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "jarvis_diagnose", "arguments": {"action": "logs", "aggregate": True}},
        },
    ]
    process = raw_server(params, requests, stderr=subprocess.PIPE)
    assert process.stdout is not None
    messages: list[dict] = []
    timer = threading.Timer(240, process.kill)  # a hung server fails the test instead of hanging it
    timer.start()
    try:
        while not {1, 2, 3, 4, 5} <= {m.get("id") for m in messages}:
            line = process.stdout.readline()
            if not line:
                break
            if line.strip():
                messages.append(json.loads(line))  # raises on any non-JSON line
    finally:
        timer.cancel()
        stdout_rest, stderr = process.communicate(timeout=60)  # closes stdin: the server exits
    messages += [json.loads(ln) for ln in stdout_rest.splitlines() if ln.strip()]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    assert {1, 2, 3, 4, 5} <= {m.get("id") for m in messages}
    rebuild = next(m for m in messages if m.get("id") == 3)
    assert rebuild["result"]["isError"] is False, rebuild
    assert next(m for m in messages if m.get("id") == 4)["result"]["isError"] is True
    assert "INFO" in stderr  # logs went to stderr


def test_restart_answers_first_then_exits_for_the_client_to_respawn(e2e_stack: Stack) -> None:
    params = server_params(e2e_stack.directory, e2e_stack.name)
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    restart = {"name": "jarvis_system", "arguments": {"action": "restart"}}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": restart},
    ]
    # stdin stays open: the exit must come from the restart, not from EOF.
    process = raw_server(params, requests, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    try:
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert answers[1]["id"] == 2
        assert "Jarvis restarts now" in answers[1]["result"]["content"][0]["text"]
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
        process.wait()


async def test_bootstrap_and_build_over_stdio(e2e_stack: Stack, tmp_path) -> None:
    # mcpm-memory's healthcheck always fails: bootstrap waits its timeout, then names it.
    async with connect(e2e_stack, JARVIS_MCPM_DIR=str(tmp_path / "mcpm"), JARVIS_BOOTSTRAP_TIMEOUT="5") as client:
        text, error = await call(client, "jarvis_system", action="bootstrap")
        assert not error
        assert "NOT SETTLED within 5s (JARVIS_BOOTSTRAP_TIMEOUT): mcpm-memory running (unhealthy)" in text
        assert "| mcpm-essentials | running | healthy |" in text
        text, error = await call(client, "jarvis_system", action="build", component="mcpm")
        assert not error
        assert text.startswith("## build mcpm — ok")
        assert "servers.json: kept (0 entries)" in text
        text, error = await call(client, "jarvis_system", action="build", component="frontend")
        assert error
        assert text == "Invalid component 'frontend'. Valid components: jarvis, mcpm, daemon, all"


async def test_context_focus_question_on_logs_docker_logs_and_rebuild(e2e_stack: Stack) -> None:
    """Each Docker site of `context_focus_question`: the pruned answer keeps what answers the question and ends
    with the pipeline's metadata line; without the question the answer carries no such line."""
    metadata = ("[pruned by ", "[not pruned: ")
    async with connect(e2e_stack) as client:
        plain, _ = await call(client, "jarvis_diagnose", action="logs", aggregate=True, lines=20)
        assert not plain.rstrip().splitlines()[-1].startswith(metadata)
        text, error = await call(
            client, "jarvis_diagnose", action="logs", aggregate=True, lines=20,
            context_focus_question="which profile has a bad config error?",
        )  # fmt: skip
        assert not error
        assert text.rstrip().splitlines()[-1].startswith(metadata)
        assert "memory: ValueError: bad config" in text
        text, error = await call(
            client, "jarvis_diagnose", action="logs", profile="research", log_type="stdout", lines=300,
            context_focus_question="is there a line research out 950?",
        )  # fmt: skip
        assert not error
        assert text.rstrip().splitlines()[-1].startswith("[pruned by ")
        assert "research out 950" in text
        assert len(text.splitlines()) < 60
        text, error = await call(
            client, "jarvis_system", action="docker_logs", service="mcpm-dev-core", lines=300,
            context_focus_question="why did dev-core exit?",
        )  # fmt: skip
        assert not error
        assert text.rstrip().splitlines()[-1].startswith(metadata)
        assert "dev-core err" in text
        text, error = await call(
            client, "jarvis_system", action="rebuild", service="mcpm-research", no_cache=False,
            context_focus_question="did the build succeed?",
        )  # fmt: skip
        assert not error, text
        assert text.rstrip().splitlines()[-1].startswith(metadata)
