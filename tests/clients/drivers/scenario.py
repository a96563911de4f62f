"""The one scenario every MCP client runs against `jarvis serve`; each driver adapts its client to `Session`.

This file runs inside each client's own virtualenv (no Jarvis, no pytest there): standard library and anyio only.
A driver is called as `python DRIVER.py SPEC.json` and prints the report (JSON) as its last stdout line; the
test in tests/clients reads it. Every step is bounded; the server is stopped when the client's context closes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import anyio

STEP_TIMEOUT = 60.0  # seconds for any one step
GONE_WAIT = 30.0  # seconds a cancelled suite gets to disappear
Progress = Callable[[float, float | None, str | None], Awaitable[None]]
Answer = tuple[str, bool]  # (text, is_error)


class Session(Protocol):
    protocol: str

    async def tools(self) -> dict[str, dict[str, Any]]:
        """Tool name -> its input schema."""
        ...

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: Progress | None = None) -> Answer: ...

    async def call_then_cancel(
        self, tool: str, arguments: dict[str, Any], ready: Callable[[], bool], on_progress: Progress
    ) -> None:
        """Start the call, wait until `ready()`, then cancel it the way this client does; return once the
        cancellation is sent."""
        ...


def load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text())
    return spec


def report(result: dict[str, Any]) -> None:
    sys.stdout.flush()
    print(json.dumps(result), flush=True)


async def wait_until(ready: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.1)
    return True


async def abandon_when_ready(call: Callable[[], Awaitable[object]], ready: Callable[[], bool]) -> None:
    """Start `call`, and cancel its scope once `ready()`: a client on the `mcp` 2.x SDK then sends
    notifications/cancelled for the abandoned request."""
    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await wait_until(ready, STEP_TIMEOUT)
        group.cancel_scope.cancel()


def alive(pid: int) -> bool:
    """A live process (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


async def run(session: Session, spec: dict[str, Any]) -> dict[str, Any]:
    """tools listed, a read, a tool error, progress during a long call, a cancellation honoured, a background
    operation fetched (the last two only when jarvis_check_status takes `operation`; the tests then fail)."""
    result: dict[str, Any] = {"protocol": session.protocol}
    with anyio.fail_after(STEP_TIMEOUT):
        schemas = await session.tools()
    result["tools"] = list(schemas)
    check_status = schemas.get("jarvis_check_status", {}).get("properties", {})
    result["long_operations"] = "operation" in check_status
    with anyio.fail_after(STEP_TIMEOUT):
        result["read"] = await session.call("jarvis_server", {"action": "list", "limit": 1})
        result["error"] = await session.call("jarvis_server", {"action": "info", "name": "ghost"})

    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or f"{progress}/{total}")

    with anyio.fail_after(STEP_TIMEOUT):
        text, failed = await session.call("jarvis_project", {"action": "test", "suite": "slow"}, on_progress)
    result["progress"] = {"messages": messages[:], "text": text, "is_error": failed}

    if not result["long_operations"]:
        return result
    result["cancel"] = await cancel_a_suite(session, Path(spec["pidfile"]))
    with anyio.fail_after(STEP_TIMEOUT):
        result["after_cancel"] = await session.call("jarvis_server", {"action": "list", "limit": 1})
    result["operation"] = await background_operation(session)
    return result


async def cancel_a_suite(session: Session, pidfile: Path) -> dict[str, Any]:
    """`hang` writes its pid then sleeps: cancel the call once it runs and a progress arrived; the suite's
    process must be gone soon after."""
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    def ready() -> bool:
        return read_pid(pidfile) is not None and bool(seen)

    with anyio.fail_after(STEP_TIMEOUT):
        await session.call_then_cancel("jarvis_project", {"action": "test", "suite": "hang"}, ready, on_progress)
    pid = read_pid(pidfile)
    started = time.monotonic()
    gone = pid is not None and await wait_until(lambda: not alive(pid), GONE_WAIT)
    return {"pid": pid, "gone": gone, "waited": round(time.monotonic() - started, 1), "progress": seen[:3]}


async def background_operation(session: Session) -> dict[str, Any]:
    """`background` outlasts JARVIS_CALL_BUDGET: the call answers with an operation id; fetch it until done."""
    with anyio.fail_after(STEP_TIMEOUT):
        first, failed = await session.call("jarvis_project", {"action": "test", "suite": "background"})
    found = re.search(r"operation=([\w.-]+)", first)
    fetched: list[Answer] = []
    if found:
        with anyio.fail_after(STEP_TIMEOUT * 2):
            while True:
                fetched.append(await session.call("jarvis_check_status", {"operation": found.group(1)}))
                if "PASS" in fetched[-1][0] or fetched[-1][1] or len(fetched) > 100:
                    break
                await anyio.sleep(1)
    return {"first": [first, failed], "id": found.group(1) if found else None, "fetched": fetched[-1:]}


def server_env(spec: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = spec["env"]
    return env


def main(connect: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]) -> None:
    spec = load_spec()
    os.chdir(spec["workdir"])
    report(anyio.run(connect, spec))
