"""`jarvis serve` plus the warm-up after `initialize` (the line the server is meant to run), for bench_start.py to
measure the first call with and without it. Not part of Jarvis."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.types import NotificationParams

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jarvis.cli import serving_context
from jarvis.mcp_server import create_server
from jarvis.settings import load_settings
from jarvis.stdio import serve, take_stdin


def main() -> None:
    os.environ.pop("PYTHON_ON_WHALES_DEBUG", None)
    context = serving_context(load_settings(None))
    server = create_server(context)

    async def warm_after_initialize(_ctx: Any, _params: NotificationParams) -> None:
        context.warm_in_background()  # the one line the server should run after `initialize`

    server._lowlevel_server.add_notification_handler(
        "notifications/initialized", NotificationParams, warm_after_initialize
    )
    anyio.run(serve, server, take_stdin())


if __name__ == "__main__":
    main()
