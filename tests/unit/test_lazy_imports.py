"""`jarvis serve` lists its tools without importing docker-py, python-on-whales or requests (together about
150 ms of start-up), and from the second start on without importing the tools themselves (the tool list is
cached); the first call that needs one imports it. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("docker", "python_on_whales", "requests")

LIST_TOOLS = """
import contextlib, io, sys
from jarvis.cli import main
with contextlib.redirect_stdout(io.StringIO()) as listed:
    assert main(["tools"]) == 0
assert '"name": "jarvis_check_status"' in listed.getvalue()
print(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:])))
"""

# `jarvis serve` as it starts, up to the transport: what the transport is handed is listed, with the modules
# imported by then (the warm-up, which imports the rest, runs only once a client has connected).
SERVE_START = """
import anyio, json, sys
import jarvis.stdio
from jarvis.cli import main

async def transport(server, wire, warm_up):
    listed = [tool.model_dump(by_alias=True, exclude_none=True) for tool in await server.list_tools()]
    print(json.dumps({"tools": listed, "modules": sorted(sys.modules)}))

jarvis.stdio.serve = transport
assert main(["serve"]) == 0
"""
NOT_AT_START = ("docker", "python_on_whales", "requests", "tenacity", "filelock", "jarvis.tools.", "jarvis.store")

FIRST_USE = """
import sys
from adapters.factory import build_runner
from jarvis.settings import load_settings
runner = build_runner(load_settings(None))
before = "docker" in sys.modules
runner.observe.engine_info  # the first use of the observe adapter builds it (no call is made here)
print(before, "docker" in sys.modules, type(runner.observe._adapter).__name__)
"""


# The first calls of a session may arrive together: each worker thread then imports a Docker library first.
CONCURRENT_FIRST_USE = """
import threading
from jarvis.compose_project import ComposeCliProject
from adapters.factory import build_runner
from jarvis.settings import load_settings
settings = load_settings(None).model_copy(update={"lifecycle_adapter": "whales", "observe_adapter": "dockerpy"})
project = ComposeCliProject(settings)
runner = build_runner(settings, project)
uses = [lambda: runner.lifecycle.compose_up, lambda: runner.observe.compose_ps, lambda: project.client] * 2
start = threading.Barrier(len(uses))
errors = []
def use(touch):
    start.wait()
    try:
        touch()
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=use, args=(touch,)) for touch in uses]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors)
"""


def run_python(code: str, cwd: Path, *args: str, **extra_env: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")} | extra_env
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, env=env, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_listing_the_tools_imports_no_docker_library(tmp_path: Path) -> None:
    assert run_python(LIST_TOOLS, tmp_path, *HEAVY) == "[]"


def started(tmp_path: Path) -> dict[str, list]:
    return json.loads(run_python(SERVE_START, tmp_path, XDG_CACHE_HOME=str(tmp_path / "cache")))


def test_a_second_start_lists_the_cached_tools_without_importing_them(tmp_path: Path) -> None:
    first = started(tmp_path)
    assert len(list((tmp_path / "cache" / "jarvis").glob("tools-*.json"))) == 1
    assert any(name.startswith("jarvis.tools.") for name in first["modules"])  # built: the tools were imported
    second = started(tmp_path)
    assert second["tools"] == first["tools"]
    assert [tool["name"] for tool in second["tools"]][:2] == ["jarvis_check_status", "jarvis_system"]
    imported = [name for name in second["modules"] if name.startswith(NOT_AT_START)]
    assert imported == []


@pytest.mark.parametrize("damage", ["", "{not json", "[1, 2]", '[{"no": "name"}]'])
def test_a_damaged_cached_list_is_rebuilt(tmp_path: Path, damage: str) -> None:
    first = started(tmp_path)
    (cached,) = (tmp_path / "cache" / "jarvis").glob("tools-*.json")
    cached.write_text(damage)
    assert started(tmp_path)["tools"] == first["tools"]
    assert json.loads(cached.read_text()) == first["tools"]


def test_an_unwritable_cache_folder_costs_only_the_build(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder would be")
    assert [tool["name"] for tool in started(tmp_path)["tools"]][-1] == "jarvis_share"


def test_an_adapter_is_built_and_its_library_imported_on_first_use(tmp_path: Path) -> None:
    assert run_python(FIRST_USE, tmp_path) == "False True DockerPyAdapter"


def test_first_uses_from_several_threads_at_once_all_succeed(tmp_path: Path) -> None:
    # docker-py imports itself in a cycle: two threads importing it at once failed about every other time.
    for _ in range(4):
        assert run_python(CONCURRENT_FIRST_USE, tmp_path) == "[]"
