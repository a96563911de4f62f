"""Tunnels that make a share reachable beyond this machine, and the public URL each one prints.

- `ssh`: the system's OpenSSH client, `ssh -N -R 0:<local>:<port> <relay>`; any sshd can be the relay. OpenSSH
  prints "Allocated port N for remote forward", so the URL is `http://<relay host>:N/mcp`; a relay service
  that prints a URL of its own (https://...) gives that URL instead.
- `bore`: `bore local <port> --to <relay>` (default bore.pub), which prints "listening at HOST:PORT".
- `command`: `share_tunnel_command` from jarvis.toml, `{port}` replaced; the first http(s) URL it prints.
The argv is built here (from settings, in Jarvis); the proxy runs it (`open`) so the tunnel lives in the
proxy's process group and ends with it.
"""

from __future__ import annotations

import logging
import re
import shlex
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process

from jarvis.errors import ConfigError, JarvisError
from jarvis.settings import Settings
from jarvis.share.spec import TunnelKind, TunnelSpec

Which = Callable[[str], str | None]  # a PATH look-up: the context's `host.which`

log = logging.getLogger("jarvis.share")
TUNNELS: tuple[TunnelKind, ...] = ("ssh", "bore", "command")
BORE_DEFAULT_RELAY = "bore.pub"
_ALLOCATED = re.compile(r"Allocated port (\d+) for remote forward")
_BORE = re.compile(r"listening at ([A-Za-z0-9.\-]+):(\d+)")
_URL = re.compile(r"https?://[^\s\"'<>]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class TunnelError(JarvisError):
    """The tunnel did not come up; the share was not started."""


def tunnel_spec(kind: TunnelKind, settings: Settings, local_host: str, timeout: float, which: Which) -> TunnelSpec:
    """How to start the tunnel `kind`; `which` finds its program on the host's PATH."""
    match kind:
        case "ssh":
            relay = _required(settings.share_relay, "JARVIS_SHARE_RELAY", "the ssh relay, e.g. user@relay.example")
            destination, public_host, ssh_port = _split_relay(relay)
            argv = [_on_path(which, "ssh", "the OpenSSH client (Debian: openssh-client)")]
            # ssh keeps the first value it reads for an option: these win over the user's options and ssh_config.
            # LogLevel INFO: "Allocated port N" is logged at that level.
            argv += ["-N", "-T", "-o", "ExitOnForwardFailure=yes", "-o", "BatchMode=yes", "-o", "LogLevel=INFO"]
            argv += ["-o", "ServerAliveInterval=30", *shlex.split(settings.share_ssh_options)]
            argv += [*(["-p", ssh_port] if ssh_port else []), "-R", f"0:{local_host}:{{port}}", destination]
            return TunnelSpec(kind=kind, argv=argv, public_host=public_host, timeout=timeout)
        case "bore":
            bore = _on_path(which, "bore", "bore (cargo install bore-cli)")
            relay = settings.share_relay or BORE_DEFAULT_RELAY
            argv = [bore, "local", "{port}", "--local-host", local_host, "--to", relay]
            return TunnelSpec(kind=kind, argv=argv, timeout=timeout)
        case "command":
            command = _required(
                settings.share_tunnel_command, "share_tunnel_command (jarvis.toml)", "a command with {port} in it"
            )
            return TunnelSpec(kind=kind, argv=shlex.split(command), timeout=timeout)


def _required(value: str | None, name: str, what: str) -> str:
    if not value:
        raise ConfigError(f"This tunnel needs {name}: {what}. Valid tunnels: {', '.join(TUNNELS)}")
    return value


def _on_path(which: Which, program: str, what: str) -> str:
    path = which(program)
    if path is None:
        raise ConfigError(f"`{program}` is not on PATH: install {what}, or choose another tunnel.")
    return path


def _split_relay(relay: str) -> tuple[str, str, str | None]:
    """`[user@]host[:port]` -> (ssh destination, host, port)."""
    user, at, rest = relay.rpartition("@")
    host, colon, port = rest.partition(":")
    if colon and not port.isdigit():
        raise ConfigError(f"JARVIS_SHARE_RELAY '{relay}': expected [user@]host[:port]")
    return f"{user}{at}{host}", host, port or None


def public_url(spec: TunnelSpec, line: str) -> str | None:
    """The share's public URL if `line` (one line the tunnel printed) announces it."""
    line = _ANSI.sub("", line)
    if spec.kind == "bore":
        found = _BORE.search(line)
        return f"http://{found.group(1)}:{found.group(2)}/mcp" if found else None
    if spec.kind == "ssh" and (allocated := _ALLOCATED.search(line)):
        return f"http://{spec.public_host}:{allocated.group(1)}/mcp"
    url = _URL.search(line)
    if url is None:
        return None
    base = url.group(0).rstrip(".,;")
    return base if urlsplit(base).path not in ("", "/") else base.rstrip("/") + "/mcp"


@asynccontextmanager
async def open_tunnel(spec: TunnelSpec, port: int) -> AsyncIterator[str]:
    """Run the tunnel for the local `port` and yield its public URL; it is stopped when the block ends. Raises
    `TunnelError` with what it printed when it exits, or prints no URL within the timeout."""
    argv = [arg.replace("{port}", str(port)) for arg in spec.argv]
    log.info("tunnel: %s", shlex.join(argv))
    process = await anyio.open_process(argv, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        async with anyio.create_task_group() as group:
            url = await _read_url(spec, process)
            group.start_soon(_copy_output, process)
            try:
                yield url
            finally:
                group.cancel_scope.cancel()
    finally:
        await _end(process)


async def _read_url(spec: TunnelSpec, process: Process) -> str:
    assert process.stdout is not None
    lines: deque[str] = deque(maxlen=15)
    buffer = b""
    with anyio.move_on_after(spec.timeout):
        async for chunk in process.stdout:
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace").rstrip()
                lines.append(line)
                log.info("tunnel: %s", line)
                if url := public_url(spec, line):
                    return url
        code = await process.wait()
        raise TunnelError(
            f"The {spec.kind} tunnel exited (code {code}) before it printed a public URL:\n" + "\n".join(lines)
        )
    raise TunnelError(f"The {spec.kind} tunnel printed no public URL within {spec.timeout:g}s:\n" + "\n".join(lines))


async def _copy_output(process: Process) -> None:
    """Keep reading (a full pipe would stall the tunnel), into the proxy's log."""
    assert process.stdout is not None
    async for chunk in process.stdout:
        sys.stderr.write(chunk.decode(errors="replace"))
    sys.stderr.flush()


async def _end(process: Process) -> None:
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        await process.aclose()
