"""Every figure of bench/README.md in one run: Jarvis against the docker CLI and the engine (bench_docker.py), the
first call after start, and the cold start against a bare MCPServer hello-world (bench_start.py). Prints medians
and ratios; asserts nothing.

    .venv/bin/python bench/bench_all.py [--rounds N] [--reuse-flood PROJECT]

Takes several minutes on two busy cores. Stacks get unique project names and are removed at the end, also on
Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import sys
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapters.factory import setup_image_builder  # noqa: E402
from bench.bench_docker import arguments, flood_stack, measure_default_stack, measure_flood, stack  # noqa: E402
from bench.bench_start import measure_first_call, measure_start  # noqa: E402
from jarvis.machine_setup import ensure_base_image  # noqa: E402
from jarvis.settings import default_stack_dir  # noqa: E402


def machine(client: docker.DockerClient, compose_version: str) -> str:
    engine = client.version()
    return (
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; Docker Engine {engine['Version']} (API {engine['ApiVersion']}), Compose "
        f"{compose_version}; Python {platform.python_version()}"
    )


def main() -> int:
    args = arguments()
    ensure_base_image(setup_image_builder())
    client = docker.from_env()
    with contextlib.ExitStack() as stacks:
        flood = stacks.enter_context(flood_stack(args.reuse_flood))
        jarvis = stacks.enter_context(stack(default_stack_dir()))
        print(f"{machine(client, jarvis.project.compose_version())}; {args.rounds} rounds, medians\n")
        measure_default_stack(jarvis, args.rounds)
        measure_first_call(default_stack_dir(), jarvis.project.spec().name, args.rounds)
        measure_flood(flood, client, args.rounds)
    measure_start(args.rounds)
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
