"""Jarvis against the plain docker CLI and the engine API, on the same stacks, in the same run. Each measure first
counts that its input is what it claims, and refuses to measure otherwise. Prints medians and ratios; asserts
nothing.

    .venv/bin/python bench/bench_docker.py [--rounds N] [--reuse-flood PROJECT]

1. docker_status through the docker-py adapter  vs  `docker compose ps --format json`    (target >= 5x faster)
2. last 500 lines of a service that wrote 1,000,000  vs  `docker logs --tail 500`         (target <= 2x, < 50 MB)
2c. the stderr line under 1,000,000 stdout lines  vs  `docker logs 2>&1 >/dev/null | tail` (no slower) and the
    engine's own filtered read (within 1.3x)
3. aggregated logs of 5 profiles  vs  logs of one profile                                  (target < 1.5x)
6. jarvis_check_status  vs  docker_status                                                  (Compose version cached)
Stacks get unique project names and are removed at the end, also on Ctrl-C or SIGTERM. `--reuse-flood` measures
a flood stack that is already up (bench/flood, any project name) and leaves it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import resource
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapters.factory import build_runner, setup_image_builder  # noqa: E402
from bench.timing import compare, ms  # noqa: E402
from jarvis.compose_project import ComposeCliProject  # noqa: E402
from jarvis.machine_setup import ensure_base_image  # noqa: E402
from jarvis.settings import Settings, default_stack_dir  # noqa: E402
from jarvis.tool_context import ToolContext  # noqa: E402
from jarvis.tools import jarvis_diagnose as diagnose  # noqa: E402
from jarvis.tools import jarvis_system as system  # noqa: E402
from jarvis.tools.jarvis_check_status import jarvis_check_status  # noqa: E402

FLOOD_DIR = ROOT / "bench" / "flood"
FLOOD_LINES = 1_000_000
TAIL = 500


class InputNotAsClaimed(RuntimeError):
    """A stack's log does not hold what the measure says it reads: measuring it would be a lie."""


def cli(*args: str) -> Callable[[], None]:
    return lambda: subprocess.run(args, capture_output=True, check=True)


def shell(command: str) -> Callable[[], None]:
    return lambda: subprocess.run(["sh", "-c", command], capture_output=True, check=True)


def jarvis_for(directory: Path, name: str) -> ToolContext:
    settings = Settings(project_dir=directory, project_name=name)
    project = ComposeCliProject(settings)
    return ToolContext(settings=settings, project=project, runner=build_runner(settings, project))


@contextlib.contextmanager
def stack(directory: Path) -> Iterator[ToolContext]:
    name = f"jarvisbench{uuid.uuid4().hex[:6]}"
    compose = ["docker", "compose", "-f", str(directory / "compose.yaml"), "-p", name]
    try:
        subprocess.run([*compose, "up", "-d", "--build", "--quiet-pull"], capture_output=True, check=True)
        yield jarvis_for(directory, name)
    finally:
        subprocess.run([*compose, "down", "-v", "--rmi", "local", "-t", "1"], capture_output=True, check=False)


def wait_until(check: Callable[[], bool], timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("stack did not settle")
        time.sleep(0.5)


def log_lines(container: str) -> tuple[int, str, str, list[str]]:
    """What the engine holds, read by the docker CLI: stdout's count, first and last line; stderr's lines."""
    with tempfile.TemporaryFile() as errors:
        reader = subprocess.Popen(["docker", "logs", container], stdout=subprocess.PIPE, stderr=errors)
        count, first, last = 0, "", ""
        for raw in reader.stdout:  # type: ignore[union-attr]
            count += 1
            last = raw.decode(errors="replace").rstrip("\n")
            first = first or last
        reader.wait()
        errors.seek(0)
        return count, first, last, errors.read().decode(errors="replace").splitlines()


def verify_flood(container: str) -> None:
    count, first, last, errors = log_lines(container)
    claimed = (FLOOD_LINES, "flood line 1", f"flood line {FLOOD_LINES}", ["flood stderr 1"])
    if (count, first, last, errors) != claimed:
        raise InputNotAsClaimed(
            f"{container}'s log holds {count:,} stdout lines ({first!r} .. {last!r}) and stderr {errors[:3]!r}, "
            f"not {FLOOD_LINES:,} lines and the stderr line: log rotation? (bench/flood pins its logging options)"
        )
    print(f"    verified: {container} holds {count:,} stdout lines ({first} .. {last}) and its 1 stderr line")


def default_stack_counts(jarvis: ToolContext, name: str) -> tuple[int, int, int]:
    """(services with a container, research's stdout lines, its stderr lines)."""
    count, _, _, errors = log_lines(f"{name}-mcpm-research-1")
    return len({s.service for s in jarvis.runner.compose_ps()}), count, len(errors)


def verify_default_stack(jarvis: ToolContext, name: str) -> None:
    claimed = (5, 1000, 11)
    try:
        wait_until(lambda: default_stack_counts(jarvis, name) == claimed, timeout=120)
    except TimeoutError:
        services, count, errors = default_stack_counts(jarvis, name)
        raise InputNotAsClaimed(
            f"default stack: {services} services, research {count} stdout and {errors} stderr lines"
        ) from None
    print(f"    verified: {name} has 5 services; research holds 1,000 stdout and 11 stderr lines")


def report(label: str, jarvis_s: float, other_s: float, other: str, target: str) -> None:
    print(
        f"{label:<62} jarvis {ms(jarvis_s):>11}   {other} {ms(other_s):>11}   "
        f"{other}/jarvis {other_s / jarvis_s:5.2f}x   ({target})"
    )


def measure_default_stack(jarvis: ToolContext, rounds: int) -> None:
    name = jarvis.project.spec().name
    compose_file = str(default_stack_dir() / "compose.yaml")
    verify_default_stack(jarvis, name)
    status = compare(
        {
            "jarvis": lambda: system.docker_status(jarvis),
            "cli": cli("docker", "compose", "-f", compose_file, "-p", name, "ps", "-a", "--format", "json"),
        },
        rounds,
    )
    report(
        "1. docker_status (docker-py) vs compose ps -a --format json", status["jarvis"], status["cli"], "cli", ">= 5x"
    )

    logs = compare(
        {
            "one": lambda: diagnose.logs(jarvis, "research", "stderr", False, 50),
            "five": lambda: diagnose.logs(jarvis, None, "stderr", True, 50),
        },
        rounds,
    )
    print(
        f"{'3. aggregated stderr logs of 5 profiles vs one (research)':<62} one {ms(logs['one']):>11}   "
        f"five {ms(logs['five']):>11}   five/one {logs['five'] / logs['one']:5.2f}x   (target < 1.5x)"
    )

    checks = compare(
        {"check": lambda: jarvis_check_status(jarvis), "status": lambda: system.docker_status(jarvis)}, rounds
    )
    print(
        f"{'6. jarvis_check_status vs docker_status':<62} check_status {ms(checks['check']):>11}   "
        f"docker_status {ms(checks['status']):>11}   check/status {checks['check'] / checks['status']:5.2f}x   "
        f"(issue: 13x when every call ran `docker compose version`)"
    )


def docker_logs_tail(container: str) -> bytes:
    done = subprocess.run(["docker", "logs", "--tail", "1", container], capture_output=True, check=False)
    return done.stdout


def measure_flood(jarvis: ToolContext, client: docker.DockerClient, rounds: int) -> None:
    container = f"{jarvis.project.spec().name}-flood-1"
    wait_until(lambda: f"flood line {FLOOD_LINES}".encode() in docker_logs_tail(container))
    verify_flood(container)
    runner = jarvis.runner
    tail_cli = cli("docker", "logs", "--tail", str(TAIL), container)
    for stream, label in (
        ("stdout", f"2. last {TAIL} stdout lines of 1,000,000 vs docker logs --tail"),
        ("all", f"2b. last {TAIL} lines, both streams, vs docker logs --tail"),
    ):
        times = compare({"jarvis": lambda s=stream: runner.compose_logs("flood", TAIL, s), "cli": tail_cli}, rounds)
        report(label, times["jarvis"], times["cli"], "cli", "jarvis <= 2x the cli time: ratio >= 0.5")

    engine = client.containers.get(container)
    buried = compare(
        {
            "jarvis": lambda: runner.compose_logs("flood", TAIL, "stderr"),
            "cli": shell(f"docker logs {container} 2>&1 >/dev/null | tail -n {TAIL}"),
            "engine": lambda: engine.logs(stdout=False, stderr=True),
            "engine_ts": lambda: engine.logs(stdout=False, stderr=True, timestamps=True),
        },
        max(5, rounds // 2),
    )
    label = "2c. the stderr line under 1,000,000 stdout lines"
    report(label, buried["jarvis"], buried["cli"], "cli", "target: no slower, ratio >= 1")
    report(
        "    same, against the engine's filtered read (stderr=1&stdout=0)",
        buried["jarvis"],
        buried["engine"],
        "engine",
        "target: within 1.3x, ratio >= 0.77",
    )
    report(
        "    same, against that read with timestamps (Jarvis needs them)",
        buried["jarvis"],
        buried["engine_ts"],
        "engine",
        "no target",
    )
    for label, call in (
        ("2", lambda: runner.compose_logs("flood", TAIL, "stdout")),
        ("2c", lambda: runner.compose_logs("flood", TAIL, "stderr")),
    ):
        heap, rss = memory_growth(call)
        print(f"    peak memory growth for {label}: python heap {heap / 1e6:.1f} MB, max RSS +{rss / 1e3:.1f} MB")


def memory_growth(fn: Callable[[], object]) -> tuple[int, int]:
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before)


@contextlib.contextmanager
def flood_stack(reuse: str | None) -> Iterator[ToolContext]:
    if reuse:
        yield jarvis_for(FLOOD_DIR, reuse)
    else:
        with stack(FLOOD_DIR) as jarvis:
            yield jarvis


def arguments() -> argparse.Namespace:
    # `timeout` and Ctrl-C must still remove the stacks: turn SIGTERM into an exception that unwinds them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # figures as they come, into a file too
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reuse-flood", metavar="PROJECT", help="a bench/flood project already up; left running")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    ensure_base_image(setup_image_builder())
    client = docker.from_env()
    print(f"docker engine {client.version()['Version']}, {args.rounds} rounds, medians\n")
    with contextlib.ExitStack() as stacks:
        # The flood stack needs a while to log 1,000,000 lines: start it first, measure the default stack meanwhile.
        flood = stacks.enter_context(flood_stack(args.reuse_flood))
        jarvis = stacks.enter_context(stack(default_stack_dir()))
        measure_default_stack(jarvis, args.rounds)
        measure_flood(flood, client, args.rounds)
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
