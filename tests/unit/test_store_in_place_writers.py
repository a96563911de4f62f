"""Programs that write their files in place (truncate, then write), as mcpm and AI clients do, never lose their data
to Jarvis: a file caught empty or cut short is re-read until it settles, a store change is refused if it stays
empty, and a write is checked against what Jarvis read after its temp is synced, inside one atomic exchange."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_file import ClientFile
from jarvis.errors import JarvisError
from jarvis.store.mcpm_store import SETTLE_SECONDS, McpmStore, StoreError
from jarvis.store.models import ServerRecord

# Truncates the file, waits, then writes the document: the file is empty for `delay` seconds (mcpm's
# `open(path, "w")` then `json.dump`, slowed down).
IN_PLACE_WRITER = """
import sys, time
path, delay, text = sys.argv[1], float(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    f.flush()
    print("truncated", flush=True)
    time.sleep(delay)
    f.write(text)
"""


def servers_document(count: int) -> dict:
    return {f"s{i}": {"name": f"s{i}", "profile_tags": [], "enabled": None, "command": "uvx", "args": [str(i)],
                      "env": {}} for i in range(count)}  # fmt: skip


def start_in_place_writer(path: Path, delay: float, document: dict) -> subprocess.Popen[str]:
    writer = subprocess.Popen(
        [sys.executable, "-c", IN_PLACE_WRITER, str(path), str(delay), json.dumps(document, indent=2)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "truncated"
    assert path.read_bytes() == b"", "the writer did not leave the file empty: the test would prove nothing"
    return writer


def add_server(store: McpmStore, name: str) -> None:
    def add(snapshot) -> None:  # type: ignore[no-untyped-def]
        snapshot.servers[name] = ServerRecord.stdio(name, "uvx", [], {})

    store.update(add)


def test_a_change_during_an_in_place_write_keeps_the_writers_servers(tmp_path: Path) -> None:
    store = McpmStore(tmp_path)
    (tmp_path / "servers.json").write_text(json.dumps(servers_document(3)))
    writer = start_in_place_writer(tmp_path / "servers.json", 0.8, servers_document(404))
    try:
        add_server(store, "new")
    finally:
        writer.wait(timeout=30)
    servers = store.read().servers
    assert len(servers) == 405, "the in-place writer's servers were lost"
    assert "new" in servers


def test_a_file_that_stays_empty_is_refused_and_left_to_its_writer(tmp_path: Path) -> None:
    store = McpmStore(tmp_path)
    (tmp_path / "servers.json").write_text(json.dumps(servers_document(3)))
    writer = start_in_place_writer(tmp_path / "servers.json", SETTLE_SECONDS + 2, servers_document(50))
    try:
        with pytest.raises(StoreError, match=r"servers\.json is empty .*Nothing was written"):
            add_server(store, "new")
    finally:
        writer.wait(timeout=30)
    assert set(store.read().servers) == {f"s{i}" for i in range(50)}


def test_an_empty_file_is_read_as_an_empty_store_but_never_written_over(tmp_path: Path) -> None:
    (tmp_path / "servers.json").write_bytes(b"  \n")
    store = McpmStore(tmp_path)
    assert store.read().servers == {}
    with pytest.raises(StoreError, match=r"write \{\} into it"):
        add_server(store, "new")
    assert (tmp_path / "servers.json").read_bytes() == b"  \n"


def test_json_cut_short_mid_write_is_waited_for(tmp_path: Path) -> None:
    full = json.dumps(servers_document(20), indent=2)
    path = tmp_path / "servers.json"
    path.write_text(full[: len(full) // 2])  # what a reader sees halfway through an in-place write
    finisher = subprocess.Popen([sys.executable, "-c", "import time,sys; time.sleep(0.5); open(sys.argv[1],'w')"
                                 ".write(sys.argv[2])", str(path), full])  # fmt: skip
    try:
        add_server(McpmStore(tmp_path), "new")
    finally:
        finisher.wait(timeout=30)
    assert len(McpmStore(tmp_path).read().servers) == 21


# Rewrites a JSON file in place (truncate, then write) every `pause` seconds, each time with one more key (under
# `section`, or at the top level), from its own in-memory copy, as a program that never merges would, until `stop`
# exists. Before each write it looks at the file: its previous key missing means another writer replaced the file
# with content computed without it (a lost write; an edit computed from the writer's content keeps it).
# Prints "<writes> <lost>".
BUSY_WRITER = """
import json, os, sys, time
path, section, stop, pause = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
document = json.load(open(path))
entries = document.setdefault(section, {}) if section else document
writes = lost = 0

def written(key):
    while True:
        try:
            seen = json.load(open(path))
            return key in (seen.get(section, {}) if section else seen)
        except ValueError:
            time.sleep(0.001)

print("ready", flush=True)

while not os.path.exists(stop):
    if writes and not written(f"busy-{writes}"):
        lost += 1
    writes += 1
    entries[f"busy-{writes}"] = {"name": f"busy-{writes}", "profile_tags": [], "command": "uvx", "args": []}
    with open(path, "w") as f:
        json.dump(document, f, indent=2)
    time.sleep(pause)
lost += writes > 0 and not written(f"busy-{writes}")
print(writes, lost)
"""


def run_beside_busy_writer(path: Path, section: str, edit, seconds: float, pause: float) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """(writer's writes, writer's writes lost, edits made) for calls of `edit(n)` beside the writer for `seconds`."""
    stop = path.with_name("stop-writer")
    writer = subprocess.Popen(
        [sys.executable, "-c", BUSY_WRITER, str(path), section, str(stop), str(pause)],
        stdout=subprocess.PIPE,
        text=True,
    )
    made = 0
    assert writer.stdout is not None
    try:
        assert writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            try:
                edit(n)
                made += 1
            except JarvisError:
                pass  # "kept changing": refused with nothing written, which is allowed
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=30)
    writes, lost = (int(part) for part in out.split()) if out.strip() else (0, -1)
    return writes, lost, made


def test_edits_beside_a_busy_in_place_writer_lose_none_of_its_writes(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(servers_document(30), indent=2))
    store = McpmStore(tmp_path)
    writes, lost, made = run_beside_busy_writer(path, "", lambda n: add_server(store, f"jarvis-{n}"), 3.0, 0.01)
    assert writes > 50, "too little contention: the test would prove nothing"
    assert made >= 5, "Jarvis could not edit beside the writer"
    assert lost == 0, f"{lost} of the writer's {writes} writes were replaced by Jarvis's ({made} edits)"


def claude_file(home: Path) -> ClientFile:
    return ClientFile(CLIENTS["claude-code"], home / ".claude.json", home / ".config/mcpm")


def test_client_edits_beside_a_client_rewriting_its_file_lose_none_of_its_writes(tmp_path: Path) -> None:
    """Claude Code rewrites ~/.claude.json constantly; Jarvis's edits of its own entries never replace a write."""
    file = claude_file(tmp_path)
    file.path.write_text(json.dumps({"numStartups": 3, "mcpServers": {"mine": {"command": "x"}}}, indent=2))

    def edit(n: int) -> None:
        file.change({f"mcpm_s{n}": {"command": "mcpm", "args": ["run", f"s{n}"]}, f"mcpm_s{n - 1}": None})

    writes, lost, made = run_beside_busy_writer(file.path, "mcpServers", edit, 4.0, 0.03)
    assert writes > 50, "too little contention: the test would prove nothing"
    assert made >= 5, "Jarvis could not edit beside the client"
    assert lost == 0, f"{lost} of the client's {writes} writes were replaced by Jarvis's ({made} edits)"
    assert "mine" in json.loads(file.path.read_text())["mcpServers"]


def test_a_client_file_caught_mid_write_is_waited_for(tmp_path: Path) -> None:
    file = claude_file(tmp_path)
    document = {"numStartups": 3, "mcpServers": {f"user{i}": {"command": "x"} for i in range(30)}}
    file.path.write_text(json.dumps(document))
    writer = start_in_place_writer(file.path, 0.8, document)
    try:
        file.change({"mcpm_new": {"command": "mcpm", "args": ["run", "new"]}})
    finally:
        writer.wait(timeout=30)
    servers = json.loads(file.path.read_text())["mcpServers"]
    assert len(servers) == 31, "the client's entries were lost"


def test_temps_a_killed_writer_left_are_removed_by_the_next_change(tmp_path: Path) -> None:
    file = claude_file(tmp_path)
    file.path.write_text('{"mcpServers": {}}')
    backups = tmp_path / ".config/mcpm/backups/clients/claude-code"
    backups.mkdir(parents=True)
    strays = [tmp_path / "..claude.json.abc123.tmp", backups / ".20261121T000000Z-.claude.json.xyz.tmp"]
    for stray in strays:
        stray.write_text("x" * 1000)
    keep = tmp_path / ".other.json.abc.tmp"  # not a temp of this file: left alone
    keep.write_text("y")
    file.change({"mcpm_a": {"command": "mcpm", "args": ["run", "a"]}})
    assert not any(stray.exists() for stray in strays)
    assert keep.exists()
    assert [p.name for p in tmp_path.glob(".*.tmp")] == [keep.name]
