"""jarvis_share end to end: real stdio servers behind the detached proxy, a real MCP client over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from jarvis.endpoint_probe import http_transport
from jarvis.errors import InvalidInput
from jarvis.host import Host
from jarvis.settings import Settings
from jarvis.share import processes
from jarvis.share.engine import STATE, ShareEngine, ShareRecord
from jarvis.tool_context import ToolContext
from jarvis.tools.jarvis_share import jarvis_share
from tests.fakes import call, fake_jarvis
from tests.share.conftest import processes_mentioning

pytestmark = pytest.mark.usefixtures("no_leftovers")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def Ctx(settings: Settings) -> ToolContext:
    return fake_jarvis(**settings.model_dump(exclude={"config_file"}))


def record(mcpm: Path, share_id: str | None = None) -> ShareRecord:
    shares = json.loads((mcpm / STATE).read_text())["shares"]
    return ShareRecord.model_validate(shares[share_id] if share_id else next(iter(shares.values())))


def wait_until(condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def post_initialize(url: str, headers: dict[str, str]) -> int:
    return httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=10).status_code


def client(url: str, token: str | None) -> Client:
    return Client(http_transport(url, {"Authorization": f"Bearer {token}"} if token else {}), mode="legacy")


async def test_server_share_needs_its_token_and_serves_tools_resources_prompts(settings_for, mcpm: Path) -> None:
    answer = jarvis_share(Ctx(settings_for()), "start", name="alpha")
    share = record(mcpm)
    assert share.token
    assert share.token in answer
    assert share.local_url in answer
    assert f'"Authorization": "Bearer {share.token}"' in answer  # the client-config snippet
    assert (mcpm / STATE).stat().st_mode & 0o777 == 0o600

    assert post_initialize(share.local_url, {}) == 401
    assert post_initialize(share.local_url, {"Authorization": "Bearer wrong"}) == 401
    assert post_initialize(share.local_url, {"Authorization": f"Bearer {share.token}"}) == 200
    # DNS-rebinding protection stays on: a Host the share is not reached by is refused.
    evil = {"Authorization": f"Bearer {share.token}", "Host": "evil.example"}
    assert post_initialize(share.local_url, evil) == 421

    async with client(share.local_url, share.token) as mcp:
        assert {t.name for t in (await mcp.list_tools()).tools} == {"echo", "count", "block"}
        result = await mcp.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "alpha:hi"  # type: ignore[union-attr]
        contents = (await mcp.read_resource("note://hello")).contents
        assert contents[0].text == "hello from alpha"  # type: ignore[union-attr]
        prompt = await mcp.get_prompt("greet", {"who": "you"})
        assert prompt.messages[0].content.text == "alpha greets you"  # type: ignore[union-attr]


async def test_profile_share_serves_the_members_that_start_and_reports_the_broken_one(settings_for, mcpm: Path) -> None:
    answer = jarvis_share(Ctx(settings_for()), "start", profile="dev")
    assert "NOT started: broken" in answer
    assert "Serving: alpha, beta" in answer
    share = record(mcpm)
    async with client(share.local_url, share.token) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert names == {f"{s}_{t}" for s in ("alpha", "beta") for t in ("echo", "count", "block")}
        assert (await mcp.call_tool("beta_echo", {"text": "x"})).content[0].text == "beta:x"  # type: ignore[union-attr]
        uris = {str(r.uri) for r in (await mcp.list_resources()).resources}
        assert uris == {"note://alpha/hello", "note://beta/hello"}
        contents = (await mcp.read_resource("note://beta/hello")).contents
        assert contents[0].text == "hello from beta"  # type: ignore[union-attr]
        assert {p.name for p in (await mcp.list_prompts()).prompts} == {"alpha_greet", "beta_greet"}
    listing = await anyio.to_thread.run_sync(jarvis_share, Ctx(settings_for()), "list")
    assert "profile dev" in listing
    assert "answers (6 tools)" in listing
    assert "not started: broken" in listing


async def test_progress_and_cancellation_pass_through(settings_for, mcpm: Path, tmp_path: Path) -> None:
    jarvis_share(Ctx(settings_for()), "start", profile="dev")
    share = record(mcpm)
    steps: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, total, message))

    async with client(share.local_url, share.token) as mcp:
        result = await mcp.call_tool("alpha_count", {"n": 3}, progress_callback=on_progress)
        assert result.content[0].text == "counted 3"  # type: ignore[union-attr]
        assert steps == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

        marker = tmp_path / "cancelled-beta"
        with anyio.move_on_after(1.0):  # the caller gives up: the SDK sends notifications/cancelled
            await mcp.call_tool("beta_block", {})
        with anyio.fail_after(20):  # the member's tool is cancelled in turn
            while not marker.exists():
                await anyio.sleep(0.05)
        assert marker.read_text() == "cancelled"
        assert (await mcp.call_tool("beta_echo", {"text": "still"})).content[0].text == "beta:still"  # type: ignore[union-attr]


async def test_open_share_says_so_and_needs_no_token(settings_for, mcpm: Path) -> None:
    answer = jarvis_share(Ctx(settings_for()), "start", name="beta", no_auth=True)
    assert "OPEN SHARE" in answer
    assert "Token" not in answer
    assert "Authorization" not in answer
    share = record(mcpm)
    async with client(share.local_url, None) as mcp:
        assert (await mcp.call_tool("echo", {"text": "o"})).content[0].text == "beta:o"  # type: ignore[union-attr]
    assert "auth OFF (open)" in await anyio.to_thread.run_sync(jarvis_share, Ctx(settings_for()), "list")


def test_a_share_outlives_jarvis_and_a_new_jarvis_lists_and_stops_it(settings_for, mcpm: Path, tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from jarvis.settings import Settings; from jarvis.host import Host\n"
        "from jarvis.tools.jarvis_share import jarvis_share\n"
        "class C:\n"
        "    settings = Settings(project_dir=Path(sys.argv[1]), mcpm_dir=Path(sys.argv[2]))\n"
        "    host = Host.current()\n"
        "print(jarvis_share(C(), 'start', name='alpha'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(mcpm)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    share = record(mcpm)
    # The Jarvis that started it has exited; a new engine reads the state and probes the share for real.
    listing = jarvis_share(Ctx(settings_for()), "list")
    assert f"{share.id} server alpha" in listing
    assert "answers (3 tools)" in listing
    assert processes_mentioning(str(mcpm))  # the proxy still runs

    answer = jarvis_share(Ctx(settings_for()), "stop", name="alpha")
    assert f"Stopped share {share.id}" in answer
    assert processes_mentioning(str(tmp_path)) == []  # proxy and member gone
    assert json.loads((mcpm / STATE).read_text()) == {"shares": {}}
    assert jarvis_share(Ctx(settings_for()), "list") == "No shares."


def test_list_comes_in_pages_and_probes_only_the_page(settings_for, mcpm: Path) -> None:
    ctx = Ctx(settings_for())
    ids = [record_id(jarvis_share(ctx, "start", name=name)) for name in ("alpha", "beta")]
    ids.append(record_id(jarvis_share(ctx, "start", profile="dev")))
    first = jarvis_share(ctx, "list", limit=2).splitlines()
    assert [line.split()[1] for line in first[:2]] == ids[:2]  # oldest first
    assert all("answers (" in line for line in first[:2])
    assert first[2] == "showing 1-2 of 3; 1 more: jarvis_share action=list offset=2 limit=2"
    last = jarvis_share(ctx, "list", limit=2, offset=2).splitlines()
    assert last[0].startswith(f"- {ids[2]} profile dev")
    assert "answers (" in last[0]
    assert last[1] == "showing 3-3 of 3; the last page"


def record_id(started: str) -> str:
    return started.split(" as share ", 1)[1].split(".", 1)[0]


def test_a_share_whose_proxy_died_is_reaped_by_list(settings_for, mcpm: Path, tmp_path: Path) -> None:
    jarvis_share(Ctx(settings_for()), "start", name="alpha")
    share = record(mcpm)
    assert share.children  # the stdio server, recorded to be found once its parent is gone
    os.kill(share.pid, signal.SIGKILL)
    wait_until(lambda: not processes.alive(share.pid))
    listing = jarvis_share(Ctx(settings_for()), "list")
    assert f"{share.id} server alpha: REAPED" in listing
    assert json.loads((mcpm / STATE).read_text()) == {"shares": {}}
    assert processes_mentioning(str(tmp_path)) == []  # the orphaned stdio server was ended too
    with pytest.raises(InvalidInput, match="No share"):
        ShareEngine(settings_for(), which=Host.current().which).stop(share.id)


def test_bad_requests_are_tool_errors_naming_the_valid_values(settings_for, mcpm: Path) -> None:
    ctx = Ctx(settings_for())
    with pytest.raises(InvalidInput, match="exactly one of name"):
        jarvis_share(ctx, "start")
    with pytest.raises(InvalidInput, match=r"Invalid server 'nope'\. Valid servers: alpha, beta, broken"):
        jarvis_share(ctx, "start", name="nope")
    with pytest.raises(InvalidInput, match="Valid profiles: dev"):
        jarvis_share(ctx, "start", profile="nope")
    with pytest.raises(InvalidInput, match="start, stop, list"):
        call(jarvis_share, ctx, action="share")
    with pytest.raises(InvalidInput, match="ssh, bore, command"):
        call(jarvis_share, ctx, action="start", name="alpha", tunnel="ngrok")
    with pytest.raises(InvalidInput, match="Invalid port 70000: 1-65535"):
        jarvis_share(ctx, "start", name="alpha", port=70000)
    with pytest.raises(InvalidInput, match="No share 'alpha'"):
        jarvis_share(ctx, "stop", name="alpha")
    assert not (mcpm / STATE).exists() or json.loads((mcpm / STATE).read_text()) == {"shares": {}}


def test_a_second_share_of_the_same_server_is_refused(settings_for, mcpm: Path) -> None:
    jarvis_share(Ctx(settings_for()), "start", name="alpha")
    with pytest.raises(Exception, match="already shared"):
        jarvis_share(Ctx(settings_for()), "start", name="alpha")


def test_a_port_in_use_fails_cleanly(settings_for, mcpm: Path, tmp_path: Path) -> None:
    jarvis_share(Ctx(settings_for()), "start", name="alpha")
    taken = record(mcpm).port
    with pytest.raises(Exception, match=f"Cannot listen on 127.0.0.1:{taken}"):
        jarvis_share(Ctx(settings_for()), "start", name="beta", port=taken)
    assert len(json.loads((mcpm / STATE).read_text())["shares"]) == 1
    assert not any("beta" in p.name for p in (mcpm / "jarvis-shares").iterdir())
