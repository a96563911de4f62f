"""Run a child program in its own process group, with a deadline and a cancel token; whatever happens, the
whole group is gone when this returns.

A command may start helpers (npm starts node, `docker compose` starts plugins, a test starts workers); killing
only the child would leave them running and holding its output open. So the child gets a new session
(`start_new_session`), and on timeout, on cancellation and after every run its whole process group is signalled:
SIGTERM, a grace period, then SIGKILL. Output goes to temporary files (no pipe to drain, no reader thread).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jarvis.cancel import CancelToken
from jarvis.errors import Cancelled
from jarvis.process_group import group_alive, signal_group

POLL = 0.2  # seconds between looks at the cancel token while the child runs
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
GROUP_EXIT_WAIT = 5.0
OUTPUT_READ_LIMIT = 8 * 1024 * 1024  # keep at most the last 8 MiB of output


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None when the deadline killed it
    output: str  # stdout and stderr together, or stdout alone with `apart`
    errors: str  # stderr with `apart`, else ""
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    cancel: CancelToken | None = None,
    apart: bool = False,
) -> Finished:
    """Run `argv` (no shell) to its end or its deadline. A cancelled token kills the group and raises
    `Cancelled` naming the command. `FileNotFoundError` and `PermissionError` from starting it propagate."""
    argv = [str(part) for part in argv]  # python-on-whales' commands hold paths
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err if apart else subprocess.STDOUT,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
        try:
            timed_out = _wait(process, deadline, cancel)
        finally:
            kill_group(process)  # on timeout, on cancellation, and any helper a finished run left behind
        if cancel is not None and cancel.cancelled and not timed_out and process.returncode != 0:
            raise Cancelled(f"stopped `{shlex.join(argv)}` (its process group was killed)")
        return Finished(
            exit_code=None if timed_out else process.returncode,
            output=_read_tail(out),
            errors=_read_tail(err) if apart else "",
            seconds=time.monotonic() - started,
        )


def _wait(process: subprocess.Popen[bytes], deadline: float | None, cancel: CancelToken | None) -> bool:
    """True when the deadline passed first; returns early (False) when the token is cancelled."""
    while True:
        remaining = POLL if deadline is None else min(POLL, deadline - time.monotonic())
        if remaining <= 0:
            return True
        try:
            process.wait(timeout=remaining)
            return False
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.cancelled:
                return False


def kill_group(process: subprocess.Popen[bytes]) -> None:
    if signal_group(process.pid, signal.SIGTERM) and process.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=GRACE)
    signal_group(process.pid, signal.SIGKILL)
    process.wait()
    # SIGKILL is delivered asynchronously: return only once the group is gone (bounded, in case no one reaps).
    deadline = time.monotonic() + GROUP_EXIT_WAIT
    while group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _read_tail(sink: IO[bytes]) -> str:
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - OUTPUT_READ_LIMIT))
    return sink.read().decode("utf-8", errors="replace")
