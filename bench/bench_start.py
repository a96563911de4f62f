"""Start-up and first call of `jarvis serve` over stdio, against a bare MCPServer hello-world started the same way
in the same virtualenv (bench/hello_mcp.py). Prints medians and differences; asserts nothing.

    .venv/bin/python bench/bench_start.py [--rounds N]

- cold start: process start -> initialize -> notifications/initialized -> tools/list answered (interleaved rounds)
- where it goes: importing the server module, building the tool list, serialising it (fresh interpreters)
- the cold start again with an empty cache folder (the first start after installing or changing Jarvis builds
  the tool list; later starts read it from `$XDG_CACHE_HOME/jarvis`)
- the first call after start (`docker_status`, after a pause standing for the agent's turn, the warm-up running
  meanwhile) against the second call of the same session; on the bundled default stack
- `jarvis_check_status` against `docker_status`, in process (the Compose version is cached by binary identity)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.timing import interleaved  # noqa: E402

BIN = Path(sys.executable).parent
HANDSHAKE_VERSION = "2025-11-25"
AGENT_TURN = 0.5  # seconds between tools/list and the first call: the model reading the list


class StdioSession:
    """A raw JSON-RPC client over a child's stdin/stdout: nothing of the SDK on the measuring side."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
        )
        self._next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        stdout: TextIO = self.process.stdout  # type: ignore[assignment]
        for line in stdout:
            message = json.loads(line)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"{method}: the server closed its stdout")

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def handshake(self) -> None:
        client = {"name": "bench", "version": "1"}
        self.request("initialize", {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": client})
        self.notify("notifications/initialized")

    def _send(self, message: dict[str, Any]) -> None:
        stdin: TextIO = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def session(argv: list[str], env: dict[str, str]) -> Iterator[StdioSession]:
    opened = StdioSession(argv, env)
    try:
        yield opened
    finally:
        opened.close()


def server_env(**jarvis: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    env.update(jarvis)
    return env


def start_to_tools_list(argv: list[str], env: dict[str, str]) -> float:
    with session(argv, env) as server:
        server.handshake()
        tools = server.request("tools/list")["tools"]
        elapsed = time.perf_counter() - server.started
    assert tools, "no tools listed"
    return elapsed


def first_and_second_call(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    with session(argv, env) as server:
        server.handshake()
        server.request("tools/list")
        time.sleep(AGENT_TURN)
        took = []
        for _ in range(2):
            started = time.perf_counter()
            result = server.request("tools/call", {"name": "jarvis_system", "arguments": {"action": "docker_status"}})
            took.append(time.perf_counter() - started)
            if result.get("isError"):
                raise RuntimeError(f"docker_status failed: {result['content'][0]['text']}")
    return took[0], took[1]


# Where Jarvis's start-up goes, in a fresh interpreter each time (milliseconds, JSON on stdout).
PHASES = """
import json, sys, time
import anyio
t0 = time.perf_counter()
if sys.argv[1] == "hello":
    sys.path.insert(0, sys.argv[2])
    import hello_mcp
    t1 = time.perf_counter()
    server = hello_mcp.server
else:
    from jarvis.cli import serving_context
    from jarvis.mcp_server import create_server
    from jarvis.settings import load_settings
    from jarvis.tool_list_cache import cache_folder
    t1 = time.perf_counter()
    context = serving_context(load_settings(None))
    server = create_server(context, cache_folder(context.host.environ, context.host.home))  # as `jarvis serve`
t2 = time.perf_counter()
anyio.run(server.list_tools)
t3 = time.perf_counter()
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"docker", "python_on_whales", "requests"})
print(json.dumps({"import": (t1 - t0) * 1e3, "build": (t2 - t1) * 1e3, "list": (t3 - t2) * 1e3, "heavy": heavy}))
"""


def phase_run(which: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PHASES, which, str(ROOT / "bench")],
        capture_output=True,
        text=True,
        check=True,
        env=server_env(),
        cwd=ROOT / "bench",
    )
    return json.loads(done.stdout)


def phases(rounds: int) -> dict[str, dict[str, Any]]:
    """Medians per phase for Jarvis and the hello-world, their fresh interpreters interleaved."""
    runs: dict[str, list[dict[str, Any]]] = {"jarvis": [], "hello": []}
    for _ in range(rounds):
        for which, found in runs.items():
            found.append(phase_run(which))
    result: dict[str, dict[str, Any]] = {}
    for which, found in runs.items():
        result[which] = {key: statistics.median(r[key] for r in found) for key in ("import", "build", "list")}
        result[which]["heavy"] = found[0]["heavy"]
    return result


def measure_start(rounds: int) -> None:
    jarvis = [str(BIN / "jarvis"), "serve"]
    hello = [sys.executable, str(ROOT / "bench" / "hello_mcp.py")]
    env = server_env()
    with tempfile.TemporaryDirectory() as empty:
        cold_env = server_env(XDG_CACHE_HOME=empty)

        def cold_cache() -> float:
            shutil.rmtree(Path(empty) / "jarvis", ignore_errors=True)
            return start_to_tools_list(jarvis, cold_env)

        for argv in (jarvis, hello):  # warm the OS file cache and .pyc files, and Jarvis's tool list cache
            start_to_tools_list(argv, env)
        medians = interleaved(
            {
                "jarvis": lambda: start_to_tools_list(jarvis, env),
                "hello": lambda: start_to_tools_list(hello, env),
                "cold": cold_cache,
            },
            rounds,
        )
    extra, cold = medians["jarvis"] - medians["hello"], medians["cold"] - medians["hello"]
    print(
        f"{'4. start -> initialize -> tools/list (stdio), medians of ' + str(rounds):<58} "
        f"jarvis {medians['jarvis'] * 1e3:7.1f} ms   hello-world {medians['hello'] * 1e3:7.1f} ms   "
        f"jarvis +{extra * 1e3:5.1f} ms   (target <= +100 ms)"
    )
    print(
        f"    the first start, the tool list not yet cached: {medians['cold'] * 1e3:.1f} ms, +{cold * 1e3:.1f} ms "
        "over the hello-world"
    )
    split = phases(rounds)
    ours, bare = split["jarvis"], split["hello"]
    print(
        f"    where (fresh interpreters, medians of {rounds}): import jarvis {ours['import']:.1f} ms vs hello "
        f"{bare['import']:.1f} ms; build the tool list {ours['build']:.1f} ms vs {bare['build']:.1f} ms; "
        f"serialise it {ours['list']:.1f} ms vs {bare['list']:.1f} ms; "
        f"imported at start: {', '.join(ours['heavy']) or 'no docker-py, python-on-whales, requests'}"
    )


def measure_first_call(project_dir: Path, project_name: str, rounds: int) -> None:
    env = server_env(JARVIS_PROJECT_DIR=str(project_dir), JARVIS_PROJECT_NAME=project_name)
    served = [str(BIN / "jarvis"), "serve"]
    calls = [first_and_second_call(served, env) for _ in range(rounds)]
    first, second = (statistics.median(pair[i] for pair in calls) for i in (0, 1))
    print(
        f"{'5. first call after start (docker_status), medians of ' + str(rounds):<58} "
        f"first {first * 1e3:7.1f} ms   second {second * 1e3:7.1f} ms   (the peer: 33 ms in the issue)"
    )


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    measure_start(parser.parse_args().rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
