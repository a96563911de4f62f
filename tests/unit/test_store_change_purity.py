"""A change handed to `McpmStore.update` runs again when another program wrote meanwhile, so it must be pure over
the snapshot it receives: a second run on newer content gives the newer content's answer, not the first run's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jarvis.store import transfer
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.tools.jarvis_client import jarvis_client
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_diagnose import jarvis_diagnose
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis


def store_with_token(folder: Path, token: str) -> None:
    record = {"name": "gh", "profile_tags": [], "enabled": None, "command": "uvx", "args": [], "env": {"TOKEN": token}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.json").write_text(json.dumps({"gh": record}, indent=2))


def scrubbed_export(folder: Path) -> str:
    return json.dumps(transfer.export_document(McpmStore(folder).read(), include_secrets=False))


def test_import_run_twice_keeps_a_secret_rotated_in_between(tmp_path: Path) -> None:
    store_with_token(tmp_path, "old")
    plan = transfer.parse_document(scrubbed_export(tmp_path))
    store = McpmStore(tmp_path)
    first = store.read()
    assert "kept stored values for [SCRUBBED] gh.env.TOKEN" in transfer.apply_import(first, plan)
    assert first.servers["gh"].env == {"TOKEN": "old"}
    store_with_token(tmp_path, "rotated")
    second = store.read()
    report = transfer.apply_import(second, plan)
    assert second.servers["gh"].env == {"TOKEN": "rotated"}
    assert "kept stored values for [SCRUBBED] gh.env.TOKEN" in report


def test_import_redone_after_a_conflict_writes_the_rotated_secret(tmp_path: Path) -> None:
    """The real path: another program rotates the token while Jarvis computes its import, so the store's
    conflict check makes it run the change again on the new content."""
    store_with_token(tmp_path, "old")
    document = json.loads(scrubbed_export(tmp_path))
    document["servers"]["new"] = {"name": "new", "profile_tags": [], "enabled": None, "command": "uvx"}
    plan = transfer.parse_document(json.dumps(document))  # adds a server, so the import has something to write
    runs = 0

    def change(snapshot: Snapshot) -> str:
        nonlocal runs
        runs += 1
        if runs == 1:
            store_with_token(tmp_path, "rotated")  # mcpm writes meanwhile
        return transfer.apply_import(snapshot, plan)

    report = McpmStore(tmp_path).update(change)
    assert runs == 2, "no conflict happened: the test would prove nothing"
    assert McpmStore(tmp_path).read().servers["gh"].env == {"TOKEN": "rotated"}
    assert "kept stored values for [SCRUBBED] gh.env.TOKEN" in report


def session(jarvis: Any, folder: Path) -> list[str]:
    """Every action that changes MCPM's files, once each."""
    calls: list[Callable[[], str]] = [
        lambda: call(jarvis_server, jarvis, action="create", name="a", type="stdio", command="uvx", env={"TOKEN": "t"}),
        lambda: call(jarvis_server, jarvis, action="create", name="b", type="remote", url="http://127.0.0.1:9/mcp"),
        lambda: call(jarvis_server, jarvis, action="edit", name="a", env={"X": "1"}, args=["--flag"]),
        lambda: call(jarvis_profile, jarvis, action="create", name="dev", add_servers=["a", "b"], description="d"),
        lambda: call(jarvis_profile, jarvis, action="edit", name="dev", new_name="work", remove_servers=["b"]),
        lambda: call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=str(folder / "c.json")),
        lambda: call(jarvis_config, jarvis, action="set", key="node_executable", value="bunx"),
        lambda: call(jarvis_config, jarvis, action="import", data=scrubbed_export(folder)),
        lambda: call(jarvis_diagnose, jarvis, action="config_sync", auto_fix=True),
        lambda: call(jarvis_profile, jarvis, action="delete", name="work"),
        lambda: call(jarvis_server, jarvis, action="uninstall", name="b"),
    ]
    return [call() for call in calls]


def test_every_store_change_gives_the_same_result_when_run_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    once = tmp_path / "once"
    twice = tmp_path / "twice"
    answers_once = session(fake_jarvis(mcpm_dir=once), once)
    real_update = McpmStore.update

    def update_run_twice(self: McpmStore, change: Callable[[Snapshot], Any]) -> Any:
        change(self._load())  # a first run whose snapshot is thrown away, as after a conflict
        return real_update(self, change)

    monkeypatch.setattr(McpmStore, "update", update_run_twice)
    answers_twice = session(fake_jarvis(mcpm_dir=twice), twice)
    assert [a.replace(str(twice), "F") for a in answers_twice] == [a.replace(str(once), "F") for a in answers_once]
    for name in ("servers.json", "profiles_metadata.json", "config.json"):
        assert (twice / name).read_bytes() == (once / name).read_bytes(), name
    clients = json.loads((twice / "clients.json").read_text())
    assert clients == json.loads((once / "clients.json").read_text().replace(str(once), str(twice)))
