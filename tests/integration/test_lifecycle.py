"""stop, start and restart through each adapter, on a stack of its own; other services stay untouched."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.dockerpy import DockerPyAdapter
from adapters.factory import make_adapter
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import NoContainer
from tests.integration.conftest import wait_for_default_stack
from tests.stacks import Stack, running_stack

pytestmark = pytest.mark.docker


@pytest.fixture(params=["whales", "dockerpy"], scope="module")
def lifecycle_stack(request: pytest.FixtureRequest, base_image: str) -> Iterator[tuple[str, Stack]]:
    with running_stack() as stack:
        wait_for_default_stack(stack)
        yield request.param, stack


def test_stop_start_restart_one_service(lifecycle_stack: tuple[str, Stack]) -> None:
    name, stack = lifecycle_stack
    project = ComposeCliProject(stack.settings())
    adapter = make_adapter(name, project)
    observe = DockerPyAdapter(project)
    before = stack.container_ids()

    adapter.compose_stop(["mcpm-memory"])
    states = {s.service: s.state for s in observe.compose_ps()}
    assert states["mcpm-memory"] == "exited"
    assert states["mcpm-essentials"] == "running"
    after_stop = stack.container_ids()
    assert {k: v for k, v in after_stop.items() if k != "mcpm-memory"} == {
        k: v for k, v in before.items() if k != "mcpm-memory"
    }

    adapter.compose_start(["mcpm-memory"])
    assert {s.service: s.state for s in observe.compose_ps()}["mcpm-memory"] == "running"
    assert stack.container_ids()["mcpm-memory"][0] == before["mcpm-memory"][0]  # same container, started again

    adapter.compose_restart(["mcpm-research"])
    restarted = stack.container_ids()
    assert restarted["mcpm-research"][0] == before["mcpm-research"][0]
    assert restarted["mcpm-research"][1] != before["mcpm-research"][1]
    assert restarted["mcpm-essentials"] == before["mcpm-essentials"]


def test_stop_and_start_everything(lifecycle_stack: tuple[str, Stack]) -> None:
    name, stack = lifecycle_stack
    project = ComposeCliProject(stack.settings())
    adapter = make_adapter(name, project)
    observe = DockerPyAdapter(project)
    adapter.compose_stop([])
    assert {s.state for s in observe.compose_ps()} == {"exited"}
    adapter.compose_start([])
    states = {s.service: s.state for s in observe.compose_ps()}
    assert states["mcpm-essentials"] == states["mcpm-research"] == "running"


def test_starting_a_service_without_container_says_so(lifecycle_stack: tuple[str, Stack]) -> None:
    name, stack = lifecycle_stack
    with running_stack(stack.directory, up=False) as empty:
        project = ComposeCliProject(empty.settings())
        adapter = make_adapter(name, project)
        with pytest.raises(NoContainer, match="rebuild"):
            adapter.compose_start(["mcpm-memory"])
