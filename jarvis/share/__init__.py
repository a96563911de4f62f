"""Sharing an MCPM server or profile over MCP streamable HTTP (`jarvis_share`).

engine.py     start / stop / list, the state file, waiting for a proxy to be ready
proxy.py      the detached proxy process (`python -m jarvis.share.proxy SPEC`): members, tunnel, HTTP
members.py    client sessions to the shared servers and the MCP server that forwards to them
tunnel.py     ssh / bore / custom tunnel commands and the public URL they print
spec.py       what the engine hands the proxy and what the proxy answers (typed, JSON files)
processes.py  process groups: alive, descendants, stop with SIGKILL escalation
"""
