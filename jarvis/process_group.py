"""A command's whole process group: signal it, and tell whether anything in it still runs.

Commands Jarvis runs get their own session (`start_new_session=True`), so the command, its children and their
children share one process group that can be signalled at once, even after the command itself has exited.
"""

from __future__ import annotations

import os
from pathlib import Path


def signal_group(pgid: int, signum: int) -> bool:
    """Send `signum` to the group; False when no process is left in it."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of the group; without /proc, [pgid] while the group exists."""
    proc = Path("/proc")
    if not proc.is_dir():
        return [pgid] if signal_group(pgid, 0) else []
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after ")".
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def group_alive(pgid: int) -> bool:
    return bool(group_members(pgid))
