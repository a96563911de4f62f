from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest

from tests.stacks import Stack, running_stack


def wait_for_default_stack(stack: Stack, timeout: float = 60) -> None:
    """Until every service shows what it is there to show: healthy, unhealthy, exited, all lines written."""
    client = docker.from_env()

    def settled() -> bool:
        found = client.containers.list(all=True, filters={"label": f"com.docker.compose.project={stack.name}"})
        status = {c.labels["com.docker.compose.service"]: c.attrs["State"] for c in found}
        if len(status) < 5:
            return False
        research = next(c for c in found if c.labels["com.docker.compose.service"] == "mcpm-research")
        return (
            status["mcpm-essentials"].get("Health", {}).get("Status") == "healthy"
            and status["mcpm-memory"].get("Health", {}).get("Status") == "unhealthy"
            and status["mcpm-dev-core"]["Status"] == "exited"
            and b"research out 1000" in research.logs(tail=1)
        )

    try:
        stack.services.wait_until_responsive(settled, timeout=timeout, pause=0.3)
    finally:
        client.close()


@pytest.fixture(scope="module")
def default_stack(base_image: str) -> Iterator[Stack]:
    with running_stack() as stack:
        wait_for_default_stack(stack)
        yield stack
