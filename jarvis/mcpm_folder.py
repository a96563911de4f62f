"""MCPM's config folder as the stack needs it: present, private, with the files MCPM 2 reads.

Only missing files are created (as `{}`, MCPM's own empty form); an existing file is never rewritten,
and one that does not parse is reported, not replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

from jarvis.atomic import write_atomic

MCPM_FILES = ("servers.json", "profiles_metadata.json", "config.json")


def prepare_mcpm_dir(folder: Path) -> list[str]:
    """One line per file: created, kept, or broken (left alone)."""
    existed = folder.is_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    report = [f"{folder}: {'present' if existed else 'created'}"]
    for name in MCPM_FILES:
        path = folder / name
        if not path.exists():
            write_atomic(path, b"{}\n")
            report.append(f"{name}: created (empty)")
            continue
        try:
            content = json.loads(path.read_text() or "null")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            report.append(f"{name}: NOT VALID JSON, left alone ({exc})")
            continue
        kind = f"{len(content)} entries" if isinstance(content, dict) else "NOT AN OBJECT, left alone"
        report.append(f"{name}: kept ({kind})")
    return report
