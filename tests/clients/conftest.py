"""Third-party MCP clients, each in its own virtualenv (`.venv-clients/<name>`, made by ci/setup.sh), drive a real
`jarvis serve` over stdio through one scenario (drivers/scenario.py); no Docker is needed.

The server gets its own MCPM folder (servers alpha and beta), an empty workspace and a jarvis.toml whose test
suites stand in for long operations: `slow` (3 s), `hang` (writes its pid, then sleeps), `background` (outlasts
JARVIS_CALL_BUDGET). Whatever a test leaves running is killed, even when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jarvis.settings import default_stack_dir

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = Path(__file__).with_name("drivers")
DRIVER_TIMEOUT = 300  # seconds for one client's whole scenario (mcp-cli starts slowly)
SUITES = """
[test_suites.slow]
command = ["sh", "-c", "sleep 3; echo '1 passed'"]
timeout = 60

[test_suites.hang]
command = ["sh", "-c", "echo $$ > {pidfile}; exec sleep 120"]
timeout = 300

[test_suites.background]
command = ["sh", "-c", "sleep 9; echo '1 passed'"]
timeout = 60
"""
# What every client must read, whatever protocol era it negotiated.
READ = "# servers: 2\nalpha  stdio  -  on\nshowing 1-1 of 2; 1 more: jarvis_server action=list offset=1 limit=1"
ERROR = "Unknown server 'ghost'. Servers: alpha, beta"


@dataclass(frozen=True)
class Scenario:
    """What a client needs to start `jarvis serve` (command, args, env, workdir) and where `hang` writes its pid."""

    command: str
    args: list[str]
    env: dict[str, str]
    workdir: Path
    pidfile: Path

    def spec(self) -> dict[str, Any]:
        return {"command": self.command, "args": self.args, "env": self.env, "workdir": str(self.workdir),
                "pidfile": str(self.pidfile)}  # fmt: skip


def kill_suite(pidfile: Path) -> None:
    """The `hang` suite runs in its own process group: end it if a failed test left it running."""
    with contextlib.suppress(OSError, ValueError):
        os.killpg(int(pidfile.read_text().strip()), signal.SIGKILL)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    workdir = tmp_path_factory.mktemp("client")
    mcpm, workspace, home = workdir / "mcpm", workdir / "workspace", workdir / "home"
    for folder in (mcpm, workspace, home):
        folder.mkdir()
    servers = {
        name: {"name": name, "profile_tags": [], "command": "x", "args": [], "env": {}} for name in ("alpha", "beta")
    }
    (mcpm / "servers.json").write_text(json.dumps(servers))
    pidfile = workdir / "hang.pid"
    (workdir / "jarvis.toml").write_text(SUITES.format(pidfile=pidfile))
    env = {key: value for key, value in os.environ.items() if not key.startswith("JARVIS_")}
    env.update(
        HOME=str(home),
        JARVIS_PROJECT_DIR=str(default_stack_dir()),
        JARVIS_MCPM_DIR=str(mcpm),
        JARVIS_WORKSPACE_DIR=str(workspace),
        JARVIS_CONFIG=str(workdir / "jarvis.toml"),
        JARVIS_CALL_BUDGET="6",
    )
    yield Scenario(sys.executable, ["-m", "jarvis", "serve"], env, workdir, pidfile)
    kill_suite(pidfile)


def client_python(name: str) -> Path:
    """The client's own interpreter; missing: skipped locally, a failure under CI (ci/setup.sh installs it)."""
    folder = ROOT / ".venv-clients" / name
    if not (folder / ".installed").exists():
        message = f"{folder} is missing: bash ci/setup.sh installs the third-party MCP clients"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return folder / "bin" / "python"


def run_driver(name: str, driver: str, scenario: Scenario) -> dict[str, Any]:
    """Run `drivers/<driver>` with the client's interpreter; its last stdout line is the report."""
    python = client_python(name)
    spec = scenario.workdir / f"{name}-spec.json"
    spec.write_text(json.dumps(scenario.spec()))
    process = subprocess.Popen(
        [str(python), str(DRIVERS / driver), str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=scenario.workdir,
        start_new_session=True,  # the client and the server it starts share a group, killed below if need be
    )
    try:
        out, err = process.communicate(timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{name} did not finish within {DRIVER_TIMEOUT}s\n{err[-3000:]}")
    finally:
        kill_suite(scenario.pidfile)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    lines = out.strip().splitlines()
    assert process.returncode == 0, f"{name} failed (exit {process.returncode})\n{err[-3000:]}"
    assert lines, f"{name} reported nothing\n{err[-3000:]}"
    report: dict[str, Any] = json.loads(lines[-1])
    return report


def check_basics(report: dict[str, Any], protocol: str) -> None:
    """Tools listed, a read, a tool error and progress during a long call: the same answers on every era."""
    from tests.fakes import TOOL_NAMES

    assert report["protocol"] == protocol
    assert report["tools"] == TOOL_NAMES
    assert report["read"] == [READ, False]
    assert report["error"] == [ERROR, True]
    progress = report["progress"]
    assert progress["messages"], "no progress notification arrived during a 3 s suite"
    assert "slow PASS" in progress["text"]
    assert progress["is_error"] is False


def check_long_operations(report: dict[str, Any]) -> None:
    """A cancellation honoured (the suite's process gone, the server still answering) and a background
    operation fetched with jarvis_check_status's `operation`."""
    assert report["long_operations"], "jarvis_check_status publishes no operation parameter"
    cancel = report["cancel"]
    assert cancel["pid"] is not None, "the hang suite never started"
    assert cancel["gone"], f"the cancelled suite (pid {cancel['pid']}) still runs after {cancel['waited']}s"
    assert report["after_cancel"] == [READ, False]
    operation = report["operation"]
    assert operation["id"], f"no operation id in the answer: {operation['first']}"
    [(text, failed)] = operation["fetched"]
    assert "background PASS" in text, text
    assert not failed
