#!/usr/bin/env bash
# The README's test command: set the machine up, lint, type-check, check the import contracts, then run the
# whole suite (unit, real-Docker, MCP stdio).
# Under CI=true a missing Docker daemon fails the run instead of skipping its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports
exec .venv/bin/python -m pytest "$@"
