"""Writing users' files so that a crash at any instant leaves each either old or new, never partial.

One file: temp file in the same folder, fsync, rename over the target, fsync the folder.
Several files that must change together (`write_all`): every temp is written and synced first, then a
journal naming them is written atomically, then the renames; `recover` (run before the next read or write)
finishes the renames a crash interrupted, so the files end up all new, or all old when the crash came
before the journal existed. `writers_lock` keeps two Jarvis processes from interleaving such writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

JOURNAL = ".jarvis-journal.json"


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Temp file in the same folder, fsync, rename over the target, fsync the folder."""
    temp = write_temp(path, data, mode=mode)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    fsync_dir(path.parent)


def file_mode(path: Path, default: int) -> int:
    """The permission bits `path` has (a rewrite keeps who may read it), `default` for a new file."""
    return path.stat().st_mode & 0o777 if path.exists() else default


@contextlib.contextmanager
def writers_lock(path: Path, timeout: float, busy: Exception) -> Iterator[None]:
    """Hold the cross-process lock file `path`; raise `busy` when another process keeps it past `timeout`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=timeout)
    try:
        lock.acquire()
    except Timeout as exc:
        raise busy from exc
    try:
        yield
    finally:
        lock.release()


def write_all(folder: Path, files: dict[str, bytes], *, mode: int = 0o600) -> None:
    """Replace several files of `folder` together (see the module docstring)."""
    if len(files) == 1:
        ((name, data),) = files.items()
        write_atomic(folder / name, data, mode=mode)
        return
    temps: dict[str, str] = {}
    try:
        for name, data in files.items():
            temps[name] = write_temp(folder / name, data, mode=mode).name
        write_atomic(folder / JOURNAL, json.dumps(temps).encode())
    except BaseException:
        for temp in temps.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / temp)
        raise
    _finish(folder, temps)


def recover(folder: Path, names: tuple[str, ...]) -> list[str]:
    """Finish an interrupted `write_all`; remove the temps of `names` a crash left before its journal (call it
    under the writers' lock). Returns what it did."""
    done: list[str] = []
    journal = folder / JOURNAL
    if journal.is_file():
        try:
            temps = json.loads(journal.read_text())
        except (OSError, json.JSONDecodeError):
            temps = {}  # a journal is written atomically; unreadable means not ours: leave the files alone
        done += [f"finished interrupted write of {name}" for name, temp in temps.items() if (folder / temp).exists()]
        _finish(folder, temps)
    for name in (*names, JOURNAL):
        for stray in folder.glob(f".{name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                stray.unlink()
                done.append(f"removed unfinished temp {stray.name}")
    return done


def _finish(folder: Path, temps: dict[str, str]) -> None:
    for name, temp in temps.items():
        if (folder / temp).exists():
            os.replace(folder / temp, folder / name)
    fsync_dir(folder)
    with contextlib.suppress(FileNotFoundError):
        (folder / JOURNAL).unlink()
    fsync_dir(folder)


def write_temp(path: Path, data: bytes, *, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as temp:
            os.fchmod(temp.fileno(), mode)
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    return Path(temp_name)


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
