"""jarvis_config on real files: settings in jarvis.toml (validated, comments kept), MCPM's config.json,
legacy migration (idempotent), export (scrubbed unless asked, 0600 file) and import (validated first,
partial, exact round trip)."""

from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path

import pytest

from jarvis.errors import InvalidInput
from jarvis.host import Host
from jarvis.settings import default_stack_dir, load_settings
from jarvis.store.mcpm_store import StoreError
from jarvis.tools import jarvis_config as config_tool
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis


@pytest.fixture
def mcpm(tmp_path: Path) -> Path:
    return tmp_path / "mcpm"


@pytest.fixture
def jarvis(mcpm: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    toml = tmp_path / "jarvis.toml"
    toml.write_text(f'# my Jarvis\n[jarvis]\nproject_dir = "{default_stack_dir()}"  # the bundled stack\n')
    settings = load_settings(config_path=toml, environ={}, cwd=tmp_path)
    host = Host.of(tmp_path, {})  # no JARVIS_* variable set
    return fake_jarvis(mcpm_dir=mcpm, config_file=settings.config_file, project_dir=settings.project_dir, host=host)


def filled(jarvis) -> None:  # type: ignore[no-untyped-def]
    call(jarvis_server, jarvis, action="create", name="time", type="stdio", command="uvx", args="mcp-server-time",
                  env={"API_TOKEN": "s3cret", "TZ": "UTC"})  # fmt: skip
    call(jarvis_server, jarvis, action="create", name="web.api", type="remote", url="http://127.0.0.1:9/mcp",
                  headers={"Authorization": "Bearer abc"})  # fmt: skip
    call(jarvis_profile, jarvis, action="create", name="dev", add_servers="time,web.api", description="daily")


def test_set_writes_jarvis_toml_keeping_comments_and_validates(jarvis, tmp_path: Path) -> None:
    text = call(jarvis_config, jarvis, action="set", key="retry_timeout", value="30")
    assert text.startswith(f"retry_timeout = 30.0 written to {tmp_path / 'jarvis.toml'}; applies when Jarvis restarts")
    written = (tmp_path / "jarvis.toml").read_text()
    assert written.startswith("# my Jarvis\n[jarvis]\nproject_dir = ")
    assert "# the bundled stack" in written
    assert "retry_timeout = 30.0" in written
    call(jarvis_config, jarvis, action="set", key="profiles", value="essentials, memory")
    assert load_settings(config_path=tmp_path / "jarvis.toml", environ={}).profiles == ("essentials", "memory")
    before = (tmp_path / "jarvis.toml").read_bytes()
    with pytest.raises(InvalidInput, match=r"Not set, .* is unchanged: .*accepted values: whales, dockerpy"):
        call(jarvis_config, jarvis, action="set", key="lifecycle_adapter", value="podman")
    with pytest.raises(InvalidInput, match="retry_timeout must be a number"):
        call(jarvis_config, jarvis, action="set", key="retry_timeout", value="soon")
    assert (tmp_path / "jarvis.toml").read_bytes() == before
    assert not list(tmp_path.glob(".jarvis.toml.*"))  # no temp left behind


def test_set_redoes_its_edit_on_what_another_program_wrote_meanwhile(
    jarvis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program writes jarvis.toml between Jarvis's read and its write: its edit stays, Jarvis's is redone."""
    toml = tmp_path / "jarvis.toml"
    edit = config_tool._edited_toml
    edits = []

    def edited_while_another_program_writes(*args):  # type: ignore[no-untyped-def]
        result = edit(*args)
        edits.append(result)
        if len(edits) == 1:
            toml.write_text(toml.read_text() + "wait_timeout = 77.0  # the user's own edit\n")
        return result

    monkeypatch.setattr(config_tool, "_edited_toml", edited_while_another_program_writes)
    call(jarvis_config, jarvis, action="set", key="retry_timeout", value="30")
    assert len(edits) == 2
    written = load_settings(config_path=toml, environ={})
    assert (written.wait_timeout, written.retry_timeout) == (77.0, 30.0)
    assert "# the user's own edit" in toml.read_text()


def test_set_says_when_the_environment_wins(jarvis, tmp_path: Path) -> None:
    jarvis = dataclasses.replace(jarvis, host=Host.of(tmp_path, {"JARVIS_RETRY_TIMEOUT": "5"}))
    text = call(jarvis_config, jarvis, action="set", key="retry_timeout", value="30")
    assert "note: JARVIS_RETRY_TIMEOUT is set in Jarvis's environment and wins over the file." in text
    assert call(jarvis_config, jarvis, action="get", key="retry_timeout").endswith("(env JARVIS_RETRY_TIMEOUT)")


def test_get_and_list(jarvis, mcpm: Path) -> None:
    assert call(jarvis_config, jarvis, action="get", key="profile_prefix") == (
        "profile_prefix = mcpm- (default; env JARVIS_PROFILE_PREFIX)"
    )
    assert "project_dir = " in call(jarvis_config, jarvis, action="get", key="project_dir")
    assert "(jarvis.toml;" in call(jarvis_config, jarvis, action="get", key="project_dir")
    listed = call(jarvis_config, jarvis, action="list")
    assert "registry_timeout = 5.0 (default)" in listed
    assert "node_executable = (unset) (valid: npx, bunx, pnpm dlx, yarn dlx)" in listed
    assert call(jarvis_config, jarvis, action="get") == listed


def test_mcpm_keys_are_validated_and_kept_in_config_json(jarvis, mcpm: Path) -> None:
    mcpm.mkdir()
    (mcpm / "config.json").write_text('{"other": 1}')
    text = call(jarvis_config, jarvis, action="set", key="node_executable", value="pnpm dlx")
    assert text == "node_executable = pnpm dlx in MCPM config.json (was unset)"
    assert json.loads((mcpm / "config.json").read_text()) == {"other": 1, "node_executable": "pnpm dlx"}
    with pytest.raises(InvalidInput, match=r"Invalid node_executable 'deno'\. Valid values: npx, bunx, pnpm dlx"):
        call(jarvis_config, jarvis, action="set", key="node_executable", value="deno")
    shown = call(jarvis_config, jarvis, action="get", key="node_executable")
    assert shown == "node_executable = pnpm dlx (MCPM config.json)"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "get", "key": "colour"}, "Invalid key 'colour'. Valid keys: project_dir, compose_files"),
        ({"action": "set", "key": "retry_timeout"}, "set needs value"),
        ({"action": "set", "value": "1"}, "key is required. Keys: project_dir"),
        ({"action": "import"}, "import needs exactly one of data"),
        ({"action": "import", "data": "{}", "path": "/x"}, "import needs exactly one of data"),
        ({"action": "import", "data": "invalid"}, "Invalid JSON at line 1, column 1: Expecting value"),
        ({"action": "import", "data": '{\n  "servers": {,}\n}'}, "Invalid JSON at line 2, column 15"),
        ({"action": "import", "data": "[]"}, "must be a JSON object"),
        ({"action": "import", "data": '{"version": "2"}'}, "Nothing to import: the document has none of servers"),
        ({"action": "import", "path": "/nonexistent/x.json"}, "Cannot read '/nonexistent/x.json': no such file"),
        ({"action": "frobnicate"}, "Invalid action 'frobnicate'. Valid actions: get, set, list, migrate, export"),
    ],
)
def test_bad_input_names_the_valid_values(jarvis, arguments: dict, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call(jarvis_config, jarvis, **arguments)
    assert message in str(caught.value)


def test_export_scrubs_secrets_unless_asked_and_writes_0600(jarvis, tmp_path: Path) -> None:
    filled(jarvis)
    text = call(jarvis_config, jarvis, action="export", path=str(tmp_path / "backup.json"))
    lines = text.splitlines()
    assert lines[0] == "export: 2 servers, 1 profiles, 0 clients, 0 config"
    assert lines[1] == (
        "warning: Secret-looking values replaced by [SCRUBBED]: servers.time.env.API_TOKEN, "
        "servers.web.api.headers.Authorization. Importing keeps the stored value for each; "
        "include_secrets=true exports them."
    )
    document = json.loads(lines[-1])
    assert set(document) == {"version", "exported_at", "warning", "servers", "profiles", "clients", "config"}
    assert document["servers"]["time"]["env"] == {"API_TOKEN": "[SCRUBBED]", "TZ": "UTC"}
    assert "s3cret" not in text
    assert stat.S_IMODE((tmp_path / "backup.json").stat().st_mode) == 0o600
    assert json.loads((tmp_path / "backup.json").read_text()) == document
    full = call(jarvis_config, jarvis, action="export", include_secrets=True)
    assert "warning: Contains secrets: servers.time.env.API_TOKEN, servers.web.api.headers.Authorization" in full
    assert json.loads(full.splitlines()[-1])["servers"]["time"]["env"]["API_TOKEN"] == "s3cret"


def test_export_then_import_is_an_exact_round_trip(jarvis, mcpm: Path, tmp_path: Path) -> None:
    filled(jarvis)
    call(jarvis_config, jarvis, action="set", key="node_executable", value="bunx")
    (mcpm / "clients.json").write_text(json.dumps({"cursor": {"configPath": str(tmp_path / "c.json")}}, indent=2))
    originals = {p.name: p.read_bytes() for p in mcpm.glob("*.json")}
    scrubbed = call(jarvis_config, jarvis, action="export").splitlines()[-1]
    full = call(jarvis_config, jarvis, action="export", include_secrets=True).splitlines()[-1]
    text = call(jarvis_config, jarvis, action="import", data=scrubbed)  # the same store: nothing changes
    assert "servers: unchanged" in text
    assert "kept stored values for [SCRUBBED] time.env.API_TOKEN, web.api.headers.Authorization" in text
    assert {p.name: p.read_bytes() for p in mcpm.glob("*.json")} == originals
    for path in mcpm.glob("*.json"):
        path.unlink()
    (tmp_path / "full.json").write_text(full)
    text = call(jarvis_config, jarvis, action="import", path=str(tmp_path / "full.json"))
    assert "servers: added time, web.api" in text
    assert {p.name: p.read_bytes() for p in mcpm.glob("*.json")} == originals
    again = json.loads(call(jarvis_config, jarvis, action="export", include_secrets=True).splitlines()[-1])
    assert {k: v for k, v in again.items() if k != "exported_at"} == {
        k: v for k, v in json.loads(full).items() if k != "exported_at"
    }


def test_import_of_scrubbed_values_with_nothing_stored_reports_them(jarvis, mcpm: Path) -> None:
    filled(jarvis)
    scrubbed = call(jarvis_config, jarvis, action="export").splitlines()[-1]
    for path in mcpm.glob("*.json"):
        path.unlink()
    text = call(jarvis_config, jarvis, action="import", data=scrubbed)
    assert "STILL REQUIRED (scrubbed, nothing stored): time.env.API_TOKEN, web.api.headers.Authorization" in text
    stored = json.loads((mcpm / "servers.json").read_text())
    assert stored["time"]["env"] == {"TZ": "UTC"}


def test_partial_import_updates_only_its_sections(jarvis, mcpm: Path) -> None:
    filled(jarvis)
    profiles_before = (mcpm / "profiles_metadata.json").read_bytes()
    document = {"servers": {"solo": {"name": "solo", "profile_tags": [], "command": "x"}}}
    text = call(jarvis_config, jarvis, action="import", data=json.dumps(document))
    assert "servers: added solo; removed time, web.api" in text
    assert "skipped (not in the document): profiles, clients, config" in text
    assert (mcpm / "profiles_metadata.json").read_bytes() == profiles_before
    assert list(json.loads((mcpm / "servers.json").read_text())) == ["solo"]


def test_invalid_import_touches_nothing(jarvis, mcpm: Path) -> None:
    filled(jarvis)
    before = {p.name: p.read_bytes() for p in mcpm.glob("*.json")}
    document = {
        "servers": {"ok": {"name": "ok", "command": "x"}, "bad": {"name": "bad", "args": "not-a-list"}},
        "profiles": {"p": ["legacy"]},
        "clients": {"emacs": {"configPath": "/x"}},
    }
    with pytest.raises(InvalidInput) as caught:
        call(jarvis_config, jarvis, action="import", data=json.dumps(document))
    message = str(caught.value)
    assert message.startswith("Nothing was imported: servers.bad: args: Input should be a valid list")
    assert "profiles.p: Input should be a valid dictionary" in message
    assert "clients.emacs: unknown client; clients: claude-code" in message
    assert {p.name: p.read_bytes() for p in mcpm.glob("*.json")} == before


def test_migrate_v1_profiles_node_files_and_v1_config(jarvis, mcpm: Path) -> None:
    mcpm.mkdir()
    (mcpm / "servers.json").write_text(json.dumps({
        "context7": {"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {}},
    }))  # fmt: skip
    (mcpm / "profiles.json").write_text(json.dumps({
        "old": [{"name": "fetch", "command": "uvx", "args": ["mcp-server-fetch"]},
                {"name": "remote1", "url": "http://h/mcp"}, {"name": "context7", "command": "other"}],
        "empty": [],
    }))  # fmt: skip
    (mcpm / "clients.json").write_text(json.dumps({"opencode": {"configPath": "/p/oc.json", "profiles": ["old"],
                                                                "servers": []}}))  # fmt: skip
    (mcpm / "config.json").write_text(json.dumps({"active_client": "cursor", "node_executable": "npx"}))
    text = call(jarvis_config, jarvis, action="migrate")
    assert text.splitlines()[:9] == [
        "Migrated to MCPM 2.x:",
        "- added the name field to context7 (the Node MCPM left it out; 2.x needs it)",
        "- old: added server fetch",
        "- old: added server remote1",
        "- profile old: 3 server(s) tagged: fetch, remote1, context7",
        "- profile empty: 0 server(s) tagged",
        "- dropped the Node MCPM's type field from context7 (2.x derives it)",
        "- clients.json opencode: dropped bookkeeping (profiles old, servers -); "
        "jarvis_client edit wires them for real",
        "- config.json: dropped MCPM 1.x keys active_client",
    ]
    assert "removed profiles.json" in text
    servers = json.loads((mcpm / "servers.json").read_text())
    assert servers["context7"] == {"name": "context7", "command": "npx", "args": ["-y", "@upstash/context7-mcp"],
                                   "env": {}, "profile_tags": ["old"]}  # fmt: skip
    assert servers["remote1"]["url"] == "http://h/mcp"
    assert json.loads((mcpm / "profiles_metadata.json").read_text())["old"]["description"] == "Migrated from MCPM v1"
    assert json.loads((mcpm / "clients.json").read_text()) == {"opencode": {"configPath": "/p/oc.json"}}
    backup = next((mcpm / "backups").iterdir())
    assert json.loads((backup / "profiles.json").read_text())["empty"] == []
    assert json.loads((backup / "config.json").read_text())["active_client"] == "cursor"
    assert not (mcpm / "profiles.json").exists()
    after = {p.name: p.read_bytes() for p in mcpm.glob("*.json")}
    assert (
        call(jarvis_config, jarvis, action="migrate") == "Nothing to migrate: the files are already in MCPM 2.x form."
    )
    assert {p.name: p.read_bytes() for p in mcpm.glob("*.json")} == after


def test_migrate_node_profiles(jarvis, mcpm: Path) -> None:
    filled(jarvis)
    (mcpm / "profiles.json").write_text(json.dumps({
        "research": {"servers": ["time", "ghost"], "description": "Deep research", "port": 6281},
    }))  # fmt: skip
    text = call(jarvis_config, jarvis, action="migrate")
    assert "- research: servers not in servers.json, not tagged: ghost" in text
    assert "- profile research: 1 server(s) tagged: time" in text
    meta = json.loads((mcpm / "profiles_metadata.json").read_text())["research"]
    assert meta == {"name": "research", "api_key": None, "description": "Deep research"}


def test_migrate_refuses_a_broken_legacy_file(jarvis, mcpm: Path) -> None:
    mcpm.mkdir()
    (mcpm / "profiles.json").write_text('{"a": [}')
    with pytest.raises(StoreError, match=r"line 1, column 8.*nothing was migrated"):
        call(jarvis_config, jarvis, action="migrate")
    assert (mcpm / "profiles.json").read_text() == '{"a": [}'


def test_unwritable_places_give_clear_errors(jarvis, tmp_path: Path) -> None:
    target = tmp_path / "jarvis.toml" / "backup.json"  # under a regular file: unwritable even for root
    with pytest.raises(InvalidInput, match=r"The folder .*jarvis\.toml' does not exist\. Nothing was written"):
        call(jarvis_config, jarvis, action="export", path=str(target))
