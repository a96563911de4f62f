"""jarvis_server and jarvis_profile through the real stdio server, error paths included; profile restart on
the real daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import call, connect, plain_client
from tests.stacks import Stack

REGISTRY = {
    "time": {
        "description": "Time tools",
        "installations": {"uvx": {"command": "uvx", "args": ["mcp-server-time"], "recommended": True}},
    }
}


async def test_servers_and_profiles_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text(json.dumps(REGISTRY))
    env = {"JARVIS_MCPM_DIR": str(tmp_path / "mcpm"), "JARVIS_REGISTRY_URL": str(tmp_path / "index.json")}
    async with plain_client(**env) as client:
        steps = [
            ("jarvis_server", {"action": "create", "name": "fs", "type": "stdio", "command": "npx",
                               "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv data"],
                               "env": {"GITHUB_TOKEN": "ghp_secret"}}, "created fs (stdio)"),
            ("jarvis_server", {"action": "install", "name": "time"}, "installed time (stdio)"),
            ("jarvis_server", {"action": "search", "query": "time"}, "time — Time tools"),
            ("jarvis_server", {"action": "info", "name": "fs"}, '"GITHUB_TOKEN": "•••• (10 chars)"'),
            ("jarvis_server", {"action": "edit", "name": "fs", "args": "-y server-fs '/srv data'"}, "args replaced"),
            ("jarvis_profile", {"action": "create", "name": "dev", "add_servers": ["fs", "time"]}, "2 server(s)"),
            ("jarvis_profile", {"action": "edit", "name": "dev", "new_name": "core"}, "renamed to core"),
            ("jarvis_profile", {"action": "list"}, "core (2): fs, time"),
            ("jarvis_profile", {"action": "suggest"}, "# suggest for"),
            ("jarvis_server", {"action": "list"}, "fs  stdio  core  on"),
            ("jarvis_server", {"action": "usage"}, "core | 2: fs, time | mcpm-core"),
            ("jarvis_server", {"action": "uninstall", "name": "time"}, "removed from profile(s) core"),
            ("jarvis_profile", {"action": "delete", "name": "core"}, "its tag removed from 1 server(s): fs"),
        ]  # fmt: skip
        for tool, arguments, expected in steps:
            text, error = await call(client, tool, **arguments)
            assert not error, (arguments, text)
            assert expected in text, (arguments, text)
        errors = [
            ("jarvis_server", {"action": "create", "name": "a/b", "type": "stdio", "command": "x"}, "no spaces"),
            ("jarvis_server", {"action": "info", "name": "nope"}, "Unknown server 'nope'. Servers: fs"),
            ("jarvis_server", {"action": "install", "name": "nope"}, "'nope' is not in the registry"),
            ("jarvis_server", {"action": "nuke"}, "Valid actions: list, info, install"),
            ("jarvis_profile", {"action": "edit", "name": "ghost", "add_servers": "fs"}, "Unknown profile 'ghost'"),
            ("jarvis_profile", {"action": "create", "name": "x", "add_servers": "nope"}, "Unknown server(s) nope"),
            ("jarvis_profile", {"action": "restart", "name": "toolbox"}, "Unknown profile 'toolbox'"),
        ]
        for tool, arguments, expected in errors:
            text, error = await call(client, tool, **arguments)
            assert error, (arguments, text)
            assert expected in text, (arguments, text)
    stored = json.loads((tmp_path / "mcpm" / "servers.json").read_text())
    assert stored["fs"]["args"] == ["-y", "server-fs", "/srv data"]
    assert stored["fs"]["env"] == {"GITHUB_TOKEN": "ghp_secret"}


@pytest.mark.docker
async def test_profile_restart_on_the_real_daemon(e2e_stack: Stack) -> None:
    async with connect(e2e_stack) as client:
        text, error = await call(client, "jarvis_profile", action="restart", name="essentials")
        assert not error, text
        assert text.startswith("# restarted 1 profile(s)\nessentials (mcpm-essentials): running")
        text, error = await call(client, "jarvis_profile", action="restart")
        assert not error, text
        assert text.startswith("# restarted 5 profile(s)")
        assert "dev-core (mcpm-dev-core): exited" in text or "dev-core (mcpm-dev-core): running" in text
