"""The MCPM store on real files: MCPM's format, unknown fields kept, broken files refused, conflicts redone,
several files replaced together, crash recovery, the writers' lock, and config_sync's audit and repair."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from filelock import FileLock

from jarvis.atomic import JOURNAL, recover, write_all, write_temp
from jarvis.store import sync
from jarvis.store.mcpm_store import FILES, LOCK, PROFILES, SERVERS, McpmStore, StoreError
from jarvis.store.models import ProfileMeta, ServerRecord
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from tests.fakes import call, fake_jarvis

# What mcpm 2.15 writes (notes: mcpm-compat.md), plus a field a newer MCPM might add.
SERVERS_JSON = {
    "echo-srv": {
        "name": "echo-srv",
        "profile_tags": ["dev"],
        "enabled": None,
        "command": "python3",
        "args": ["-m", "mcp_echo", "--verbose"],
        "env": {"API_KEY": "secret", "DEBUG": "1"},
        "future_field": {"kept": True},
    },
    "remote-srv": {
        "name": "remote-srv",
        "profile_tags": ["dev"],
        "enabled": None,
        "url": "http://127.0.0.1:9000/mcp/",
        "headers": {"Authorization": "Bearer x"},
    },
}
PROFILES_JSON = {"dev": {"name": "dev", "api_key": None, "description": None}}


def mcpm_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SERVERS).write_text(json.dumps(SERVERS_JSON, indent=2))
    (folder / PROFILES).write_text(json.dumps(PROFILES_JSON, indent=2))
    return folder


def test_reads_mcpm_records_typed(tmp_path: Path) -> None:
    snapshot = McpmStore(mcpm_folder(tmp_path)).read()
    assert snapshot.servers["echo-srv"].transport == "stdio"
    assert snapshot.servers["remote-srv"].transport == "remote"
    assert snapshot.members("dev") == ["echo-srv", "remote-srv"]
    assert snapshot.profile_names() == ["dev"]
    assert snapshot.config == {}


def test_an_edit_rewrites_in_mcpm_format_keeping_unknown_fields_and_order(tmp_path: Path) -> None:
    store = McpmStore(mcpm_folder(tmp_path))
    profiles_before = (tmp_path / PROFILES).read_bytes()

    def add_tag(snapshot):  # type: ignore[no-untyped-def]
        snapshot.servers["remote-srv"].profile_tags.append("research")
        snapshot.servers["remote-srv"].profile_tags = list(snapshot.servers["remote-srv"].profile_tags)

    store.update(add_tag)
    expected = json.loads(json.dumps(SERVERS_JSON))
    expected["remote-srv"]["profile_tags"] = ["dev", "research"]
    assert (tmp_path / SERVERS).read_text() == json.dumps(expected, indent=2)  # byte for byte as MCPM writes
    assert (tmp_path / PROFILES).read_bytes() == profiles_before  # untouched file not rewritten
    assert not (tmp_path / "config.json").exists()
    assert (tmp_path / SERVERS).stat().st_mode & 0o777 == 0o600


def test_new_records_have_exactly_mcpms_fields(tmp_path: Path) -> None:
    store = McpmStore(tmp_path)

    def create(snapshot):  # type: ignore[no-untyped-def]
        snapshot.servers["s"] = ServerRecord.stdio("s", "uvx", ["tool"], {"K": "v"})
        snapshot.servers["r"] = ServerRecord.remote("r", "http://h/mcp", {})
        snapshot.profiles["p"] = ProfileMeta.new("p")

    store.update(create)
    servers = json.loads((tmp_path / SERVERS).read_text())
    assert servers["s"] == {
        "name": "s", "profile_tags": [], "enabled": None, "command": "uvx", "args": ["tool"], "env": {"K": "v"}
    }  # fmt: skip
    assert servers["r"] == {"name": "r", "profile_tags": [], "enabled": None, "url": "http://h/mcp", "headers": {}}
    assert json.loads((tmp_path / PROFILES).read_text()) == {"p": {"name": "p", "api_key": None, "description": None}}


def test_invalid_json_is_refused_with_line_and_column_and_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / SERVERS).write_text('{\n  "a": {"name": "a",}\n}')
    store = McpmStore(tmp_path)
    with pytest.raises(StoreError, match=r"servers.json is not valid JSON \(line 2, column 21"):
        store.read()
    with pytest.raises(StoreError, match="will not write over it"):
        store.update(lambda snapshot: snapshot.profiles.update(x=ProfileMeta.new("x")))
    assert (tmp_path / SERVERS).read_text() == '{\n  "a": {"name": "a",}\n}'
    assert not (tmp_path / PROFILES).exists()
    (tmp_path / SERVERS).write_text("[]")
    with pytest.raises(StoreError, match="must hold a JSON object, not list"):
        store.read()


def test_untypeable_entries_are_kept_as_read(tmp_path: Path) -> None:
    broken = {"name": "odd", "command": "x", "args": "not-a-list", "extra": 1}
    (tmp_path / SERVERS).write_text(json.dumps({"odd": broken, **SERVERS_JSON}, indent=2))
    store = McpmStore(tmp_path)
    store.update(lambda snapshot: snapshot.servers.pop("remote-srv"))
    written = json.loads((tmp_path / SERVERS).read_text())
    assert list(written) == ["odd", "echo-srv"]
    assert written["odd"] == broken


def test_a_change_made_meanwhile_by_another_program_is_redone_on_the_new_content(tmp_path: Path) -> None:
    store = McpmStore(mcpm_folder(tmp_path))
    calls = []

    def change(snapshot):  # type: ignore[no-untyped-def]
        calls.append(list(snapshot.servers))
        if len(calls) == 1:  # an editor saves a new server between Jarvis's read and its write
            data = json.loads((tmp_path / SERVERS).read_text())
            data["edited"] = {"name": "edited", "command": "vim"}
            (tmp_path / SERVERS).write_text(json.dumps(data))
        snapshot.servers["mine"] = ServerRecord.stdio("mine", "x", [], {})

    store.update(change)
    assert calls == [["echo-srv", "remote-srv"], ["echo-srv", "remote-srv", "edited"]]
    assert list(json.loads((tmp_path / SERVERS).read_text())) == ["echo-srv", "remote-srv", "edited", "mine"]


def test_the_writers_lock_times_out_with_a_clear_error(tmp_path: Path) -> None:
    mcpm_folder(tmp_path)
    with FileLock(tmp_path / LOCK), pytest.raises(StoreError, match="Another Jarvis process has held"):
        McpmStore(tmp_path, lock_timeout=0.2).update(lambda snapshot: snapshot.profiles.clear())
    assert json.loads((tmp_path / PROFILES).read_text()) == PROFILES_JSON


def test_several_files_change_together_and_a_crash_is_finished_or_undone(tmp_path: Path) -> None:
    write_all(tmp_path, {"a.json": b"A1", "b.json": b"B1"})
    assert (tmp_path / "a.json").read_bytes() == b"A1"
    assert not (tmp_path / JOURNAL).exists()
    # Crash after the journal, between the renames: recovery finishes them.
    temp_a = write_temp(tmp_path / "a.json", b"A2", mode=0o600)
    temp_b = write_temp(tmp_path / "b.json", b"B2", mode=0o600)
    (tmp_path / JOURNAL).write_text(json.dumps({"a.json": temp_a.name, "b.json": temp_b.name}))
    os.replace(temp_a, tmp_path / "a.json")
    assert recover(tmp_path, ("a.json", "b.json")) == ["finished interrupted write of b.json"]
    assert (tmp_path / "b.json").read_bytes() == b"B2"
    # Crash before the journal: the temps are removed, the files stay old.
    write_temp(tmp_path / "a.json", b"A3", mode=0o600)
    done = recover(tmp_path, ("a.json", "b.json"))
    assert len(done) == 1
    assert done[0].startswith("removed unfinished temp .a.json.")
    assert (tmp_path / "a.json").read_bytes() == b"A2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_audit_and_repair_of_tags_against_metadata(tmp_path: Path) -> None:
    servers = json.loads(json.dumps(SERVERS_JSON))
    servers["echo-srv"]["profile_tags"] = ["dev", "research", "dev"]
    (tmp_path / SERVERS).write_text(json.dumps(servers))
    (tmp_path / PROFILES).write_text(json.dumps({**PROFILES_JSON, "empty": {"name": "empty"}, "odd": {"name": "x"}}))
    store = McpmStore(tmp_path)
    findings = sync.audit(store.read(), ("dev", "memory"))
    assert [(f.text, f.fixable) for f in findings] == [
        ("server echo-srv repeats tag(s) dev", True),
        ("profile empty has no servers (no server carries its tag)", False),
        ("profiles_metadata.json entry odd is named 'x'", True),
        ("profile research (echo-srv) has no entry in profiles_metadata.json", True),
        ("profile memory is configured (JARVIS_PROFILES) but MCPM has no such profile", False),
    ]
    assert store.update(sync.repair) == [
        "server echo-srv: duplicate tags removed (dev, research)",
        "profile odd: metadata name set to 'odd'",
        "profile research: metadata entry added",
    ]
    assert [f.fixable for f in sync.audit(store.read(), ("dev",))] == [False, False]  # empty, odd: no servers
    assert store.update(sync.repair) == []  # idempotent


def test_config_sync_action_reports_then_fixes(tmp_path: Path) -> None:
    servers = json.loads(json.dumps(SERVERS_JSON))
    servers["remote-srv"]["profile_tags"] = ["dev", "research"]
    (tmp_path / SERVERS).write_text(json.dumps(servers))
    jarvis = fake_jarvis(mcpm_dir=tmp_path, profiles=("dev", "research"))
    text = call(jarvis_diagnose, jarvis, action="config_sync")
    assert text.splitlines()[0] == f"# config sync: {tmp_path} (2 servers, 2 profiles)"
    assert "- profile dev (echo-srv, remote-srv) has no entry in profiles_metadata.json [fixable]" in text
    assert "auto_fix=true repairs" in text
    assert not (tmp_path / PROFILES).exists()  # a report changes nothing
    fixed = call(jarvis_diagnose, jarvis, action="config_sync", auto_fix=True)
    assert "## fixed\n- profile dev: metadata entry added\n- profile research: metadata entry added" in fixed
    assert fixed.endswith("in sync: every tagged profile has its metadata entry")
    assert set(json.loads((tmp_path / PROFILES).read_text())) == {"dev", "research"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in FILES) == [LOCK]
