"""`context_focus_question` on the main server's output-heavy actions, over stdio: without it the answer is
exactly as before; with it the answer goes through the pruning pipeline and ends with its one metadata line.
The Docker sites (logs, docker_logs, rebuild) are in test_stdio.py, on its running stack."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.e2e.conftest import call, plain_client
from tests.projects import git, git_repo, pytest_project

METADATA = ("[pruned by ", "[not pruned: ")


def last_line(text: str) -> str:
    return text.rstrip().splitlines()[-1]


async def test_test_and_diff_answers_are_pruned_to_the_question(tmp_path: Path) -> None:
    failing = pytest_project(tmp_path / "bad", failing=True)
    repo = git_repo(tmp_path / "repo")
    for n in range(60):  # a diff with much that does not answer the question
        (repo / f"module_{n}.py").write_text(f"VALUE_{n} = {n}\n")
    (repo / "settings.py").write_text("TIMEOUT = 30\nRETRIES = 5\n")
    git(repo, "add", "-A")
    async with plain_client(JARVIS_WORKSPACE_DIR=str(repo)) as client:
        raw, error = await call(client, "jarvis_project", action="test", path=str(failing))
        assert not error
        assert not last_line(raw).startswith(METADATA)
        focused, error = await call(
            client,
            "jarvis_project",
            action="test",
            path=str(failing),
            context_focus_question="why did test_broken fail?",
        )
        assert not error
        assert last_line(focused).startswith(METADATA)
        assert "arithmetic is broken" in focused
        raw, _ = await call(client, "jarvis_project", action="diff", staged=True)
        assert not last_line(raw).startswith(METADATA)
        focused, error = await call(
            client, "jarvis_project", action="diff", staged=True, context_focus_question="what is the TIMEOUT?"
        )
        assert not error
        assert last_line(focused).startswith("[pruned by ")
        assert "+TIMEOUT = 30" in focused
        assert len(focused) < len(raw) / 2


async def test_build_output_and_errors_never_pruned(tmp_path: Path) -> None:
    async with plain_client(JARVIS_MCPM_DIR=str(tmp_path / "mcpm")) as client:
        text, error = await call(
            client, "jarvis_system", action="build", component="mcpm", context_focus_question="ok?"
        )
        assert not error
        assert last_line(text).startswith(METADATA)
        text, error = await call(
            client, "jarvis_project", action="diff", path=str(tmp_path), context_focus_question="what changed?"
        )
        assert error  # not a git repository: a tool error, never pruned
        assert not last_line(text).startswith(METADATA)


async def test_pruning_off_answers_whole_and_says_so(tmp_path: Path) -> None:
    failing = pytest_project(tmp_path / "bad", failing=True)
    async with plain_client(JARVIS_PRUNER="off") as client:
        text, error = await call(
            client, "jarvis_project", action="test", path=str(failing), context_focus_question="why?"
        )
        assert not error
        assert last_line(text).startswith("[not pruned: ")
        assert "test_also_broken" in text


async def test_jarvis_client_wires_the_files_server_and_the_entry_really_serves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    workspace = tmp_path / "code"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    environ = {"HOME": str(home), "JARVIS_WORKSPACE_DIR": str(workspace), "JARVIS_MCPM_DIR": str(tmp_path / "mcpm")}
    async with plain_client(**environ) as client:
        text, error = await call(
            client, "jarvis_client", action="edit", client_name="cursor", add_servers=["jarvis-files"]
        )
        assert not error, text
        assert "added jarvis-files" in text
        listed, _ = await call(client, "jarvis_client", action="list")
        assert "servers: jarvis-files" in listed
    entry = json.loads((home / ".cursor/mcp.json").read_text())["mcpServers"]["jarvis-files"]
    assert entry["command"] == sys.executable
    # The entry as a client would start it.
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    async with Client(params) as files:
        assert [t.name for t in (await files.list_tools()).tools] == ["read", "bash", "grep"]
        read = await files.call_tool("read", {"file_path": "notes.txt"})
        assert "beta" in read.content[0].text  # type: ignore[union-attr]
    async with plain_client(**environ) as client:
        text, error = await call(
            client, "jarvis_client", action="edit", client_name="cursor", remove_servers=["jarvis-files"]
        )
        assert not error
        assert "removed jarvis-files" in text
    assert json.loads((home / ".cursor/mcp.json").read_text())["mcpServers"] == {}
