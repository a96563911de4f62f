"""The last N lines of ONE stream, reading no more of the log than that needs.

The engine applies `tail` before it filters by stream: with 10 stderr lines followed by 1,000 stdout
lines, `tail=5` of stderr returns nothing. So we ask for both streams with `tail=T`, keep only the
requested stream's last N lines, and widen `T` until we have N lines or the whole log was read: by the
wanted stream's density when some of it was seen, else x8 (few round trips, at most ~8/7 of the log re-read).

When the wanted stream is still short of N lines after the first widened window, it is sparse: a few
stderr lines under a flood of stdout, say. Widening further would move the whole log through Python. If
the runner can ask the engine for one stream alone (`read_stream`), it does so instead: the engine then
filters server-side and sends only that stream's entries. Since `tail` applies before the filter, that
read is the whole log (`tail=all`), streamed, keeping only the last N entries: one pass of the daemon
over the log, which a sparse stream needs anyway. A stream that is absent from the recent window but
dense further back would make that read long for Python (its every entry comes over): once more entries
came than a widened window holds, the read is dropped and the engine's filtered windows widen instead
(`tail=T` of one stream), which find the last N without the rest of that stream.
Only the kept entries are decoded and their timestamps parsed.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Literal

from jarvis.runner import LineStream, LogLine, LogStream

# (stream, payload) as the engine sent it; with timestamps the payload is b"<RFC 3339 time> <text>\n".
RawEntry = tuple[LineStream, bytes]
ReadTail = Callable[[int], Iterable[RawEntry]]
# The entries of one stream among the last `tail` of the log ("all": the whole log), filtered by the engine,
# oldest first, streamed. Closing the iterator (if it has `close`) ends the read.
ReadStream = Callable[[Literal["stdout", "stderr"], int | Literal["all"]], Iterable[RawEntry]]

GROWTH = 8
MARGIN = 1.25  # widen a little past the density estimate, so one more read usually suffices
FILTERED_WINDOWS = 4  # engine-filtered windows tried before one last read of the whole stream


def last_entries(
    read_tail: ReadTail, lines: int, stream: LogStream, read_stream: ReadStream | None = None
) -> list[RawEntry]:
    tail = lines
    widened = False
    while True:
        kept: deque[RawEntry] = deque(maxlen=lines)
        seen = 0
        for entry in read_tail(tail):
            seen += 1
            if stream == "all" or entry[0] == stream or entry[0] == "tty":
                kept.append(entry)
        if len(kept) >= lines or seen < tail:
            return list(kept)
        # Short of N after the widened window: sparse. (`all` and TTY logs never get here: every entry counts.)
        if widened and read_stream is not None and stream != "all":
            return last_of_sparse_stream(read_stream, lines, stream, tail)
        tail = next_tail(tail, lines, len(kept))
        widened = True


def last_of_sparse_stream(
    read_stream: ReadStream, lines: int, stream: Literal["stdout", "stderr"], tail: int
) -> list[RawEntry]:
    """The engine filters: the whole stream, unless more than a window's worth of it comes (dense far back)."""
    budget = tail * GROWTH
    kept: deque[RawEntry] = deque(maxlen=lines)
    entries = read_stream(stream, "all")
    try:
        for count, entry in enumerate(entries, 1):
            kept.append(entry)
            if count > budget:
                break
        else:
            return list(kept)
    finally:
        getattr(entries, "close", lambda: None)()
    # At least N entries of the stream exist: filtered windows find the last N. After a few, the whole stream
    # (its entries may have rotated away meanwhile: the loop must end).
    for _ in range(FILTERED_WINDOWS):
        tail *= GROWTH
        kept = deque(read_stream(stream, tail), maxlen=lines)
        if len(kept) >= lines:
            return list(kept)
    return list(deque(read_stream(stream, "all"), maxlen=lines))


def next_tail(tail: int, lines: int, kept: int) -> int:
    if kept == 0:
        return tail * GROWTH
    return max(math.ceil(tail * lines / kept * MARGIN), tail * 2)


def last_lines(
    read_tail: ReadTail, lines: int, stream: LogStream, read_stream: ReadStream | None = None
) -> tuple[LogLine, ...]:
    return tuple(to_log_line(entry) for entry in last_entries(read_tail, lines, stream, read_stream))


def to_log_line(entry: RawEntry) -> LogLine:
    stream, payload = entry
    text = payload.decode("utf-8", errors="replace").rstrip("\r\n")
    stamp, _, rest = text.partition(" ")
    time = parse_timestamp(stamp)
    return LogLine(stream=stream, text=rest if time else text, time=time)


def parse_timestamp(stamp: str) -> datetime | None:
    """Docker's RFC 3339 with nanoseconds and trailing zeros trimmed, e.g. 2026-11-21T15:04:05.1234Z."""
    if len(stamp) < 20 or stamp[4] != "-" or stamp[10] != "T":
        return None
    head, dot, rest = stamp.partition(".")
    zone = ""
    if dot:
        digits = rest.rstrip("Z")
        for marker in ("+", "-"):
            if marker in digits:
                digits, _, offset = digits.partition(marker)
                zone = marker + offset
        fraction = "." + (digits + "000000")[:6]
    else:
        fraction = ""
        if head.endswith("Z"):
            head = head[:-1]
    try:
        parsed = datetime.fromisoformat(head + fraction + (zone or "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC)
