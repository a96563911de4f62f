"""A real MCP server over streamable HTTP, for `test_endpoint` and `full`: `python probe_mcp_server.py PORT [N]`
serves tools echo, add and N more named extra_1..extra_N (to check that long tool lists are bounded)."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe-server", version="1.2.3")


@server.tool()
def echo(text: str) -> str:
    return text


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


for index in range(1, int(sys.argv[2]) + 1 if len(sys.argv) > 2 else 1):
    server.add_tool(lambda: "ok", name=f"extra_{index}", description="filler")

server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
