"""One module per MCP tool, named like the tool: one plain function whose signature is the tool's schema, taking
the `ToolContext` and returning the text the agent reads. `jarvis.mcp_server` serves them."""
