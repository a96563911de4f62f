"""The test suites `jarvis_project test` knows: the defaults, jarvis.toml's overrides, auto-detection.

Defaults: `go` = `go test -v ./...` in `Jarvis/` (5 min), `node` = `npm test` in `MCPM/` (5 min),
`integration` = `./scripts/tests/run-bats.sh` at the root (10 min), `all` = each in turn (20 min in total).
Jarvis adds `python` (pytest, 10 min). A default suite runs in the first of its folders that holds its marker
file, so a plain Go or Node project works too; `[test_suites.NAME]` in jarvis.toml replaces any field.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator

from jarvis.errors import InvalidInput, quoted
from jarvis.settings import SuiteSettings

COMPOSITE = "all"
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")


@dataclass(frozen=True)
class DefaultSuite:
    command: tuple[str, ...]
    folders: tuple[str, ...]  # candidates, first holding a marker wins
    markers: tuple[str, ...]
    timeout: float


DEFAULTS = {
    "go": DefaultSuite(("go", "test", "-v", "./..."), ("Jarvis", "."), ("go.mod",), 300),
    "node": DefaultSuite(("npm", "test"), ("MCPM", "."), ("package.json",), 300),
    "integration": DefaultSuite(("./scripts/tests/run-bats.sh",), (".",), ("scripts/tests/run-bats.sh",), 600),
    "python": DefaultSuite(("pytest", "-rfE"), (".",), PYTHON_MARKERS, 600),
}
ALL_TIMEOUT = 1200.0
# `project_type`: the language whose suite runs (or whose devops files are written) instead of the detected
# ones; `javascript` and `typescript` are read as `node`, whose tooling serves both.
NODE_ALIASES = ("javascript", "typescript")
ProjectType = Annotated[
    Literal["python", "go", "node"], BeforeValidator(lambda value: "node" if value in NODE_ALIASES else value)
]
PROJECT_TYPES: dict[ProjectType, str] = {"python": "python", "go": "go", "node": "node"}


@dataclass(frozen=True)
class Suite:
    name: str
    command: tuple[str, ...]
    cwd: Path
    timeout: float


@dataclass(frozen=True)
class Plan:
    """What one `test` call runs: suites in order within a total time budget; `missing` explains the skipped."""

    suites: list[Suite]
    budget: float
    missing: list[str]


def suite_names(configured: dict[str, SuiteSettings]) -> list[str]:
    return [*DEFAULTS, *(n for n in configured if n not in DEFAULTS and n != COMPOSITE), COMPOSITE]


Which = Callable[[str], str | None]  # a PATH look-up (`shutil.which`, or the host's)


def plan(root: Path, name: str | None, configured: dict[str, SuiteSettings], which: Which) -> Plan:
    """Resolve `suite` (None = auto-detect) into the suites to run. Unknown names are a tool error."""
    valid = suite_names(configured)
    if name is not None and name not in valid:
        raise InvalidInput.choice("suite", name, valid)
    if name is None or name == COMPOSITE:
        composite = configured.get(COMPOSITE, SuiteSettings())
        members = composite.suites or [n for n in valid if n != COMPOSITE]
        budget = composite.timeout or ALL_TIMEOUT
        suites, missing = [], []
        for member in members:
            if member not in valid or member == COMPOSITE:
                raise InvalidInput(f"test_suites.all lists unknown suite '{member}'. Suites: {', '.join(valid)}")
            suite, why = _resolve(root, member, configured.get(member), which)
            if suite:
                suites.append(suite)
            else:
                missing.append(f"{member}: {why}")
        if not suites:
            raise InvalidInput(
                f"No test suite found in {root} ({'; '.join(missing)}). "
                f"Name one (suite: {', '.join(valid)}) or define [test_suites.NAME] in jarvis.toml."
            )
        # Auto-detection names only what it found; an explicit `all` also says what it could not run.
        return Plan(suites, budget, missing if name == COMPOSITE else [])
    suite, why = _resolve(root, name, configured.get(name), which)
    if suite is None:
        raise InvalidInput(f"Suite {quoted(name)} cannot run in {root}: {why}.")
    return Plan([suite], suite.timeout, [])


def detected(root: Path, configured: dict[str, SuiteSettings], which: Which) -> list[str]:
    """Suites that can run here, the ones `test` without a suite runs."""
    names = [n for n in suite_names(configured) if n != COMPOSITE]
    return [n for n in names if _resolve(root, n, configured.get(n), which)[0] is not None]


def _resolve(root: Path, name: str, override: SuiteSettings | None, which: Which) -> tuple[Suite | None, str]:
    override = override or SuiteSettings()
    default = DEFAULTS.get(name)
    if override.cwd is not None:
        cwd = (root / override.cwd).resolve()
        if not cwd.is_dir():
            return None, f"its folder {cwd} (jarvis.toml test_suites.{name}.cwd) does not exist"
    elif default is not None:
        found = next((root / f for f in default.folders if any((root / f / m).exists() for m in default.markers)), None)
        if found is None:
            places = " or ".join(f"{f}/" for f in default.folders)
            return None, f"no {' / '.join(default.markers)} in {places}"
        cwd = found.resolve()
    else:
        cwd = root
    if override.command:
        command = tuple(override.command)
    elif default is not None:
        command = python_command(cwd, which) if name == "python" else default.command
    else:
        return None, f"jarvis.toml test_suites.{name} has no command"
    timeout = override.timeout or (default.timeout if default else 600.0)
    return Suite(name, command, cwd, timeout), ""


def python_command(cwd: Path, which: Which) -> tuple[str, ...]:
    """The project's own interpreter when it has a virtualenv, else `pytest` on PATH, else Jarvis's Python."""
    for venv in (".venv", "venv"):
        python = cwd / venv / "bin" / "python"
        if python.is_file():
            return (str(python), "-m", "pytest", "-rfE")
    if which("pytest"):
        return ("pytest", "-rfE")
    return (sys.executable, "-m", "pytest", "-rfE")


def with_options(suite: Suite, *, package: str | None, verbose: bool) -> Suite:
    """`package` narrows the run (go: replaces ./..., npm: after `--`, else appended); `verbose` asks pytest for -v."""
    command = list(suite.command)
    if package:
        if package.startswith("-"):
            raise InvalidInput(f"Invalid package {quoted(package)}: a path or package name, not an option.")
        if command[-1] == "./..." and command[:2] == ["go", "test"]:
            command[-1] = package
        elif command[:2] == ["npm", "test"]:
            command += ["--", package]
        else:
            command.append(package)
    if verbose and "pytest" in " ".join(command) and "-v" not in command:
        command.append("-v")
    return Suite(suite.name, tuple(command), suite.cwd, suite.timeout)
