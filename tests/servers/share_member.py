"""A real stdio MCP server for the share tests: `python share_member.py NAME [CANCEL_MARKER]`.

Tools: echo (answers `NAME:text`), count (reports n progress steps), block (waits until cancelled, then writes
CANCEL_MARKER); a resource note://hello and a prompt greet.
"""

import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

name = sys.argv[1]
marker = Path(sys.argv[2]) if len(sys.argv) > 2 else None
server = MCPServer(name)


@server.tool()
def echo(text: str) -> str:
    return f"{name}:{text}"


@server.tool()
async def count(n: int, ctx: Context) -> str:
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted {n}"


@server.tool()
async def block() -> str:
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        if marker is not None:
            marker.write_text("cancelled")
        raise
    return "never"


@server.resource("note://hello")
def hello() -> str:
    return f"hello from {name}"


@server.prompt()
def greet(who: str) -> str:
    return f"{name} greets {who}"


server.run("stdio")
