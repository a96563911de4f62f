"""One module per MCP tool: plain functions taking the resolved `Jarvis` context and typed arguments,
returning the text the agent reads. `jarvis.server` only declares the tools and routes `action`."""
