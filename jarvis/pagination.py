"""One page of a list that can grow: the same two parameters (`limit`, `offset`) on every tool that lists, and
one closing line that says how many more there are and the exact arguments that fetch the next page.

A handler declares `limit: Limit = None, offset: Offset = None`, cuts its list with `page(...)`, renders
`page.items` as it always did and appends `page.footer`. `page.data(rows)` is the same page for programs
(`JARVIS_OUTPUT=json`). Nothing here knows about MCP.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from jarvis.errors import InvalidInput

# No descriptions: the names say it, and every byte of a schema is paid on every connection.
Limit = int | None
Offset = int | None
LIMIT_MAX = 500

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int
    # `tool key=value ...` for the next page (same arguments, the next offset); empty on the last page.
    next_call: str
    note: str = ""  # e.g. the limit was capped

    @property
    def more(self) -> int:
        return max(0, self.total - self.offset - len(self.items))

    @property
    def footer(self) -> str:
        """One line when the list did not fit on this page (empty otherwise), starting with a newline."""
        if self.offset == 0 and not self.more and not self.note:
            return ""
        if not self.items and self.total:
            return f"\noffset {self.offset} is past the end ({self.total} in all): the first page has offset=0"
        shown = f"showing {self.offset + 1}-{self.offset + len(self.items)} of {self.total}" if self.items else ""
        rest = f"{self.more} more: {self.next_call}" if self.more else "the last page"
        return "\n" + "; ".join(part for part in (shown, rest, self.note) if part)

    def data(self, rows: Sequence[Any]) -> dict[str, Any]:
        """The page for programs: its rows (one per item) and where it sits in the whole list."""
        return {
            "items": list(rows),
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "more": self.more,
            "next_offset": self.offset + len(self.items) if self.more else None,
        }


def page(
    items: Sequence[T],
    limit: int | None,
    offset: int | None,
    *,
    default: int,
    tool: str,
    arguments: Mapping[str, Any],
) -> Page[T]:
    """`items[offset:offset+limit]`, `limit` defaulting to `default` and capped at LIMIT_MAX (the cap is said).

    `tool` and `arguments` (the call's other arguments, e.g. `{"action": "search", "query": q}`) make the
    next page's exact call: the same arguments with the next offset (and the limit, when one was given)."""
    if limit is not None and limit < 1:
        raise InvalidInput(f"Invalid limit '{limit}': limit must be 1-{LIMIT_MAX} (default {default}).")
    if offset is not None and offset < 0:
        raise InvalidInput(f"Invalid offset '{offset}': offset must be 0 or more (default 0).")
    note = f"limit capped at {LIMIT_MAX} (asked {limit})" if limit is not None and limit > LIMIT_MAX else ""
    size = min(limit, LIMIT_MAX) if limit is not None else default
    start = offset or 0
    window = list(items[start : start + size])
    next_arguments = {**arguments, "offset": start + len(window)}
    if limit is not None:
        next_arguments["limit"] = size
    return Page(window, len(items), start, size, call_text(tool, next_arguments), note)


def call_text(tool: str, arguments: Mapping[str, Any]) -> str:
    """`tool key=value ...` as an agent passes the arguments and as `jarvis call` takes them in a shell."""
    words = [tool]
    for key, value in arguments.items():
        if value is None:
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        words.append(f"{key}={shlex.quote(text)}")
    return " ".join(words)
