"""jarvis_server and jarvis_profile on real MCPM files in a temporary folder; the registry from a local file,
from a loopback HTTP server, from its cache when offline, and failing fast with no cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from jarvis.errors import InvalidInput
from jarvis.store.registry import CACHE, RegistryUnavailable
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from tests.fakes import FakeRunner, call, fake_jarvis, running
from tests.servers.loopback import closed_port_url, static_server

REGISTRY = {
    "time": {
        "name": "time",
        "description": "Time and timezone conversion",
        "tags": ["time", "utility"],
        "installations": {"uvx": {"type": "uvx", "command": "uvx", "args": ["mcp-server-time"], "recommended": True}},
    },
    "brave-search": {
        "name": "brave-search",
        "description": "Web search with the Brave API",
        "tags": ["search", "web"],
        "arguments": {"BRAVE_API_KEY": {"description": "Brave Search API key", "required": True}},
        "installations": {
            "npm": {
                "type": "npm",
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-brave-search"],
                "env": {"BRAVE_API_KEY": "${BRAVE_API_KEY}", "LOG": "info"},
            }
        },
    },
}


def jarvis_for(folder: Path, **settings: object):  # type: ignore[no-untyped-def]
    return fake_jarvis(mcpm_dir=folder, **settings)


def servers_json(folder: Path) -> dict:
    return json.loads((folder / "servers.json").read_text())


def test_create_list_info_edit_uninstall(tmp_path: Path) -> None:
    jarvis = jarvis_for(tmp_path)
    text = call(
        jarvis_server,
        jarvis,
        action="create",
        name="time",
        type="stdio",
        command="uvx",
        args='mcp-server-time --zone "Europe/Paris"',
        env={"API_TOKEN": "s3cret-value", "TZ": "UTC"},
    )
    assert text.startswith("created time (stdio)")
    assert '"API_TOKEN": "•••• (12 chars)"' in text
    assert "s3cret" not in text
    assert servers_json(tmp_path)["time"]["args"] == ["mcp-server-time", "--zone", "Europe/Paris"]
    call(jarvis_server, jarvis, action="create", name="web.api", type="streamable-http", url="http://127.0.0.1:9/mcp")
    assert call(jarvis_server, jarvis, action="list") == "# servers: 2\ntime  stdio  -  on\nweb.api  remote  -  on"
    edited = call(jarvis_server, jarvis, action="edit", name="time", env={"TZ": "Asia/Tokyo", "DEBUG": "1"})
    assert edited.startswith("edited time: env merged (added DEBUG; changed TZ)")
    assert servers_json(tmp_path)["time"]["env"] == {"API_TOKEN": "s3cret-value", "TZ": "Asia/Tokyo", "DEBUG": "1"}
    replaced = call(jarvis_server, jarvis, action="edit", name="time", env={"ONLY": "1"}, replace=True)
    assert "env replaced (1 keys)" in replaced
    assert servers_json(tmp_path)["time"]["env"] == {"ONLY": "1"}
    call(jarvis_profile, jarvis, action="create", name="dev", add_servers="time,web.api")
    text = call(jarvis_server, jarvis, action="uninstall", name="time")
    assert text == "uninstalled time (stdio); removed from profile(s) dev"
    assert list(servers_json(tmp_path)) == ["web.api"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "create", "name": "a b", "type": "stdio", "command": "x"}, "no spaces or slashes"),
        ({"action": "create", "name": "a/b", "type": "stdio", "command": "x"}, "no spaces or slashes"),
        ({"action": "create", "name": "x", "type": "grpc"}, "Valid types: stdio, remote$"),
        ({"action": "create", "name": "x", "type": "stdio"}, "A stdio server needs command"),
        ({"action": "create", "name": "x", "type": "remote", "url": "localhost:1"}, "needs url, an http(s) URL"),
        ({"action": "create", "name": "x", "type": "remote", "url": "http://h", "env": {"A": "1"}}, "for stdio"),
        ({"action": "create", "name": "x", "type": "stdio", "command": "x", "args": "'open"}, "cannot split"),
        ({"action": "info", "name": "ghost"}, "Unknown server 'ghost'. Servers: none"),
        ({"action": "info"}, "name is required"),
        ({"action": "edit", "name": "ghost", "command": "x"}, "Unknown server 'ghost'"),
        ({"action": "search"}, "query is required"),
        ({"action": "share"}, "Valid actions: list, info, install, uninstall, search, edit, create, usage"),
    ],
)
def test_server_errors_name_what_is_valid(tmp_path: Path, arguments: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(jarvis_server, jarvis_for(tmp_path), **arguments)
    assert not (tmp_path / "servers.json").exists()


def test_edit_refuses_fields_of_the_other_transport_and_existing_names(tmp_path: Path) -> None:
    jarvis = jarvis_for(tmp_path)
    call(
        jarvis_server,
        jarvis,
        action="create",
        name="r",
        type="remote",
        url="http://h/mcp",
        headers={"Authorization": "x"},
    )
    with pytest.raises(InvalidInput, match="r is a remote server: it takes url, headers, not command"):
        call(jarvis_server, jarvis, action="edit", name="r", command="uvx")
    with pytest.raises(InvalidInput, match="already exists"):
        call(jarvis_server, jarvis, action="create", name="r", type="remote", url="http://h/mcp")
    with pytest.raises(InvalidInput, match="Nothing to edit"):
        call(jarvis_server, jarvis, action="edit", name="r")


def test_profiles_create_edit_rename_delete_keep_tags_and_metadata_in_step(tmp_path: Path) -> None:
    jarvis = jarvis_for(tmp_path)
    for name in ("a", "b", "c"):
        call(jarvis_server, jarvis, action="create", name=name, type="stdio", command="uvx")
    assert call(jarvis_profile, jarvis, action="create", name="p", add_servers=["a", "b"], description="first") == (
        "created profile p with 2 server(s): a, b"
    )
    text = call(jarvis_profile, jarvis, action="edit", name="p", new_name="q", add_servers="c", remove_servers="a")
    assert text == "edited profile p: added c; removed a; renamed to q (2 server tag(s) updated)\nnow q: b, c"
    tags = {name: record["profile_tags"] for name, record in servers_json(tmp_path).items()}
    assert tags == {"a": [], "b": ["q"], "c": ["q"]}
    assert json.loads((tmp_path / "profiles_metadata.json").read_text()) == {
        "q": {"name": "q", "api_key": None, "description": "first"}
    }
    assert call(jarvis_profile, jarvis, action="list") == "# profiles: 1\nq (2): b, c — first"
    with pytest.raises(InvalidInput, match="Unknown server"):
        call(jarvis_profile, jarvis, action="edit", name="q", add_servers="zzz")
    with pytest.raises(InvalidInput, match=r"Unknown profile 'p'\. Profiles: q"):
        call(jarvis_profile, jarvis, action="delete", name="p")
    assert call(jarvis_profile, jarvis, action="delete", name="q") == (
        "deleted profile q; its tag removed from 2 server(s): b, c"
    )
    assert json.loads((tmp_path / "profiles_metadata.json").read_text()) == {}
    assert all(record["profile_tags"] == [] for record in servers_json(tmp_path).values())


def test_suggest_matches_the_workspace_to_profiles_servers(tmp_path: Path) -> None:
    workspace = tmp_path / "code"
    workspace.mkdir()
    (workspace / "compose.yaml").write_text("services:\n  db:\n    image: postgres:16\n")
    (workspace / "pyproject.toml").write_text('[project]\nname = "x"\n')
    jarvis = jarvis_for(tmp_path / "mcpm", workspace_dir=workspace)
    call(jarvis_server, jarvis, action="create", name="pg", type="stdio", command="uvx", args=["postgres-mcp"])
    call(jarvis_server, jarvis, action="create", name="clock", type="stdio", command="uvx", args=["mcp-server-time"])
    call(jarvis_profile, jarvis, action="create", name="data", add_servers="pg")
    call(jarvis_profile, jarvis, action="create", name="essentials", add_servers="clock")
    text = call(jarvis_profile, jarvis, action="suggest")
    assert text.splitlines() == [f"# suggest for {workspace}: python, postgres, docker", "data: pg (postgres)"]


def test_restart_goes_through_the_runner_and_reports_each_state() -> None:
    runner = FakeRunner(compose_ps=lambda: [running("mcpm-memory", health="healthy")])
    jarvis = fake_jarvis(runner)
    text = call(jarvis_profile, jarvis, action="restart", name="memory")
    assert text == "# restarted 1 profile(s)\nmemory (mcpm-memory): running (healthy)"
    assert runner.calls[0] == ("compose_restart", (["mcpm-memory"],), {})
    everything = call(jarvis_profile, jarvis, action="restart")
    assert everything.startswith("# restarted 5 profile(s)")
    assert "essentials (mcpm-essentials): no container" in everything
    with pytest.raises(InvalidInput, match="Unknown profile 'toolbox'"):
        call(jarvis_profile, jarvis, action="restart", name="toolbox")


def test_registry_from_a_file_search_and_install_listing_required_values(tmp_path: Path) -> None:
    index = tmp_path / "index.json"
    index.write_text(json.dumps(REGISTRY))
    jarvis = jarvis_for(tmp_path / "mcpm", registry_url=str(index))
    text = call(jarvis_server, jarvis, action="search", query="web search")
    assert (
        text == f"# search 'web search': 1 found (registry file {index})\nbrave-search — Web search with the Brave API"
    )
    text = call(jarvis_server, jarvis, action="install", name="brave-search", env={"LOG": "debug"})
    assert "installed brave-search (stdio)" in text
    assert "STILL REQUIRED" in text
    assert "- BRAVE_API_KEY: Brave Search API key" in text
    record = servers_json(tmp_path / "mcpm")["brave-search"]
    assert record["env"] == {"BRAVE_API_KEY": "${BRAVE_API_KEY}", "LOG": "debug"}
    assert record["command"] == "npx"
    done = call(jarvis_server, jarvis, action="install", name="time")
    assert "STILL REQUIRED" not in done
    with pytest.raises(InvalidInput, match="already installed"):
        call(jarvis_server, jarvis, action="install", name="time")
    with pytest.raises(InvalidInput, match=r"'tim' is not in the registry .* Close: time"):
        call(jarvis_server, jarvis, action="install", name="tim")


def test_registry_over_http_is_cached_then_used_offline_and_fails_fast_without_cache(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "servers.json").write_text(json.dumps(REGISTRY))
    with static_server(served) as base:
        jarvis = jarvis_for(tmp_path, registry_url=f"{base}/servers.json")
        assert "1 found (registry http" in call(jarvis_server, jarvis, action="search", query="timezone")
    cache = json.loads((tmp_path / CACHE).read_text())
    assert set(cache) == {"servers", "last_refresh"}
    assert set(cache["servers"]) == {"time", "brave-search"}
    # Stale cache and the registry gone: the cache answers, and says it is offline and how old it is.
    cache["last_refresh"] = "2026-01-01T00:00:00+00:00"
    (tmp_path / CACHE).write_text(json.dumps(cache))
    offline = jarvis_for(tmp_path, registry_url=closed_port_url(), registry_timeout=2)
    text = call(jarvis_server, offline, action="search", query="timezone")
    assert "OFFLINE (registry http" in text
    assert "registry cache from" in text
    assert "days ago" in text
    (tmp_path / CACHE).unlink()
    started = time.monotonic()
    with pytest.raises(RegistryUnavailable, match="there is no cache at"):
        call(jarvis_server, offline, action="search", query="timezone")
    assert time.monotonic() - started < 5
