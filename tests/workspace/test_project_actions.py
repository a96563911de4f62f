"""jarvis_project's diff, devops and test with real git, real files and real test processes (no Docker)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from jarvis.errors import InvalidInput, ProjectError
from jarvis.host import Host
from jarvis.settings import SuiteSettings, load_settings
from jarvis.tools.jarvis_project import jarvis_project
from jarvis.workspace import git_diff
from tests.fakes import call, fake_jarvis
from tests.projects import git, git_repo, node_project, processes_with, pytest_project, slow_project


def run(root: Path, **arguments: object) -> str:
    return call(jarvis_project, fake_jarvis(workspace_dir=root), **arguments)  # type: ignore[arg-type]


# diff


def test_diff_shows_status_per_file_summary_then_the_working_patch(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    text = run(repo, action="diff")
    lines = text.splitlines()
    assert lines[0] == f"# diff working tree vs index: {repo}"
    assert lines[1] == "branch: main"
    assert "status: 1 modified, 1 added, 1 untracked" in text
    assert "untracked files are not in the diff" in text
    assert "1 staged file(s) not shown (staged=True)" in text
    assert "## files (1, +added -deleted)\napp.py  +2 -2" in text
    assert "+def greet(name: str) -> str:" in text
    assert "STAGED = True" not in text
    assert "cut" not in text


def test_diff_staged_shows_only_the_index(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    text = run(repo, action="diff", staged=True)
    assert text.startswith(f"# diff staged (index vs HEAD): {repo}")
    assert "staged.py  +1 -0" in text
    assert "+STAGED = True" in text
    assert "greet" not in text
    assert "1 unstaged file(s) not shown (staged=False)" in text


def test_diff_of_a_clean_repo_and_outside_a_repo(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "all")
    text = run(repo, action="diff")
    assert "clean: nothing to commit" in text
    assert "no unstaged changes" in text
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ProjectError, match="is not inside a git repository"):
        run(plain, action="diff")
    with pytest.raises(InvalidInput, match="is not a directory"):
        run(repo, action="diff", path="missing")


def test_diff_runs_git_as_on_the_contexts_host(tmp_path: Path) -> None:
    """git is found on the host's PATH and reads the git configuration in the host's home folder."""
    repo = git_repo(tmp_path / "repo")
    with pytest.raises(ProjectError, match="git is not installed"):
        call(jarvis_project, fake_jarvis(workspace_dir=repo, host=bare_host(tmp_path)), action="diff")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[diff]\n\tnoprefix = true\n")  # patches say `app.py`, not `a/app.py`
    host = Host.of(home, {"PATH": os.environ["PATH"]})
    text = call(jarvis_project, fake_jarvis(workspace_dir=repo, host=host), action="diff")
    assert "--- app.py\n+++ app.py" in text
    assert "--- a/app.py" in run(repo, action="diff")


def test_a_large_diff_is_cut_to_the_budget_and_says_what_was_cut(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    for index in range(6):
        (repo / f"big{index}.txt").write_text("".join(f"line {n} of file {index}\n" for n in range(400)))
    git(repo, "add", ".")
    text = run(repo, action="diff", staged=True)
    assert "## files (9, +added -deleted)" in text
    assert "big5.txt  +400 -0" in text  # every file is in the summary
    cut_line = text.splitlines()[-1]
    assert cut_line.startswith(f"cut (budget {git_diff.PATCH_BUDGET} chars): big")
    assert "truncated at" in cut_line
    assert "file(s) omitted: " in cut_line
    patch = text.split("```diff\n", 1)[1].split("\n```", 1)[0]
    assert len(patch) <= git_diff.PATCH_BUDGET


# devops


def test_devops_writes_language_files_keeps_existing_and_overwrites_only_with_force(tmp_path: Path) -> None:
    root = pytest_project(tmp_path / "py", failing=False)
    node_project(root / "web")
    (root / ".gitignore").write_text("my-own-rule\n")
    text = run(root, action="devops")
    assert "languages: python, node" in text
    assert "written      .pre-commit-config.yaml" in text
    assert "kept         .gitignore (exists; force=true overwrites)" in text
    assert "written      .github/workflows/ci.yml" in text
    assert "not a git repository" in text
    assert (root / ".gitignore").read_text() == "my-own-rule\n"
    config = YAML(typ="safe").load((root / ".pre-commit-config.yaml").read_text())
    hooks = [hook["id"] for repo in config["repos"] for hook in repo["hooks"]]
    assert {"gitleaks", "ruff", "ruff-format", "prettier", "detect-private-key"} <= set(hooks)
    workflow = YAML(typ="safe").load((root / ".github/workflows/ci.yml").read_text())
    assert set(workflow["jobs"]) == {"pre-commit", "python", "node-web"}
    assert workflow["jobs"]["node-web"]["defaults"]["run"]["working-directory"] == "web"
    again = run(root, action="devops")
    assert again.count("kept ") == 3
    forced = run(root, action="devops", force=True, enable_ai_review=True)
    assert "overwritten  .gitignore" in forced
    assert "written      .github/workflows/pr_agent.yml" in forced
    assert "__pycache__/" in (root / ".gitignore").read_text()
    assert (root / ".gitignore").stat().st_mode & 0o777 == 0o644


def test_devops_project_type_overrides_detection(tmp_path: Path) -> None:
    text = run(tmp_path, action="devops", project_type="go")
    assert "languages: go" in text
    assert "gofmt" in (tmp_path / ".pre-commit-config.yaml").read_text()
    workflow = YAML(typ="safe").load((tmp_path / ".github/workflows/ci.yml").read_text())
    assert set(workflow["jobs"]) == {"pre-commit", "go"}
    with pytest.raises(InvalidInput, match=r"Valid project_types: python, go, node$"):
        run(tmp_path, action="devops", project_type="cobol")


# test


def test_passing_and_failing_pytest_projects(tmp_path: Path) -> None:
    passing = run(pytest_project(tmp_path / "ok", failing=False), action="test")
    assert passing.startswith("# tests: python PASS")
    assert "## python: PASS (exit 0, " in passing
    assert "— 2 passed (pytest)" in passing
    failing = run(pytest_project(tmp_path / "bad", failing=True), action="test", suite="python")
    assert failing.startswith("# tests: python FAIL")
    assert "— 1 passed, 2 failed (pytest)" in failing
    assert "failing: tests/test_sample.py::test_broken, tests/test_sample.py::test_also_broken" in failing
    assert "arithmetic is broken" in failing


def test_node_project_runs_npm_test(tmp_path: Path) -> None:
    text = run(node_project(tmp_path / "web"), action="test", project_type="javascript")
    assert text.startswith("# tests: node FAIL")
    assert "`npm test` in ./" in text
    assert "— 1 passed, 1 failed (node --test)" in text
    assert "failing: subtracts wrongly" in text
    narrowed = run(tmp_path / "web", action="test", suite="node", package="test/sample.test.js")
    assert "`npm test -- test/sample.test.js` in ./" in narrowed
    assert "— 1 passed, 1 failed (node --test)" in narrowed
    with pytest.raises(InvalidInput, match="not an option"):
        run(tmp_path / "web", action="test", suite="node", package="--test-name-pattern=adds")


def test_a_suite_past_its_timeout_is_killed_with_its_whole_process_group(tmp_path: Path) -> None:
    root, marker = slow_project(tmp_path / "slow", timeout=2)
    settings = load_settings(root / "jarvis.toml", environ={}, cwd=root)
    jarvis = fake_jarvis(workspace_dir=root, test_suites=settings.test_suites)
    ticks: list[tuple[float, float, str]] = []
    started = time.monotonic()
    try:
        text = call(jarvis_project, jarvis, action="test", suite="slow", progress=lambda *a: ticks.append(a))
    finally:
        leftovers = processes_with(marker)
    assert time.monotonic() - started < 15
    assert text.startswith("# tests: slow TIMEOUT")
    assert "## slow: TIMEOUT (" in text
    assert "killed after 2s" in text
    assert "started slow suite" in text
    assert leftovers == []
    assert [message for _, _, message in ticks] == ["suite slow running (limit 2s)"]


def test_unknown_suite_missing_command_and_composite_budget(tmp_path: Path) -> None:
    root = pytest_project(tmp_path / "p", failing=False)
    with pytest.raises(InvalidInput, match=r"'invalid'\. Valid suites: go, node, integration, python, all"):
        run(root, action="test", suite="invalid")
    with pytest.raises(InvalidInput, match=r"Invalid action 'lint'\. Valid actions: analyze, diff, devops, test"):
        run(root, action="lint")
    configured = {
        "ghost": SuiteSettings(command=["no-such-runner-xyz"]),
        "all": SuiteSettings(suites=["ghost", "python", "node"]),
    }
    jarvis = fake_jarvis(workspace_dir=root, test_suites=configured)
    text = call(jarvis_project, jarvis, action="test", suite="all")
    assert text.startswith("# tests: ghost ERROR, python PASS")
    assert "not run: node: no package.json in MCPM/ or ./" in text
    assert "## ghost: ERROR (0.0s) — could not start: `no-such-runner-xyz` is not on PATH: install" in text
    assert "## python: PASS" in text
    spent = {"all": SuiteSettings(suites=["python", "python"], timeout=0.001)}
    text = call(jarvis_project, fake_jarvis(workspace_dir=root, test_suites=spent), action="test")
    assert "not started: 0s budget spent" in text or "killed after 0s" in text


# test: a suite that cannot start is an ERROR saying what is missing, never a FAIL


def bare_host(tmp_path: Path, path: str = "") -> Host:
    """A machine whose PATH holds only `path`: no pytest, npm or go on it."""
    return Host.of(tmp_path / "home", {**os.environ, "PATH": path})


def test_a_virtualenv_without_pytest_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    root = pytest_project(tmp_path / "p", failing=False)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    jarvis = fake_jarvis(workspace_dir=root, host=bare_host(tmp_path, "/usr/bin:/bin"))
    text = call(jarvis_project, jarvis, action="test", suite="python")
    venv = root / ".venv"
    assert text.startswith("# tests: python ERROR"), text
    assert (
        f"## python: ERROR (0.0s) — could not start: pytest is not installed in {venv}: "
        f"`{venv}/bin/python -m pip install pytest`"
    ) in text
    assert "FAIL" not in text


@pytest.mark.parametrize(("suite", "project", "program"), [("node", node_project, "npm"), ("go", None, "go")])
def test_a_runner_missing_from_path_is_an_error_naming_the_fix(tmp_path: Path, suite: str, project, program) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "p"
    if project:
        project(root)
    else:
        root.mkdir()
        (root / "go.mod").write_text("module example.com/p\n\ngo 1.21\n")
    jarvis = fake_jarvis(workspace_dir=root, host=bare_host(tmp_path))
    text = call(jarvis_project, jarvis, action="test", suite=suite)
    assert text.startswith(f"# tests: {suite} ERROR"), text
    assert f"could not start: `{program}` is not on PATH: install" in text


def test_a_configured_command_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    root = pytest_project(tmp_path / "p", failing=False)
    configured = {"lint": SuiteSettings(command=["./scripts/lint.sh"])}
    text = call(jarvis_project, fake_jarvis(workspace_dir=root, test_suites=configured), action="test", suite="lint")
    assert "## lint: ERROR (0.0s) — could not start: ./scripts/lint.sh does not exist" in text
