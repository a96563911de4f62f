"""`jarvis files serve` over stdio with a real MCP client: read, bash, grep, pruning, timeouts and cancellation
leaving no process behind; and `jarvis pruner serve` answered by a real HTTP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.servers.loopback import _serving, free_port


def files_client(root: Path, **env: str) -> Client:
    environ = {**os.environ, "JARVIS_FILES_ROOT": str(root), **env}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "jarvis", "files", "serve"], env=environ))


async def call(client: Client, tool: str, **arguments: object) -> tuple[str, bool]:
    result = await client.call_tool(tool, arguments)
    return "\n".join(block.text for block in result.content), bool(result.is_error)  # type: ignore[union-attr]


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def wait_until_gone(pid: int, seconds: float = 15) -> bool:
    """Bounded wait in the event loop (the client must keep running to deliver a cancellation)."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return not alive(pid)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    raise KeyError('user')\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 100)
    return tmp_path


# A grandchild that ignores SIGTERM, whose pid lands in a file: only SIGKILL of the whole group ends it.
STUBBORN = "sh -c 'trap \"\" TERM; echo $$ > grandchild.pid; while true; do sleep 1; done' & sleep 1000"


async def test_tools_are_listed_with_the_focus_question(root: Path) -> None:
    async with files_client(root) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["bash", "grep", "read"]
    for tool in tools.values():
        assert "context_focus_question" in tool.input_schema["properties"]
    assert tools["read"].annotations.read_only_hint is True
    assert tools["bash"].annotations.destructive_hint is True


async def test_read_whole_windowed_and_errors(root: Path) -> None:
    async with files_client(root) as client:
        whole, error = await call(client, "read", file_path="src/app.py")
        assert (whole, error) == ("def main():\n    raise KeyError('user')\n", False)
        window, _ = await call(client, "read", file_path="notes.txt", around_line=50, radius=1)
        assert window == "49: line 49\n50: line 50\n51: line 51"
        ranged, _ = await call(client, "read", file_path=str(root / "notes.txt"), start_line=99)
        assert ranged == " 99: line 99\n100: line 100"
        missing, error = await call(client, "read", file_path="nope.txt")
        assert error
        assert "nope.txt does not exist" in missing
        binary, error = await call(client, "read", file_path="blob.bin")
        assert error
        assert "binary" in binary
        past_the_end, error = await call(client, "read", file_path="notes.txt", start_line=500)
        assert error  # depends on the file: a tool error, not invalid params
        assert "notes.txt has 100 lines" in past_the_end


async def test_bash_output_shape_and_exit_code(root: Path) -> None:
    async with files_client(root) as client:
        text, error = await call(client, "bash", command="pwd; echo oops >&2; exit 3")
        assert not error  # a failing command is a result the agent reads, not a tool error
        assert text == f"{root}\n[stderr]\noops\n[exit code: 3]"
        assert await call(client, "bash", command="true") == ("(no output)", False)
        many, _ = await call(client, "bash", command="seq 1 5000")
        assert "(truncated 3000 lines)" in many
        assert many.splitlines()[0] == "1"
        assert many.splitlines()[-1] == "5000"


async def test_grep_blocks_no_matches_and_bad_patterns(root: Path) -> None:
    async with files_client(root) as client:
        one, _ = await call(client, "grep", pattern="KeyError", path="src")
        assert one == "src/app.py:2:    raise KeyError('user')"
        several, _ = await call(client, "grep", patterns=["line 7$", "absent-word"], max_matches=1)
        assert several == "== pattern: line 7$ ==\nnotes.txt:7:line 7\n== pattern: absent-word ==\n(no matches found)"
        assert await call(client, "grep", pattern="zzz-not-here") == ("(no matches found)", False)
        capped, _ = await call(client, "grep", pattern="line", path="notes.txt", max_matches=3)
        assert capped.splitlines()[-1] == "(stopped at max_matches=3; narrow the pattern or path)"


# (tool, arguments, what the error names): schema, type, range and cross-argument rules, all before anything runs.
INVALID_CALLS: list[tuple[str, dict[str, object], str]] = [
    ("read", {"file_path": "notes.txt", "radius": 9999}, "radius: Input should be less than or equal to 500"),
    ("read", {"file_path": "notes.txt", "start_line": "three"}, "start_line: Input should be a valid integer"),
    ("read", {"start_line": 1}, "file_path: Field required"),
    ("read", {"file_path": "notes.txt", "around_line": 3, "start_line": 1}, "Give either around_line"),
    ("read", {"file_path": "notes.txt", "start_line": 9, "end_line": 2}, "end_line 2 is before start_line 9"),
    ("bash", {"command": "true", "timeout_s": -1}, "timeout_s: Input should be greater than 0"),
    ("bash", {"command": ""}, "command: String should have at least 1 character"),
    ("grep", {"pattern": "("}, "Invalid regular expression '('"),
    ("grep", {"pattern": "a", "patterns": ["b"]}, "Give pattern (one regular expression) or patterns"),
    ("grep", {"pattern": "a", "context_lines": 51}, "context_lines: Input should be less than or equal to 50"),
    ("grep", {"patterns": []}, "patterns: List should have at least 1 item"),
]


async def test_invalid_arguments_are_json_rpc_invalid_params(root: Path) -> None:
    async with files_client(root) as client:
        for tool, arguments, named in INVALID_CALLS:
            with pytest.raises(MCPError) as rejected:
                await client.call_tool(tool, arguments)
            assert rejected.value.code == INVALID_PARAMS, (tool, arguments)
            assert rejected.value.message.startswith(f"Invalid params for {tool}: ")
            assert named in rejected.value.message
        assert (await call(client, "read", file_path="src/app.py"))[1] is False  # the session goes on


async def test_focus_question_prunes_with_the_builtin_pruner(root: Path) -> None:
    command = "for i in $(seq 1 300); do echo \"request $i served\"; done; echo 'ERROR: disk /data is full'; exit 1"
    async with files_client(root) as client:
        raw, _ = await call(client, "bash", command=command)
        pruned, error = await call(client, "bash", command=command, context_focus_question="why did it fail? disk")
    assert not error
    assert "[pruned by" not in raw
    lines = pruned.splitlines()
    assert "ERROR: disk /data is full" in lines
    assert lines[-2] == "[exit code: 1]"
    assert lines[-1].startswith("[pruned by bm25: 301 -> ")
    assert len(pruned) < len(raw) / 3


async def test_pruner_off_says_so_and_returns_everything(root: Path) -> None:
    async with files_client(root, JARVIS_PRUNER="off") as client:
        text, _ = await call(client, "read", file_path="notes.txt", context_focus_question="line 5?")
    assert text.endswith("line 100\n\n[not pruned: pruning is off (JARVIS_PRUNER=off), full output]")


async def test_bash_timeout_kills_the_whole_group_including_a_stubborn_grandchild(root: Path) -> None:
    async with files_client(root) as client:
        text, error = await call(client, "bash", command=STUBBORN, timeout_s=2)
    assert error
    assert text.startswith("Command timed out after 2 s; killed its process group (")
    pid = int((root / "grandchild.pid").read_text())
    assert await wait_until_gone(pid), f"grandchild {pid} outlived the timeout"


async def test_cancellation_kills_the_whole_group(root: Path) -> None:
    async with files_client(root) as client:
        with anyio.move_on_after(3):
            await client.call_tool("bash", {"command": STUBBORN, "timeout_s": 600})
        pid_file = root / "grandchild.pid"
        assert pid_file.exists()
        pid = int(pid_file.read_text())
        assert await wait_until_gone(pid), f"grandchild {pid} outlived the cancellation"
        # The server keeps serving after a cancelled call.
        assert await call(client, "bash", command="echo still here") == ("still here", False)


def test_stdout_carries_only_json_rpc(root: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "bash", "arguments": {"command": "echo to-stdout; echo to-stderr >&2",
                                                  "context_focus_question": "stdout?"}}},
    ]  # fmt: skip
    (root / "requests.jsonl").write_text("".join(json.dumps(m) + "\n" for m in messages))
    # stdin stays open a while after the requests, so the server answers before it sees end of input.
    done = subprocess.run(
        f"(cat requests.jsonl; sleep 5) | {sys.executable} -m jarvis files serve",
        shell=True,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "JARVIS_FILES_ROOT": str(root)},
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 2
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert "to-stdout" in lines[1]
    assert "tool.request_received" in done.stderr


@pytest.fixture
def pruner_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "jarvis", "pruner", "serve", "--port", str(port)]
    with _serving(command, port):
        yield f"http://127.0.0.1:{port}"


def test_pruner_serve_answers_swe_pruner_clients(pruner_url: str) -> None:
    code = "\n".join([*(f"GET /item/{n} 200" for n in range(100)), "POST /orders 500 KeyError: 'total'"])
    with httpx2.Client(timeout=30, trust_env=False) as http:
        assert http.get(f"{pruner_url}/health").json() == {"status": "healthy", "model_loaded": True, "pruner": "bm25"}
        answer = http.post(
            f"{pruner_url}/prune", json={"query": "why did KeyError happen?", "code": code, "threshold": 0.5}
        )
        bad = http.post(f"{pruner_url}/prune", json={"query": "no code"})
    assert answer.status_code == 200
    payload = answer.json()
    assert "POST /orders 500 KeyError: 'total'" in payload["pruned_code"].splitlines()
    assert 101 in payload["kept_frags"]
    assert payload["left_token_cnt"] < payload["origin_token_cnt"]
    assert bad.status_code == 422
    assert "code" in json.dumps(bad.json())


async def test_the_http_pruner_setting_uses_jarvis_pruner_serve(root: Path, pruner_url: str) -> None:
    async with files_client(root, JARVIS_PRUNER_URL=f"{pruner_url}/prune") as client:
        command = "for i in $(seq 1 200); do echo ok $i; done; echo 'fatal: ECONNREFUSED db:5432'"
        text, _ = await call(client, "bash", command=command, context_focus_question="ECONNREFUSED?")
    assert "fatal: ECONNREFUSED db:5432" in text.splitlines()
    assert text.splitlines()[-1].startswith("[pruned by http: 201 -> ")
