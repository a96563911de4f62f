"""Run one test suite: its own process group, output to a temp file, a deadline that kills the whole group.

A suite's command may start helpers (npm starts node, node starts workers); killing only the child would leave
them running and holding the output open. So the suite gets a new session (`start_new_session`), and on timeout,
and after every run, its whole process group is signalled: SIGTERM, a grace period, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from jarvis.workspace.suites import Suite
from jarvis.workspace.test_output import Counts, parse

TICK = 2.0  # seconds between progress reports
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
GROUP_EXIT_WAIT = 5.0
OUTPUT_READ_LIMIT = 8 * 1024 * 1024  # parse at most the last 8 MiB of output
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

Tick = Callable[[float], None]


@dataclass
class SuiteResult:
    suite: Suite
    status: str  # PASS, FAIL, TIMEOUT, ERROR (could not start)
    seconds: float
    exit_code: int | None = None
    output: str = ""
    counts: Counts = field(default_factory=Counts)
    note: str = ""


def run_suite(suite: Suite, timeout: float, tick: Tick = lambda _elapsed: None) -> SuiteResult:
    started = time.monotonic()
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0", "CI": os.environ.get("CI", "true")}
    with tempfile.TemporaryFile() as sink:
        try:
            process = subprocess.Popen(
                suite.command,
                cwd=suite.cwd,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except FileNotFoundError:
            return SuiteResult(suite, "ERROR", 0.0, note=f"command not found: {suite.command[0]}")
        except PermissionError:
            return SuiteResult(suite, "ERROR", 0.0, note=f"not executable: {suite.command[0]}")
        timed_out = _wait(process, started + timeout, started, tick)
        _kill_group(process)  # on timeout, and any helper a finished run left behind
        output = _read_tail(sink)
    seconds = time.monotonic() - started
    if timed_out:
        return SuiteResult(suite, "TIMEOUT", seconds, None, output, parse(output), f"killed after {timeout:.0f}s")
    code = process.returncode
    status = "PASS" if code == 0 else "FAIL"
    return SuiteResult(suite, status, seconds, code, output, parse(output))


def _wait(process: subprocess.Popen[bytes], deadline: float, started: float, tick: Tick) -> bool:
    """True when the deadline passed first."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        try:
            process.wait(timeout=min(TICK, remaining))
            return False
        except subprocess.TimeoutExpired:
            tick(time.monotonic() - started)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    if _signal_group(process.pid, signal.SIGTERM) and process.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()
    # SIGKILL is delivered asynchronously: return only once the group is gone (bounded, in case no one reaps).
    deadline = time.monotonic() + GROUP_EXIT_WAIT
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _signal_group(pgid: int, signum: int) -> bool:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in the group; without /proc, whether the group exists."""
    proc = Path("/proc")
    if not proc.is_dir():
        return _signal_group(pgid, 0)
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after ")".
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _read_tail(sink: IO[bytes]) -> str:
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - OUTPUT_READ_LIMIT))
    return ANSI.sub("", sink.read().decode("utf-8", errors="replace"))
