"""Writing users' files so that a crash at any instant leaves each either old or new, never partial.

One file: temp file in the same folder, fsync, rename over the target, fsync the folder.
Several files that must change together (`write_all`): every temp is written and synced first, then a
journal naming them is written atomically, then the renames; `recover` (run before the next read or write)
finishes the renames a crash interrupted, so the files end up all new, or all old when the crash came
before the journal existed. `writers_lock` keeps two Jarvis processes from interleaving such writes.

Programs that do not take Jarvis's lock (mcpm, an AI client rewriting its own config) may write at any moment,
in place (truncate, then write) or by rename. So a write computed from what Jarvis read says what it `expects`
the target to hold, and is checked after the slow part (writing and syncing the temp):
- one file: the temp is swapped with the target in one atomic exchange (Linux `renameat2`), then what was swapped
  out is compared with what was expected; if another program wrote in between, its file is swapped straight back.
  Nothing another program wrote is ever unlinked, and the caller redoes its change on the new content. Where the
  exchange is not available, a plain rename follows the check (the window is the rename itself).
- several files: the check runs after the journal, right before the renames.
A file caught empty or cut short is what an in-place write looks like midway: `read_settled` waits it out.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from filelock import FileLock, Timeout

JOURNAL = ".jarvis-journal.json"
# `expected` for a write that does not care what the target holds.
ANY = b"\0any"
SETTLE_POLL = 0.05


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600, expected: bytes | None = ANY) -> bool:
    """Write `data` to `path` atomically. With `expected` (the bytes the caller read, None for "no file"), replace
    only if the target still holds exactly that, and return False, having changed nothing, otherwise."""
    temp = write_temp(path, data, mode=mode)
    try:
        if expected is ANY:
            os.replace(temp, path)
        elif expected is None:
            try:
                os.link(temp, path)  # creates the target only if nobody else did meanwhile
            except FileExistsError:
                return False
        else:
            if read_bytes(path) != expected:
                return False
            if exchange(temp, path):
                if read_bytes(temp) != expected:  # another program wrote between the check and the exchange
                    exchange(temp, path)  # its file goes back in place, still receiving its writes
                    return False
            else:
                os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)  # the temp, or after an exchange the replaced file
    fsync_dir(path.parent)
    return True


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def read_settled(
    path: Path,
    complete: Callable[[bytes], bool],
    seconds: float,
    read: Callable[[Path], bytes | None] = read_bytes,
) -> bytes | None:
    """The file's bytes (as `read` gives them) once `complete` accepts them, re-reading for up to `seconds`; then
    whatever it holds. None when there is no file."""
    deadline = time.monotonic() + seconds
    while True:
        data = read(path)
        if data is None or complete(data) or time.monotonic() >= deadline:
            return data
        time.sleep(SETTLE_POLL)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc: ctypes.CDLL | None = None


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically; False (nothing done) where the system cannot."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


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


def write_all(
    folder: Path, files: dict[str, bytes], *, mode: int = 0o600, expected: Mapping[str, bytes | None] | None = None
) -> bool:
    """Replace several files of `folder` together (see the module docstring). With `expected` (file name -> the
    bytes the caller read, None for "no file"), replace only if every named file still holds that, checked after
    the journal so only the renames remain, and return False, having changed nothing, otherwise."""
    if len(files) == 1:
        ((name, data),) = files.items()
        return write_atomic(folder / name, data, mode=mode, expected=expected[name] if expected else ANY)
    temps: dict[str, str] = {}
    try:
        for name, data in files.items():
            temps[name] = write_temp(folder / name, data, mode=mode).name
        write_atomic(folder / JOURNAL, json.dumps(temps).encode())
        current = all(read_bytes(folder / name) == data for name, data in (expected or {}).items())
    except BaseException:
        _abandon(folder, temps)
        raise
    if not current:
        _abandon(folder, temps)
        return False
    _finish(folder, temps)
    return True


def _abandon(folder: Path, temps: dict[str, str]) -> None:
    """Undo a `write_all` before its renames: the journal goes first, so a crash here finishes nothing."""
    with contextlib.suppress(FileNotFoundError):
        (folder / JOURNAL).unlink()
    for temp in temps.values():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / temp)


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
