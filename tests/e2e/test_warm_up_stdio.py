"""`jarvis serve` warms what the first call needs (the Compose model, the adapters) right after the handshake, in
the background: after `notifications/initialized`, or after the first `tools/list` for clients that send no
`initialize` (2026-07-28); never before, so the handshake itself is not delayed."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.e2e.conftest import plain_client_params

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def serve(tmp_path, *messages: dict) -> tuple[subprocess.Popen[str], list[str]]:  # type: ignore[no-untyped-def]
    params = plain_client_params()
    log = tmp_path / "stderr.log"
    process = subprocess.Popen([params.command, *params.args], env=params.env, text=True, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=log.open("w"))  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    answers = []
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            answers.append(process.stdout.readline())
    return process, answers


def warmed(tmp_path, seconds: float = 30) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if "warm-up done" in (tmp_path / "stderr.log").read_text():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "handshake",
    [[INITIALIZE, INITIALIZED, TOOLS_LIST], [TOOLS_LIST]],
    ids=["initialize era", "no initialize (2026-07-28)"],
)
def test_warm_up_runs_after_the_handshake(tmp_path, handshake: list[dict]) -> None:  # type: ignore[no-untyped-def]
    process, answers = serve(tmp_path, *handshake)
    try:
        assert all(json.loads(answer)["jsonrpc"] == "2.0" for answer in answers)
        assert warmed(tmp_path), (tmp_path / "stderr.log").read_text()
    finally:
        process.kill()
        process.wait(timeout=10)


def test_no_warm_up_before_the_handshake(tmp_path) -> None:  # type: ignore[no-untyped-def]
    process, _ = serve(tmp_path, INITIALIZE)
    try:
        assert not warmed(tmp_path, seconds=2)
    finally:
        process.kill()
        process.wait(timeout=10)
