"""One client's config file: read its server entries, change Jarvis's own entries safely.

A change is made under Jarvis's clients lock (in MCPM's folder, never next to the user's file), after a backup
copy of the current file, and written atomically with the file's own mode, through a symlink to its target
(dotfile managers link these files). If the client rewrote the file between Jarvis's read and its write (Claude
Code rewrites `~/.claude.json` constantly), nothing is replaced and the change is redone on the new content
(`jarvis.atomic.write_atomic` with the bytes Jarvis read as `expected`). A file caught empty or cut short is a
client's in-place write midway: it is re-read until it parses (an empty file that stays empty is taken as empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jarvis.atomic import file_mode, read_settled, write_atomic, writers_lock
from jarvis.clients.catalog import ClientSpec
from jarvis.clients.formats import Changes, ClientFileError, ClientFormat, format_for
from jarvis.errors import JarvisError
from jarvis.user_files import CLIENT_FILE_LIMIT, read_limited, shown

LOCK = ".jarvis-clients.lock"
BACKUPS_KEPT = 20
CONFLICT_RETRIES = 5
SETTLE_SECONDS = 2.0


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
        return _decoded(self._read(self.path), self.path)

    def _read(self, path: Path) -> bytes | None:
        """A regular file of at most CLIENT_FILE_LIMIT bytes: a FIFO or /dev/zero set as the path never hangs."""
        try:
            return read_limited(path, CLIENT_FILE_LIMIT)
        except FileNotFoundError:
            return None
        except (JarvisError, ValueError) as exc:
            raise ClientFileError(f"cannot read {shown(self.path)}: {exc}") from exc

    def entries(self) -> dict[str, Any]:
        text = self.text()
        try:
            return {} if text is None else self.format.read(text)
        except ClientFileError as exc:
            raise ClientFileError(f"{self.path}: {exc}") from exc

    def change(self, changes: Changes) -> ChangeReport:
        busy = ClientFileError("another Jarvis process is editing client files; try again")
        with writers_lock(self.mcpm_dir / LOCK, 10, busy):
            try:
                target = self.path.resolve()
            except (OSError, ValueError) as exc:
                raise ClientFileError(f"cannot use {shown(self.path)}: {exc}; the file was not changed") from exc
            self._remove_stale_temps(target)
            for _attempt in range(CONFLICT_RETRIES):
                raw = self._settled(target)
                before = _decoded(raw, self.path)
                try:
                    after = self.format.write(before or "", changes)
                except ClientFileError as exc:
                    raise ClientFileError(f"{self.path}: {exc}; the file was not changed") from exc
                if after == (before or ""):
                    return ChangeReport(changed=False, backup=None)
                backup = self._backup(before) if before is not None else None
                try:
                    written = write_atomic(target, after.encode("utf-8"), mode=file_mode(target, 0o600), expected=raw)
                except OSError as exc:
                    raise ClientFileError(f"cannot write {target}: {exc.strerror}; the file was not changed") from exc
                if written:
                    return ChangeReport(changed=True, backup=backup)
        raise ClientFileError(f"{self.path} kept changing while Jarvis was editing it; nothing was written")

    def _settled(self, target: Path) -> bytes | None:
        def complete(data: bytes) -> bool:
            try:
                self.format.read(data.decode("utf-8"))
            except (ClientFileError, UnicodeDecodeError):
                return False
            return bool(data.strip())

        return read_settled(target, complete, SETTLE_SECONDS, read=self._read)

    def _remove_stale_temps(self, target: Path) -> None:
        """Temps a killed Jarvis left beside the file or among its backups (only Jarvis writes these names, and
        no other Jarvis writer runs while this one holds the lock)."""
        backups = self.mcpm_dir / "backups" / "clients" / self.spec.key
        for stray in [*target.parent.glob(f".{target.name}.*.tmp"), *backups.glob(".*.tmp")]:
            stray.unlink(missing_ok=True)

    def _backup(self, text: str) -> Path:
        folder = self.mcpm_dir / "backups" / "clients" / self.spec.key
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup = folder / f"{stamp}-{self.path.name}"
        write_atomic(backup, text.encode("utf-8"), mode=0o600)
        for old in sorted(folder.glob(f"*-{self.path.name}"))[:-BACKUPS_KEPT]:
            old.unlink(missing_ok=True)
        return backup


def _decoded(raw: bytes | None, path: Path) -> str | None:
    try:
        return None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClientFileError(f"{path} is not UTF-8 text") from exc
