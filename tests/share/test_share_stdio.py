"""jarvis_share as agents use it: `jarvis serve` over stdio starts a share, exits, and a new `jarvis serve` lists
and stops it; a real MCP client over HTTP uses the share in between."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import call, plain_client
from tests.share.test_share_http import client, record

pytestmark = pytest.mark.usefixtures("no_leftovers")


async def test_share_started_over_stdio_outlives_its_jarvis_and_is_stopped_by_the_next(mcpm: Path) -> None:
    async with plain_client(JARVIS_MCPM_DIR=str(mcpm)) as jarvis:
        names = [tool.name for tool in (await jarvis.list_tools()).tools]
        assert "jarvis_share" in names
        text, error = await call(jarvis, "jarvis_share", action="start", name="alpha")
        assert not error, text
    share = record(mcpm)
    assert f"Token: {share.token}" in text
    async with client(share.local_url, share.token) as mcp:  # the Jarvis that started it is gone
        assert "echo" in [tool.name for tool in (await mcp.list_tools()).tools]
    async with plain_client(JARVIS_MCPM_DIR=str(mcpm)) as jarvis:
        listing, error = await call(jarvis, "jarvis_share", action="list")
        assert not error
        assert f"{share.id} server alpha" in listing
        assert "answers (3 tools)" in listing
        text, error = await call(jarvis, "jarvis_share", action="stop", name=share.id)
        assert not error, text
        assert text.startswith(f"Stopped share {share.id}")
        text, error = await call(jarvis, "jarvis_share", action="bogus")
        assert error
        assert "start, stop, list" in text
        listing, _ = await call(jarvis, "jarvis_share", action="list")
        assert listing == "No shares."
