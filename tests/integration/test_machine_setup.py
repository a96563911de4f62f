"""`jarvis setup` and bootstrap's machine steps, for real: the Compose plugin installed where the context's host
keeps its docker configuration, and the base image built through each adapter (a unique tag, always removed)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from adapters.factory import build_runner
from jarvis.errors import DockerCommandFailed
from jarvis.host import Host
from jarvis.machine_setup import DIGEST_LABEL, base_sources_digest, ensure_base_image, ensure_compose_plugin
from jarvis.settings import Settings, default_stack_dir


def test_the_compose_plugin_goes_where_the_hosts_docker_config_is(tmp_path: Path) -> None:
    """A machine whose docker finds no Compose v2 (its HOME has none): the plugin is copied under its
    DOCKER_CONFIG, and `docker compose` works there afterwards. This process's own HOME is never touched."""
    host = Host.of(tmp_path / "home", {"PATH": os.environ["PATH"], "DOCKER_CONFIG": str(tmp_path / "docker")})
    target = tmp_path / "docker" / "cli-plugins" / "docker-compose"
    assert ensure_compose_plugin(host) == f"docker compose: installed {target}"
    assert os.access(target, os.X_OK)
    assert ensure_compose_plugin(host) == "docker compose: ok"
    assert not (tmp_path / "home").exists()


@pytest.fixture
def unique_tag(docker_ready: None) -> Iterator[str]:
    tag = f"jarvis-test/base-{uuid.uuid4().hex[:10]}:1"
    yield tag
    client = docker.from_env()
    with contextlib.suppress(docker.errors.ImageNotFound):
        client.images.remove(tag, force=True)
    client.close()


@pytest.mark.docker
@pytest.mark.parametrize("lifecycle", ["whales", "dockerpy"])
def test_the_base_image_is_built_once_then_found(unique_tag: str, lifecycle: str) -> None:
    runner = build_runner(Settings.model_validate({"project_dir": default_stack_dir(), "lifecycle_adapter": lifecycle}))
    assert runner.image_labels(unique_tag) is None
    assert ensure_base_image(runner, unique_tag) == f"base image {unique_tag}: built"
    assert (runner.image_labels(unique_tag) or {}).get(DIGEST_LABEL) == base_sources_digest()
    assert ensure_base_image(runner, unique_tag) == f"base image {unique_tag}: present"
    shell = docker.from_env()
    try:
        assert shell.containers.run(unique_tag, ["cat", "/www/health"], remove=True) == b"ok\n"
    finally:
        shell.close()


@pytest.mark.docker
@pytest.mark.parametrize("lifecycle", ["whales", "dockerpy"])
def test_a_failed_image_build_is_a_docker_command_failure(unique_tag: str, lifecycle: str, tmp_path: Path) -> None:
    program = f"/no-such-program-{uuid.uuid4().hex[:10]}"
    (tmp_path / "Dockerfile").write_text(f'FROM scratch\nRUN ["{program}"]\n')
    runner = build_runner(Settings.model_validate({"project_dir": default_stack_dir(), "lifecycle_adapter": lifecycle}))
    with pytest.raises(DockerCommandFailed, match=unique_tag):
        runner.build_image(unique_tag, tmp_path, {})
    assert runner.image_labels(unique_tag) is None
    client = docker.from_env()
    try:  # the failed step's container is removed, not left behind
        left = [c for c in client.containers.list(all=True, sparse=True) if program in str(c.attrs.get("Command"))]
        for container in left:
            container.remove(force=True)
        assert left == []
    finally:
        client.close()
