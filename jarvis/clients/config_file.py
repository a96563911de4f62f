"""One client's config file: read its server entries, change Jarvis's own entries safely.

A change is made under Jarvis's clients lock (in MCPM's folder, never next to the user's file), after a backup
copy of the current file, and written atomically with the file's own mode, through a symlink to its target
(dotfile managers link these files). If the client rewrote the file between Jarvis's read and its write (Claude
Code rewrites `~/.claude.json` constantly), the change is redone on the new content.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jarvis.atomic import file_mode, write_atomic, writers_lock
from jarvis.clients.catalog import ClientSpec
from jarvis.clients.formats import Changes, ClientFileError, ClientFormat, format_for

LOCK = ".jarvis-clients.lock"
BACKUPS_KEPT = 20
CONFLICT_RETRIES = 3


@dataclass(frozen=True)
class ChangeReport:
    changed: bool
    backup: Path | None


@dataclass(frozen=True)
class ClientFile:
    spec: ClientSpec
    path: Path
    mcpm_dir: Path

    @property
    def format(self) -> ClientFormat:
        return format_for(self.spec.file_format, self.spec.section)

    def text(self) -> str | None:
        """The file's text, None when it does not exist."""
        try:
            return self.path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise ClientFileError(f"{self.path} is not UTF-8 text") from exc
        except OSError as exc:
            raise ClientFileError(f"cannot read {self.path}: {exc.strerror}") from exc

    def entries(self) -> dict[str, Any]:
        text = self.text()
        try:
            return {} if text is None else self.format.read(text)
        except ClientFileError as exc:
            raise ClientFileError(f"{self.path}: {exc}") from exc

    def change(self, changes: Changes) -> ChangeReport:
        busy = ClientFileError("another Jarvis process is editing client files; try again")
        with writers_lock(self.mcpm_dir / LOCK, 10, busy):
            for _attempt in range(CONFLICT_RETRIES):
                before = self.text()
                try:
                    after = self.format.write(before or "", changes)
                except ClientFileError as exc:
                    raise ClientFileError(f"{self.path}: {exc}; the file was not changed") from exc
                if after == (before or ""):
                    return ChangeReport(changed=False, backup=None)
                backup = self._backup(before) if before is not None else None
                if self.text() != before:
                    continue  # the client wrote meanwhile: redo on its version
                target = self.path.resolve()
                try:
                    write_atomic(target, after.encode("utf-8"), mode=file_mode(target, 0o600))
                except OSError as exc:
                    raise ClientFileError(f"cannot write {target}: {exc.strerror}; the file was not changed") from exc
                return ChangeReport(changed=True, backup=backup)
        raise ClientFileError(f"{self.path} kept changing while Jarvis was editing it; nothing was written")

    def _backup(self, text: str) -> Path:
        folder = self.mcpm_dir / "backups" / "clients" / self.spec.key
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup = folder / f"{stamp}-{self.path.name}"
        write_atomic(backup, text.encode("utf-8"), mode=0o600)
        for old in sorted(folder.glob(f"*-{self.path.name}"))[:-BACKUPS_KEPT]:
            old.unlink(missing_ok=True)
        return backup
