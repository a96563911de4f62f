"""`jarvis serve` over real stdio answers every line, even those the SDK cannot read (it used to drop them and
the client waited forever): a JSON-RPC error with the request's id when it can be found, then it keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from mcp import StdioServerParameters

from jarvis.settings import default_stack_dir
from tests.e2e.test_stdio import raw_server

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def call(request_id: object, arguments_json: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
        f'"params":{{"name":"jarvis_server","arguments":{arguments_json}}}}}'
    )


def test_lines_the_sdk_cannot_read_are_answered_and_the_server_keeps_serving(tmp_path) -> None:
    environ = {**os.environ, "JARVIS_PROJECT_DIR": str(default_stack_dir()), "JARVIS_MCPM_DIR": str(tmp_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "jarvis", "serve"], env=environ)
    process = raw_server(params, [], stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    assert process.stdout is not None
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, '{"action": ' + "[" * 300 + "]" * 300 + "}"),  # deeper than the SDK's parser goes
        call("three", '{"action": "\\ud800"}'),  # a lone surrogate escape
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [1, 2]}',
        "not json at all",
        call(5, '{"action": ' + "[" * 5_000 + "]" * 5_000 + "}"),  # deeper than Python's parser goes too
        '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 7}',  # a notification: never answered
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/call",
                "params": {"name": "jarvis_server", "arguments": {"action": "list"}},
            }
        ),
    ]
    for line in lines:
        process.stdin.write(line + "\n")
    process.stdin.flush()
    answers: dict[object, dict] = {}
    timer = threading.Timer(60, process.kill)  # a dropped line would hang the reader: fail instead
    timer.start()
    try:
        while 6 not in answers:
            line = process.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            answers[message.get("id")] = message
    finally:
        timer.cancel()
        process.kill()
        process.wait()
    errors = {key: (m["error"]["code"], m["error"]["message"]) for key, m in answers.items() if "error" in m}
    assert errors[2][0] == -32700
    assert errors[2][1].startswith("Parse error: Invalid JSON: recursion limit exceeded")
    assert errors["three"][0] == -32700
    assert errors[4] == (-32602, "Invalid params: params must be an object")
    assert errors[None][0] == -32700  # no id to be found: JSON-RPC says null
    assert errors[5][0] == -32700  # its id found at the start of the line, though no parser takes it whole
    assert answers[6]["result"]["content"][0]["text"].startswith("# servers: 0")
    assert set(answers) == {1, 2, "three", 4, None, 5, 6}
