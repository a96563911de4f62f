"""The published tool list, kept on disk between starts so `jarvis serve` answers `tools/list` without importing
the tools and building a pydantic model per tool (about 60 ms of a cold start).

The file's name is a digest of everything the list is made from: Jarvis's source files (their bytes), the
Python, pydantic and MCP SDK versions, and the settings that shape the list (`JARVIS_TOOLS`,
`JARVIS_READ_ONLY`). Any change makes a new name, so a stale list is never served; an unreadable or damaged
file is rebuilt; a cache folder that cannot be written only costs the next start the build.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger("jarvis.tool_list_cache")

PACKAGE = Path(__file__).resolve().parent
Listed = list[dict[str, Any]]  # one dict per tool: name, description, inputSchema, annotations


def cache_folder(environ: Mapping[str, str], home: Path) -> Path:
    """`$XDG_CACHE_HOME/jarvis`, else `~/.cache/jarvis`."""
    return Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "jarvis"


def digest(settings_shape: Iterable[str], package: Path = PACKAGE) -> str:
    """The cache key: the sources' bytes (not their times: a checkout or a copy keeps what counts) and versions."""
    import mcp
    import pydantic

    # The SDK has no __version__, and importlib.metadata costs more than the whole look-up saves.
    sdk = sorted(dist.name for dist in Path(mcp.__file__).parent.parent.glob("mcp*.dist-info"))
    hashed = hashlib.blake2b(digest_size=16)
    for part in (sys.version, pydantic.VERSION, *sdk, *settings_shape):
        hashed.update(part.encode() + b"\0")
    for source in _sources(str(package)):
        with open(source, "rb") as file:
            hashed.update(source.encode() + b"\0" + file.read() + b"\0")
    return hashed.hexdigest()


def _sources(folder: str) -> list[str]:
    """The package's .py files in a stable order (os.walk: pathlib's globbing costs more than the reading)."""
    found = []
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        found += [os.path.join(parent, name) for name in sorted(files) if name.endswith(".py")]
    return found


def cached_tool_list(folder: Path, key: str, build: Callable[[], Listed]) -> Listed:
    """The list kept under `key` in `folder`, or `build()`'s, then kept for the next start."""
    path = folder / f"tools-{key}.json"
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(listed, list) and all(isinstance(tool, dict) and "name" in tool for tool in listed):
            return listed
        log.info("tool list cache %s is damaged: rebuilt", path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.info("tool list cache %s unreadable (%s): rebuilt", path, exc)
    listed = build()
    _keep(path, listed)
    return listed


KEPT = 8  # lists of other keys kept: several Jarvis set-ups (read-only, a few tools) on one machine


def _keep(path: Path, listed: Listed) -> None:
    """Write whole or not at all (a temp file renamed over), and drop all but the newest lists."""
    temp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".tools-", delete=False) as file:
            temp = file.name
            json.dump(listed, file)
        os.replace(temp, path)
        temp = None
        kept = sorted(path.parent.glob("tools-*.json"), key=lambda old: old.stat().st_mtime, reverse=True)
        for old in kept[KEPT:]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("tool list not cached (%s): the next start builds it again", exc)
    finally:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
