"""jarvis_client on realistic client files (users' entries, comments, other settings) in a temporary home:
only Jarvis's entries change, backups are kept, broken files are refused untouched, import and config work."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from jarvis.clients.formats import ClientFileError
from jarvis.clients.jsonc import parse
from jarvis.errors import InvalidInput
from jarvis.host import Host
from jarvis.tools.jarvis_client import jarvis_client
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis

CURSOR = """{
  // Cursor: servers I set up by hand
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "ghp_mine"}, // keep this token here
    },
    "docs": {"url": "https://docs.example/mcp"},
  },
}
"""
CLAUDE_CODE = json.dumps(
    {
        "numStartups": 311,
        "projects": {"/home/u/app": {"allowedTools": [], "mcpServers": {}}},
        "mcpServers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "mem"], "env": {}}},
        "userID": "abc",
    },
    indent=2,
)
VSCODE = """{
  // VS Code reads comments here
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}
  }
}
"""
CODEX = """# Codex CLI
model = "o3" # the best one

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"] # pinned later
"""
GOOSE = """# Goose config
GOOSE_PROVIDER: openai
extensions:
  developer:
    enabled: true # built in
    name: developer
    type: builtin
"""
CONTINUE = """name: Local Assistant
version: 1.0.0
schema: v1
models: []
mcpServers:
  - name: sqlite # my database
    command: uvx
    args: ["mcp-server-sqlite", "--db-path", "/tmp/x.db"]
"""
OPENCODE = '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight"\n}\n'

FILES = {
    "cursor": (".cursor/mcp.json", CURSOR),
    "claude-code": (".claude.json", CLAUDE_CODE),
    "vscode": (".config/Code/User/mcp.json", VSCODE),
    "codex-cli": (".codex/config.toml", CODEX),
    "goose-cli": (".config/goose/config.yaml", GOOSE),
    "continue": (".continue/config.yaml", CONTINUE),
    "opencode": (".config/opencode/opencode.json", OPENCODE),
}


def host_at(home: Path, path: str = "/usr/bin:/bin") -> Host:
    """A machine with this home folder, and by default no claude/codex/opencode/mcpm on PATH: files decide."""
    return Host.of(home, {"PATH": path})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    for relative, text in FILES.values():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    return tmp_path


@pytest.fixture
def jarvis(home: Path):  # type: ignore[no-untyped-def]
    jarvis = fake_jarvis(mcpm_dir=home / ".config/mcpm", host=host_at(home))
    call(jarvis_server, jarvis, action="create", name="time", type="stdio", command="uvx", args="mcp-server-time",
                  env={"TZ": "UTC", "EMPTY": ""})  # fmt: skip
    call(jarvis_server, jarvis, action="create", name="web", type="remote", url="http://127.0.0.1:9/mcp",
                  headers={"Authorization": "Bearer t"})  # fmt: skip
    call(jarvis_profile, jarvis, action="create", name="essentials", add_servers="time")
    call(jarvis_profile, jarvis, action="create", name="local", add_servers="web")
    return jarvis


def entries(home: Path, key: str) -> dict:
    relative, _ = FILES[key]
    text = (home / relative).read_text()
    if relative.endswith(".toml"):
        return tomllib.loads(text)["mcp_servers"]
    if relative.endswith(".yaml"):
        data = YAML(typ="safe").load(text)
        section = data["mcpServers"] if key == "continue" else data["extensions"]
        return {item["name"]: item for item in section} if key == "continue" else section
    data = parse(text).root.value
    return data["servers" if key == "vscode" else "mcp" if key == "opencode" else "mcpServers"]


@pytest.mark.parametrize("key", FILES)
def test_edit_writes_own_entries_and_removing_them_restores_the_file(home: Path, jarvis, key: str) -> None:
    relative, original = FILES[key]
    text = call(
        jarvis_client, jarvis, action="edit", client_name=key, add_servers="time,web", add_profiles="essentials"
    )
    assert "added mcpm_time; added mcpm_web; added mcpm_profile_essentials" in text, text
    assert "backup: " in text
    assert "Restart " in text
    backup = Path(text.split("backup: ")[1].splitlines()[0])
    assert backup.read_text() == original
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    written = entries(home, key)
    assert {"mcpm_time", "mcpm_web", "mcpm_profile_essentials"} <= set(written)
    users = {"cursor": ["github", "docs"], "claude-code": ["memory"], "vscode": ["fetch"], "codex-cli": ["docs"],
             "goose-cli": ["developer"], "continue": ["sqlite"]}  # fmt: skip
    for user_entry in users.get(key, []):
        assert user_entry in written
    assert "EMPTY" not in json.dumps(written["mcpm_time"])  # empty env values are not passed, as MCPM
    listed = call(jarvis_client, jarvis, action="list")
    row = next(line for line in listed.splitlines() if line.startswith(key))
    assert "servers: time, web; profiles: essentials" in row
    removed = call(jarvis_client, jarvis, action="edit", client_name=key, remove_servers=["time", "web"],
                            remove_profiles="essentials")  # fmt: skip
    assert "removed mcpm_time; removed mcpm_web; removed mcpm_profile_essentials" in removed
    if key == "opencode":  # the file had no `mcp` section: it stays, empty
        assert json.loads((home / relative).read_text()) == {**json.loads(original), "mcp": {}}
    else:
        assert (home / relative).read_text() == original  # every byte of the user's file is back


def test_entry_formats_per_client(home: Path, jarvis) -> None:
    for key in FILES:
        call(jarvis_client, jarvis, action="edit", client_name=key, add_servers="time,web", add_profiles="essentials")
    assert entries(home, "vscode")["mcpm_time"] == {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"],
                                                     "env": {"TZ": "UTC"}}  # fmt: skip
    assert entries(home, "vscode")["mcpm_web"]["type"] == "http"
    assert entries(home, "claude-code")["mcpm_web"] == {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                                         "headers": {"Authorization": "Bearer t"}}  # fmt: skip
    assert entries(home, "opencode")["mcpm_time"] == {"type": "local", "command": ["uvx", "mcp-server-time"],
                                                       "environment": {"TZ": "UTC"}, "enabled": True}  # fmt: skip
    assert entries(home, "opencode")["mcpm_profile_essentials"] == {"type": "remote", "url": "http://localhost:6276/mcp",
                                                                     "enabled": True}  # fmt: skip
    assert entries(home, "codex-cli")["mcpm_web"] == {"url": "http://127.0.0.1:9/mcp",
                                                       "http_headers": {"Authorization": "Bearer t"}}  # fmt: skip
    assert entries(home, "goose-cli")["mcpm_time"]["cmd"] == "uvx"
    assert entries(home, "goose-cli")["mcpm_time"]["envs"] == {"TZ": "UTC"}
    assert entries(home, "continue")["mcpm_web"]["type"] == "streamable-http"
    codex = (home / FILES["codex-cli"][0]).read_text()
    assert codex.startswith(CODEX)  # comments and layout above the new tables are untouched
    assert "# built in" in (home / FILES["goose-cli"][0]).read_text()
    assert "  - name: sqlite # my database" in (home / FILES["continue"][0]).read_text()


def test_claude_desktop_bridges_remote_servers(home: Path, jarvis) -> None:
    text = call(jarvis_client, jarvis, action="edit", client_name="claude-desktop", add_servers="web")
    assert "note: Claude Desktop does not look installed here; ~/.config/Claude/claude_desktop_config.json was" in text
    data = json.loads((home / ".config/Claude/claude_desktop_config.json").read_text())
    assert data == {"mcpServers": {"mcpm_web": {"command": "npx", "args": [
        "-y", "mcp-remote", "http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer t"]}}}  # fmt: skip
    assert stat.S_IMODE((home / ".config/Claude/claude_desktop_config.json").stat().st_mode) == 0o600


def test_profile_without_endpoint_runs_through_mcpm_and_says_so(home: Path, jarvis) -> None:
    text = call(jarvis_client, jarvis, action="edit", client_name="cursor", add_profiles="local")
    assert "note: local: no endpoint set, so the entry runs `mcpm profile run`, and mcpm is not on PATH" in text
    assert entries(home, "cursor")["mcpm_profile_local"] == {"command": "mcpm", "args": ["profile", "run", "local"]}


def test_edit_keeps_mode_and_symlink(home: Path, jarvis) -> None:
    real = home / "dotfiles/cursor.json"
    real.parent.mkdir()
    real.write_text(CURSOR)
    os.chmod(real, 0o640)
    link = home / FILES["cursor"][0]
    link.unlink()
    link.symlink_to(real)
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    assert link.is_symlink()
    assert "mcpm_time" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_broken_file_is_refused_and_left_alone(home: Path, jarvis) -> None:
    path = home / FILES["cursor"][0]
    path.write_text('{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n  }\n}\n')
    before = path.read_bytes()
    with pytest.raises(ClientFileError, match=r"line 4, column 5"):
        call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    assert path.read_bytes() == before
    assert "cursor  ~/.cursor/mcp.json  UNREADABLE" in call(jarvis_client, jarvis, action="list")
    (home / FILES["codex-cli"][0]).write_text("[mcp_servers\n")
    with pytest.raises(ClientFileError, match="not valid TOML"):
        call(jarvis_client, jarvis, action="edit", client_name="codex-cli", add_servers="time")


def test_only_own_entries_are_removed(home: Path, jarvis) -> None:
    text = call(jarvis_client, jarvis, action="edit", client_name="cursor", remove_servers="github")
    assert "mcpm_github was not in the file" in text
    assert "github" in entries(home, "cursor")
    assert (home / FILES["cursor"][0]).read_text() == CURSOR


def test_edit_again_is_a_no_op(home: Path, jarvis) -> None:
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    again = call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    assert "already as asked, file unchanged" in again
    assert "backup" not in again


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "edit"}, "client_name is required. Valid client_names: claude-code, claude-desktop, cursor"),
        ({"action": "edit", "client_name": "emacs"}, "Invalid client_name 'emacs'. Valid client_names: claude-code"),
        ({"action": "edit", "client_name": "cursor"}, "Nothing to edit"),
        ({"action": "edit", "client_name": "cursor", "add_servers": "nope"}, "Unknown server(s) nope. Servers: time"),
        ({"action": "edit", "client_name": "cursor", "add_profiles": "x"},
         "Unknown profile(s) x. Profiles: essentials"),
        ({"action": "edit", "client_name": "cursor", "add_servers": "time", "remove_servers": "time"}, "both added"),
        ({"action": "config", "client_name": "cursor", "config_path": "relative.json"}, "must be absolute"),
        ({"action": "teleport"}, "Invalid action 'teleport'. Valid actions: list, edit, import, config"),
    ],
)  # fmt: skip
def test_bad_input_names_the_valid_values(jarvis, arguments: dict, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call(jarvis_client, jarvis, **arguments)
    assert message in str(caught.value)


def test_import_takes_the_users_servers_and_reports_the_rest(home: Path, jarvis) -> None:
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    call(jarvis_server, jarvis, action="create", name="docs", type="remote", url="https://other.example/mcp")
    text = call(jarvis_client, jarvis, action="import", client_name="cursor")
    assert text.splitlines() == [
        "import from cursor (~/.cursor/mcp.json): took 1, skipped 2",
        "took: github (stdio)",
        "skipped, a different server has that name: kept the store's: docs",
        "skipped, Jarvis/MCPM entries: mcpm_time",
    ]
    stored = json.loads((home / ".config/mcpm/servers.json").read_text())
    assert stored["github"] == {"name": "github", "profile_tags": [], "enabled": None, "command": "npx",
                                "args": ["-y", "@modelcontextprotocol/server-github"],
                                "env": {"GITHUB_TOKEN": "ghp_mine"}}  # fmt: skip
    assert "already in the store: github" in call(jarvis_client, jarvis, action="import", client_name="cursor")
    goose = call(jarvis_client, jarvis, action="import", client_name="goose-cli")
    assert "took: developer (custom)" in goose
    assert "took: memory (stdio)" in call(jarvis_client, jarvis, action="import", client_name="claude-code")


def test_config_shows_sets_persists_and_resets_the_path(home: Path, jarvis) -> None:
    shown = call(jarvis_client, jarvis, action="config", client_name="cursor")
    assert shown.splitlines()[0] == f"cursor: {home}/.cursor/mcp.json (default; exists; installed; json)"
    assert "github  stdio  user entry" in shown
    assert "docs  remote  user entry" in shown
    custom = home / "work/cursor-mcp.json"
    custom.parent.mkdir()  # Jarvis never creates a client's folder
    text = call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=str(custom))
    assert text.startswith(f"cursor: config path set to {custom} (will be created by the first edit)")
    assert json.loads((home / ".config/mcpm/clients.json").read_text()) == {"cursor": {"configPath": str(custom)}}
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    assert json.loads(custom.read_text()) == {"mcpServers": {"mcpm_time": {"command": "uvx", "args": [
        "mcp-server-time"], "env": {"TZ": "UTC"}}}}  # fmt: skip
    assert (home / FILES["cursor"][0]).read_text() == CURSOR
    assert "(set with config; exists" in call(jarvis_client, jarvis, action="config", client_name="cursor")
    assert "reset to the default" in call(jarvis_client, jarvis, action="config", client_name="cursor",
                                                   config_path="default")  # fmt: skip
    assert not (home / ".config/mcpm/clients.json").read_text().count("cursor")
    bad = home / "bad.toml"
    bad.write_text("= nope")
    with pytest.raises(InvalidInput, match="cannot be Codex CLI's file: not valid TOML"):
        call(jarvis_client, jarvis, action="config", client_name="codex-cli", config_path=str(bad))


def test_list_shows_installed_clients_only_in_detail(home: Path, jarvis) -> None:
    text = call(jarvis_client, jarvis, action="list")
    lines = text.splitlines()
    assert lines[0] == "# clients: 7 installed of 15"
    assert "cursor  ~/.cursor/mcp.json  servers: -; profiles: -; own entries: 2" in lines
    assert lines[-1].startswith("not installed: claude-desktop, windsurf, cline, roo-code, 5ire, trae")


def test_usage_names_the_clients_that_use_each_server(home: Path, jarvis) -> None:
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time", add_profiles="essentials")
    call(jarvis_client, jarvis, action="edit", client_name="codex-cli", add_servers="time")
    text = call(jarvis_server, jarvis, action="usage")
    assert "clients: cursor (servers time; profiles essentials), codex-cli (servers time)" in text
    gone = call(jarvis_server, jarvis, action="uninstall", name="time")
    assert "still wired in cursor, codex-cli: jarvis_client edit remove_servers=time" in gone


def test_with_mcpm_on_path_servers_use_mcpms_own_entries(home: Path, jarvis) -> None:
    bin_dir = home / "bin"
    bin_dir.mkdir()
    (bin_dir / "mcpm").write_text("#!/bin/sh\n")
    (bin_dir / "mcpm").chmod(0o755)
    jarvis = dataclasses.replace(jarvis, host=host_at(home, f"{bin_dir}:/usr/bin:/bin"))
    text = call(jarvis_client, jarvis, action="edit", client_name="opencode", add_servers="time", add_profiles="local")
    assert "note: servers run through `mcpm run`" in text
    assert "mcpm is not on PATH" not in text
    assert entries(home, "opencode") == {
        "mcpm_time": {"type": "local", "command": ["mcpm", "run", "time"], "enabled": True},
        "mcpm_profile_local": {"type": "local", "command": ["mcpm", "profile", "run", "local"], "enabled": True},
    }
    plain = call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
    assert "servers run through `mcpm run`" in plain
    assert entries(home, "cursor")["mcpm_time"] == {"command": "mcpm", "args": ["run", "time"]}
    assert "secret values" not in call(
        jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="web,time"
    )


def test_deleting_or_renaming_a_wired_profile_names_the_clients(home: Path, jarvis) -> None:
    call(jarvis_client, jarvis, action="edit", client_name="cursor", add_profiles="essentials,local")
    renamed = call(jarvis_profile, jarvis, action="edit", name="local", new_name="lan")
    assert renamed.endswith("still wired in cursor: jarvis_client edit remove_profiles=local")
    deleted = call(jarvis_profile, jarvis, action="delete", name="essentials")
    assert deleted.endswith("still wired in cursor: jarvis_client edit remove_profiles=essentials")
    assert "still wired" not in call(jarvis_profile, jarvis, action="delete", name="lan")


def test_an_unwritable_client_file_is_a_clear_error(home: Path, jarvis) -> None:
    blocker = home / "not-a-folder"
    blocker.mkdir()
    call(jarvis_client, jarvis, action="config", client_name="trae", config_path=str(blocker / "mcp.json"))
    blocker.rmdir()  # a file where the folder was, after the path was set
    blocker.write_text("x")
    with pytest.raises(ClientFileError, match=r"not-a-folder/mcp\.json"):
        call(jarvis_client, jarvis, action="edit", client_name="trae", add_servers="time")
    assert blocker.read_text() == "x"


def test_edit_says_which_entries_carry_secrets_and_who_can_read_the_file(home: Path, jarvis) -> None:
    environ = {"PATH": "/usr/bin:/bin", "JARVIS_TEST_DB_URL": "postgres://app:Pw-123@db/app", "JARVIS_TEST_PLAIN": "hi"}
    jarvis = dataclasses.replace(jarvis, host=Host.of(home, environ))
    call(jarvis_server, jarvis, action="create", name="db", type="stdio", command="pg-mcp",
         args=["--password", "s3cret"],
         env={"DATABASE_URL": "${JARVIS_TEST_DB_URL}", "PLAIN": "${JARVIS_TEST_PLAIN}"})  # fmt: skip
    text = call(jarvis_client, jarvis, action="edit", client_name="claude-desktop", add_servers="db,time")
    assert (
        "note: secret values written into ~/.config/Claude/claude_desktop_config.json (mode 0600, only you can read "
        "it): mcpm_db (args[1], env.DATABASE_URL, env.PLAIN). With mcpm on PATH, server entries run `mcpm run`"
    ) in text
    written = json.loads((home / ".config/Claude/claude_desktop_config.json").read_text())["mcpServers"]
    assert written["mcpm_db"]["env"]["DATABASE_URL"] == "postgres://app:Pw-123@db/app"  # resolved, as said
    assert stat.S_IMODE((home / ".config/Claude/claude_desktop_config.json").stat().st_mode) == 0o600
    cursor = home / FILES["cursor"][0]
    os.chmod(cursor, 0o644)
    shared = call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="web")
    assert "(mode 0644, OTHER USERS CAN READ IT: chmod 600 it): mcpm_web (headers.Authorization)." in shared
    assert stat.S_IMODE(cursor.stat().st_mode) == 0o644  # the user's choice of mode is kept
    assert "secret values" not in call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time")
