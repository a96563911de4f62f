"""Every tool and action driven with hostile and careless values through the in-process MCP client: every answer
is a result or a tool error an agent can act on (never the SDK's opaque "Error executing tool"), errors quote
input briefly, and nothing is written outside the test's folders.

Bounded and deterministic: a fixed seed, a few hundred calls, no network (the registry is a local file, every
endpoint a closed loopback port), the Docker layer faked.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, get_args

import pytest
from mcp import Client

from jarvis.clients.catalog import CLIENTS
from jarvis.host import Host
from jarvis.mcp_server import create_server
from jarvis.settings import ENV_NAMES, Settings
from jarvis.store.mcpm_store import McpmStore
from jarvis.tool_context import ToolContext
from jarvis.tools import jarvis_client as client
from jarvis.tools import jarvis_config as config
from jarvis.tools import jarvis_diagnose as diagnose
from jarvis.tools import jarvis_profile as profile
from jarvis.tools import jarvis_server as server
from jarvis.tools import jarvis_system as system
from jarvis.tools.jarvis_project import Action as ProjectAction
from jarvis.workspace.suites import PROJECT_TYPES
from tests.fakes import FakeRunner, StaticProject
from tests.servers.loopback import closed_port_url

SEED = 20_260_521
RANDOM_CALLS_PER_TOOL = 15
ERROR_TEXT_LIMIT = 4_000  # an error quoting a 100 KB argument whole would be far longer
LONG = "a" * 100_000


def hostile_strings(tmp: Path) -> list[str]:
    outside = tmp / "outside"
    return [
        "",
        " ",
        "x",
        "x\n",
        "\n",
        "\x00",
        "a\x00b",
        "\t\r\n",
        LONG,
        "n" * 300,
        "\ud800",
        "é中文🙂",
        "-rf",
        "--help",
        "$(touch pwned)",
        "; rm -rf /",
        "${HOME}",
        "%s%n",
        "null",
        "{}",
        "[]",
        "true",
        "-1",
        "..",
        ".",
        "~",
        "~/.bashrc",
        "~nobody-here/x",
        "../outside/victim.txt",
        "../../outside/victim.txt",
        str(outside / "victim.txt"),
        str(outside),
        str(outside / "fifo"),
        str(outside / "link-to-fifo"),
        str(outside / "dangling"),
        str(outside / "no-folder" / "x.json"),
        str(outside / ("d" * 300) / "x.json"),
        "/" + "p" * 5_000,
        str(tmp / "home" / "package.json"),
        "/dev/zero",
        "/dev/null",
        "/proc/self/environ",
        "http://",
        "http://127.0.0.1:1/mcp",
        "http://127.0.0.1:1/\x00",
        "a=b,c",
        "=,=",
    ]


def hostile_lists(strings: list[str]) -> list[Any]:
    return [[], [LONG], ["x\n"], ["\x00"], ["a", "a"], strings[::7], "a,\x00,b", ",,,"]


def hostile_dicts() -> list[dict[str, str]]:
    return [{}, {"\x00": "v"}, {"K": "\x00"}, {"k" * 1_000: LONG}, {"": ""}, {"A B": "x\ny"}, {"TOKEN": "${X}"}]


def hostile_data(tmp: Path) -> list[Any]:
    servers = {"s": {"name": "s", "command": "uvx", "args": [], "env": {}, "profile_tags": ["p"]}}
    return [
        "",
        "{",
        "[]",
        "null",
        "[" * 5_000 + "]" * 5_000,
        json.dumps({"servers": {"\x00": {}}}),
        {"servers": servers},
        {"servers": {"bad name\n": servers["s"]}},
        {"clients": {"cursor": {"configPath": "\x00"}}},
        {"clients": {"cursor": {"configPath": "relative.json"}}},
        {"clients": {"cursor": {"configPath": str(tmp / "home" / "package.json")}}},
        {"clients": {"codex-cli": {"configPath": str(tmp / "home" / "x.json")}}},
        {"clients": {"cursor": "x"}},
        {"config": {"node_executable": "/tmp/evil.sh"}},
        {"config": {"node_executable": LONG}},
        {"profiles": {"p": {"name": "p", "api_key": "\x00"}}},
        {"version": "2", "servers": [], "profiles": {}},
        {"servers": {"x": LONG}},
    ]


# tool -> parameter -> valid values the random part mixes in (the rest of the time: hostile values of that type).
VALID: dict[str, dict[str, tuple[str, ...]]] = {
    "jarvis_system": {
        "action": get_args(system.Action),
        "service": ("mcpm-memory",),
        "component": ("mcpm", "daemon"),  # jarvis and all compile the package: seconds each
    },
    "jarvis_diagnose": {
        "action": get_args(diagnose.Action),
        "profile": ("research", "dev"),
        "log_type": get_args(diagnose.LogType),
    },
    "jarvis_project": {"action": get_args(ProjectAction), "path": (".", "sub")},
    "jarvis_server": {
        "action": get_args(server.Action),
        "name": ("time", "web", "brave-search"),
        "type": ("stdio", "remote", *server.REMOTE_ALIASES),
        "query": ("time",),
        "command": ("uvx",),
        "url": ("http://127.0.0.1:1/mcp",),
    },
    "jarvis_profile": {
        "action": get_args(profile.Action),
        "name": ("dev", "new-profile"),
        "new_name": ("renamed",),
    },
    "jarvis_client": {"action": get_args(client.Action), "client_name": tuple(CLIENTS), "add_servers": ("time",)},
    "jarvis_config": {
        "action": get_args(config.Action),
        "key": (*ENV_NAMES, *config.MCPM_KEYS),
        "path": ("export.json", "~/export.json"),
    },
}
PARAMETERS: dict[str, dict[str, str]] = {
    "jarvis_check_status": {},
    "jarvis_system": {"action": "str", "service": "str", "lines": "int", "no_cache": "bool", "component": "str"},
    "jarvis_diagnose": {
        "action": "str", "profile": "str", "endpoint": "str", "log_type": "str", "aggregate": "bool", "lines": "int",
        "auto_fix": "bool",
    },
    "jarvis_project": {
        "action": "str", "path": "str", "staged": "bool", "suite": "str", "project_type": "str", "force": "bool",
        "enable_ai_review": "bool", "verbose": "bool", "package": "str",
    },
    "jarvis_server": {
        "action": "str", "name": "str", "query": "str", "type": "str", "command": "str", "args": "list",
        "env": "dict", "url": "str", "headers": "dict", "replace": "bool",
    },
    "jarvis_profile": {
        "action": "str", "name": "str", "new_name": "str", "add_servers": "list", "remove_servers": "list",
        "description": "str",
    },
    "jarvis_client": {
        "action": "str", "client_name": "str", "add_servers": "list", "remove_servers": "list", "add_profiles": "list",
        "remove_profiles": "list", "config_path": "str",
    },
    "jarvis_config": {
        "action": "str", "key": "str", "value": "str", "path": "str", "data": "data", "include_secrets": "bool",
    },
}  # fmt: skip
# The actions a parameter matters to (the systematic part cycles through these; default: every action).
USED_BY: dict[tuple[str, str], tuple[str, ...]] = {
    ("jarvis_system", "component"): ("build",),
    ("jarvis_system", "service"): ("rebuild", "stop", "start", "docker_logs"),
    ("jarvis_diagnose", "profile"): ("profile_health", "test_endpoint", "logs"),  # `full` probes every endpoint
    ("jarvis_diagnose", "endpoint"): ("test_endpoint",),
    ("jarvis_diagnose", "log_type"): ("logs",),
    ("jarvis_diagnose", "lines"): ("logs",),
    ("jarvis_diagnose", "aggregate"): ("logs",),
    ("jarvis_diagnose", "auto_fix"): ("config_sync",),
    ("jarvis_project", "package"): ("test",),
    ("jarvis_server", "query"): ("search",),
    ("jarvis_server", "type"): ("create",),
    ("jarvis_server", "command"): ("create", "edit"),
    ("jarvis_server", "args"): ("create", "edit"),
    ("jarvis_server", "env"): ("create", "edit", "install"),
    ("jarvis_server", "url"): ("create", "edit"),
    ("jarvis_server", "headers"): ("create", "edit"),
    ("jarvis_profile", "new_name"): ("edit",),
    ("jarvis_profile", "description"): ("create", "edit"),
    ("jarvis_client", "config_path"): ("config",),
    ("jarvis_client", "add_servers"): ("edit",),
    ("jarvis_client", "remove_servers"): ("edit",),
    ("jarvis_client", "add_profiles"): ("edit",),
    ("jarvis_client", "remove_profiles"): ("edit",),
    ("jarvis_config", "key"): ("get", "set"),
    ("jarvis_config", "value"): ("set",),
    ("jarvis_config", "path"): ("export", "import"),
    ("jarvis_config", "data"): ("import",),
}
# Valid arguments that carry an action far enough for the hostile one to matter.
BASE: dict[tuple[str, str], dict[str, Any]] = {
    ("jarvis_system", "build"): {"component": "mcpm"},
    ("jarvis_diagnose", "logs"): {"profile": "research"},
    ("jarvis_server", "create"): {"name": "fz", "type": "stdio", "command": "uvx"},
    ("jarvis_server", "edit"): {"name": "time"},
    ("jarvis_server", "search"): {"query": "time"},
    ("jarvis_server", "install"): {"name": "time"},
    ("jarvis_profile", "create"): {"name": "fz"},
    ("jarvis_profile", "edit"): {"name": "dev"},
    ("jarvis_client", "edit"): {"client_name": "cursor"},
    ("jarvis_client", "config"): {"client_name": "cursor"},
    ("jarvis_client", "import"): {"client_name": "cursor"},
    ("jarvis_config", "set"): {"key": "project_dir", "value": "."},
    ("jarvis_config", "get"): {"key": "project_dir"},
}


def pools(tmp: Path) -> dict[str, list[Any]]:
    strings = hostile_strings(tmp)
    return {
        "str": strings,
        "int": [-1, 0, 1, 10**18, 2**63],
        "bool": [True, False],
        "list": hostile_lists(strings),
        "dict": hostile_dicts(),
        "data": hostile_data(tmp),
    }


def calls(tmp: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every hostile value of its type in every parameter (cycling through the actions it matters to), then
    random mixes of hostile and valid values."""
    kinds = pools(tmp)
    planned: list[tuple[str, dict[str, Any]]] = [("jarvis_check_status", {})]
    for tool, parameters in PARAMETERS.items():
        actions = VALID[tool]["action"] if parameters else ()
        planned += [(tool, {**BASE.get((tool, action), {}), "action": action}) for action in actions]
        turn = 0
        for name, kind in parameters.items():
            for value in kinds[kind]:
                if name == "action":
                    planned.append((tool, {"action": value}))
                    continue
                used_by = USED_BY.get((tool, name), actions)
                action = used_by[turn % len(used_by)]
                turn += 1
                planned.append((tool, {**BASE.get((tool, action), {}), "action": action, name: value}))
    rng = random.Random(SEED)
    for tool, parameters in PARAMETERS.items():
        for _ in range(RANDOM_CALLS_PER_TOOL if parameters else 0):
            arguments: dict[str, Any] = {}
            for name, kind in parameters.items():
                if name == "action" or rng.random() < 0.4:
                    valid = VALID[tool].get(name, ())
                    arguments[name] = rng.choice(valid) if valid and rng.random() < 0.6 else rng.choice(kinds[kind])
            planned.append((tool, arguments))
    return [(tool, _bounded(tool, arguments)) for tool, arguments in planned]


def _bounded(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """No call may start real work that takes seconds: a test run, or building the Jarvis package."""
    if tool == "jarvis_project" and arguments.get("action") == "test":
        arguments = {k: v for k, v in arguments.items() if k != "project_type"}
        if arguments.get("suite") in (None, *PROJECT_TYPES, "all", "integration"):
            arguments["suite"] = "no-such-suite"
    if tool == "jarvis_system" and arguments.get("action") == "build" and arguments.get("component") in (
        None, "", "jarvis", "all",
    ):  # fmt: skip
        arguments = {**arguments, "component": "mcpm"}
    return arguments


def tree(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder` (not following links) with its mode and content."""
    found: dict[str, tuple[int, bytes]] = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                found[str(path.relative_to(folder))] = (path.stat().st_mode, path.read_bytes())
            else:
                found[str(path.relative_to(folder))] = (path.lstat().st_mode, b"")
    return found


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Home, MCPM folder, workspace, project and an `outside` folder Jarvis must never write into."""
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".bashrc").write_text("export PATH=$PATH:~/bin\n")
    (home / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": {"mine": {"command": "x"}}}\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("not Jarvis's\n")
    os.mkfifo(outside / "fifo")
    (outside / "link-to-fifo").symlink_to(outside / "fifo")
    (outside / "dangling").symlink_to(outside / "nowhere.json")
    workspace = tmp_path / "workspace"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "README.md").write_text("no test suite here: `test` finds none and runs nothing\n")
    mcpm = tmp_path / "mcpm"
    mcpm.mkdir()
    record = {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "profile_tags": ["dev"]}
    (mcpm / "servers.json").write_text(json.dumps({"time": {"name": "time", **record}}, indent=2))
    (mcpm / "profiles_metadata.json").write_text(json.dumps({"dev": {"name": "dev"}}, indent=2))
    index = tmp_path / "registry.json"
    index.write_text(json.dumps({"time": {"installations": {"u": {"command": "uvx", "args": ["t"]}}}}))
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "compose.yaml").write_text("services: {}\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return tmp_path


def fuzz_server(tmp: Path):  # type: ignore[no-untyped-def]
    url = closed_port_url()
    settings = Settings.model_validate(
        {
            "project_dir": tmp / "project",
            "mcpm_dir": tmp / "mcpm",
            "workspace_dir": tmp / "workspace",
            "registry_url": str(tmp / "registry.json"),
            "endpoints": dict.fromkeys(("essentials", "memory", "dev-core", "data", "research"), url),
            "endpoint_timeout": 2,
            "config_file": tmp / "jarvis.toml",
        }
    )
    # The machine: `tmp/home` is the home folder (`~/...` paths land there), no JARVIS_* variable is set.
    host = Host.of(tmp / "home", {"PATH": os.environ.get("PATH", "")})
    return create_server(ToolContext(settings, StaticProject(), FakeRunner(), host=host))


async def test_hostile_values_never_crash_a_tool_nor_write_outside(world: Path) -> None:
    outside_before = tree(world / "outside")
    home_before = {name: value for name, value in tree(world / "home").items() if name in (".bashrc", "package.json")}
    failures: list[str] = []
    async with Client(fuzz_server(world)) as session:
        for tool, arguments in calls(world):
            result = await session.call_tool(tool, arguments)
            text = "\n".join(getattr(block, "text", "") for block in result.content)
            shown = {k: (v[:40] + "…" if isinstance(v, str) and len(v) > 40 else v) for k, v in arguments.items()}
            if "Error executing tool" in text:
                failures.append(f"{tool} {shown!r:.300}: {text[:200]}")
            elif result.is_error and len(text) > ERROR_TEXT_LIMIT:
                failures.append(f"{tool} {shown!r:.300}: error of {len(text):,} characters")
    assert not failures, f"{len(failures)} bad answers:\n" + "\n".join(failures)
    assert tree(world / "outside") == outside_before
    assert {k: v for k, v in tree(world / "home").items() if k in home_before} == home_before
    assert os.listdir(world / "cwd") == []
    McpmStore(world / "mcpm").read()  # still readable


def test_the_fuzz_plan_is_deterministic_and_covers_every_action(tmp_path: Path) -> None:
    planned = calls(tmp_path)
    assert planned == calls(tmp_path)
    for tool, valid in VALID.items():
        actions = {arguments["action"] for name, arguments in planned if name == tool}
        assert set(valid["action"]) <= actions, f"{tool} misses {set(valid['action']) - actions}"
    assert 800 <= len(planned) <= 2_000
