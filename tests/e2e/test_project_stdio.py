"""jarvis_project through the real stdio server: every action, its error paths, progress while suites run."""

from __future__ import annotations

import re
import time
from pathlib import Path

import anyio
from mcp import Client

from tests.e2e.conftest import call, plain_client
from tests.projects import git_repo, node_project, processes_with, pytest_project, slow_project


def project_client(workspace: Path, config: Path | None = None) -> Client:
    return plain_client(*(["--config", str(config)] if config else []), JARVIS_WORKSPACE_DIR=str(workspace))


async def test_analyze_diff_and_devops_over_stdio(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    pytest_project(repo, failing=False)
    async with project_client(repo) as client:
        text, error = await call(client, "jarvis_project", action="analyze")
        assert not error
        assert text.splitlines()[0] == f"# analyze: {repo} (git)"
        assert "languages: python [pyproject.toml]" in text
        assert "test suites: python" in text
        text, error = await call(client, "jarvis_project", action="diff")
        assert not error
        assert "app.py  +2 -2" in text
        text, error = await call(client, "jarvis_project", action="diff", staged=True)
        assert not error
        assert "+STAGED = True" in text
        text, error = await call(client, "jarvis_project", action="devops")
        assert not error
        assert "written      .pre-commit-config.yaml" in text
        assert "not a git repository" not in text
        text, error = await call(client, "jarvis_project", action="devops")
        assert "kept         .gitignore" in text
        for arguments, message in (
            ({"action": "diff", "path": str(tmp_path)}, "is not inside a git repository"),
            ({"action": "analyze", "path": "no/such/folder"}, "is not a directory"),
            ({"action": "deploy"}, "Invalid action 'deploy'. Valid actions: analyze, diff, devops, test"),
            ({"action": "devops", "project_type": "cobol"}, "Valid project_types: python, go, node"),
        ):
            text, error = await call(client, "jarvis_project", **arguments)
            assert error, arguments
            assert message in text


async def test_test_suites_over_stdio(tmp_path: Path) -> None:
    passing = pytest_project(tmp_path / "ok", failing=False)
    failing = pytest_project(tmp_path / "bad", failing=True)
    node = node_project(tmp_path / "node")
    async with project_client(passing) as client:
        text, error = await call(client, "jarvis_project", action="test")
        assert not error
        assert text.startswith("# tests: python PASS")
        text, error = await call(client, "jarvis_project", action="test", path=str(failing))
        assert not error  # failing tests are a result, not a tool error
        assert "## python: FAIL (exit 1" in text
        assert "failing: tests/test_sample.py::test_broken" in text
        text, error = await call(client, "jarvis_project", action="test", path=str(node), suite="node")
        assert not error
        assert "— 1 passed, 1 failed (node --test)" in text
        text, error = await call(client, "jarvis_project", action="test", suite="invalid")
        assert error
        assert "Invalid suite 'invalid'. Valid suites: go, node, integration, python, all" in text
        text, error = await call(client, "jarvis_project", action="test", suite="go")
        assert error
        assert "Suite 'go' cannot run" in text


async def test_a_timed_out_suite_reports_progress_and_leaves_no_process(tmp_path: Path) -> None:
    root, marker = slow_project(tmp_path / "slow", timeout=3)
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with project_client(root, root / "jarvis.toml") as client:
        result = await client.call_tool(
            "jarvis_project", {"action": "test", "suite": "slow"}, progress_callback=on_progress
        )
        leftovers = processes_with(marker)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error
    assert text.startswith("# tests: slow TIMEOUT")
    assert leftovers == []
    assert any(re.fullmatch(r"suite slow running \(limit 3s\) \(\ds\)", m) for m in messages), messages


async def test_a_cancelled_test_call_kills_the_suites_process_group(tmp_path: Path) -> None:
    root, marker = slow_project(tmp_path / "slow", timeout=120)
    async with project_client(root, root / "jarvis.toml") as client:
        async with anyio.create_task_group() as group:

            async def cancel_once_the_suite_runs() -> None:
                while len(processes_with(marker)) < 3:
                    await anyio.sleep(0.05)
                group.cancel_scope.cancel()

            group.start_soon(cancel_once_the_suite_runs)
            await client.call_tool("jarvis_project", {"action": "test", "suite": "slow"})
        # The server kills the group before it lets the call go; the next call is served after that.
        text, error = await call(client, "jarvis_project", action="analyze")
        deadline = time.monotonic() + 30
        while processes_with(marker) and time.monotonic() < deadline:
            await anyio.sleep(0.1)
    assert not error, text
    assert processes_with(marker) == []
