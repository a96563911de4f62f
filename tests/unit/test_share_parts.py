"""The share's pure parts: what a tunnel prints, front names to members, relay addresses, allowed hosts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from jarvis.errors import ConfigError
from jarvis.settings import Settings
from jarvis.share.members import Connected, Router
from jarvis.share.proxy import transport_security
from jarvis.share.spec import Member, TunnelSpec
from jarvis.share.tunnel import public_url, tunnel_spec


def spec(kind: Any, public_host: str | None = None) -> TunnelSpec:
    return TunnelSpec(kind=kind, argv=["x"], public_host=public_host, timeout=1)


@pytest.mark.parametrize(
    ("kind", "line", "url"),
    [
        ("ssh", "Allocated port 41234 for remote forward to 127.0.0.1:8000", "http://relay.example:41234/mcp"),
        ("ssh", "Forwarding HTTP traffic from https://abc.lhr.life", "https://abc.lhr.life/mcp"),
        ("ssh", "Warning: Permanently added '[127.0.0.1]:2222' (ED25519)", None),
        ("bore", "\x1b[2m2026\x1b[0m INFO bore_cli::client: listening at bore.pub:40001", "http://bore.pub:40001/mcp"),
        ("bore", "connected to server remote_port=40001", None),
        ("command", "your url is: https://x.trycloudflare.com/ (ready)", "https://x.trycloudflare.com/mcp"),
        ("command", "serving https://edge.example/custom/mcp.", "https://edge.example/custom/mcp"),
        ("command", "starting...", None),
    ],
)
def test_public_url_from_what_the_tunnel_prints(kind: Any, line: str, url: str | None) -> None:
    assert public_url(spec(kind, "relay.example"), line) == url


def settings(**values: Any) -> Settings:
    return Settings.model_validate({"project_dir": Path("/tmp"), **values})


def test_ssh_argv_keeps_jarvis_options_first_and_splits_the_relay() -> None:
    relay = settings(share_relay="me@relay.example:2222", share_ssh_options="-i k")
    built = tunnel_spec("ssh", relay, "::1", 5, lambda program: f"/opt/bin/{program}")
    argv = built.argv
    assert argv[0] == "/opt/bin/ssh"
    assert argv[1:10] == [
        "-N",
        "-T",
        "-o",
        "ExitOnForwardFailure=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=INFO",
        "-o",
    ]
    assert argv[-5:] == ["-p", "2222", "-R", "0:::1:{port}", "me@relay.example"]
    assert "-i" in argv
    assert built.public_host == "relay.example"
    with pytest.raises(ConfigError, match=r"\[user@\]host\[:port\]"):
        tunnel_spec("ssh", settings(share_relay="relay:ssh"), "127.0.0.1", 5, lambda program: f"/opt/bin/{program}")


def test_tunnel_command_must_hold_port() -> None:
    with pytest.raises(ValueError, match=r"must contain \{port\}"):
        settings(share_tunnel_command="cloudflared tunnel")


def router(prefix: bool) -> Router:
    members = [Connected(Member(name=n, command="x"), client=None) for n in ("a", "a_b")]  # type: ignore[arg-type]
    return Router(members, prefix)


def test_profile_names_route_to_the_longest_matching_server() -> None:
    r = router(prefix=True)
    assert r.name("a_b", "tool") == "a_b_tool"
    found, original = r.find_name("a_b_tool")
    assert (found.member.name, original) == ("a_b", "tool")
    found, original = r.find_name("a_tool")
    assert (found.member.name, original) == ("a", "tool")
    with pytest.raises(MCPError, match="Unknown name 'zzz'"):
        r.find_name("zzz")


def test_profile_resource_uris_carry_the_server() -> None:
    r = router(prefix=True)
    assert r.uri("a", "file:///etc/x") == "file://a//etc/x"
    found, original = r.find_uri("file://a//etc/x")
    assert (found.member.name, original) == ("a", "file:///etc/x")
    found, original = r.find_uri("note://a_b/hello")
    assert (found.member.name, original) == ("a_b", "note://hello")
    with pytest.raises(MCPError, match="Unknown resource"):
        r.find_uri("note://nobody/hello")


def test_a_server_share_passes_names_through() -> None:
    r = Router([Connected(Member(name="only", command="x"), client=None)], prefix=False)  # type: ignore[arg-type]
    assert r.name("only", "t") == "t"
    assert r.uri("only", "note://x") == "note://x"
    assert r.find_name("t")[1] == "t"
    assert r.find_uri("note://x")[1] == "note://x"


def test_allowed_hosts_are_the_local_addresses_and_the_public_host() -> None:
    security = transport_security("127.0.0.1", 8123, "https://share.example.test/mcp")
    assert {"127.0.0.1:8123", "localhost:8123", "[::1]:8123", "share.example.test"} <= set(security.allowed_hosts)
    assert "https://share.example.test" in security.allowed_origins
    assert not any(host.startswith("evil") for host in security.allowed_hosts)
