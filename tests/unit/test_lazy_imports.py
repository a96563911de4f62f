"""`jarvis serve` lists its tools without importing docker-py, python-on-whales or requests (together about
150 ms of start-up); the first call that needs one imports it. Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("docker", "python_on_whales", "requests")

LIST_TOOLS = """
import contextlib, io, sys
from jarvis.cli import main
with contextlib.redirect_stdout(io.StringIO()) as listed:
    assert main(["tools"]) == 0
assert '"name": "jarvis_check_status"' in listed.getvalue()
print(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:])))
"""

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


def run_python(code: str, cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_listing_the_tools_imports_no_docker_library(tmp_path: Path) -> None:
    assert run_python(LIST_TOOLS, tmp_path, *HEAVY) == "[]"


def test_an_adapter_is_built_and_its_library_imported_on_first_use(tmp_path: Path) -> None:
    assert run_python(FIRST_USE, tmp_path) == "False True DockerPyAdapter"


def test_first_uses_from_several_threads_at_once_all_succeed(tmp_path: Path) -> None:
    # docker-py imports itself in a cycle: two threads importing it at once failed about every other time.
    for _ in range(4):
        assert run_python(CONCURRENT_FIRST_USE, tmp_path) == "[]"
