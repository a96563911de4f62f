"""Compatibility with the real MCPM 2.15 (installed by ci/setup.sh in its own virtualenv, `.venv-mcpm`),
both ways: what Jarvis writes, `mcpm ls` / `mcpm profile ls` / `mcpm client ls` read; what `mcpm new` /
`mcpm profile create|edit` write, Jarvis reads, and edits without disturbing."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from jarvis.host import Host
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_client import jarvis_client
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis

MCPM_BIN = Path(__file__).resolve().parents[2] / ".venv-mcpm" / "bin"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    if not (MCPM_BIN / "mcpm").is_file():
        pytest.fail(f"mcpm 2.15 is missing at {MCPM_BIN}: run `bash ci/setup.sh`")
    return tmp_path


def mcpm(home: Path, *args: str) -> str:
    env = {**os.environ, "HOME": str(home), "MCPM_NON_INTERACTIVE": "true", "COLUMNS": "200", "NO_COLOR": "1",
           "PATH": f"{MCPM_BIN}:{os.environ['PATH']}"}  # fmt: skip
    done = subprocess.run([str(MCPM_BIN / "mcpm"), *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def jarvis_at(home: Path, path: str = os.environ["PATH"]) -> ToolContext:
    """Jarvis on a machine whose home folder is `home` (mcpm's subprocesses get the same HOME)."""
    return fake_jarvis(mcpm_dir=home / ".config/mcpm", host=Host.of(home, {**os.environ, "PATH": path}))


def test_mcpm_reads_what_jarvis_writes(home: Path) -> None:
    jarvis = jarvis_at(home)
    call(jarvis_server, jarvis, action="create", name="fs", type="stdio", command="npx",
                  args=["-y", "@modelcontextprotocol/server-filesystem", "/srv/my data"],
                  env={"ROOTS": "a,b", "API_TOKEN": "t0k"})  # fmt: skip
    call(jarvis_server, jarvis, action="create", name="web.api", type="streamable-http", url="http://127.0.0.1:9/mcp",
                  headers={"Authorization": "Bearer x"})  # fmt: skip
    call(jarvis_profile, jarvis, action="create", name="dev", add_servers="fs,web.api", description="daily work")
    call(jarvis_profile, jarvis, action="create", name="solo", add_servers=["fs"])
    listed = mcpm(home, "ls", "-v")
    assert "fs (profiles: dev, solo)" in listed
    assert "web.api (profiles: dev)" in listed
    assert "2: /srv/my data" in listed  # an argument with a space, which mcpm's own --args cannot make
    assert 'ROOTS = "a,b"' in listed  # a value with a comma, which mcpm's own --env cannot make
    assert "http://127.0.0.1:9/mcp" in listed
    profiles = mcpm(home, "profile", "ls")
    assert "Found 2 profile(s)" in profiles
    row = next(line for line in profiles.splitlines() if " dev " in line)
    assert "fs" in row
    assert "web.api" in row
    call(jarvis_profile, jarvis, action="edit", name="dev", new_name="daily")
    assert "daily" in mcpm(home, "profile", "ls")
    call(jarvis_server, jarvis, action="uninstall", name="fs")
    assert "fs (profiles" not in mcpm(home, "ls")


def test_jarvis_reads_what_mcpm_writes_and_edits_without_disturbing_it(home: Path) -> None:
    mcpm(home, "new", "echo-srv", "--type", "stdio", "--command", "python3", "--args", "-m mcp_echo --verbose",
         "--env", "API_KEY=secret,DEBUG=1", "--force")  # fmt: skip
    mcpm(home, "new", "remote-srv", "--type", "remote", "--url", "http://127.0.0.1:9000/mcp/", "--headers",
         "Authorization=Bearer x", "--force")  # fmt: skip
    mcpm(home, "profile", "create", "dev", "--force")
    mcpm(home, "profile", "edit", "dev", "--add-server", "echo-srv,remote-srv", "--force")
    jarvis = jarvis_at(home)
    assert call(jarvis_server, jarvis, action="list").splitlines() == [
        "# servers: 2",
        "echo-srv  stdio  dev  on",
        "remote-srv  remote  dev  on",
    ]
    info = call(jarvis_server, jarvis, action="info", name="echo-srv")
    assert 'args: ["-m", "mcp_echo", "--verbose"]' in info
    assert '"API_KEY": "•••• (6 chars)", "DEBUG": "1"' in info
    assert call(jarvis_profile, jarvis, action="list").splitlines()[1] == "dev (2): echo-srv, remote-srv"
    mcpm_written = json.loads((home / ".config/mcpm/servers.json").read_text())
    call(jarvis_server, jarvis, action="create", name="time", type="stdio", command="uvx", args="mcp-server-time")
    after = json.loads((home / ".config/mcpm/servers.json").read_text())
    assert {k: v for k, v in after.items() if k != "time"} == mcpm_written  # mcpm's records untouched
    assert "time (no profiles)" in mcpm(home, "ls")


def test_mcpm_client_ls_sees_the_entries_jarvis_writes(home: Path) -> None:
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").write_text('{\n  "mcpServers": {\n    "github": {"command": "npx"}\n  }\n}\n')
    mcpm(home, "new", "echo-srv", "--type", "stdio", "--command", "python3", "--force")
    mcpm(home, "profile", "create", "dev", "--force")
    jarvis = jarvis_at(home, f"{MCPM_BIN}:{os.environ['PATH']}")  # mcpm on PATH: MCPM's own entries
    text = call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="echo-srv", add_profiles="dev")
    assert "servers run through `mcpm run`" in text
    row = next(line for line in mcpm(home, "client", "ls").splitlines() if "cursor" in line)
    cells = [cell.strip() for cell in row.split("│") if cell.strip()]
    assert cells == ["Cursor (cursor)", "dev", "echo-srv", "github"]


# The real mcpm with its `json.dump` slowed down: it has truncated servers.json (open "w") and writes 0.8 s later,
# as a slow disk or a busy machine would make it.
SLOW_MCPM = """
import json, sys, time
_dump = json.dump
def slow_dump(obj, fp, **kwargs):
    fp.flush()
    time.sleep(0.8)
    _dump(obj, fp, **kwargs)
json.dump = slow_dump
from mcpm.cli import main
sys.argv = ["mcpm", *sys.argv[1:]]
sys.exit(main())
"""


def test_a_jarvis_change_while_the_real_mcpm_writes_loses_nothing(home: Path) -> None:
    folder = home / ".config/mcpm"
    jarvis = jarvis_at(home)
    for i in range(50):
        call(jarvis_server, jarvis, action="create", name=f"s{i}", type="stdio", command="uvx", args=[str(i)])
    env = {**os.environ, "HOME": str(home), "MCPM_NON_INTERACTIVE": "true", "NO_COLOR": "1"}
    command = [str(MCPM_BIN / "python"), "-c", SLOW_MCPM, "edit", "s7", "--env", "EDITED=yes", "--force"]
    slow = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while (folder / "servers.json").stat().st_size and slow.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert (folder / "servers.json").stat().st_size == 0, "mcpm was never caught mid-write"
        call(jarvis_server, jarvis, action="create", name="new", type="stdio", command="uvx")
    finally:
        out, err = slow.communicate(timeout=120)
    assert slow.returncode == 0, (out, err)
    stored = json.loads((folder / "servers.json").read_text())
    assert len(stored) == 51, "servers were lost"
    assert stored["s7"]["env"] == {"EDITED": "yes"}
    assert "new (" in mcpm(home, "ls")
