"""Lists that can grow come in pages (`limit`, `offset`, a closing line with the next page's exact call), and
`JARVIS_OUTPUT=json` answers every tool with structuredContent in seed 003's shape."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from jarvis.cli import _parse_arguments
from jarvis.errors import InvalidInput
from jarvis.host import Host
from jarvis.mcp_server import TOOLS, create_server
from jarvis.pagination import LIMIT_MAX, page
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_client import jarvis_client
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import FakeRunner, StaticProject, call, fake_jarvis, running

PAGED = {"jarvis_system", "jarvis_server", "jarvis_profile", "jarvis_client", "jarvis_share"}


def store_with_servers(folder: Path, count: int, profiles: int = 0) -> Path:
    """MCPM's servers.json with `count` stdio servers; the first `profiles` profiles tag server 0."""
    folder.mkdir(parents=True, exist_ok=True)
    servers = {
        f"s{i:03d}": {"name": f"s{i:03d}", "profile_tags": [f"p{j:03d}" for j in range(profiles)] if i == 0 else [],
                      "command": "x", "args": [], "env": {}}
        for i in range(count)
    }  # fmt: skip
    (folder / "servers.json").write_text(json.dumps(servers))
    return folder


def next_call(text: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments the closing line names, read the way a shell user's `jarvis call` reads them."""
    footer = text.splitlines()[-1]
    assert " more: " in footer, footer
    tool, *pairs = shlex.split(footer.split(" more: ", 1)[1])
    return tool, _parse_arguments(pairs)


def test_page_defaults_caps_and_refuses_bad_values() -> None:
    items = list(range(30))
    first = page(items, None, None, default=10, tool="t", arguments={"action": "list"})
    assert first.items == list(range(10))
    assert first.footer == "\nshowing 1-10 of 30; 20 more: t action=list offset=10"
    last = page(items, 25, 10, default=10, tool="t", arguments={"action": "list"})
    assert last.items == list(range(10, 30))
    assert last.footer == "\nshowing 11-30 of 30; the last page"
    assert page(items, None, None, default=50, tool="t", arguments={}).footer == ""  # all of it: no closing line
    capped = page(list(range(600)), 1000, None, default=10, tool="t", arguments={})
    assert len(capped.items) == LIMIT_MAX
    assert capped.footer.endswith(f"100 more: t offset={LIMIT_MAX} limit={LIMIT_MAX}; limit capped at 500 (asked 1000)")
    past = page(items, None, 40, default=10, tool="t", arguments={})
    assert past.items == []
    assert past.footer == "\noffset 40 is past the end (30 in all): the first page has offset=0"
    for limit, offset, message in ((0, None, "Invalid limit '0': limit must be 1-500"),
                                   (None, -1, "Invalid offset '-1': offset must be 0 or more")):  # fmt: skip
        with pytest.raises(InvalidInput, match=message):
            page(items, limit, offset, default=10, tool="t", arguments={})


def test_the_next_call_quotes_what_a_shell_would_split() -> None:
    shown = page(list(range(5)), 2, None, default=10, tool="jarvis_server",
                 arguments={"action": "search", "query": "web search", "flag": True, "none": None})  # fmt: skip
    assert shown.next_call == "jarvis_server action=search query='web search' flag=true offset=2 limit=2"


def test_server_list_pages_follow_their_closing_lines_to_the_end(tmp_path: Path) -> None:
    jarvis = fake_jarvis(mcpm_dir=store_with_servers(tmp_path, 250))
    text = call(jarvis_server, jarvis, action="list")
    assert text.splitlines()[0] == "# servers: 250"
    assert len(text.splitlines()) == 1 + 100 + 1
    assert text.splitlines()[-1] == "showing 1-100 of 250; 150 more: jarvis_server action=list offset=100"
    seen = [line.split()[0] for line in text.splitlines()[1:-1]]
    while " more: " in text.splitlines()[-1]:
        tool, arguments = next_call(text)
        assert tool == "jarvis_server"
        text = call(jarvis_server, jarvis, **arguments)
        seen += [line.split()[0] for line in text.splitlines()[1:-1]]
    assert text.splitlines()[-1] == "showing 201-250 of 250; the last page"
    assert seen == [f"s{i:03d}" for i in range(250)]


def test_a_small_list_has_no_closing_line(tmp_path: Path) -> None:
    text = call(jarvis_server, fake_jarvis(mcpm_dir=store_with_servers(tmp_path, 3)), action="list")
    assert text == "# servers: 3\ns000  stdio  -  on\ns001  stdio  -  on\ns002  stdio  -  on"


def test_search_pages_keep_the_query(tmp_path: Path) -> None:
    index = tmp_path / "index.json"
    entries = {f"web-{i:02d}": {"name": f"web-{i:02d}", "description": f"web search {i}"} for i in range(45)}
    index.write_text(json.dumps(entries))
    jarvis = fake_jarvis(mcpm_dir=tmp_path / "mcpm", registry_url=str(index))
    text = call(jarvis_server, jarvis, action="search", query="web search", limit=20)
    assert text.splitlines()[-1].endswith("25 more: jarvis_server action=search query='web search' offset=20 limit=20")
    _, arguments = next_call(text)
    second = call(jarvis_server, jarvis, **arguments)
    assert second.splitlines()[1].startswith("web-20 — web search 20")
    assert second.splitlines()[-1] == (
        "showing 21-40 of 45; 5 more: jarvis_server action=search query='web search' offset=40 limit=20"
    )


def test_profile_list_pages(tmp_path: Path) -> None:
    jarvis = fake_jarvis(mcpm_dir=store_with_servers(tmp_path, 1, profiles=7))
    text = call(jarvis_profile, jarvis, action="list", limit=3, offset=3)
    assert text.splitlines() == [
        "# profiles: 7",
        "p003 (1): s000 (no metadata: jarvis_diagnose config_sync)",
        "p004 (1): s000 (no metadata: jarvis_diagnose config_sync)",
        "p005 (1): s000 (no metadata: jarvis_diagnose config_sync)",
        "showing 4-6 of 7; 1 more: jarvis_profile action=list offset=6 limit=3",
    ]


def test_client_list_pages_the_installed_clients(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for folder in (".cursor", ".codeium/windsurf", ".config/Claude"):
        (home / folder).mkdir(parents=True)
    jarvis = fake_jarvis(mcpm_dir=store_with_servers(tmp_path / "mcpm", 1), host=Host.of(home, {"PATH": "/bin"}))
    whole = call(jarvis_client, jarvis, action="list").splitlines()
    installed = [line.split()[0] for line in whole[1:] if not line.startswith("not installed")]
    assert len(installed) >= 3, whole
    text = call(jarvis_client, jarvis, action="list", limit=2)
    lines = text.splitlines()
    assert [line.split()[0] for line in lines[1:3]] == installed[:2]
    more = len(installed) - 2
    assert lines[-1] == f"showing 1-2 of {len(installed)}; {more} more: jarvis_client action=list offset=2 limit=2"
    _, arguments = next_call(text)
    rest = call(jarvis_client, jarvis, **arguments).splitlines()
    assert rest[1].split()[0] == installed[2]
    assert rest[-1].startswith(f"showing 3-{len(installed)} of {len(installed)}")


def large_stack(count: int) -> ToolContext:
    services = [f"svc{i:03d}" for i in range(count)]
    runner = FakeRunner(compose_ps=lambda **_: [running(s) for s in services[:-1]])  # the last has no container
    return ToolContext(fake_jarvis().settings, StaticProject(services, builds=()), runner)


def test_docker_status_of_a_large_stack_counts_all_and_shows_a_page() -> None:
    text = call(jarvis_system, large_stack(130), action="docker_status")
    lines = text.splitlines()
    assert lines[0] == "fake: 129/130 running"
    assert lines[3] == "| svc000 | running | - | - |"
    assert len(lines) == 1 + 2 + 100 + 1
    assert lines[-1] == "showing 1-100 of 130; 30 more: jarvis_system action=docker_status offset=100"
    _, arguments = next_call(text)
    rest = call(jarvis_system, large_stack(130), **arguments).splitlines()
    assert rest[3] == "| svc100 | running | - | - |"
    assert rest[-2] == "| svc129 | no container | - | - |"
    assert rest[-1] == "showing 101-130 of 130; the last page"


async def test_every_listing_tool_takes_the_same_two_parameters() -> None:
    async with Client(create_server(fake_jarvis())) as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
    for name, properties in tools.items():
        if name in PAGED:
            assert properties["limit"] == {"type": "integer"}, name
            assert properties["offset"] == {"type": "integer"}, name
        else:
            assert not {"limit", "offset"} & set(properties), name


# ---- JARVIS_OUTPUT=json


async def json_call(context: ToolContext, tool: str, arguments: dict[str, Any]) -> Any:
    async with Client(create_server(context)) as client:
        return await client.call_tool(tool, arguments)


def without_timestamp(result: Any) -> dict[str, Any]:
    """The structured content, its timestamp checked (an aware ISO time) and left out."""
    shaped = dict(result.structured_content)
    assert datetime.fromisoformat(shaped.pop("timestamp")).tzinfo is not None
    return shaped


async def test_json_output_answers_with_seed_003_shape_and_one_line_of_text(tmp_path: Path) -> None:
    jarvis = fake_jarvis(mcpm_dir=store_with_servers(tmp_path, 3), output="json")
    result = await json_call(jarvis, "jarvis_server", {"action": "list", "limit": 2})
    assert not result.is_error
    [block] = result.content
    assert block.text == "servers: 3"  # type: ignore[union-attr]
    assert without_timestamp(result) == {
        "success": True,
        "tool": "jarvis_server",
        "action": "list",
        "data": {
            "servers": {
                "items": [
                    {"name": "s000", "transport": "stdio", "profiles": [], "enabled": True},
                    {"name": "s001", "transport": "stdio", "profiles": [], "enabled": True},
                ],
                "total": 3,
                "offset": 0,
                "limit": 2,
                "more": 1,
                "next_offset": 2,
            }
        },
    }


async def test_json_output_names_the_resources_and_the_error(tmp_path: Path) -> None:
    jarvis = fake_jarvis(mcpm_dir=tmp_path, output="json")
    result = await json_call(jarvis, "jarvis_server", {"action": "info", "name": "ghost"})
    assert result.is_error
    assert without_timestamp(result) == {
        "success": False,
        "tool": "jarvis_server",
        "action": "info",
        "server": "ghost",
        "error": "Unknown server 'ghost'. Servers: none",
    }
    assert result.content[0].text == "Unknown server 'ghost'. Servers: none"  # type: ignore[union-attr]


async def test_json_output_of_docker_tools_names_the_host_and_service() -> None:
    runner = FakeRunner()
    shaped = (await json_call(fake_jarvis(runner, output="json"), "jarvis_system",
                              {"action": "docker_status"})).structured_content  # fmt: skip
    assert shaped is not None
    assert shaped["host"] == "default"
    assert shaped["data"]["project"] == "fake"
    assert shaped["data"]["running"] == 5
    assert shaped["data"]["services"]["items"][0] == {
        "service": "mcpm-essentials", "container": "fake-mcpm-essentials-1", "state": "running", "status": "",
        "health": None, "exit_code": None, "ports": [], "image": "",
    }  # fmt: skip
    arguments = {"action": "docker_logs", "service": "mcpm-data", "lines": 5}
    logs = (await json_call(fake_jarvis(runner, output="json"), "jarvis_system", arguments)).structured_content
    assert logs is not None
    assert (logs["host"], logs["service"], logs["action"]) == ("default", "mcpm-data", "docker_logs")
    assert logs["data"]["text"].startswith("## mcpm-data — all streams, 1 line")  # markdown answers keep their text


@pytest.mark.parametrize("entry", TOOLS, ids=lambda entry: entry.name)
async def test_every_tool_answers_json_and_publishes_no_output_schema(entry: Any, tmp_path: Path) -> None:
    """Each tool's first read action (or its only answer) comes back as structured content."""
    jarvis = fake_jarvis(mcpm_dir=tmp_path, workspace_dir=tmp_path, output="json")
    async with Client(create_server(jarvis)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed[entry.name].output_schema is None
        reads = [action for action, effect in (entry.effects or {}).items() if effect == "reads"]
        arguments = {"action": reads[0]} if reads else {}
        result = await client.call_tool(entry.name, arguments)
    shaped = result.structured_content
    assert shaped is not None, entry.name
    assert shaped["success"] is not result.is_error
    assert shaped["tool"] == entry.name
    assert ("data" in shaped) is not result.is_error
    assert len(result.content) == 1
    assert "\n" not in result.content[0].text  # type: ignore[union-attr]


async def test_markdown_stays_the_default(tmp_path: Path) -> None:
    result = await json_call(fake_jarvis(mcpm_dir=store_with_servers(tmp_path, 1)), "jarvis_server", {"action": "list"})
    assert result.structured_content is None
    assert result.content[0].text == "# servers: 1\ns000  stdio  -  on"  # type: ignore[union-attr]


def jarvis_call(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "jarvis", "call", *args], capture_output=True, text=True, env=environ, timeout=60
    )


def test_jarvis_call_json_prints_the_same_json(tmp_path: Path) -> None:
    done = jarvis_call("--json", "jarvis_server", "action=list", JARVIS_MCPM_DIR=str(store_with_servers(tmp_path, 2)))
    assert done.returncode == 0, done.stderr
    shaped = json.loads(done.stdout)
    assert shaped["success"] is True
    assert [item["name"] for item in shaped["data"]["servers"]["items"]] == ["s000", "s001"]
    failed = jarvis_call("--json", "jarvis_server", "action=info", "name=ghost", JARVIS_MCPM_DIR=str(tmp_path))
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["error"].startswith("Unknown server 'ghost'")
    plain = jarvis_call("jarvis_server", "action=list", JARVIS_MCPM_DIR=str(tmp_path), JARVIS_OUTPUT="json")
    assert json.loads(plain.stdout)["data"]["servers"]["total"] == 2  # JARVIS_OUTPUT=json: the same JSON
