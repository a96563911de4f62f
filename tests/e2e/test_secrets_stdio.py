"""Secrets in unusual places, through the real stdio server: masked by info, scrubbed by export with the exact
places named, and an export imported back leaves MCPM's files byte for byte as they were."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import call, plain_client

SECRETS = ("Url-Pass-9", "sk-live-4f9Qa7Lm2Xc8Vb1N", "Pg-Pass-81x", "hunter2-horse")


async def test_secrets_are_masked_scrubbed_and_restored_over_stdio(tmp_path: Path) -> None:
    async with plain_client(JARVIS_MCPM_DIR=str(tmp_path / "mcpm")) as client:
        created = [
            {"name": "web", "type": "remote", "url": "https://user:Url-Pass-9@127.0.0.1:9/mcp?mode=fast",
             "headers": {"X-Custom": "Bearer hunter2-horse", "Accept": "application/json"}},
            {"name": "db", "type": "stdio", "command": "npx", "args": ["-y", "pg-mcp", "--api-key",
             "sk-live-4f9Qa7Lm2Xc8Vb1N"], "env": {"DATABASE_URL": "postgres://admin:Pg-Pass-81x@db/prod"}},
        ]  # fmt: skip
        for arguments in created:
            text, error = await call(client, "jarvis_server", action="create", **arguments)
            assert not error, text
            assert not any(secret in text for secret in SECRETS), text
        info, _ = await call(client, "jarvis_server", action="info", name="web")
        assert "url: https://user:••••@127.0.0.1:9/mcp?mode=fast" in info
        assert '"X-Custom": "Bearer ••••", "Accept": "application/json"' in info
        info, _ = await call(client, "jarvis_server", action="info", name="db")
        assert 'args: ["-y", "pg-mcp", "--api-key", "•••• (24 chars)"]' in info
        assert '"DATABASE_URL": "postgres://admin:••••@db/prod"' in info
        original = (tmp_path / "mcpm" / "servers.json").read_bytes()
        text, error = await call(client, "jarvis_config", action="export")
        assert not error, text
        assert not any(secret in text for secret in SECRETS)
        assert text.splitlines()[1] == (
            "warning: Secret-looking values replaced by [SCRUBBED]: servers.web.url, servers.web.headers.X-Custom, "
            "servers.db.args[3], servers.db.env.DATABASE_URL. Importing keeps the stored value for each; "
            "include_secrets=true exports them."
        )
        text, error = await call(client, "jarvis_config", action="import", data=text.splitlines()[-1])
        assert not error, text
        assert "servers: unchanged" in text
    assert (tmp_path / "mcpm" / "servers.json").read_bytes() == original
    assert json.loads(original)["db"]["args"][3] == "sk-live-4f9Qa7Lm2Xc8Vb1N"
