"""jarvis_client and jarvis_config through the real stdio server: every action and its error paths, on client
files and MCPM files in a temporary home."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import call, plain_client

CURSOR = '{\n  // mine\n  "mcpServers": {\n    "github": {"command": "npx", "args": ["-y", "gh"]}\n  }\n}\n'


def home_with_clients(tmp_path: Path) -> dict[str, str]:
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor/mcp.json").write_text(CURSOR)
    (tmp_path / "jarvis.toml").write_text("# settings\n[jarvis]\n")
    return {"HOME": str(tmp_path), "JARVIS_MCPM_DIR": str(tmp_path / "mcpm"), "PATH": "/usr/bin:/bin"}


async def test_clients_over_stdio(tmp_path: Path) -> None:
    env = home_with_clients(tmp_path)
    async with plain_client(**env) as client:
        steps = [
            ("jarvis_server", {"action": "create", "name": "time", "type": "stdio", "command": "uvx",
                               "args": ["mcp-server-time"]}, "created time"),
            ("jarvis_profile", {"action": "create", "name": "essentials", "add_servers": ["time"]}, "created"),
            ("jarvis_client", {"action": "list"}, "~/.cursor/mcp.json  servers: -; profiles: -; own entries: 1"),
            ("jarvis_client", {"action": "edit", "client_name": "cursor", "add_servers": ["time"],
                               "add_profiles": "essentials"}, "added mcpm_time; added mcpm_profile_essentials"),
            ("jarvis_client", {"action": "list"}, "servers: time; profiles: essentials; own entries: 1"),
            ("jarvis_client", {"action": "config", "client_name": "cursor"}, "mcpm_time  stdio  server"),
            ("jarvis_client", {"action": "import", "client_name": "cursor"}, "took: github (stdio)"),
            ("jarvis_server", {"action": "usage"}, "clients: cursor (servers time; profiles essentials)"),
            ("jarvis_client", {"action": "edit", "client_name": "cursor", "remove_servers": "time",
                               "remove_profiles": ["essentials"]},
             "removed mcpm_time; removed mcpm_profile_essentials"),
            ("jarvis_client", {"action": "config", "client_name": "codex-cli",
                               "config_path": str(tmp_path / "codex.toml")}, "config path set to"),
            ("jarvis_client", {"action": "edit", "client_name": "codex-cli", "add_servers": "github"}, "added mcpm_"),
        ]  # fmt: skip
        for tool, arguments, expected in steps:
            text, error = await call(client, tool, **arguments)
            assert not error, (arguments, text)
            assert expected in text, (arguments, text)
        assert (tmp_path / ".cursor/mcp.json").read_text() == CURSOR
        assert '[mcp_servers.mcpm_github]\ncommand = "npx"' in (tmp_path / "codex.toml").read_text()
        errors = [
            ({"action": "edit"}, "client_name is required. Valid client_names: claude-code, claude-desktop"),
            ({"action": "edit", "client_name": "vim"}, "Invalid client_name 'vim'. Valid client_names: claude-code"),
            ({"action": "edit", "client_name": "cursor", "add_servers": "ghost"}, "Unknown server(s) ghost."),
            ({"action": "edit", "client_name": "cursor"}, "Nothing to edit"),
            ({"action": "config", "client_name": "cursor", "config_path": "rel.json"}, "must be absolute"),
            ({"action": "zap"}, "Invalid action 'zap'. Valid actions: list, edit, import, config"),
        ]
        for arguments, expected in errors:
            text, error = await call(client, "jarvis_client", **arguments)
            assert error, (arguments, text)
            assert expected in text, (arguments, text)
        (tmp_path / ".cursor/mcp.json").write_text('{"mcpServers": {"a": 1,,}}')
        text, error = await call(client, "jarvis_client", action="edit", client_name="cursor", add_servers="time")
        assert error
        assert "mcp.json: not valid JSON: expected a quoted key or '}' (line 1, column 24)" in text
        text, error = await call(client, "jarvis_client", action="list")  # the server keeps serving
        assert not error
        assert "UNREADABLE" in text


async def test_config_over_stdio(tmp_path: Path) -> None:
    env = home_with_clients(tmp_path)
    async with plain_client("--config", str(tmp_path / "jarvis.toml"), **env) as client:
        await call(client, "jarvis_server", action="create", name="time", type="stdio", command="uvx",
                   env={"API_KEY": "k-123"})  # fmt: skip
        (tmp_path / "mcpm/profiles.json").write_text('{"research": {"servers": ["time"], "description": "Deep"}}')
        steps = [
            ({"action": "set", "key": "endpoint_timeout", "value": "20"}, "endpoint_timeout = 20.0 written to"),
            ({"action": "get", "key": "endpoint_timeout"}, "JARVIS_ENDPOINT_TIMEOUT); from the next start: 20.0"),
            ({"action": "set", "key": "node_executable", "value": "bunx"}, "node_executable = bunx in MCPM"),
            ({"action": "list"}, "node_executable = bunx (valid: npx, bunx, pnpm dlx, yarn dlx)"),
            ({"action": "migrate"}, "- profile research: 1 server(s) tagged: time"),
            ({"action": "migrate"}, "Nothing to migrate"),
            ({"action": "export", "path": str(tmp_path / "backup.json")}, "servers.time.env.API_KEY"),
            ({"action": "import", "path": str(tmp_path / "backup.json")}, "kept stored values for [SCRUBBED]"),
            ({"action": "import", "data": '{"config": {"node_executable": "npx"}}'}, "config: changed node_executable"),
        ]
        for arguments, expected in steps:
            text, error = await call(client, "jarvis_config", **arguments)
            assert not error, (arguments, text)
            assert expected in text, (arguments, text)
        assert "endpoint_timeout = 20.0" in (tmp_path / "jarvis.toml").read_text()
        assert (tmp_path / "jarvis.toml").read_text().startswith("# settings\n[jarvis]\n")
        assert json.loads((tmp_path / "mcpm/servers.json").read_text())["time"]["env"] == {"API_KEY": "k-123"}
        errors = [
            ({"action": "import", "data": "invalid"}, "Invalid JSON at line 1, column 1"),
            ({"action": "import", "data": '{"servers": []}'}, "servers must be an object"),
            ({"action": "set", "key": "lifecycle_adapter", "value": "x"}, "accepted values: whales, dockerpy"),
            ({"action": "set", "key": "node_executable", "value": "x"}, "Valid values: npx, bunx, pnpm dlx, yarn dlx"),
            ({"action": "get", "key": "nope"}, "Invalid key 'nope'. Valid keys: project_dir"),
            ({"action": "export_all"}, "Invalid action 'export_all'. Valid actions: get, set, list, migrate"),
        ]
        for arguments, expected in errors:
            text, error = await call(client, "jarvis_config", **arguments)
            assert error, (arguments, text)
            assert expected in text, (arguments, text)
