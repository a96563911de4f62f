"""The share's proxy process: `python -m jarvis.share.proxy SPEC_FILE`, started detached by the engine.

Order: read and delete the spec (it holds the token and the servers' env) → bind the port (0: a free one) →
start the members (a profile share serves those that start) → open the tunnel, if any (its public host must
be allowed before the first request) → serve MCP streamable HTTP at /mcp → write the ready file. On SIGTERM
it stops serving, closes the tunnel and the members (the SDK ends each stdio server's process group) and exits.
Anything that goes wrong before serving is written to the ready file as the reason, and the process exits 1.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from jarvis.atomic import write_atomic
from jarvis.endpoint_probe import describe_failure
from jarvis.errors import JarvisError
from jarvis.share.members import build_server, connect_all
from jarvis.share.spec import ProxyReady, ProxySpec
from jarvis.share.tunnel import open_tunnel

log = logging.getLogger("jarvis.share")
PATH = "/mcp"


class BearerAuth:
    """Every HTTP request must carry `Authorization: Bearer <token>`; 401 otherwise (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not secrets.compare_digest(given, self.expected):
                response = PlainTextResponse(
                    "Unauthorized: send Authorization: Bearer <the share's token>",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="jarvis-share"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def transport_security(bind: str, port: int, public_url: str | None) -> TransportSecuritySettings:
    """The Host (and browser Origin) values the share answers to: its local addresses and the tunnel's public
    host. The SDK answers 421 to any other Host, which protects an open share from DNS rebinding."""
    names = {bind, "127.0.0.1", "localhost", "::1"}
    if _is_wildcard(bind):
        names |= _this_machine()
    hosts = {f"{_bracket(name)}:{port}" for name in names}
    origins = {f"http://{host}" for host in hosts}
    if public_url:
        public = urlsplit(public_url)
        hosts.add(public.netloc)
        origins.add(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(allowed_hosts=sorted(hosts), allowed_origins=sorted(origins))


def _is_wildcard(bind: str) -> bool:
    return bind in ("0.0.0.0", "::", "")


def _this_machine() -> set[str]:
    names = {socket.gethostname(), socket.getfqdn()}
    with suppress(OSError):
        names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    return names


def _bracket(host: str) -> str:
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def bind_socket(bind: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    try:
        return socket.create_server((bind, port), family=family, backlog=128)
    except OSError as exc:
        raise JarvisError(f"Cannot listen on {bind}:{port}: {exc.strerror}") from exc


@asynccontextmanager
async def _no_tunnel() -> AsyncIterator[None]:
    yield None


async def serve(spec: ProxySpec) -> None:
    sock = bind_socket(spec.bind, spec.port)
    port = sock.getsockname()[1]
    async with AsyncExitStack() as stack:
        connected, failed = await stack.enter_async_context(connect_all(spec.members, spec.member_timeout))
        if not connected:
            raise JarvisError("No server of the share started: " + "; ".join(f"{n}: {w}" for n, w in failed.items()))
        tunnel = open_tunnel(spec.tunnel, port) if spec.tunnel else _no_tunnel()
        public = await stack.enter_async_context(tunnel)
        server = build_server(f"jarvis-share {spec.target}", connected, spec.prefix_names)
        app: Any = server.streamable_http_app(
            streamable_http_path=PATH, transport_security=transport_security(spec.bind, port, public), host=spec.bind
        )
        if spec.token:
            app = BearerAuth(app, spec.token)
        web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3))
        # uvicorn re-raises the signal it stopped on once it is done: handled here, so that the members are
        # still closed after it returns.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [sock])
            while not web.started:
                if web.should_exit:
                    raise JarvisError("The HTTP server stopped while starting; see the log.")
                await anyio.sleep(0.02)
            ready = ProxyReady(
                ok=True, port=port, public_url=public, served=[c.member.name for c in connected], failed=failed
            )
            write_atomic(spec.ready_file, json.dumps(ready.dump()).encode())
            log.info("serving %s on %s:%d%s (public: %s)", spec.target, spec.bind, port, PATH, public)


def reason(exc: BaseException) -> str:
    """A `JarvisError`'s own text (out of task-group wrapping), else the innermost cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) if isinstance(exc, JarvisError) else describe_failure(exc)


def main(argv: list[str]) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    spec_file = Path(argv[0])
    spec = ProxySpec.model_validate_json(spec_file.read_text())
    spec_file.unlink()
    try:
        anyio.run(serve, spec)
    except Exception as exc:
        why = reason(exc)
        log.error("share %s failed: %s", spec.share_id, why)
        if not spec.ready_file.exists():
            write_atomic(spec.ready_file, json.dumps(ProxyReady(ok=False, error=why).dump()).encode())
        return 1
    log.info("share %s stopped", spec.share_id)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
