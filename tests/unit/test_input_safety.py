"""Issue 10, items 4 and 6: Jarvis writes only where it should, reads only what ends, checks every way in the
same way, and answers every anticipated failure with an error an agent can act on. Real files, FIFOs and
devices in a temporary home; each test fails on the code before the fix."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from adapters.factory import build_runner
from jarvis.clients.catalog import CLIENTS
from jarvis.errors import DaemonUnavailable, InvalidInput, JarvisError, quoted
from jarvis.host import Host
from jarvis.mcp_server import create_server
from jarvis.settings import Settings, default_stack_dir, load_settings
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_client import jarvis_client
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_profile import jarvis_profile
from jarvis.tools.jarvis_server import jarvis_server
from jarvis.tools.jarvis_system import jarvis_system
from jarvis.user_files import CLIENT_FILE_LIMIT, IMPORT_LIMIT, user_path
from tests.fakes import StaticProject, call, fake_jarvis

PACKAGE_JSON = '{\n  "name": "app",\n  "version": "1.0.0"\n}\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / "workspace").mkdir()
    return home


def machine(home: Path, **environ: str) -> Host:
    """A machine whose home folder is `home`, with no `mcpm` on PATH and only the given environment."""
    return Host.of(home, {"PATH": "/usr/bin:/bin", **environ})


@pytest.fixture
def jarvis(home: Path):  # type: ignore[no-untyped-def]
    toml = home / "jarvis.toml"
    toml.write_text(f'[jarvis]\nproject_dir = "{default_stack_dir()}"\n')
    jarvis = fake_jarvis(
        mcpm_dir=home / ".config/mcpm", workspace_dir=home / "workspace", config_file=toml, host=machine(home)
    )
    call(jarvis_server, jarvis, action="create", name="time", type="stdio", command="uvx", args=["mcp-server-time"])
    call(jarvis_profile, jarvis, action="create", name="dev", add_servers="time")
    return jarvis


def clients_json(home: Path) -> dict[str, Any]:
    path = home / ".config/mcpm/clients.json"
    return json.loads(path.read_text()) if path.exists() else {}


def finishes(call: Callable[[], object], seconds: float = 20) -> object:
    """Run `call` in a thread; a call that blocks (a FIFO read) fails the test instead of hanging it."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"the call was still blocked after {seconds}s"
    return outcome[0]


@pytest.fixture
def fifo(home: Path) -> Iterator[Path]:
    path = home / "pipe.json"
    os.mkfifo(path)
    yield path
    path.unlink()


# Item 4: export writes only new files or its own previous exports, inside the workspace when relative.


def test_export_never_replaces_a_file_that_is_not_a_jarvis_export(jarvis, home: Path) -> None:
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$PATH:~/bin\n")
    with pytest.raises(InvalidInput, match=r"\.bashrc' exists and is not a Jarvis export.*choose another path"):
        call(jarvis_config, jarvis, action="export", path="~/.bashrc")
    assert bashrc.read_text() == "export PATH=$PATH:~/bin\n"
    first = call(jarvis_config, jarvis, action="export", path="~/backup.json")
    assert f"written to {home / 'backup.json'}" in first
    assert "written to" in call(
        jarvis_config, jarvis, action="export", path="~/backup.json"
    )  # its own export: replaced
    (home / "link.json").symlink_to(home / "backup.json")
    call(jarvis_config, jarvis, action="export", path=str(home / "link.json"))
    assert (home / "link.json").is_symlink()  # written through the link, which stays


def test_export_refuses_what_is_not_a_regular_file(jarvis, home: Path, fifo: Path) -> None:
    (home / "to-fifo.json").symlink_to(fifo)
    (home / "dangling.json").symlink_to(home / "nowhere" / "x.json")
    refusals = {
        str(fifo): "is a FIFO (named pipe)",
        str(home / "to-fifo.json"): "is a FIFO (named pipe)",
        str(home / ".cursor"): "is a folder",
        "/dev/null": "is a device",
        str(home / "dangling.json"): "is a symlink to",
        str(home / "missing" / "x.json"): "does not exist",
    }
    for path, reason in refusals.items():
        error = finishes(lambda path=path: call(jarvis_config, jarvis, action="export", path=path))
        assert isinstance(error, InvalidInput), (path, error)
        assert reason in str(error), (path, error)
        assert "Nothing was written" in str(error), (path, error)
    assert not (home / "nowhere").exists()
    assert not (home / "missing").exists()


def test_export_relative_paths_stay_in_the_workspace(jarvis, home: Path) -> None:
    (home / "victim.txt").write_text("mine\n")
    for path in ("../victim.txt", "../export.json", "sub/../../export.json"):
        with pytest.raises(InvalidInput, match="leads out of the workspace"):
            call(jarvis_config, jarvis, action="export", path=path)
    assert (home / "victim.txt").read_text() == "mine\n"
    assert not (home / "export.json").exists()
    assert f"written to {home / 'workspace' / 'export.json'}" in call(
        jarvis_config, jarvis, action="export", path="export.json"
    )


# Item 4: a client's config_path must fit the client.


def test_tilde_is_the_contexts_home_folder(jarvis, home: Path) -> None:
    """`~` in a path an agent gives, or in a stored configPath, is the home of the context's host, not HOME."""
    assert user_path("~", "path", home) == home
    assert user_path("~/a/b.json", "path", home) == home / "a" / "b.json"
    assert user_path("~root/x", "path", home) == Path(os.path.expanduser("~root")) / "x"  # another user: the system's
    assert CLIENTS["cursor"].path(home, "~/elsewhere/mcp.json") == home / "elsewhere" / "mcp.json"
    text = call(jarvis_client, jarvis, action="config", client_name="cursor", config_path="~/.cursor/mcp.json")
    assert text.startswith(f"cursor: config path set to {home / '.cursor/mcp.json'}")


def test_client_config_path_must_fit_the_client(jarvis, home: Path) -> None:
    (home / "package.json").write_text(PACKAGE_JSON)
    (home / "other").mkdir()
    (home / "dangling.json").symlink_to(home / "nowhere" / "mcp.json")
    refusals = {
        str(home / "package.json"): "no 'mcpServers' section, so it looks like another program's file",
        str(home / "cursor.toml"): "name it mcp.json or give it the extension .json",
        str(home / "no-folder" / "mcp.json"): "the folder",
        str(home / "dangling.json"): "is a symlink to",
        str(home / ".cursor"): "name it mcp.json",
        "relative/mcp.json": "must be absolute",
        f"{home}/mcp\x00.json": "NUL byte",
    }
    for path, reason in refusals.items():
        with pytest.raises(InvalidInput, match="config_path") as caught:
            call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=path)
        assert reason in str(caught.value), (path, caught.value)
    assert (home / "package.json").read_text() == PACKAGE_JSON
    assert not (home / "no-folder").exists()
    assert not (home / "nowhere").exists()
    assert clients_json(home) == {}
    with pytest.raises(
        InvalidInput, match=r"a YAML file; name it config\.yaml or give it the extension \.yaml or \.yml"
    ):
        call(jarvis_client, jarvis, action="config", client_name="goose-cli", config_path=str(home / "goose.json"))
    # What fits: the client's own file name, a file holding its section, an empty or a new file.
    (home / "other" / "mcp.json").write_text('{"theme": "dark"}')
    (home / "with-section.json").write_text('{"mcpServers": {}}')
    (home / "empty.json").write_text("")
    for path in ("other/mcp.json", "with-section.json", "empty.json", "new.json"):
        text = call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=str(home / path))
        assert text.startswith(f"cursor: config path set to {home / path}")
    assert clients_json(home) == {"cursor": {"configPath": str(home / "new.json")}}


def test_client_config_path_reads_only_regular_files_of_bounded_size(jarvis, home: Path, fifo: Path) -> None:
    big = home / "big.json"
    with big.open("wb") as file:
        file.truncate(CLIENT_FILE_LIMIT + 1)  # sparse: no disk used
    refusals = {str(fifo): "is a FIFO", "/dev/zero": "mcp.json", str(big): "the limit is 8 MiB"}
    for path, reason in refusals.items():
        error = finishes(
            lambda path=path: call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=path)
        )
        assert isinstance(error, InvalidInput), (path, error)
        assert reason in str(error), (path, error)
    (home / "zero.json").symlink_to("/dev/zero")
    error = finishes(
        lambda: call(jarvis_client, jarvis, action="config", client_name="cursor", config_path=str(home / "zero.json"))
    )
    assert isinstance(error, InvalidInput)
    assert "is a device; Jarvis reads only regular files" in str(error)


# Item 4: import reads only regular files of bounded size, and checks exactly as set and config do.


def test_import_reads_only_regular_files_of_bounded_size(jarvis, home: Path, fifo: Path) -> None:
    big = home / "big.json"
    with big.open("wb") as file:
        file.truncate(IMPORT_LIMIT + 1)
    refusals = {str(fifo): "is a FIFO (named pipe)", "/dev/zero": "is a device", str(big): "the limit is 16 MiB"}
    for path, reason in refusals.items():
        error = finishes(lambda path=path: call(jarvis_config, jarvis, action="import", path=path))
        assert isinstance(error, InvalidInput), (path, error)
        assert reason in str(error), (path, error)


def test_import_checks_config_and_client_paths_as_set_and_config_do(jarvis, home: Path) -> None:
    (home / "package.json").write_text(PACKAGE_JSON)
    before = {p.name: p.read_bytes() for p in (home / ".config/mcpm").glob("*.json")}
    documents = {
        "/tmp/evil.sh": {"config": {"node_executable": "/tmp/evil.sh"}},
        "must be absolute": {"clients": {"cursor": {"configPath": "relative/mcp.json"}}},
        "looks like another program's file": {"clients": {"cursor": {"configPath": str(home / "package.json")}}},
        "NUL byte": {"clients": {"cursor": {"configPath": f"{home}/a\x00.json"}}},
        "extension .toml": {"clients": {"codex-cli": {"configPath": str(home / "codex.json")}}},
    }
    for reason, document in documents.items():
        with pytest.raises(InvalidInput, match="Nothing was imported") as caught:
            call(jarvis_config, jarvis, action="import", data=json.dumps(document))
        assert reason in str(caught.value), caught.value
        # The dedicated actions refuse the same values with the same words.
    with pytest.raises(InvalidInput, match=r"Invalid node_executable '/tmp/evil.sh'\. Valid values: npx, bunx"):
        call(jarvis_config, jarvis, action="set", key="node_executable", value="/tmp/evil.sh")
    assert {p.name: p.read_bytes() for p in (home / ".config/mcpm").glob("*.json")} == before
    document = {
        "config": {"node_executable": "bunx", "other": 1},
        "clients": {"cursor": {"configPath": str(home / "c.json")}},
    }
    text = call(jarvis_config, jarvis, action="import", data=document)
    assert "config: added node_executable, other" in text


# Item 4: set validates the file's own values, whatever the environment overrides.


@pytest.mark.parametrize(
    ("variable", "key", "value", "reason"),
    [
        ("JARVIS_BOOTSTRAP_TIMEOUT", "bootstrap_timeout", "0", "greater than 0"),
        ("JARVIS_RETRY_TIMEOUT", "retry_timeout", "-5", "greater than or equal to 0"),
        ("JARVIS_PROJECT_DIR", "project_dir", "/nonexistent/project", "is not a directory"),
    ],
)
def test_set_validates_the_file_even_when_the_environment_overrides_the_key(
    jarvis, home: Path, variable: str, key: str, value: str, reason: str
) -> None:
    overridden = "5" if variable != "JARVIS_PROJECT_DIR" else str(default_stack_dir())
    jarvis = dataclasses.replace(jarvis, host=machine(home, **{variable: overridden}))
    before = (home / "jarvis.toml").read_text()
    with pytest.raises(InvalidInput, match=f"Not set, .* is unchanged: .*{reason}"):
        call(jarvis_config, jarvis, action="set", key=key, value=value)
    assert (home / "jarvis.toml").read_text() == before
    load_settings(config_path=home / "jarvis.toml", environ={})  # Jarvis still starts without the variable


# Item 6: temp files, quoted input, names, NUL bytes, after-change notes, bootstrap without a daemon.


def test_a_failed_set_leaves_no_temp_and_stale_candidates_are_removed(jarvis, home: Path) -> None:
    stale = home / ".jarvis.toml.killed.tmp"
    stale.write_bytes(b"x" * 2_000_000)
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    fresh = home / ".jarvis.toml.running.tmp"  # another `set` at work right now: left alone
    fresh.write_text("y")
    for value in ("a" * 2_000_000, "a\x00b", "~nobody-on-this-machine/x"):
        with pytest.raises(InvalidInput, match="Not set"):
            call(jarvis_config, jarvis, action="set", key="project_dir", value=value)
    assert sorted(p.name for p in home.glob(".jarvis.toml.*")) == [fresh.name]


def test_errors_quote_input_briefly() -> None:
    jarvis = fake_jarvis()
    huge = "x" * 2_000_000
    calls = [
        lambda: call(jarvis_server, jarvis, action=huge),
        lambda: call(jarvis_config, jarvis, action="get", key=huge),
        lambda: call(jarvis_config, jarvis, action="set", key="node_executable", value=huge),
        lambda: call(jarvis_server, jarvis, action="info", name=huge),
        lambda: call(jarvis_profile, jarvis, action="restart", name=huge),
        lambda: call(jarvis_system, jarvis, action="stop", service=huge),
    ]
    for attempt in calls:
        with pytest.raises(InvalidInput) as caught:
            attempt()
        assert len(str(caught.value)) < 600, str(caught.value)[:200]
        assert "(2,000,000 characters)" in str(caught.value)
    assert quoted("x\n") == "'x\\n'"


def test_names_are_matched_whole_and_capped(jarvis, home: Path) -> None:
    for name in ("x\n", "x\x00", "n" * 101):
        with pytest.raises(InvalidInput, match="Invalid server name"):
            call(jarvis_server, jarvis, action="create", name=name, type="stdio", command="uvx")
        with pytest.raises(InvalidInput, match="Invalid profile name"):
            call(jarvis_profile, jarvis, action="create", name=name)
    assert "created n" in call(jarvis_server, jarvis, action="create", name="n" * 100, type="stdio", command="uvx")
    (home / ".cursor/mcp.json").write_text(
        json.dumps({"mcpServers": {"bad\n": {"command": "x"}, "ok": {"command": "y"}}})
    )
    text = call(jarvis_client, jarvis, action="import", client_name="cursor")
    assert "skipped, not valid server names: bad\n" in text
    assert "took: ok (stdio)" in text


def test_a_nul_byte_in_config_path_is_refused_and_breaks_nothing(jarvis, home: Path) -> None:
    with pytest.raises(InvalidInput, match="NUL byte"):
        call(jarvis_client, jarvis, action="config", client_name="cursor", config_path="/tmp/a\x00b.json")
    assert clients_json(home) == {}
    assert call(jarvis_client, jarvis, action="list").startswith("# clients:")
    assert "uninstalled time" in call(jarvis_server, jarvis, action="uninstall", name="time")


def test_uninstall_and_delete_report_the_change_they_made_even_when_clients_cannot_be_checked(
    jarvis, home: Path
) -> None:
    # A path an older Jarvis stored: checking the clients' files now fails, the change itself must not.
    (home / ".config/mcpm/clients.json").write_text(json.dumps({"cursor": {"configPath": "/tmp/a\x00b.json"}}))
    text = call(jarvis_server, jarvis, action="uninstall", name="time")
    assert text.startswith("uninstalled time (stdio); removed from profile(s) dev")
    assert "note: could not check the clients' files for server time" in text
    text = call(jarvis_profile, jarvis, action="delete", name="dev")
    assert text.startswith("deleted profile dev")
    assert "note: could not check the clients' files for profile dev" in text
    assert json.loads((home / ".config/mcpm/servers.json").read_text()) == {}


@pytest.mark.parametrize("lifecycle", ["whales", "dockerpy"])
def test_bootstrap_without_a_daemon_is_a_tool_error(
    home: Path, monkeypatch: pytest.MonkeyPatch, lifecycle: str
) -> None:
    """The real adapters against a socket nobody serves: the base image step maps its error like every other."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{home}/no-daemon.sock")  # the adapters find the daemon as docker does
    settings = Settings.model_validate(
        {"project_dir": default_stack_dir().resolve(), "mcpm_dir": home / "mcpm", "lifecycle_adapter": lifecycle,
         "retry_timeout": 0}
    )  # fmt: skip
    jarvis = ToolContext(settings, StaticProject(), build_runner(settings), host=machine(home))
    with pytest.raises(DaemonUnavailable, match=f"Docker daemon unavailable at unix://{home}/no-daemon.sock"):
        call(jarvis_system, jarvis, action="bootstrap")


async def test_optional_strings_that_look_like_json_stay_strings(home: Path) -> None:
    jarvis = fake_jarvis(mcpm_dir=home / "mcpm", host=machine(home))
    mcp = create_server(jarvis)
    async with Client(mcp) as session:
        for name, description in (("null", "[]"), ("true", "{}"), ("p1", "null")):
            result = await session.call_tool(
                "jarvis_profile", {"action": "create", "name": name, "description": description}
            )
            assert not result.is_error, result.content
        listed = (await session.call_tool("jarvis_profile", {"action": "list"})).content[0].text  # type: ignore[union-attr]
        result = await session.call_tool("jarvis_server", {"action": "create", "name": "a", "type": "stdio",
                                                           "command": "uvx", "args": '["--x", "1"]'})  # fmt: skip
        assert not result.is_error
    assert "null (0): - — []" in listed
    assert "true (0): - — {}" in listed
    assert "p1 (0): - — null" in listed
    assert json.loads((home / "mcpm/servers.json").read_text())["a"]["args"] == ["--x", "1"]  # arrays still parse


def test_server_fields_a_process_or_request_cannot_carry_are_refused_on_the_way_in(jarvis, home: Path) -> None:
    """Stored, they used to break every later `jarvis_client edit` of that server (UnicodeEncodeError)."""
    refusals = [
        ({"command": "a\x00b"}, "command 'a\\x00b' holds a NUL byte"),
        ({"command": "uvx", "args": ["ok", "\ud800"]}, "args[1] '\\ud800' is not valid text"),
        ({"command": "uvx", "env": {"K": "v\ud800"}}, "is not valid text (a lone surrogate)"),
        ({"command": "uvx", "env": {"A=B": "v"}}, "Invalid env name 'A=B'"),
        ({"url": "http://127.0.0.1:9/mcp", "headers": {"X": "a\r\nInjected: 1"}}, "cannot hold a line break"),
        ({"url": "http://127.0.0.1:9/mcp", "headers": {"Bad Name": "x"}}, "Invalid header name 'Bad Name'"),
    ]
    before = (home / ".config/mcpm/servers.json").read_bytes()
    for fields, reason in refusals:
        kind = "stdio" if "command" in fields else "remote"
        with pytest.raises(InvalidInput) as caught:
            call(jarvis_server, jarvis, action="create", name="bad", type=kind, **fields)
        assert reason in str(caught.value), caught.value
        if kind == "stdio":
            with pytest.raises(InvalidInput):
                call(jarvis_server, jarvis, action="edit", name="time", **fields)
        record = {"name": "bad", **fields}
        with pytest.raises(InvalidInput, match=r"Nothing was imported: servers\.bad: "):
            call(jarvis_config, jarvis, action="import", data={"servers": {"bad": record}})
    assert (home / ".config/mcpm/servers.json").read_bytes() == before
    with pytest.raises(InvalidInput, match="holds a NUL byte"):
        call(jarvis_server, jarvis, action="install", name="time", env={"TOKEN": "\x00"})


def test_client_files_stored_by_hand_as_a_fifo_or_a_nul_path_never_hang_or_crash(
    jarvis, home: Path, fifo: Path
) -> None:
    """A clients.json written by hand (or by an older Jarvis): the client file is read as every user file is."""
    (home / ".config/mcpm/clients.json").write_text(json.dumps({"cursor": {"configPath": str(fifo)}}))
    listed = finishes(lambda: call(jarvis_client, jarvis, action="list"))
    assert isinstance(listed, str)
    assert "cursor" in listed
    assert "UNREADABLE" in listed
    assert "regular files" in listed
    edited = finishes(lambda: call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time"))
    assert isinstance(edited, JarvisError)
    assert "regular files" in str(edited)
    (home / ".config/mcpm/clients.json").write_text(json.dumps({"cursor": {"configPath": "/tmp/a\x00b.json"}}))
    edited = finishes(lambda: call(jarvis_client, jarvis, action="edit", client_name="cursor", add_servers="time"))
    assert isinstance(edited, JarvisError)
