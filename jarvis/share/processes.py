"""The processes of a share: the proxy leads its own process group (the tunnel is in it); the shared stdio
servers lead groups of their own (the MCP SDK starts each in a new session), so they are found as the
proxy's descendants before it is signalled, and killed too if the proxy could not close them itself.

Read from /proc (Linux); elsewhere only signals are used, without the descendants.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
# Proxies this process started: polled so that a dead one is reaped instead of lingering as a zombie.
_children: dict[int, subprocess.Popen[bytes]] = {}


def adopt(process: subprocess.Popen[bytes]) -> None:
    _children[process.pid] = process


@dataclass(frozen=True)
class ProcStat:
    pid: int
    state: str
    ppid: int
    pgrp: int


def _stat(pid: int) -> ProcStat | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return ProcStat(pid=pid, state=fields[0], ppid=int(fields[1]), pgrp=int(fields[2]))


def _all_stats() -> list[ProcStat]:
    stats = (_stat(int(entry.name)) for entry in PROC.iterdir() if entry.name.isdigit())
    return [s for s in stats if s is not None]


def alive(pid: int) -> bool:
    """Running (not a zombie)."""
    child = _children.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        _children.pop(pid, None)
        return False
    if PROC.is_dir():
        stat = _stat(pid)
        return stat is not None and stat.state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def command_line(pid: int) -> str | None:
    """The process's arguments joined by spaces; None where /proc cannot tell."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def descendants(pid: int) -> list[int]:
    if not PROC.is_dir():
        return []
    stats = _all_stats()
    found: list[int] = []
    parents = {pid}
    while parents:
        children = [s.pid for s in stats if s.ppid in parents and s.pid not in found]
        found += children
        parents = set(children)
    return found


def group_members(pgid: int) -> list[int]:
    if not PROC.is_dir():
        return [pgid] if alive(pgid) else []
    return [s.pid for s in _all_stats() if s.pgrp == pgid and s.state not in ("Z", "X")]


def snapshot_tree(leader: int) -> dict[int, str]:
    """The descendants of `leader` with their command lines, to find them again once `leader` is gone."""
    return {pid: command for pid in descendants(leader) if (command := command_line(pid)) is not None}


def stop_tree(leader: int, grace: float = 10.0, known: Mapping[int, str] | None = None) -> None:
    """SIGTERM the group `leader` leads, wait up to `grace` seconds for it and every descendant to end (the
    proxy closes its members on SIGTERM), then SIGKILL whatever is left. `known` (from `snapshot_tree`) adds
    descendants recorded earlier: still running with the same command line, they are orphans of a dead
    leader."""
    tree = set(descendants(leader))
    tree |= {pid for pid, command in (known or {}).items() if command_line(pid) == command}
    _signal_group(leader, signal.SIGTERM)
    if _wait_gone(leader, tree, grace):
        return
    _signal_group(leader, signal.SIGKILL)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _wait_gone(leader, tree, 5.0)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_gone(leader: int, tree: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        alive(leader)  # reaps our own child
        if not group_members(leader) and not any(alive(pid) for pid in tree):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
