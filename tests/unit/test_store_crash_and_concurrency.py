"""MCPM's files under fire: an importing process killed at random instants (60 runs) never leaves a partial or
empty file, and after recovery the files are all old or all new; several writer processes lose no update."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from jarvis.store.mcpm_store import FILES, McpmStore
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_profile import jarvis_profile
from tests.fakes import call, fake_jarvis

RUNS = 60


def document(tag: str, size: int = 150) -> dict:
    """A full export whose every section says which document it came from."""
    servers = {f"{tag}-{i}": {"name": f"{tag}-{i}", "profile_tags": [tag], "enabled": None, "command": "uvx",
                              "args": ["x" * 200, str(i)], "env": {"N": str(i)}} for i in range(size)}  # fmt: skip
    return {
        "servers": servers,
        "profiles": {tag: {"name": tag, "api_key": None, "description": tag}},
        "clients": {"cursor": {"configPath": f"/tmp/mcp-{tag}.json"}},  # an import checks the folder exists
        "config": {"node_executable": "npx", "written_by": tag},
    }


def state(folder: Path) -> set[str]:
    """Which document each file holds."""
    read = {name: json.loads((folder / name).read_bytes()) for name in FILES}  # raises on a partial file
    return {
        next(iter(read["servers.json"])).split("-")[0],
        next(iter(read["profiles_metadata.json"])),
        read["clients.json"]["cursor"]["configPath"].removeprefix("/tmp/mcp-").removesuffix(".json"),
        read["config.json"]["written_by"],
    }


def importer(folder: Path, texts: list[str]) -> None:
    """The child: import A, B, A, B... forever (until killed)."""
    jarvis = fake_jarvis(mcpm_dir=folder)
    while True:
        for text in texts:
            call(jarvis_config, jarvis, action="import", data=text)


def test_killed_imports_leave_every_file_whole_and_all_files_consistent(tmp_path: Path) -> None:
    folder = tmp_path / "mcpm"
    texts = [json.dumps(document("A")), json.dumps(document("B"))]
    call(jarvis_config, fake_jarvis(mcpm_dir=folder), action="import", data=texts[0])
    random.seed(20261121)
    landed = set()
    for _run in range(RUNS):
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child never returns)
            try:
                importer(folder, texts)
            finally:
                os._exit(0)
        time.sleep(random.uniform(0.0, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for name in FILES:
            raw = (folder / name).read_bytes()
            assert raw.strip(), f"{name} is empty"
            json.loads(raw)  # each file alone is old or new, never partial
        McpmStore(folder).read()  # recovery: finishes a write the kill interrupted after its journal
        found = state(folder)
        assert found in ({"A"}, {"B"}), f"files from different imports after recovery: {found}"
        landed |= found
        assert not list(folder.glob(".*.tmp")), "a temp file survived recovery"
    assert landed == {"A", "B"}, "the kills never let an import finish: the test would prove nothing"


WRITER = """
import sys
from pathlib import Path
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis
jarvis = fake_jarvis(mcpm_dir=Path(sys.argv[1]))
me = sys.argv[2]
for i in range(int(sys.argv[3])):
    call(jarvis_server, jarvis, action="create", name=f"{me}-{i}", type="stdio", command="uvx")
    call(jarvis_profile, jarvis, action="edit", name="shared", add_servers=f"{me}-{i}")
"""


def test_concurrent_writer_processes_lose_no_update(tmp_path: Path) -> None:
    folder = tmp_path / "mcpm"
    call(jarvis_profile, fake_jarvis(mcpm_dir=folder), action="create", name="shared")
    writers, each = 4, 15
    root = Path(__file__).resolve().parents[2]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), f"w{n}", str(each)], cwd=root, stderr=subprocess.PIPE, text=True
        )
        for n in range(writers)
    ]
    for process in processes:
        _, err = process.communicate(timeout=240)
        assert process.returncode == 0, err
    snapshot = McpmStore(folder).read()
    expected = {f"w{n}-{i}" for n in range(writers) for i in range(each)}
    assert set(snapshot.servers) == expected
    assert set(snapshot.members("shared")) == expected
