# ruff: noqa: E501  (the client table reads best one client per line)
"""The AI clients MCPM 2.x knows: where each keeps its MCP servers on Linux, in which section and entry style,
and how to tell whether it is installed (its CLI on PATH, or its config folder present), as MCPM does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jarvis.client_names import CLIENT_NAMES
from jarvis.user_files import expand_home

# How a client writes one server entry (see jarvis.clients.entries).
Style = Literal[
    "standard", "claude-code", "claude-desktop", "windsurf", "vscode", "gemini", "fiveire", "opencode", "codex",
    "goose", "continue",
]  # fmt: skip


@dataclass(frozen=True)
class ClientSpec:
    key: str
    name: str
    default_path: str  # under the home folder
    section: str  # the top-level key holding the servers
    style: Style
    binary: str | None = None  # installed = this CLI on PATH; otherwise = the config folder exists

    @property
    def file_format(self) -> Literal["json", "toml", "yaml"]:
        suffix = Path(self.default_path).suffix
        return "toml" if suffix == ".toml" else "yaml" if suffix == ".yaml" else "json"

    def path(self, home: Path, override: str | None = None) -> Path:
        return expand_home(Path(override), home) if override else home / self.default_path

    def installed(self, path: Path, which: Callable[[str], str | None]) -> bool:
        if self.binary:
            return which(self.binary) is not None or path.exists()
        return path.parent.is_dir()


_CODE = ".config/Code/User"
_EXT = f"{_CODE}/globalStorage"
# fmt: off
_TABLE = (
    # key            name              file under ~                                section        style           CLI
    ("claude-code",    "Claude Code",    ".claude.json",                             "mcpServers",  "claude-code",    "claude"),
    ("claude-desktop", "Claude Desktop", ".config/Claude/claude_desktop_config.json", "mcpServers", "claude-desktop", None),
    ("cursor",         "Cursor",         ".cursor/mcp.json",                         "mcpServers",  "standard",       None),
    ("windsurf",       "Windsurf",       ".codeium/windsurf/mcp_config.json",        "mcpServers",  "windsurf",       None),
    ("vscode",         "VS Code",        f"{_CODE}/mcp.json",                        "servers",     "vscode",         None),
    ("cline",    "Cline",    f"{_EXT}/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "mcpServers", "standard", None),
    ("roo-code", "Roo Code", f"{_EXT}/rooveterinaryinc.roo-cline/settings/mcp_settings.json",   "mcpServers", "standard", None),
    ("continue",       "Continue",       ".continue/config.yaml",                    "mcpServers",  "continue",       None),
    ("goose-cli",      "Goose",          ".config/goose/config.yaml",                "extensions",  "goose",          None),
    ("5ire",           "5ire",           ".config/5ire/mcp.json",                    "mcpServers",  "fiveire",        None),
    ("trae",           "Trae",           ".config/trae/mcp.json",                    "mcpServers",  "standard",       None),
    ("gemini-cli",     "Gemini CLI",     ".gemini/settings.json",                    "mcpServers",  "gemini",         "gemini"),
    ("codex-cli",      "Codex CLI",      ".codex/config.toml",                       "mcp_servers", "codex",          "codex"),
    ("opencode",       "OpenCode",       ".config/opencode/opencode.json",           "mcp",         "opencode",     "opencode"),
    ("qwen-cli",       "Qwen CLI",       ".qwen/settings.json",                      "mcpServers",  "gemini",         "qwen"),
)
# fmt: on
CLIENTS: dict[str, ClientSpec] = {row[0]: ClientSpec(*row) for row in _TABLE}
if tuple(CLIENTS) != CLIENT_NAMES:
    raise ImportError("jarvis.client_names and the client table list different clients")
