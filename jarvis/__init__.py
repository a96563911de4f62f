"""Jarvis: an MCP server giving AI agents exact, safe and token-cheap hands on a Docker Compose stack."""

__version__ = "0.1.0"
