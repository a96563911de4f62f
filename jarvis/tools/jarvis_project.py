"""`jarvis_project`: analyze, diff, devops, test on the code project (`path`, default the workspace directory).

Test failures are results, not tool errors: each suite gets a PASS/FAIL/TIMEOUT/ERROR header, its counts,
its failing tests and the tail of its output. Tool errors are for what cannot run: an unknown suite (the
valid ones are listed), a path that is not a folder, a diff outside a git repository.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal, assert_never

from pydantic import Field

from jarvis.errors import InvalidInput
from jarvis.pruning.pipeline import focus
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect
from jarvis.tools.args import FocusQuestion
from jarvis.user_files import user_path
from jarvis.workspace import detect, devops, git_diff, suites
from jarvis.workspace.suite_run import SuiteResult, cannot_start, run_suite

Action = Literal["analyze", "diff", "devops", "test"]
# `test` runs the project's own code, which may change anything; `devops` writes files.
EFFECTS: dict[Action, Effect] = {"analyze": "reads", "diff": "reads", "devops": "writes", "test": "writes"}
# Long operations (progress, cancellation, the call budget), each with what a cancellation leaves behind.
LONG: dict[Action, str] = {"test": "Suites not started were skipped."}
TAIL_LINES = {"PASS": 10, "FAIL": 40, "TIMEOUT": 40, "ERROR": 40}
TAIL_CHARS = 4000
VERBOSE_LINES = 300
VERBOSE_CHARS = 30_000
PYTEST_NO_TESTS = 5


def jarvis_project(
    jarvis: ToolContext,
    action: Action,
    path: Annotated[str | None, Field(description="default: workspace")] = None,
    staged: bool | None = None,
    suite: Annotated[str | None, Field(description="go|node|python|integration|all")] = None,
    project_type: suites.ProjectType | None = None,
    force: bool | None = None,
    enable_ai_review: bool | None = None,
    verbose: bool | None = None,
    package: str | None = None,
    context_focus_question: FocusQuestion = None,
) -> str:
    root = _folder(jarvis, path)
    match action:
        case "analyze":
            return analyze(jarvis, root)
        case "diff":
            return focus(
                context_focus_question,
                jarvis.settings,
                tool="jarvis_project.diff",
                execute=lambda: git_diff.review(root, staged=bool(staged), host=jarvis.host),
            )
        case "devops":
            workspace = detect.scan(root)
            return devops.apply(
                workspace, project_type=project_type, force=bool(force), ai_review=bool(enable_ai_review)
            )
        case "test":
            if suite is None and project_type is not None:
                suite = suites.PROJECT_TYPES[project_type]
            return focus(
                context_focus_question,
                jarvis.settings,
                tool="jarvis_project.test",
                execute=lambda: run_tests(jarvis, root, suite, package=package, verbose=verbose is True),
            )
        case _:
            assert_never(action)


def _folder(jarvis: ToolContext, path: str | None) -> Path:
    base = jarvis.settings.workspace_dir
    root = (base / user_path(path, "path", jarvis.host.home)).resolve() if path else base
    if not root.is_dir():
        raise InvalidInput(f"path {root} is not a directory (relative paths start at {base}).")
    return root


def analyze(jarvis: ToolContext, root: Path) -> str:
    ws = detect.scan(root)
    lines = [f"# analyze: {root}{' (git)' if ws.is_git else ' (not a git repository)'}"]
    lines.append("languages: " + (", ".join(f"{m.language} [{m.path}]" for m in ws.manifests) or "none detected"))
    with_frameworks = [m for m in ws.manifests if m.frameworks]
    if with_frameworks:
        lines.append("frameworks: " + "; ".join(f"{', '.join(m.frameworks)} [{m.path}]" for m in with_frameworks))
    tests = [f"{t} [{m.path}]" for m in ws.manifests for t in m.tests]
    lines.append("tests: " + ("; ".join(tests) or "none found"))
    for compose in ws.compose_files:
        services = ", ".join(f"{name} ({image})" for name, image in compose.services.items())
        databases = f" — databases: {', '.join(compose.databases)}" if compose.databases else ""
        lines.append(f"compose {compose.path}: {compose.error or services or 'no services'}{databases}")
    lines.append("ci: " + (", ".join(ws.ci) or "none"))
    if ws.pre_commit_hooks is None:
        lines.append("pre-commit: none")
    else:
        scanner = ws.secrets_scanner or "NO secrets scanner"
        lines.append(f"pre-commit: {', '.join(ws.pre_commit_hooks) or 'no hooks'} ({scanner})")
    lines.append("key files: " + (", ".join(ws.key_files) or "none"))
    runnable = suites.detected(root, jarvis.settings.test_suites, jarvis.host.which)
    lines.append("test suites: " + (", ".join(runnable) or "none (define [test_suites.NAME] in jarvis.toml)"))
    return "\n".join(lines)


def run_tests(jarvis: ToolContext, root: Path, name: str | None, *, package: str | None, verbose: bool) -> str:
    progress = jarvis.progress
    which = jarvis.host.which
    plan = suites.plan(root, name, jarvis.settings.test_suites, which)
    started = time.monotonic()
    results: list[SuiteResult] = []
    for suite in plan.suites:
        suite = suites.with_options(suite, package=package, verbose=verbose)
        spent = time.monotonic() - started
        left = plan.budget - spent
        if left <= 0:
            results.append(SuiteResult(suite, "TIMEOUT", 0.0, note=f"not started: {plan.budget:.0f}s budget spent"))
            continue
        timeout = min(suite.timeout, left)
        missing = cannot_start(suite, which)
        if missing:
            results.append(SuiteResult(suite, "ERROR", 0.0, note=f"could not start: {missing}"))
            continue
        progress(spent, plan.budget, f"suite {suite.name} running (limit {timeout:.0f}s)")
        results.append(run_suite(suite, timeout, jarvis.host.environ, jarvis.cancel))
    return _report(root, results, plan.missing, time.monotonic() - started, verbose=verbose)


def _report(root: Path, results: list[SuiteResult], missing: list[str], seconds: float, *, verbose: bool) -> str:
    verdicts = ", ".join(f"{r.suite.name} {r.status}" for r in results)
    lines = [f"# tests: {verdicts} — {root} ({seconds:.1f}s)"]
    if missing:
        lines.append("not run: " + "; ".join(missing))
    for result in results:
        lines += _suite_section(root, result, verbose=verbose)
    return "\n".join(lines)


def _suite_section(root: Path, result: SuiteResult, *, verbose: bool) -> list[str]:
    exit_text = f"exit {result.exit_code}, " if result.exit_code is not None else ""
    counts = result.counts.summary()
    note = result.note
    if result.exit_code == PYTEST_NO_TESTS and result.counts.runner == "pytest":
        note = "no tests collected"
    header = f"## {result.suite.name}: {result.status} ({exit_text}{result.seconds:.1f}s)"
    header += "".join(f" — {part}" for part in (counts, note) if part)
    cwd = result.suite.cwd.relative_to(root) if result.suite.cwd.is_relative_to(root) else result.suite.cwd
    lines = [header, f"`{' '.join(result.suite.command)}` in {cwd}/"]
    if result.counts.failing:
        lines.append("failing: " + ", ".join(result.counts.failing))
    if result.output.strip():
        max_lines = VERBOSE_LINES if verbose else TAIL_LINES[result.status]
        lines += _tail_block(result.output, max_lines, VERBOSE_CHARS if verbose else TAIL_CHARS, verbose=verbose)
    return lines


def _tail_block(output: str, max_lines: int, max_chars: int, *, verbose: bool) -> list[str]:
    all_lines = output.rstrip().splitlines()
    tail: list[str] = []
    used = 0
    for line in reversed(all_lines[-max_lines:]):
        if used + len(line) + 1 > max_chars:
            if not tail:  # one huge line: keep its end
                tail.append("…" + line[-max_chars:])
            break
        tail.append(line)
        used += len(line) + 1
    tail.reverse()
    block = ["```", *tail, "```"]
    if len(tail) < len(all_lines):
        more = "" if verbose else "; verbose=true shows more"
        block.insert(0, f"output: last {len(tail)} of {len(all_lines)} lines{more}")
    return block
