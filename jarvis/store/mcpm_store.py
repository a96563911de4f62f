"""MCPM's config folder (`JARVIS_MCPM_DIR`): read whole, changed under a lock, written atomically.

Safer than MCPM on purpose:
- a file that does not parse is an error naming its line and column, never read as `{}` and written over;
- a record Jarvis cannot type (a broken server entry) is kept byte-for-byte instead of dropped;
- writers hold `.jarvis.lock`, so two Jarvis processes never interleave; a file changed by another program
  (an editor, mcpm itself) between Jarvis's read and its rename is detected and the change is redone on the
  new content (the check runs after the temps are written and synced, right before the rename);
- mcpm writes in place (truncate, then write), so for a moment a file can be empty or cut short: such a file is
  re-read until it settles, and a change is refused, naming the file, if it stays empty — an empty file is
  never taken for an empty store and written over;
- several files changed by one operation are replaced together (`jarvis.atomic.write_all`), mode 0600
  (servers.json holds env values and headers, profiles_metadata.json API keys).
Files are written as MCPM writes them: `json.dump(data, f, indent=2)`, no trailing newline.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from jarvis.atomic import JOURNAL, read_settled, recover, write_all, writers_lock
from jarvis.errors import JarvisError
from jarvis.store.models import ProfileMeta, ServerRecord

SERVERS = "servers.json"
PROFILES = "profiles_metadata.json"
CONFIG = "config.json"
# Jarvis's client settings, in the Node MCPM's `clients.json` shape: {client: {"configPath": path}}.
CLIENTS = "clients.json"
FILES = (SERVERS, PROFILES, CONFIG, CLIENTS)
LOCK = ".jarvis.lock"
CONFLICT_RETRIES = 5
# How long a file caught empty or cut short (another program writing it in place) is re-read before Jarvis gives
# up; mcpm's own writes take milliseconds, a slow disk or a paused writer longer.
SETTLE_SECONDS = 2.0

T = TypeVar("T")


class StoreError(JarvisError):
    """MCPM's files cannot be read or written safely; nothing was changed."""


@dataclass
class Snapshot:
    servers: dict[str, ServerRecord] = field(default_factory=dict)
    profiles: dict[str, ProfileMeta] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    clients: dict[str, Any] = field(default_factory=dict)
    # Entries Jarvis could not type, kept as read: name -> (raw value, why).
    unreadable: dict[str, tuple[Any, str]] = field(default_factory=dict)
    # What was read, to write back only what changed and to notice changes made meanwhile.
    raw: dict[str, bytes | None] = field(default_factory=dict)

    def members(self, profile: str) -> list[str]:
        return [name for name, server in self.servers.items() if profile in server.profile_tags]

    def profile_names(self) -> list[str]:
        """Profiles with metadata, then profiles that exist only as tags, in first-seen order."""
        names = dict.fromkeys(self.profiles)
        for server in self.servers.values():
            names.update(dict.fromkeys(server.profile_tags))
        return list(names)


class McpmStore:
    def __init__(self, folder: Path, lock_timeout: float = 10.0) -> None:
        self.folder = folder
        self.lock_timeout = lock_timeout

    def read(self) -> Snapshot:
        interrupted = (self.folder / JOURNAL).exists() or any(
            next(self.folder.glob(f".{name}.*.tmp"), None) for name in (*FILES, JOURNAL)
        )
        if interrupted:  # a writer died mid-write: finish or clean up first, under the lock
            with self._lock():
                recover(self.folder, FILES)
        return self._load()

    def update(self, change: Callable[[Snapshot], T]) -> T:
        """Run `change` on a fresh snapshot and write what it changed. `change` may raise to abort (nothing is
        written) and runs again if another program changed the files meanwhile, so it must be pure over the
        snapshot it is given: edit only that snapshot, and never mutate what it closes over."""
        with self._lock():
            recover(self.folder, FILES)
            for _attempt in range(CONFLICT_RETRIES):
                snapshot = self._load(writing=True)
                result = change(snapshot)
                files = self._changed_files(snapshot)
                if not files:
                    return result
                if write_all(self.folder, files, expected=snapshot.raw):
                    return result
        raise StoreError(
            f"{self.folder} kept changing while Jarvis was writing ({CONFLICT_RETRIES} tries); "
            "nothing was written. Close other programs editing MCPM's files and try again."
        )

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        busy = StoreError(
            f"Another Jarvis process has held {self.folder / LOCK} for {self.lock_timeout:.0f}s; "
            "nothing was written. Try again when it is done."
        )
        return writers_lock(self.folder / LOCK, self.lock_timeout, busy)

    def _load(self, *, writing: bool = False) -> Snapshot:
        snapshot = Snapshot(raw={name: self._settled_bytes(name, writing=writing) for name in FILES})
        servers = self._parse(SERVERS, snapshot.raw[SERVERS])
        for name, value in servers.items():
            try:
                snapshot.servers[name] = ServerRecord.model_validate(value)
            except ValidationError as exc:
                snapshot.unreadable[name] = (value, first_error(exc))
        for name, value in self._parse(PROFILES, snapshot.raw[PROFILES]).items():
            try:
                snapshot.profiles[name] = ProfileMeta.model_validate(value)
            except ValidationError as exc:
                raise StoreError(f"{self.folder / PROFILES}: profile '{name}': {first_error(exc)}") from exc
        snapshot.config = self._parse(CONFIG, snapshot.raw[CONFIG])
        snapshot.clients = self._parse(CLIENTS, snapshot.raw[CLIENTS])
        return snapshot

    def _changed_files(self, snapshot: Snapshot) -> dict[str, bytes]:
        before = {name: self._parse(name, snapshot.raw[name]) for name in FILES}
        servers_before = list(before[SERVERS])
        order = [n for n in servers_before if n in snapshot.servers or n in snapshot.unreadable]
        order += [n for n in snapshot.servers if n not in order]
        after = {
            SERVERS: {
                n: snapshot.servers[n].dump() if n in snapshot.servers else snapshot.unreadable[n][0] for n in order
            },
            PROFILES: {name: meta.dump() for name, meta in snapshot.profiles.items()},
            CONFIG: snapshot.config,
            CLIENTS: snapshot.clients,
        }
        return {
            name: json.dumps(after[name], indent=2).encode()
            for name in FILES
            if after[name] != before[name] or (snapshot.raw[name] is None and after[name])
        }

    def _settled_bytes(self, name: str, *, writing: bool) -> bytes | None:
        """The file's bytes once they parse (see the module docstring); a file still empty after SETTLE_SECONDS is
        refused when a change is about to be written, read as an empty store otherwise."""
        try:
            data = read_settled(self.folder / name, _parses, SETTLE_SECONDS)
        except OSError as exc:
            raise StoreError(f"Cannot read {self.folder / name}: {exc.strerror}") from exc
        if data is not None and not data.strip() and writing:
            raise StoreError(
                f"{self.folder / name} is empty ({len(data)} bytes) and stayed so for {SETTLE_SECONDS:g}s: another "
                "program may be writing it, or it was emptied. Nothing was written. Try again in a moment; if it "
                "stays empty, restore it from a backup, or write {} into it to start an empty store."
            )
        return data

    def _read_bytes(self, name: str) -> bytes | None:
        try:
            return (self.folder / name).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"Cannot read {self.folder / name}: {exc.strerror}") from exc

    def _parse(self, name: str, data: bytes | None) -> dict[str, Any]:
        if data is None or not data.strip():
            return {}
        try:
            value = json.loads(data)
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{self.folder / name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
                "Jarvis will not write over it: fix it or restore a backup."
            ) from exc
        except UnicodeDecodeError as exc:
            raise StoreError(f"{self.folder / name} is not UTF-8 text.") from exc
        if not isinstance(value, dict):
            raise StoreError(f"{self.folder / name} must hold a JSON object, not {type(value).__name__}.")
        return value


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError; empty input included
        return False
    return True


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, with where it is (`args: Input should be a valid list`)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]
