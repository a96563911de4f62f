"""Tunnels on loopback: a real OpenSSH server (Debian's openssh-server) started by the test on 127.0.0.1 with its
own host key and an authorized key made in the test's folder is the relay; `ssh -R` through it, an MCP call
through the forwarded port. A failing tunnel leaves no share, no state and no process behind."""

from __future__ import annotations

import dataclasses
import getpass
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jarvis.errors import ConfigError
from jarvis.host import Host
from jarvis.share.engine import STATE, ShareError
from jarvis.tools.jarvis_share import jarvis_share
from tests.share.conftest import processes_mentioning
from tests.share.test_share_http import Ctx, client, post_initialize, record

pytestmark = pytest.mark.usefixtures("no_leftovers")
SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """An sshd on 127.0.0.1 (not a daemon: a child of the test, killed at the end). Yields (port, ssh options)."""
    if not (os.access(SSHD, os.X_OK) and shutil.which("ssh") and shutil.which("ssh-keygen")):
        pytest.skip("needs openssh-server and openssh-client (ci/setup.sh installs them)")
    keys = tmp_path / "ssh"
    keys.mkdir(mode=0o700)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "client_key.pub").read_text())
    (keys / "authorized_keys").chmod(0o600)
    port = free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host_key'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPidFile none\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nAllowTcpForwarding yes\n"
        "PermitRootLogin prohibit-password\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation folder
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "sshd did not listen"
            time.sleep(0.05)
        options = (
            f"-F /dev/null -i {keys / 'client_key'} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no "
            f"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
        )
        yield port, options
    finally:
        process.kill()
        process.wait()


async def test_ssh_tunnel_serves_mcp_through_the_forwarded_port(settings_for, mcpm: Path, sshd) -> None:
    port, options = sshd
    settings = settings_for(share_relay=f"{getpass.getuser()}@127.0.0.1:{port}", share_ssh_options=options)
    answer = jarvis_share(Ctx(settings), "start", name="alpha", tunnel="ssh")
    share = record(mcpm)
    assert share.public_url
    assert share.public_url != share.local_url
    assert share.public_url.startswith("http://127.0.0.1:")
    assert f"URL: {share.public_url}" in answer
    # Through the relay's forwarded port: the Host header names that port, which the share allows.
    assert post_initialize(share.public_url, {}) == 401
    async with client(share.public_url, share.token) as mcp:
        assert (await mcp.call_tool("echo", {"text": "far"})).content[0].text == "alpha:far"  # type: ignore[union-attr]
    assert processes_mentioning("client_key")  # the ssh client runs while shared

    jarvis_share(Ctx(settings), "stop", name=share.id)
    assert processes_mentioning("client_key") == []


def test_a_failing_ssh_tunnel_is_an_error_and_leaves_nothing(settings_for, mcpm: Path, tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    settings = settings_for(share_relay=f"nobody@127.0.0.1:{closed}", share_ssh_options=f"-F /dev/null -i {tmp_path}/k")
    with pytest.raises(ShareError, match="ssh tunnel exited") as failure:
        jarvis_share(Ctx(settings), "start", name="alpha", tunnel="ssh")
    assert "Connection refused" in str(failure.value)
    assert not (mcpm / STATE).exists() or json.loads((mcpm / STATE).read_text()) == {"shares": {}}
    assert processes_mentioning(str(tmp_path)) == []  # proxy, member and ssh all gone
    assert list((mcpm / "jarvis-shares").iterdir()) == []  # no spec, ready or log file either


def test_custom_tunnel_command_public_host_is_allowed(settings_for, mcpm: Path, tmp_path: Path) -> None:
    command = f"sh -c 'echo tunnel up at https://share-{{port}}.example.test/; exec sleep 600' {tmp_path}"
    settings = settings_for(share_tunnel_command=command)
    answer = jarvis_share(Ctx(settings), "start", name="alpha", tunnel="command")
    share = record(mcpm)
    public_host = f"share-{share.port}.example.test"
    assert share.public_url == f"https://{public_host}/mcp"
    assert share.public_url in answer
    authorized = {"Authorization": f"Bearer {share.token}"}
    assert post_initialize(share.local_url, {**authorized, "Host": public_host}) == 200
    assert post_initialize(share.local_url, {**authorized, "Host": "other.example.test"}) == 421
    jarvis_share(Ctx(settings), "stop", name="alpha")
    assert processes_mentioning(str(tmp_path)) == []


def test_a_tunnel_command_that_prints_no_url_fails_cleanly(settings_for, mcpm: Path, tmp_path: Path) -> None:
    settings = settings_for(share_tunnel_command=f"sh -c 'echo no url here; exit 3' {{port}} {tmp_path}")
    with pytest.raises(ShareError, match=r"command tunnel exited \(code 3\)[\s\S]*no url here"):
        jarvis_share(Ctx(settings), "start", profile="dev", tunnel="command")
    assert processes_mentioning(str(tmp_path)) == []
    assert not (mcpm / STATE).exists() or json.loads((mcpm / STATE).read_text()) == {"shares": {}}


def test_tunnels_that_are_not_configured_name_what_is_missing(settings_for, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="JARVIS_SHARE_RELAY"):
        jarvis_share(Ctx(settings_for()), "start", name="alpha", tunnel="ssh")
    with pytest.raises(ConfigError, match="share_tunnel_command"):
        jarvis_share(Ctx(settings_for()), "start", name="alpha", tunnel="command")
    without_bore = dataclasses.replace(Ctx(settings_for()), host=Host.of(tmp_path, {"PATH": str(tmp_path)}))
    with pytest.raises(ConfigError, match="`bore` is not on PATH: install bore"):
        jarvis_share(without_bore, "start", name="alpha", tunnel="bore")
