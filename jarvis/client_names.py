"""The AI clients MCPM 2.x knows, by the key MCPM uses for each (`mcpm client ls`).

Named here, below both the store (its `clients.json` is keyed by them) and `jarvis.clients.catalog` (where
each one keeps its file), so neither imports the other for them.
"""

from __future__ import annotations

from typing import Literal, get_args

ClientName = Literal[
    "claude-code", "claude-desktop", "cursor", "windsurf", "vscode", "cline", "roo-code", "continue", "goose-cli",
    "5ire", "trae", "gemini-cli", "codex-cli", "opencode", "qwen-cli",
]  # fmt: skip
CLIENT_NAMES: tuple[str, ...] = get_args(ClientName)
