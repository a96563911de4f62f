"""`jarvis serve`: the SDK's stdio transport, with every line it would drop answered.

The SDK's stdio reader turns a line it cannot validate as JSON-RPC (nesting deeper than its parser allows,
a lone surrogate escape, `params` that is not an object) into an exception its session only logs: the client
gets no answer and waits forever. Here each line is validated the SDK's way before the SDK reads it; a line
that fails is answered with a JSON-RPC error instead (parse error -32700, invalid request -32600, invalid
params -32602), through the SDK's own writer so answers never interleave. A notification, which has no id, is
only logged. Lines that pass go to the SDK unchanged.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

log = logging.getLogger("jarvis.stdio")
# The id of a request whose text no JSON parser takes: a number or a plain string among its first members.
# The messages after which the client has finished its handshake: `initialized` (eras up to 2025-11-25), or the
# first `tools/list` (2026-07-28 clients probe with `server/discover` and send no `initialize`).
HANDSHAKE_DONE = ("notifications/initialized", "tools/list")
HANDSHAKE_LINE_LIMIT = 4096  # handshake messages are small: a longer line is not parsed twice
_LEADING_ID = re.compile(r'\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"[^"\\]*")')


def refusal(line: str) -> types.JSONRPCError | None:
    """The error answering `line`, or None when the SDK can read it (or it is blank, or a notification)."""
    if not line.strip():
        return None
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError as exc:
        error = exc.errors()[0]
    document = _loads(line)
    if isinstance(document, dict) and "method" in document and "id" not in document:
        log.warning("dropped a notification the SDK cannot read: %s", error["msg"][:200])
        return None
    if error["type"] == "json_invalid":
        code, message = types.PARSE_ERROR, f"Parse error: {error['msg']}"
    elif isinstance(document, dict) and "params" in document and not isinstance(document["params"], dict):
        code, message = types.INVALID_PARAMS, "Invalid params: params must be an object"
    else:
        where = ".".join(str(part) for part in error["loc"])
        code, message = types.INVALID_REQUEST, f"Invalid request: {where + ': ' if where else ''}{error['msg']}"
    return types.JSONRPCError(
        jsonrpc="2.0", id=_request_id(line, document), error=types.ErrorData(code=code, message=message[:300])
    )


def _loads(line: str) -> Any:
    try:
        return json.loads(line)  # Python's parser takes lone surrogates and deeper nesting than the SDK's
    except (ValueError, RecursionError):
        return None


def _request_id(line: str, document: Any) -> int | str | None:
    """The request's id when it can be found (so the client stops waiting for it); JSON-RPC's null otherwise."""
    found = document.get("id") if isinstance(document, dict) else None
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    if document is None and (match := _LEADING_ID.match(line)):
        leading: int | str = json.loads(match.group(1))
        return leading
    return None


class CheckedLines:
    """The wire's lines for the SDK's reader: the ones it can read; the others are answered on `answers`."""

    def __init__(self, lines: AsyncIterable[str], after_handshake: Callable[[], object] = lambda: None) -> None:
        self._lines = lines
        self._answers: MemoryObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()
        self._after_handshake: Callable[[], object] | None = after_handshake

    def answer_on(self, answers: MemoryObjectSendStream[SessionMessage]) -> None:
        self._answers = answers
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self._lines:
            error = refusal(line)
            if error is None:
                if line.strip():
                    yield line
                    self._notice_handshake(line)
                continue
            await self._ready.wait()
            assert self._answers is not None
            await self._answers.send(SessionMessage(error))

    def _notice_handshake(self, line: str) -> None:
        """Once the client has initialized (or, in protocol eras without `initialize`, first lists the tools),
        run `after_handshake` (the warm-up): it must not delay the handshake, and the first call wants it done."""
        if self._after_handshake is None or len(line) > HANDSHAKE_LINE_LIMIT:
            return
        message = _loads(line)
        if isinstance(message, dict) and message.get("method") in HANDSHAKE_DONE:
            after, self._after_handshake = self._after_handshake, None
            after()


def take_stdin() -> BinaryIO:
    """The wire on a private descriptor; fd 0 then reads /dev/null, so no child process can take a message (the
    SDK does the same when it owns stdin)."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(private, "rb", closefd=False)


async def serve(server: MCPServer, wire: BinaryIO, after_handshake: Callable[[], object] = lambda: None) -> None:
    text = anyio.wrap_file(TextIOWrapper(wire, encoding="utf-8", errors="replace"))
    lines = CheckedLines(text, after_handshake)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_on(write_stream)
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our stdin
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
