"""No Compose v2 plugin visible (a docker config folder without `cli-plugins/docker-compose`, as when HOME is not
the one `jarvis setup` installed it for): every compose action says so and names `jarvis setup`."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from python_on_whales import DockerClient

from adapters.whales import WhalesAdapter
from jarvis.compose_project import COMPOSE_MISSING_HINT, ComposeCliProject, compose_missing
from jarvis.errors import ProjectError
from jarvis.settings import Settings, default_stack_dir

pytestmark = pytest.mark.docker


def project_without_compose(tmp_path: Path) -> ComposeCliProject:
    settings = Settings(project_dir=default_stack_dir(), project_name=f"jarvis-nocompose-{uuid.uuid4().hex[:8]}")
    # `docker --config DIR` looks for CLI plugins in DIR/cli-plugins only (and the system folders, which hold
    # none on this machine: the plugin lives under ~/.docker).
    client = DockerClient(
        config=tmp_path / "docker-config",
        compose_project_name=settings.project_name,
        compose_project_directory=settings.project_dir,
    )
    return ComposeCliProject(settings, client=client)


def test_the_project_says_compose_v2_is_missing(tmp_path: Path) -> None:
    project = project_without_compose(tmp_path)
    with pytest.raises(ProjectError) as caught:
        project.spec()
    assert str(caught.value) == COMPOSE_MISSING_HINT
    with pytest.raises(ProjectError, match="jarvis setup"):
        project.compose_version()


@pytest.mark.parametrize("action", ["compose_up", "compose_stop", "compose_start", "compose_ps"])
def test_every_compose_action_says_compose_v2_is_missing(tmp_path: Path, action: str) -> None:
    project = project_without_compose(tmp_path)
    adapter = WhalesAdapter(project, project.client)
    with pytest.raises(ProjectError) as caught:
        getattr(adapter, action)()
    assert str(caught.value) == COMPOSE_MISSING_HINT
    assert "unknown flag" not in str(caught.value)


def test_the_docker_cli_s_own_unknown_flag_is_told_from_composes() -> None:
    cli = "unknown flag: --project-directory\n\nUsage:  docker [OPTIONS] COMMAND [ARG...]\n\nRun 'docker --help'"
    assert compose_missing(cli)
    assert compose_missing("docker: unknown command: docker compose")
    assert not compose_missing("unknown flag: --bogus")  # Compose itself rejecting one of its flags
