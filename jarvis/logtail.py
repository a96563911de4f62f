"""The last N lines of ONE stream, reading no more of the log than that needs.

The engine applies `tail` before it filters by stream: with 10 stderr lines followed by 1,000 stdout
lines, `tail=5` of stderr returns nothing. So we ask for both streams with `tail=T`, keep only the
requested stream's last N lines, and widen `T` until we have N lines or the whole log was read: by the
wanted stream's density when some of it was seen, else x8 (few round trips, at most ~8/7 of the log re-read).
Only the kept entries are decoded and their timestamps parsed.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from jarvis.runner import LineStream, LogLine, LogStream

# (stream, payload) as the engine sent it; with timestamps the payload is b"<RFC 3339 time> <text>\n".
RawEntry = tuple[LineStream, bytes]
ReadTail = Callable[[int], Iterable[RawEntry]]

GROWTH = 8
MARGIN = 1.25  # widen a little past the density estimate, so one more read usually suffices


def last_entries(read_tail: ReadTail, lines: int, stream: LogStream) -> list[RawEntry]:
    tail = lines
    while True:
        kept: deque[RawEntry] = deque(maxlen=lines)
        seen = 0
        for entry in read_tail(tail):
            seen += 1
            if stream == "all" or entry[0] == stream or entry[0] == "tty":
                kept.append(entry)
        if len(kept) >= lines or seen < tail:
            return list(kept)
        tail = next_tail(tail, lines, len(kept))


def next_tail(tail: int, lines: int, kept: int) -> int:
    if kept == 0:
        return tail * GROWTH
    return max(math.ceil(tail * lines / kept * MARGIN), tail * 2)


def last_lines(read_tail: ReadTail, lines: int, stream: LogStream) -> tuple[LogLine, ...]:
    return tuple(to_log_line(entry) for entry in last_entries(read_tail, lines, stream))


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
