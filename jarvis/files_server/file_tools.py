"""The files server's tools: `read`, `bash`, `grep`. One plain function each; its signature is the tool's schema.

The first parameter, the `FilesRoot`, is supplied by the binding (`jarvis.files_server.files_mcp_server`) and is
not part of the schema; so is `context_focus_question`, which the binding adds to every tool. A tool returns its
raw output or raises a `JarvisError` the agent can act on.
"""

from __future__ import annotations

import codecs
import collections
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field

from jarvis.errors import CommandTimedOut, InvalidArguments, InvalidInput, NotReadable
from jarvis.process_group import group_alive, group_members, signal_group
from jarvis.pruning import ToolOutput

READ_MAX_BYTES = 512 * 1024  # a whole-file read beyond this is cut, naming the window to ask for instead
BASH_TIMEOUT_MAX = 600.0
BASH_HEAD_LINES = 500  # a long output keeps its first and last lines: commands report at both ends
BASH_TAIL_LINES = 1500
LINE_MAX_CHARS = 2000
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
LEFTOVER_WAIT = 1.0  # seconds a finished command's helpers may keep writing before they are ended
GREP_FILE_MAX_BYTES = 5 * 1024 * 1024
GREP_DEADLINE = 60.0
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn"})
NO_MATCHES = "(no matches found)"


@dataclass(frozen=True)
class FilesRoot:
    """The folder paths are relative to and commands run in (`JARVIS_FILES_ROOT`)."""

    path: Path

    def resolve(self, given: str) -> Path:
        return (self.path / Path(given).expanduser()).resolve()


def read(
    root: FilesRoot,
    file_path: Annotated[str, Field(description="Relative to the root, or absolute")],
    start_line: Annotated[int | None, Field(ge=1, description="First line (1-based)")] = None,
    end_line: Annotated[int | None, Field(ge=1, description="Last line (inclusive)")] = None,
    around_line: Annotated[int | None, Field(ge=1, description="Center of a window of radius lines")] = None,
    radius: Annotated[int, Field(ge=0, le=500, description="Lines each side of around_line")] = 20,
) -> str:
    if around_line is not None and (start_line is not None or end_line is not None):
        raise InvalidArguments("Give either around_line (with radius) or start_line/end_line, not both.")
    if start_line is not None and end_line is not None and end_line < start_line:
        raise InvalidArguments(f"end_line {end_line} is before start_line {start_line}.")
    path = root.resolve(file_path)
    data = _read_bytes(path, file_path)
    text = data.decode("utf-8", errors="replace")
    windowed = around_line is not None or start_line is not None or end_line is not None
    if not windowed:
        if len(data) <= READ_MAX_BYTES:
            return text
        shown = data[:READ_MAX_BYTES].decode("utf-8", errors="ignore").splitlines()[:-1]
        rest = len(text.splitlines()) - len(shown)
        return "\n".join([*shown, f"(truncated {rest} lines; read more with start_line={len(shown) + 1})"])
    lines = text.splitlines()
    if around_line is not None:
        first, last = max(1, around_line - radius), around_line + radius
    else:
        first, last = start_line or 1, end_line or len(lines)
    if first > len(lines):
        raise InvalidInput(f"{file_path} has {len(lines)} lines; line {first} does not exist.")
    last = min(last, len(lines))
    width = len(str(last))
    return "\n".join(f"{n:>{width}}: {lines[n - 1]}" for n in range(first, last + 1))


async def bash(
    root: FilesRoot,
    command: Annotated[str, Field(min_length=1, description="Run by /bin/sh -c in the root")],
    timeout_s: Annotated[float, Field(gt=0, le=BASH_TIMEOUT_MAX, description="Seconds before it is killed")] = 120,
) -> ToolOutput:
    """stdout, then `[stderr]` and stderr; `[exit code: N]` when non-zero. The command runs in its own process group;
    a timeout or the client's cancellation kills the whole group, grandchildren included."""
    stdout, stderr = _Capture(), _Capture()
    process = await anyio.open_process(
        ["/bin/sh", "-c", command],
        cwd=root.path,
        stdin=subprocess.DEVNULL,  # never the server's stdin: that is the JSON-RPC stream
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1", "TERM": "dumb"},
    )
    drained = anyio.Event()

    async def drain_both() -> None:
        async with anyio.create_task_group() as streams:
            streams.start_soon(stdout.drain, process.stdout)
            streams.start_soon(stderr.drain, process.stderr)
        drained.set()

    killed = 0
    try:
        with anyio.move_on_after(timeout_s) as deadline:
            async with anyio.create_task_group() as group:
                group.start_soon(drain_both)
                await process.wait()
                with anyio.move_on_after(LEFTOVER_WAIT):
                    await drained.wait()
                # Helpers the command left running end with it (and close the pipes they hold).
                await _kill_group(process)
    finally:
        # The deadline passed or the client cancelled: the whole group goes, grandchildren included.
        with anyio.CancelScope(shield=True):
            killed = await _kill_group(process)
    timed_out = deadline.cancelled_caught
    text = stdout.text()
    if stderr.text():
        text = f"{text}\n[stderr]\n{stderr.text()}" if text else f"[stderr]\n{stderr.text()}"
    if timed_out:
        note = f"killed its process group ({killed} processes)" if killed else "its process group was gone"
        raise CommandTimedOut(
            f"Command timed out after {timeout_s:g} s; {note}. If it needs longer, raise timeout_s "
            f"(max {BASH_TIMEOUT_MAX:g}).\n{text or '(no output)'}"
        )
    code = process.returncode or 0
    return ToolOutput(text or "(no output)", f"[exit code: {code}]" if code else "")


def grep(
    root: FilesRoot,
    pattern: Annotated[str | None, Field(description="Python regular expression")] = None,
    patterns: Annotated[list[str] | None, Field(min_length=1, max_length=50, description="Several, each apart")] = None,
    path: Annotated[str, Field(description="File or folder, relative to the root")] = ".",
    context_lines: Annotated[int, Field(ge=0, le=50)] = 0,
    max_matches: Annotated[int, Field(ge=1, le=1000, description="Per pattern")] = 200,
) -> str:
    """`path:line:text` per match (`path-line-text` for context); with several patterns, one block each."""
    if (pattern is None) == (patterns is None):
        raise InvalidArguments("Give pattern (one regular expression) or patterns (a list), exactly one of them.")
    wanted = [pattern] if pattern is not None else list(patterns or [])
    compiled = []
    for text in wanted:
        try:
            compiled.append(re.compile(text))
        except re.error as exc:
            raise InvalidArguments(f"Invalid regular expression {text!r}: {exc}") from exc
    base = root.resolve(path)
    if not base.exists():
        raise NotReadable(f"{path} does not exist under {root.path}.")
    deadline = time.monotonic() + GREP_DEADLINE
    blocks = [_grep_one(regex, base, root, context_lines, max_matches, deadline) for regex in compiled]
    if len(blocks) == 1:
        return blocks[0]
    return "\n".join(f"== pattern: {text} ==\n{block}" for text, block in zip(wanted, blocks, strict=True))


class _Capture:
    """One output stream, decoded as it arrives; keeps its first and last lines, counts the ones in between."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.tail: collections.deque[str] = collections.deque(maxlen=BASH_TAIL_LINES)
        self.dropped = 0
        self.partial = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        if stream is None:
            return
        async for chunk in stream:
            self._add(self.decoder.decode(chunk))
        self._add(self.decoder.decode(b"", final=True))
        if self.partial:
            self._line(self.partial)
            self.partial = ""

    def _add(self, text: str) -> None:
        *complete, self.partial = (self.partial + text).split("\n")
        for line in complete:
            self._line(line)

    def _line(self, line: str) -> None:
        line = line.rstrip("\r")[:LINE_MAX_CHARS]
        if len(self.head) < BASH_HEAD_LINES:
            self.head.append(line)
            return
        if len(self.tail) == self.tail.maxlen:
            self.dropped += 1
        self.tail.append(line)

    def text(self) -> str:
        middle = [f"(truncated {self.dropped} lines)"] if self.dropped else []
        return "\n".join([*self.head, *middle, *self.tail]).rstrip("\n")


async def _kill_group(process: Process) -> int:
    """SIGTERM the group, SIGKILL what is left after a grace period; how many processes were running."""
    pgid = process.pid
    running = len(group_members(pgid))
    if running and signal_group(pgid, signal.SIGTERM):
        with anyio.move_on_after(KILL_GRACE):
            while group_alive(pgid):
                await anyio.sleep(0.02)
    signal_group(pgid, signal.SIGKILL)
    with anyio.move_on_after(5):  # bounded, in case no one reaps an orphan
        await process.wait()
        while group_alive(pgid):
            await anyio.sleep(0.01)
    return running


def _read_bytes(path: Path, given: str) -> bytes:
    if path.is_dir():
        raise NotReadable(f"{given} is a folder; list it with bash (ls) or search it with grep.")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotReadable(f"{given} does not exist ({path}).") from exc
    except PermissionError as exc:
        raise NotReadable(f"{given} is not readable: permission denied ({path}).") from exc
    except OSError as exc:
        raise NotReadable(f"{given} cannot be read: {exc.strerror or exc}.") from exc
    if b"\0" in data[:8192]:
        raise NotReadable(f"{given} is a binary file ({len(data):,} bytes); inspect it with bash (file, xxd).")
    return data


def _grep_one(regex: re.Pattern[str], base: Path, root: FilesRoot, context: int, limit: int, deadline: float) -> str:
    out: list[str] = []
    found = 0
    for file in _files_under(base):
        if time.monotonic() > deadline:
            out.append(f"(stopped after {GREP_DEADLINE:g} s; narrow the path)")
            break
        lines = _text_lines(file)
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            continue
        shown = _relative(file, root)
        more = len(hits) > limit - found
        hits = hits[: limit - found]
        found += len(hits)
        out.extend(_with_context(shown, lines, hits, context))
        if more:
            out.append(f"(stopped at max_matches={limit}; narrow the pattern or path)")
            break
    return "\n".join(out) if out else NO_MATCHES


def _with_context(shown: str, lines: list[str], hits: list[int], context: int) -> Iterator[str]:
    if context:
        yield "--"
    hit_set = set(hits)
    printed = -1
    for hit in hits:
        first = max(hit - context, printed + 1)
        if context and printed >= 0 and first > printed + 1:
            yield "--"
        for n in range(first, min(hit + context, len(lines) - 1) + 1):
            mark = ":" if n in hit_set else "-"
            yield f"{shown}{mark}{n + 1}{mark}{lines[n][:LINE_MAX_CHARS]}"
            printed = n


def _files_under(base: Path) -> Iterator[Path]:
    if base.is_file():
        yield base
        return
    for folder, subfolders, files in os.walk(base):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            yield Path(folder) / name


def _text_lines(file: Path) -> list[str]:
    try:
        if file.stat().st_size > GREP_FILE_MAX_BYTES or not file.is_file():
            return []
        data = file.read_bytes()
    except OSError:
        return []
    if b"\0" in data[:8192]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _relative(file: Path, root: FilesRoot) -> str:
    try:
        return str(file.relative_to(root.path))
    except ValueError:
        return str(file)
