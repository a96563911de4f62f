"""jarvis_diagnose config_sync through the real stdio server: report, repair, and a broken file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import call, plain_client


async def test_config_sync_reports_repairs_and_refuses_a_broken_file(tmp_path: Path) -> None:
    servers = {
        "time": {"name": "time", "profile_tags": ["essentials"], "command": "uvx", "args": ["mcp-server-time"]},
        "fetch": {"name": "fetch", "profile_tags": ["essentials", "research"], "command": "uvx", "args": []},
    }
    (tmp_path / "servers.json").write_text(json.dumps(servers, indent=2))
    async with plain_client(JARVIS_MCPM_DIR=str(tmp_path), JARVIS_PROFILES="essentials,research") as client:
        text, error = await call(client, "jarvis_diagnose", action="config_sync")
        assert not error
        assert "## 2 finding(s), 2 fixable" in text
        assert "- profile essentials (time, fetch) has no entry in profiles_metadata.json [fixable]" in text
        text, error = await call(client, "jarvis_diagnose", action="config_sync", auto_fix=True)
        assert not error
        assert "- profile research: metadata entry added" in text
        assert text.endswith("in sync: every tagged profile has its metadata entry")
        (tmp_path / "profiles_metadata.json").write_text('{"essentials": ')
        text, error = await call(client, "jarvis_diagnose", action="config_sync", auto_fix=True)
        assert error
        assert "profiles_metadata.json is not valid JSON (line 1, column 16" in text
        assert "Jarvis will not write over it" in text
    assert (tmp_path / "profiles_metadata.json").read_text() == '{"essentials": '
