"""Docker gate: tests marked `docker` skip locally when no daemon answers, and FAIL under CI=true."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import docker
import pytest

from adapters.dockerpy import DockerPyImages
from jarvis.machine_setup import BASE_IMAGE, compose_works, ensure_base_image
from tests.socket_proxy import DockerTcpProxy

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _docker_problem() -> str | None:
    try:
        client = docker.from_env()
        client.ping()
        client.close()
    except Exception as exc:
        return f"no Docker daemon: {exc}"
    if not compose_works():
        return "`docker compose` v2+ is missing (run `jarvis setup`)"
    return None


@pytest.fixture(scope="session")
def docker_ready() -> None:
    problem = _docker_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"CI=true and Docker is not usable: {problem}", pytrace=False)
        pytest.skip(problem)


@pytest.fixture(scope="session")
def base_image(docker_ready: None) -> Iterator[str]:
    """The default stack's base image; removed at the end only if this session built it."""
    client = docker.from_env()
    try:
        client.images.get(BASE_IMAGE)
        existed = True
    except docker.errors.ImageNotFound:
        existed = False
    dangling_before = {image.id for image in client.images.list(filters={"dangling": True})}
    ensure_base_image(DockerPyImages())
    yield BASE_IMAGE
    # A rebuild leaves the image it replaced untagged: remove the ones this session left behind.
    for image in client.images.list(filters={"dangling": True}):
        if image.id not in dangling_before:
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(image.id, force=True)
    if not existed:
        # Still in use means a stack was left running: that test's own cleanup failure is reported there.
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(BASE_IMAGE, force=True)
    client.close()


@pytest.fixture(scope="module")
def tcp_proxy(docker_ready: None) -> Iterator[DockerTcpProxy]:
    """A second Docker host: a TCP endpoint on 127.0.0.1 in front of the local daemon."""
    proxy = DockerTcpProxy()
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "docker" in item.keywords:
            item.fixturenames.insert(0, "docker_ready")
