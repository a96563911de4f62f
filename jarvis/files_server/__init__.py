"""The files MCP server (`jarvis files serve`): read, bash and grep on a root folder, with output pruning."""
