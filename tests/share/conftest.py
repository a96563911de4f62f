"""Shares of real stdio MCP servers (tests/servers/share_member.py) in a temporary MCPM folder.

Every process a test starts carries the test's tmp path in its command line (the proxy's spec file, the
members' cancel markers, ssh's key), so teardown can find what was left: it stops every share, SIGKILLs any
leftover and then fails the test if there was one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jarvis.host import Host
from jarvis.settings import Settings
from jarvis.share.engine import STATE, ShareEngine

MEMBER = Path(__file__).resolve().parents[1] / "servers" / "share_member.py"


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in command and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def member_record(name: str, folder: Path, profiles: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "profile_tags": profiles,
        "enabled": None,
        "command": sys.executable,
        "args": [str(MEMBER), name, str(folder / f"cancelled-{name}")],
        "env": {},
    }


@pytest.fixture
def mcpm(tmp_path: Path) -> Path:
    folder = tmp_path / "mcpm"
    folder.mkdir()
    servers = {
        "alpha": member_record("alpha", tmp_path, ["dev"]),
        "beta": member_record("beta", tmp_path, ["dev"]),
        "broken": {"name": "broken", "profile_tags": ["dev"], "command": str(tmp_path / "no-such-server")},
    }
    (folder / "servers.json").write_text(json.dumps(servers, indent=2))
    (folder / "profiles_metadata.json").write_text(json.dumps({"dev": {"name": "dev"}}))
    return folder


@pytest.fixture
def settings_for(mcpm: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    def build(**values: Any) -> Settings:
        return Settings.model_validate({"project_dir": tmp_path, "mcpm_dir": mcpm, **values})

    return build


@pytest.fixture
def no_leftovers(tmp_path: Path, mcpm: Path) -> Iterator[None]:
    """After the test: every share stopped, and no process of this test left (killed, then reported)."""
    yield
    with contextlib.suppress(Exception):
        engine = ShareEngine(
            Settings.model_validate({"project_dir": tmp_path, "mcpm_dir": mcpm}), which=Host.current().which
        )
        state = json.loads((mcpm / STATE).read_text()) if (mcpm / STATE).exists() else {"shares": {}}
        for share_id in state["shares"]:
            engine.stop(share_id)
    left = processes_mentioning(str(tmp_path))
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
