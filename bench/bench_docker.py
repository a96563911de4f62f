"""Jarvis against the plain docker CLI, on the same stacks, in the same run. Prints ratios; asserts nothing.

    .venv/bin/python bench/bench_docker.py [--rounds N]

1. docker_status through the docker-py adapter  vs  `docker compose ps --format json`   (target >= 5x faster)
2. last 500 lines of a service that wrote 1,000,000  vs  `docker logs --tail 500`        (target <= 2x, < 50 MB)
3. aggregated logs of 5 profiles  vs  logs of one profile                                (target < 1.5x)
Both stacks get unique project names and are removed at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import resource
import signal
import statistics
import subprocess
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jarvis.context import Jarvis  # noqa: E402
from jarvis.machine_setup import ensure_base_image  # noqa: E402
from jarvis.project import ComposeProject  # noqa: E402
from jarvis.runner_factory import build_runner  # noqa: E402
from jarvis.settings import Settings, default_stack_dir  # noqa: E402
from jarvis.tools import diagnose, system  # noqa: E402


def median_seconds(fn: Callable[[], object], rounds: int) -> float:
    fn()  # warm: Jarvis is a long-running server
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def cli(*args: str) -> Callable[[], None]:
    return lambda: subprocess.run(args, capture_output=True, check=True)


@contextlib.contextmanager
def stack(directory: Path) -> Iterator[Jarvis]:
    name = f"jarvisbench{uuid.uuid4().hex[:6]}"
    compose = ["docker", "compose", "-f", str(directory / "compose.yaml"), "-p", name]
    try:
        subprocess.run([*compose, "up", "-d", "--build", "--quiet-pull"], capture_output=True, check=True)
        settings = Settings(project_dir=directory, project_name=name)
        project = ComposeProject(settings)
        yield Jarvis(settings=settings, project=project, runner=build_runner(settings, project))
    finally:
        subprocess.run([*compose, "down", "-v", "--rmi", "local", "-t", "1"], capture_output=True, check=False)


def wait_until(check: Callable[[], bool], timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("stack did not settle")
        time.sleep(0.5)


def report(label: str, jarvis_s: float, cli_s: float, target: str) -> None:
    print(
        f"{label:<58} jarvis {jarvis_s * 1000:8.1f} ms   cli {cli_s * 1000:8.1f} ms   "
        f"ratio cli/jarvis {cli_s / jarvis_s:5.2f}x   ({target})"
    )


def main() -> int:
    # `timeout` and Ctrl-C must still remove the stacks: turn SIGTERM into an exception that unwinds them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    ensure_base_image()
    client = docker.from_env()
    print(f"docker engine {client.version()['Version']}, {rounds} rounds, medians\n")

    with contextlib.ExitStack() as stacks:
        # The flood stack needs minutes to log 1,000,000 lines: start it first, measure the default stack meanwhile.
        flood = stacks.enter_context(stack(ROOT / "bench" / "flood"))
        jarvis = stacks.enter_context(stack(default_stack_dir()))
        measure_default_stack(jarvis, rounds)
        measure_flood(flood, client, rounds)
    client.close()
    return 0


def measure_default_stack(jarvis: Jarvis, rounds: int) -> None:
    name = jarvis.project.spec().name
    compose_file = str(default_stack_dir() / "compose.yaml")
    wait_until(lambda: len(jarvis.runner.compose_ps()) == 5)
    status = median_seconds(lambda: system.docker_status(jarvis), rounds)
    ps_json = median_seconds(
        cli("docker", "compose", "-f", compose_file, "-p", name, "ps", "-a", "--format", "json"), rounds
    )
    report("1. docker_status (docker-py) vs compose ps --format json", status, ps_json, "target >= 5x")

    one = median_seconds(lambda: diagnose.logs(jarvis, "research", "stderr", False, 50), rounds)
    five = median_seconds(lambda: diagnose.logs(jarvis, None, "stderr", True, 50), rounds)
    print(
        f"{'3. aggregate logs of 5 profiles vs one profile':<58} one {one * 1000:8.1f} ms   "
        f"five {five * 1000:8.1f} ms   ratio five/one {five / one:5.2f}x   (target < 1.5x)"
    )


def measure_flood(jarvis: Jarvis, client: docker.DockerClient, rounds: int) -> None:
    container = f"{jarvis.project.spec().name}-flood-1"
    wait_until(lambda: b"flood line 1000000" in client.containers.get(container).logs(tail=1))
    for stream, label in (
        ("stdout", "2. last 500 stdout lines of 1,000,000 vs docker logs"),
        ("all", "2b. last 500 lines, all streams, vs docker logs"),
    ):
        ours = median_seconds(lambda s=stream: jarvis.runner.compose_logs("flood", 500, s), rounds)
        theirs = median_seconds(cli("docker", "logs", "--tail", "500", container), rounds)
        report(label, ours, theirs, "target: jarvis <= 2x the cli time, i.e. ratio >= 0.5")
    growth = memory_growth(lambda: jarvis.runner.compose_logs("flood", 500, "stdout"))
    growth_whole = memory_growth(lambda: jarvis.runner.compose_logs("flood", 500, "stderr"))
    worst = median_seconds(lambda: jarvis.runner.compose_logs("flood", 500, "stderr"), max(3, rounds // 5))
    # The CLI needs the whole log for this too: `docker logs` then keep stderr's tail.
    whole = median_seconds(
        lambda: subprocess.run(
            ["sh", "-c", f"docker logs {container} 2>&1 >/dev/null | tail -n 500"], capture_output=True, check=True
        ),
        max(3, rounds // 5),
    )
    report("2c. the one stderr line, under 1,000,000 stdout lines", worst, whole, "whole log read by both; no target")
    for label, (heap, rss) in (("2", growth), ("2c", growth_whole)):
        print(f"    peak memory growth for {label}: python heap {heap / 1e6:.1f} MB, max RSS +{rss / 1e3:.1f} MB")


def memory_growth(fn: Callable[[], object]) -> tuple[int, int]:
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before)


if __name__ == "__main__":
    raise SystemExit(main())
