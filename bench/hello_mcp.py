"""The yardstick for Jarvis's start-up: a bare MCPServer with one tool, served over stdio like `jarvis serve`."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("hello")


@server.tool()
def hello(name: str) -> str:
    """Say hello."""
    return f"hello {name}"


if __name__ == "__main__":
    server.run("stdio")
