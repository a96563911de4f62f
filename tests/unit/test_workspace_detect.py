"""analyze's detection and test's suite planning, on real files in a temporary monorepo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jarvis.errors import InvalidInput
from jarvis.settings import SuiteSettings
from jarvis.tools.jarvis_project import jarvis_project
from jarvis.workspace import detect, suites
from tests.fakes import call, fake_jarvis

PYPROJECT = """\
[project]
name = "api"
dependencies = ["fastapi>=0.110", "SQLAlchemy[asyncio]~=2.0", "pydantic"]
[project.optional-dependencies]
test = ["pytest>=8"]
"""
PACKAGE_JSON = """\
{"name": "web", "scripts": {"test": "vitest run", "build": "vite build"},
 "dependencies": {"react": "^18"}, "devDependencies": {"vite": "^5", "vitest": "^1", "typescript": "^5"}}
"""
GO_MOD = """\
module example.com/svc

go 1.22

require (
\tgithub.com/gin-gonic/gin v1.9.1
\tgithub.com/stretchr/testify v1.9.0
)
"""
COMPOSE = """\
services:
  api:
    build: ./api
  db:
    image: postgres:16
  cache:
    image: redis:7-alpine
"""
PRE_COMMIT = """\
repos:
  - repo: https://github.com/gitleaks/gitleaks
    rev: v8.21.2
    hooks:
      - id: gitleaks
"""


def monorepo(root: Path) -> Path:
    (root / "api").mkdir(parents=True)
    (root / "api" / "pyproject.toml").write_text(PYPROJECT)
    (root / "web").mkdir()
    (root / "web" / "package.json").write_text(PACKAGE_JSON)
    (root / "svc").mkdir()
    (root / "svc" / "go.mod").write_text(GO_MOD)
    (root / "svc" / "main_test.go").write_text("package main\n")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "package.json").write_text("{}")
    (root / "compose.yaml").write_text(COMPOSE)
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("name: CI\n")
    (root / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    (root / "README.md").write_text("# mono\n")
    (root / "Makefile").write_text("all:\n")
    return root


def test_monorepo_languages_frameworks_tests_compose_and_ci(tmp_path: Path) -> None:
    ws = detect.scan(monorepo(tmp_path))
    assert [(m.path, m.language) for m in ws.manifests] == [
        ("api/pyproject.toml", "python"),
        ("svc/go.mod", "go"),
        ("web/package.json", "typescript"),
    ]
    assert ws.frameworks == ["fastapi", "gin", "pydantic", "pytest", "react", "sqlalchemy", "testify", "vite", "vitest"]
    assert [t for m in ws.manifests for t in m.tests] == ["pytest", "go test", "npm test: vitest run"]
    assert ws.compose_files[0].services == {"api": "build", "db": "postgres:16", "cache": "redis:7-alpine"}
    assert ws.databases == ["postgres", "redis"]
    assert ws.ci == [".github/workflows/ci.yml"]
    assert ws.secrets_scanner == "gitleaks"
    assert ws.key_files == ["README.md", "Makefile"]
    assert ws.folders_with("python") == ["api"]


def test_analyze_report_is_compact_and_names_runnable_suites(tmp_path: Path) -> None:
    root = monorepo(tmp_path)
    text = call(jarvis_project, fake_jarvis(workspace_dir=root), action="analyze")
    assert text.splitlines()[0] == f"# analyze: {root} (not a git repository)"
    assert (
        "compose compose.yaml: api (build), db (postgres:16), cache (redis:7-alpine) — databases: postgres, redis"
        in text
    )
    assert "pre-commit: gitleaks (gitleaks)" in text
    assert "test suites: none" in text  # api/ and web/ are not where the default suites look
    (root / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    assert "test suites: node" in call(jarvis_project, fake_jarvis(workspace_dir=root), action="analyze")


def test_broken_files_are_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{not json")
    (tmp_path / "compose.yaml").write_text("services: [unclosed\n")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: {{{\n")
    ws = detect.scan(tmp_path)
    assert ws.manifests[0].tests == ["package.json is not valid JSON"]
    assert ws.compose_files[0].error.startswith("not valid YAML")
    assert ws.pre_commit_hooks == ["(not valid YAML)"]
    assert ws.secrets_scanner is None


def test_suite_plan_defaults_seed_folders_overrides_and_errors(tmp_path: Path) -> None:
    (tmp_path / "Jarvis").mkdir()
    (tmp_path / "Jarvis" / "go.mod").write_text("module x\n")
    (tmp_path / "MCPM").mkdir()
    (tmp_path / "MCPM" / "package.json").write_text("{}")
    plan = suites.plan(tmp_path, None, {}, shutil.which)
    assert [(s.name, s.command, s.cwd.name, s.timeout) for s in plan.suites] == [
        ("go", ("go", "test", "-v", "./..."), "Jarvis", 300),
        ("node", ("npm", "test"), "MCPM", 300),
    ]
    assert plan.budget == 1200
    assert plan.missing == []  # auto-detection names only what it found
    everything = suites.plan(tmp_path, "all", {}, shutil.which)
    assert everything.missing == [
        "integration: no scripts/tests/run-bats.sh in ./",
        "python: no pyproject.toml / setup.py / setup.cfg / pytest.ini / tox.ini / conftest.py in ./",
    ]
    with pytest.raises(InvalidInput, match="Valid suites: go, node, integration, python, all"):
        suites.plan(tmp_path, "invalid", {}, shutil.which)
    with pytest.raises(InvalidInput, match="Suite 'python' cannot run"):
        suites.plan(tmp_path, "python", {}, shutil.which)
    configured = {
        "go": SuiteSettings(timeout=5),
        "lint": SuiteSettings(command=["make", "lint"]),
        "all": SuiteSettings(suites=["lint", "go"], timeout=60),
    }
    assert suites.suite_names(configured) == ["go", "node", "integration", "python", "lint", "all"]
    plan = suites.plan(tmp_path, "all", configured, shutil.which)
    assert [(s.name, s.timeout) for s in plan.suites] == [("lint", 600.0), ("go", 5)]
    assert plan.budget == 60
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidInput, match="No test suite found"):
        suites.plan(empty, None, {}, shutil.which)


def test_package_and_verbose_narrow_the_default_commands(tmp_path: Path) -> None:
    go = suites.Suite("go", ("go", "test", "-v", "./..."), tmp_path, 300)
    assert suites.with_options(go, package="./pkg/x", verbose=False).command == ("go", "test", "-v", "./pkg/x")
    npm = suites.Suite("node", ("npm", "test"), tmp_path, 300)
    assert suites.with_options(npm, package="test/a.js", verbose=True).command == ("npm", "test", "--", "test/a.js")
    py = suites.Suite("python", ("pytest", "-rfE"), tmp_path, 300)
    assert suites.with_options(py, package="tests/a.py", verbose=True).command == ("pytest", "-rfE", "tests/a.py", "-v")
    with pytest.raises(InvalidInput, match="not an option"):
        suites.with_options(py, package="--rootdir=/", verbose=False)
