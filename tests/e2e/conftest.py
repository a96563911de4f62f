from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from jarvis.settings import default_stack_dir
from tests.integration.conftest import wait_for_default_stack
from tests.stacks import Stack, copy_default_stack, running_stack


def server_params(stack_dir: Path, project: str, **env: str) -> StdioServerParameters:
    environ = dict(os.environ)
    environ.update({"JARVIS_PROJECT_DIR": str(stack_dir), "JARVIS_PROJECT_NAME": project, **env})
    return StdioServerParameters(command=sys.executable, args=["-m", "jarvis", "serve"], env=environ)


@pytest.fixture(scope="module")
def e2e_stack(base_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # A copy of the default stack, so a test can change what `rebuild` builds.
    directory = copy_default_stack(tmp_path_factory.mktemp("stack") / "default")
    with running_stack(directory) as stack:
        wait_for_default_stack(stack)
        yield stack


def connect(stack: Stack, **env: str) -> Client:
    """`async with connect(stack) as client:` inside the test (an async yield fixture would close the
    client's task group from another task)."""
    return Client(server_params(stack.directory, stack.name, **env))


def plain_client_params(*args: str, **env: str) -> StdioServerParameters:
    """`jarvis serve` on the bundled default stack (never started): for tools that need no Docker.
    `args` go before `serve` (e.g. `--config PATH`)."""
    environ = {**os.environ, "JARVIS_PROJECT_DIR": str(default_stack_dir()), **env}
    return StdioServerParameters(command=sys.executable, args=["-m", "jarvis", *args, "serve"], env=environ)


def plain_client(*args: str, **env: str) -> Client:
    return Client(plain_client_params(*args, **env))


async def call(client: Client, tool: str, **arguments: object) -> tuple[str, bool]:
    """(text, is_error) of one tool call."""
    result = await client.call_tool(tool, arguments)
    return "\n".join(block.text for block in result.content), bool(result.is_error)  # type: ignore[union-attr]
