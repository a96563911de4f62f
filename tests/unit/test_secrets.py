"""Secrets in server records, wherever they sit: masked by `jarvis_server info` (and every answer printing a
record), scrubbed by `jarvis_config export` with a warning naming exactly what was scrubbed, and restored
exactly by `import`. One row per realistic placement; the negatives must stay visible."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jarvis.store import transfer
from jarvis.store.mcpm_store import McpmStore
from jarvis.store.secrets import MASK, masked_record, scrubbed_record, secret_name
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import call, fake_jarvis

STDIO = {"command": "npx", "args": ["-y", "some-mcp"]}
GITHUB = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MCP = "https://mcp.example.com/mcp"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLXBhcnQ"

# id, the record's fields, where the secret sits, the secret, the value an export shows there.
PLACEMENTS: list[tuple[str, dict[str, Any], str, str, str]] = [
    ("url-in-env", {**STDIO, "env": {"DATABASE_URL": "postgres://admin:Pg-Pass-81x@db/prod"}},
     "env.DATABASE_URL", "Pg-Pass-81x", "postgres://admin:[SCRUBBED]@db/prod"),
    ("api-key-flag", {"command": "npx", "args": ["-y", "some-mcp", "--api-key", "sk-live-4f9Qa7Lm2Xc8Vb1N"]},
     "args[3]", "sk-live-4f9Qa7Lm2Xc8Vb1N", "[SCRUBBED]"),
    ("token-equals-flag", {"command": "gh-mcp", "args": [f"--token={GITHUB}"]},
     "args[0]", GITHUB, "--token=[SCRUBBED]"),
    ("PASS", {**STDIO, "env": {"PASS": "hunter2"}}, "env.PASS", "hunter2", "[SCRUBBED]"),
    ("DB_PASS", {**STDIO, "env": {"DB_PASS": "correct-horse"}}, "env.DB_PASS", "correct-horse", "[SCRUBBED]"),
    ("GITHUB_PAT", {**STDIO, "env": {"GITHUB_PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"}},
     "env.GITHUB_PAT", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[SCRUBBED]"),
    ("STRIPE_SK", {**STDIO, "env": {"STRIPE_SK": "sk_live_51HabcdefghijklmnopQR"}},
     "env.STRIPE_SK", "sk_live_51HabcdefghijklmnopQR", "[SCRUBBED]"),
    ("OPENAI_SK", {**STDIO, "env": {"OPENAI_SK": "sk-proj-Abcdefghij0123456789XYZ"}},
     "env.OPENAI_SK", "sk-proj-Abcdefghij0123456789XYZ", "[SCRUBBED]"),
    ("SLACK_WEBHOOK", {**STDIO, "env": {"SLACK_WEBHOOK": "https://hooks.slack.com/services/T000/B000/XXXX"}},
     "env.SLACK_WEBHOOK", "T000/B000/XXXX", "[SCRUBBED]"),
    ("webhook-url-any-name", {**STDIO, "env": {"NOTIFY": "https://hooks.slack.com/services/T0A1/B0D4/abcdEFGH"}},
     "env.NOTIFY", "T0A1/B0D4/abcdEFGH", "https://hooks.slack.com/services/[SCRUBBED]"),
    ("bearer-custom-header", {"url": MCP, "headers": {"X-Custom": f"Bearer {JWT}"}},
     "headers.X-Custom", JWT, "Bearer [SCRUBBED]"),
    ("prefix-neutral-header", {"url": MCP, "headers": {"Api": "sk-ant-api03-AbCdEfGhIjKlMnOpQr"}},
     "headers.Api", "sk-ant-api03-AbCdEfGhIjKlMnOpQr", "[SCRUBBED]"),
    ("basic-header", {"url": MCP, "headers": {"Proxy": "Basic dXNlcjpwYXNzd29yZA=="}},
     "headers.Proxy", "dXNlcjpwYXNzd29yZA==", "Basic [SCRUBBED]"),
    ("url-password", {"url": "https://user:Url-Pass-9@mcp.example.com/mcp"},
     "url", "Url-Pass-9", "https://user:[SCRUBBED]@mcp.example.com/mcp"),
    ("url-token-query", {"url": "https://mcp.example.com/mcp?token=Qw3rTy9Uiop0&mode=fast"},
     "url", "Qw3rTy9Uiop0", "https://mcp.example.com/mcp?token=[SCRUBBED]&mode=fast"),
    ("url-api-key-query", {"url": "https://mcp.example.com/sse?api_key=AbC123xYz789"},
     "url", "AbC123xYz789", "https://mcp.example.com/sse?api_key=[SCRUBBED]"),
    ("slack-token-any-name", {**STDIO, "env": {"SLACK": "xoxb-1234567890-abcdefghijkl"}},
     "env.SLACK", "xoxb-1234567890-abcdefghijkl", "[SCRUBBED]"),
    ("aws-key-any-name", {**STDIO, "env": {"CLOUD": "AKIAIOSFODNN7EXAMPLE"}},
     "env.CLOUD", "AKIAIOSFODNN7EXAMPLE", "[SCRUBBED]"),
    ("google-key-any-name", {**STDIO, "env": {"GEMINI": "AIzaSyA1234567890abcdefghijklmnopqrstuv"}},
     "env.GEMINI", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[SCRUBBED]"),
    ("hf-token-any-name", {**STDIO, "env": {"HF": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"}},
     "env.HF", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "[SCRUBBED]"),
    ("header-in-args", {"command": "npx", "args": ["mcp-remote", MCP, "--header", "Authorization: Bearer abc.def"]},
     "args[3]", "abc.def", "Authorization: [SCRUBBED]"),
    ("env-assignment-in-args", {"command": "docker", "args": ["run", "-e", f"GITHUB_TOKEN={GITHUB}", "img"]},
     "args[2]", GITHUB, "GITHUB_TOKEN=[SCRUBBED]"),
    ("password-flag", {"command": "db-mcp", "args": ["--password", "s3cr3t!"]}, "args[1]", "s3cr3t!", "[SCRUBBED]"),
    ("SENTRY_DSN", {**STDIO, "env": {"SENTRY_DSN": "https://abc123@o1.ingest.sentry.io/1"}},
     "env.SENTRY_DSN", "abc123", "[SCRUBBED]"),
    ("mongo-url-any-name", {**STDIO, "env": {"MONGO": "mongodb+srv://app:M0ngo-Pw@cluster0.example.net/db"}},
     "env.MONGO", "M0ngo-Pw", "mongodb+srv://app:[SCRUBBED]@cluster0.example.net/db"),
    ("query-token-in-args", {"command": "x", "args": ["--url", "https://gl.example.com/api?private_token=glpat-AbCdEfGhIjKlMnOpQrSt"]},
     "args[1]", "glpat-AbCdEfGhIjKlMnOpQrSt", "https://gl.example.com/api?private_token=[SCRUBBED]"),
    ("custom-config", {"config": {"command": "x", "env": {"API_TOKEN": "cfg-Secret-1"}}},
     "config.env.API_TOKEN", "cfg-Secret-1", "[SCRUBBED]"),
]  # fmt: skip

NEGATIVES: dict[str, dict[str, Any]] = {
    "plain-stdio": {
        "command": "uvx",
        "args": ["mcp-x", "--port", "8080", "--verbose", "--api-key", "${API_KEY}", "--keyword", "search",
                 "--token-file", "/run/secrets/token", "--repo", "ssh://git@github.com/org/repo.git", "-e", "TZ=UTC"],
        "env": {"PATH": "/usr/bin:/bin", "LOG_LEVEL": "debug", "MAX_TOKENS": "4096", "GITHUB_TOKEN": "${GITHUB_TOKEN}",
                "AUTH_ENABLED": "true", "PORT": "8080", "TOKEN_URL": "https://auth.example.com/oauth/token",
                "HOME_URL": "http://localhost:8080/mcp", "KEYWORD": "search", "SESSION_TIMEOUT": "30", "DEBUG": "1"},
    },
    "plain-remote": {
        "url": "http://localhost:8080/mcp?mode=fast",
        "headers": {"Authorization": "Bearer ${TOKEN}", "Accept": "application/json", "X-Api-Key": "${API_KEY}"},
    },
}  # fmt: skip


def at(record: Any, path: str) -> Any:
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        record = record[int(part[1:-1])] if part.startswith("[") else record[part]
    return record


def store_with(folder: Path, records: dict[str, dict[str, Any]]) -> bytes:
    folder.mkdir(parents=True, exist_ok=True)
    data = {name: {"name": name, "profile_tags": [], **fields} for name, fields in records.items()}
    (folder / "servers.json").write_text(json.dumps(data, indent=2))
    return (folder / "servers.json").read_bytes()


def export_document(jarvis: Any, **arguments: Any) -> tuple[str, dict[str, Any]]:
    text = call(jarvis_config, jarvis, action="export", **arguments)
    return text, json.loads(text.splitlines()[-1])


@pytest.mark.parametrize(("fields", "path", "secret", "scrubbed"), [p[1:] for p in PLACEMENTS],
                         ids=[p[0] for p in PLACEMENTS])  # fmt: skip
def test_info_masks_the_secret_and_keeps_the_rest(tmp_path: Path, fields, path, secret, scrubbed) -> None:
    store_with(tmp_path, {"s": fields})
    text = call(jarvis_server, fake_jarvis(mcpm_dir=tmp_path), action="info", name="s")
    assert secret not in text
    shown = f"{MASK} ({len(at(fields, path))} chars)" if scrubbed == "[SCRUBBED]" else scrubbed.replace(
        "[SCRUBBED]", MASK)  # fmt: skip
    assert json.dumps(shown, ensure_ascii=False) in text or f": {shown}" in text, text


@pytest.mark.parametrize(("fields", "path", "secret", "scrubbed"), [p[1:] for p in PLACEMENTS],
                         ids=[p[0] for p in PLACEMENTS])  # fmt: skip
def test_export_scrubs_exactly_the_secret_and_import_restores_it(tmp_path: Path, fields, path, secret, scrubbed):
    original = store_with(tmp_path, {"s": fields})
    jarvis = fake_jarvis(mcpm_dir=tmp_path)
    text, document = export_document(jarvis)
    assert secret not in text
    assert at(document["servers"]["s"], path) == scrubbed
    assert text.splitlines()[1] == (
        f"warning: Secret-looking values replaced by [SCRUBBED]: servers.s.{path}. "
        "Importing keeps the stored value for each; include_secrets=true exports them."
    )
    imported = call(jarvis_config, jarvis, action="import", data=text.splitlines()[-1])
    assert f"kept stored values for [SCRUBBED] s.{path}" in imported
    assert "servers: unchanged" in imported
    assert (tmp_path / "servers.json").read_bytes() == original  # an exact round trip
    full, document = export_document(jarvis, include_secrets=True)
    assert f"warning: Contains secrets: servers.s.{path}. Store it safely." in full
    assert at(document["servers"]["s"], path) == at(fields, path)


@pytest.mark.parametrize("name", NEGATIVES)
def test_what_is_not_secret_stays_visible(tmp_path: Path, name: str) -> None:
    original = store_with(tmp_path, {name: NEGATIVES[name]})
    jarvis = fake_jarvis(mcpm_dir=tmp_path)
    info = call(jarvis_server, jarvis, action="info", name=name)
    assert MASK not in info
    for value in [*NEGATIVES[name].get("env", {}).values(), *NEGATIVES[name].get("headers", {}).values()]:
        assert json.dumps(value) in info
    assert json.dumps(NEGATIVES[name].get("args")) in info or "args" not in NEGATIVES[name]
    text, document = export_document(jarvis)
    assert "replaced by [SCRUBBED]: none." in text
    assert document["servers"][name] == json.loads(original)[name]


def test_every_placement_at_once_is_listed_in_order_and_round_trips(tmp_path: Path) -> None:
    records = {row[0]: row[1] for row in PLACEMENTS} | NEGATIVES
    original = store_with(tmp_path / "mcpm", records)
    jarvis = fake_jarvis(mcpm_dir=tmp_path / "mcpm")
    text = export_document(jarvis, path=str(tmp_path / "backup.json"))[0]
    listed = text.splitlines()[1].removeprefix("warning: Secret-looking values replaced by [SCRUBBED]: ")
    assert listed.split(". Importing")[0].split(", ") == [f"servers.{row[0]}.{row[2]}" for row in PLACEMENTS]
    for row in PLACEMENTS:
        assert row[3] not in text
        assert row[3] not in (tmp_path / "backup.json").read_text()
    call(jarvis_config, jarvis, action="import", path=str(tmp_path / "backup.json"))
    assert (tmp_path / "mcpm" / "servers.json").read_bytes() == original


def test_scrubbed_values_with_nothing_stored_are_reported_and_left_as_placeholders(tmp_path: Path) -> None:
    store_with(tmp_path / "a", {"db": PLACEMENTS[0][1], "cli": PLACEMENTS[1][1], "web": PLACEMENTS[13][1],
                                "p": PLACEMENTS[3][1]})  # fmt: skip
    scrubbed = call(jarvis_config, fake_jarvis(mcpm_dir=tmp_path / "a"), action="export").splitlines()[-1]
    text = call(jarvis_config, fake_jarvis(mcpm_dir=tmp_path / "b"), action="import", data=scrubbed)
    assert "STILL REQUIRED (scrubbed, nothing stored): db.env.DATABASE_URL, cli.args[3], web.url, p.env.PASS" in text
    stored = json.loads((tmp_path / "b" / "servers.json").read_text())
    assert stored["db"]["env"] == {"DATABASE_URL": "postgres://admin:[SCRUBBED]@db/prod"}
    assert stored["cli"]["args"][3] == "[SCRUBBED]"
    assert stored["p"]["env"] == {}  # a whole scrubbed env value is dropped, as before


def test_import_finds_a_scrubbed_argument_that_moved(tmp_path: Path) -> None:
    store_with(tmp_path, {"cli": {"command": "x", "args": ["--api-key", "real-Key-123", "--token", "tok-456-Abc"]}})
    jarvis = fake_jarvis(mcpm_dir=tmp_path)
    document = export_document(jarvis)[1]
    document["servers"]["cli"]["args"].insert(0, "--verbose")
    text = call(jarvis_config, jarvis, action="import", data=json.dumps(document))
    assert "kept stored values for [SCRUBBED] cli.args[2], cli.args[4]" in text
    args = json.loads((tmp_path / "servers.json").read_text())["cli"]["args"]
    assert args == ["--verbose", "--api-key", "real-Key-123", "--token", "tok-456-Abc"]


def test_import_is_pure_over_the_snapshot_it_is_given(tmp_path: Path) -> None:
    """The store may run the change twice (another writer meanwhile): each run restores from its own snapshot."""
    store_with(tmp_path, {"db": PLACEMENTS[0][1]})
    store = McpmStore(tmp_path)
    plan = transfer.parse_document(
        call(jarvis_config, fake_jarvis(mcpm_dir=tmp_path), action="export").splitlines()[-1]
    )
    first = store.read()
    transfer.apply_import(first, plan)
    rotated = {**PLACEMENTS[0][1], "env": {"DATABASE_URL": "postgres://admin:Rotated-2@db/prod"}}
    store_with(tmp_path, {"db": rotated})
    second = store.read()
    transfer.apply_import(second, plan)
    assert first.servers["db"].env == {"DATABASE_URL": "postgres://admin:Pg-Pass-81x@db/prod"}
    assert second.servers["db"].env == {"DATABASE_URL": "postgres://admin:Rotated-2@db/prod"}


@pytest.mark.parametrize(
    ("name", "secret"),
    [("API_KEY", True), ("apiKey", True), ("X-Api-Key", True), ("PGPASSWORD", True), ("DB_PASS", True),
     ("GITHUB_PAT", True), ("STRIPE_SK", True), ("SLACK_WEBHOOK_URL", True), ("SENTRY_DSN", True), ("DB_CONN", True),
     ("MONGO_CONNECTION_STRING", True), ("access_token", True), ("Authorization", True), ("OAUTH", True),
     ("COOKIE", True), ("sig", True), ("PATH", False), ("BYPASS", False), ("COMPASS", False), ("KEYWORD", False),
     ("MAX_TOKENS", False), ("TOKEN_URL", False), ("KEY_FILE", False), ("AUTH_TYPE", False), ("AUTHOR", False),
     ("SESSION_TIMEOUT", False), ("SKIP", False), ("PATTERN", False), ("LOG_LEVEL", False)],
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_masked_and_scrubbed_records_keep_identity_fields() -> None:
    record = {"name": "sk-proj-Abcdefghij0123456789XYZ", "profile_tags": ["ghp_" + "a1" * 20], "env": {"PASS": "x1"}}
    assert masked_record(record)["name"] == record["name"]
    assert scrubbed_record(record)["profile_tags"] == record["profile_tags"]
    assert scrubbed_record(record)["env"] == {"PASS": "[SCRUBBED]"}


def test_install_answer_masks_what_it_prints(tmp_path: Path) -> None:
    index = {
        "svc": {"installations": {"http": {"url": "https://mcp.example.com/sse?api_key=AbC123xYz789"}}},
        "cli": {"installations": {"npx": {"command": "npx", "args": ["cli-mcp", "--token", "tok-456-Abc"]}}},
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    jarvis = fake_jarvis(mcpm_dir=tmp_path / "mcpm", registry_url=str(tmp_path / "index.json"))
    text = call(jarvis_server, jarvis, action="install", name="svc")
    assert "url: https://mcp.example.com/sse?api_key=••••" in text
    assert "AbC123xYz789" not in text
    text = call(jarvis_server, jarvis, action="install", name="cli")
    assert "command: npx cli-mcp --token •••• (11 chars)" in text
    assert json.loads((tmp_path / "mcpm" / "servers.json").read_text())["cli"]["args"][2] == "tok-456-Abc"


def test_a_placeholder_already_in_the_store_is_still_reported_missing(tmp_path: Path) -> None:
    store_with(tmp_path, {"db": {**STDIO, "env": {"PASS": "[SCRUBBED]", "DATABASE_URL": "pg://a:[SCRUBBED]@h/d"}}})
    jarvis = fake_jarvis(mcpm_dir=tmp_path)
    text = call(jarvis_config, jarvis, action="import", data=export_document(jarvis)[0].splitlines()[-1])
    assert "STILL REQUIRED (scrubbed, nothing stored): db.env.PASS, db.env.DATABASE_URL" in text
    assert "kept stored values" not in text
