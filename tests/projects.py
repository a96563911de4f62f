"""Small real projects for jarvis_project's tests: pytest (passing, failing), node (`npm test`), a suite that
outlives its timeout (with a grandchild that ignores SIGTERM), and git repositories."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

PASSING_TEST = "def test_one():\n    assert 1 + 1 == 2\n\n\ndef test_two():\n    assert 'a' in 'abc'\n"
FAILING_TEST = (
    "def test_fine():\n    assert True\n\n\n"
    "def test_broken():\n    assert 1 + 1 == 3, 'arithmetic is broken'\n\n\n"
    "def test_also_broken():\n    raise RuntimeError('boom')\n"
)
NODE_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "test('adds', () => assert.strictEqual(1 + 1, 2));\n"
    "test('subtracts wrongly', () => assert.strictEqual(2 - 1, 3));\n"
)


def pytest_project(root: Path, *, failing: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "sample"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n')
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_sample.py").write_text(FAILING_TEST if failing else PASSING_TEST)
    return root


def node_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text('{"name": "sample", "version": "1.0.0", "scripts": {"test": "node --test"}}\n')
    (root / "test").mkdir(exist_ok=True)
    (root / "test" / "sample.test.js").write_text(NODE_TEST)
    return root


def slow_project(root: Path, timeout: float) -> tuple[Path, str]:
    """A configured suite `slow` that sleeps far past `timeout`, leaving a background sleeper and a grandchild
    that ignores SIGTERM. Returns the folder and a marker found in the command line of each of its processes."""
    root.mkdir(parents=True, exist_ok=True)
    marker = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 100000}"
    script = root / "run-slow.sh"
    script.write_text(
        f"#!/bin/sh\necho started slow suite\nsleep {marker} &\nsh -c \"trap '' TERM; sleep {marker}\" &\n"
        f"sleep {marker}\n"
    )
    script.chmod(0o755)
    (root / "jarvis.toml").write_text(f'[test_suites.slow]\ncommand = ["./run-slow.sh"]\ntimeout = {timeout}\n')
    return root, marker


def processes_with(marker: str) -> list[str]:
    """Command lines of live processes mentioning `marker` (zombies have an empty cmdline and are skipped)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, check=True)
    return done.stdout


def git_repo(root: Path) -> Path:
    """A repository with one commit, then a modified file, a staged new file and an untracked file."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (root / "README.md").write_text("# sample\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    (root / "app.py").write_text("def greet(name: str) -> str:\n    return f'hello {name}'\n")
    (root / "staged.py").write_text("STAGED = True\n")
    git(root, "add", "staged.py")
    (root / "notes.txt").write_text("untracked\n")
    return root
