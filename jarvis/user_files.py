"""Paths an agent gives Jarvis (an export or import file, a client's config file) and reading such files safely.

`user_path` turns the text into a path or a clear error: no NUL byte, no over-long name, `~` expanded (to the home
folder the caller passes: the context's host, not this process's HOME).
`read_limited` reads only a regular file, and at most `limit` bytes: a FIFO would block the read forever and
`/dev/zero` never ends. The file is opened without blocking and checked on the open descriptor, so what is
checked is what is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jarvis.errors import InvalidInput, quoted

MiB = 1024 * 1024
IMPORT_LIMIT = 16 * MiB
CLIENT_FILE_LIMIT = 8 * MiB
PATH_MAX = 4096
NAME_MAX = 255  # one path component, as Linux allows


class UnreadableFile(InvalidInput):
    """A file the user named cannot be read safely (not a regular file, too big, no permission)."""


def shown(path: Path | str) -> str:
    return quoted(str(path), limit=200)


def user_path(text: str, what: str, home: Path) -> Path:
    """The path `text` names, `~` and `~/...` under `home`, `~user` as the system knows it; InvalidInput for text
    no file system call can take."""
    if "\x00" in text:
        raise InvalidInput(f"{what} {shown(text)} holds a NUL byte; give a plain file path.")
    if len(text.encode(errors="surrogatepass")) > PATH_MAX or any(
        len(part.encode(errors="surrogatepass")) > NAME_MAX for part in text.split("/")
    ):
        raise InvalidInput(
            f"{what} {shown(text)} is too long (at most {PATH_MAX} bytes, {NAME_MAX} per name); give a shorter path."
        )
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{what} {shown(text)} is not valid text (a lone surrogate); give a plain path.") from exc
    try:
        return expand_home(Path(text), home)
    except RuntimeError as exc:  # `~user` for a user this machine does not have
        raise InvalidInput(f"{what} {shown(text)}: {exc}; use ~/ or an absolute path.") from exc


def expand_home(path: Path, home: Path) -> Path:
    """`path` with `~` or `~/...` under `home`, and `~user` as the system knows it (RuntimeError if unknown)."""
    if path.parts[:1] == ("~",):
        return home.joinpath(*path.parts[1:])
    return path.expanduser()


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def read_limited(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed). FileNotFoundError when nothing is there (the
    caller says what that means); UnreadableFile for anything else that is not a readable regular file of at
    most `limit` bytes."""
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableFile(f"{shown(path)} is {file_kind(mode)}; Jarvis reads only regular files.")
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise UnreadableFile(f"Cannot read {shown(path)}: {_why(exc)}.") from exc
    with os.fdopen(descriptor, "rb") as file:
        opened = os.fstat(file.fileno())
        if not stat.S_ISREG(opened.st_mode):  # replaced between the check and the open
            raise UnreadableFile(f"{shown(path)} is {file_kind(opened.st_mode)}; Jarvis reads only regular files.")
        data = b"" if opened.st_size > limit else file.read(limit + 1)
    if opened.st_size > limit or len(data) > limit:
        size = f"{opened.st_size:,} bytes" if opened.st_size > limit else f"over {limit:,} bytes"
        raise UnreadableFile(f"{shown(path)} is too big ({size}); the limit is {limit // MiB} MiB.")
    return data


def _why(exc: OSError | ValueError) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
