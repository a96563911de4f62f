"""Real Compose projects for tests: a unique project name each, and cleanup that runs whatever happens.

pytest-docker's executor runs the compose commands; its own `docker_services` fixture skips cleanup when
`up` fails, so this wraps the executor in try/finally and then sweeps by Compose label for anything left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
from pytest_docker.plugin import DockerComposeExecutor, Services

from jarvis.settings import Settings, default_stack_dir


@dataclass
class Stack:
    name: str
    directory: Path
    compose: DockerComposeExecutor
    services: Services

    def settings(self, **overrides: object) -> Settings:
        values: dict[str, object] = {"project_dir": self.directory, "project_name": self.name, "retry_timeout": 5.0}
        values.update(overrides)
        return Settings.model_validate(values)

    def container_ids(self) -> dict[str, tuple[str, str]]:
        """service -> (container id, StartedAt), to prove what a call left untouched."""
        client = docker.from_env()
        try:
            found = client.containers.list(all=True, filters={"label": f"com.docker.compose.project={self.name}"})
            return {c.labels["com.docker.compose.service"]: (c.id, c.attrs["State"]["StartedAt"]) for c in found}
        finally:
            client.close()


def unique_name(prefix: str = "jarvistest") -> str:
    return f"{prefix}{os.getpid()}{uuid.uuid4().hex[:6]}"


def copy_default_stack(target: Path) -> Path:
    shutil.copytree(default_stack_dir(), target)
    return target


@contextlib.contextmanager
def running_stack(directory: Path | None = None, up: bool = True) -> Iterator[Stack]:
    directory = directory or default_stack_dir()
    name = unique_name()
    executor = DockerComposeExecutor("docker compose", [str(directory / "compose.yaml")], name)
    stack = Stack(name=name, directory=directory, compose=executor, services=Services(executor))
    try:
        if up:
            executor.execute("up -d --build --quiet-pull")
        yield stack
    finally:
        remove_project(name)


def remove_project(name: str) -> None:
    subprocess.run(
        ["docker", "compose", "-p", name, "down", "--volumes", "--rmi", "local", "--remove-orphans", "-t", "1"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    sweep_project(name)


def sweep_project(name: str) -> None:
    """Remove whatever still carries the project's label: containers, networks, volumes, built images."""
    label = {"label": f"com.docker.compose.project={name}"}
    client = docker.from_env()
    try:
        for container in client.containers.list(all=True, filters=label):
            container.remove(force=True, v=True)
        for network in client.networks.list(filters=label):
            with contextlib.suppress(docker.errors.APIError):
                network.remove()
        for volume in client.volumes.list(filters=label):
            with contextlib.suppress(docker.errors.APIError):
                volume.remove(force=True)
        # Images Compose built are named <project>-<service> and, with the classic builder, carry no project label.
        for image in client.images.list():
            for tag in image.tags:
                if tag.startswith(f"{name}-"):
                    with contextlib.suppress(docker.errors.APIError):
                        client.images.remove(tag, force=True)
    finally:
        client.close()


# A service whose healthcheck passes after a few seconds, one whose never does, one that exits, and one whose
# build sleeps (a long operation to follow, cancel or send to the background).
LONG_OPS_COMPOSE = """\
x-base: &base
  image: jarvis/busybox:1
  pull_policy: never
  init: true
services:
  ready-later:
    <<: *base
    command: ["sh", "-c", "echo 'ready-later: warming up' >&2; sleep 3; touch /tmp/ready; while :; do sleep 3600; done"]
    healthcheck: {test: ["CMD", "test", "-f", "/tmp/ready"], interval: 1s, timeout: 1s, retries: 60}
  never-ready:
    <<: *base
    command: ["sh", "-c", "echo 'never-ready: cannot reach the database' >&2; while :; do sleep 3600; done"]
    healthcheck: {test: ["CMD", "false"], interval: 1s, timeout: 1s, retries: 1}
  exits:
    <<: *base
    command: ["sh", "-c", "echo 'exits: done' >&2; exit 2"]
    restart: "no"
  slow-build:
    build: ./slow
    pull_policy: build
    init: true
"""


def long_ops_stack(directory: Path, build_seconds: int = 12) -> tuple[Path, str]:
    """The stack above in `directory`; returns it and the marker found in its build step's `sleep` command line."""
    marker = f"{build_seconds}.{uuid.uuid4().int % 10**6:06d}"
    (directory / "slow").mkdir(parents=True)
    (directory / "compose.yaml").write_text(LONG_OPS_COMPOSE)
    (directory / "slow" / "Dockerfile").write_text(
        f'FROM jarvis/busybox:1\nRUN sleep {marker}\nCMD ["sh", "-c", "while :; do sleep 3600; done"]\n'
    )
    return directory, marker
