#!/usr/bin/env bash
# The README's run command: set the machine up, then drive the bundled default stack through Jarvis,
# over MCP stdio, exactly as an agent would (see jarvis/demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh >&2
exec .venv/bin/jarvis demo "$@"
