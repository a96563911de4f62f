"""Run the same blocking Docker call for several items at once (aggregated logs, per-profile reports)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def map_concurrently(fn: Callable[[T], R], items: Sequence[T], limit: int = 8) -> list[R | Exception]:
    """Results in the order of `items`; an item whose call raised gets its exception instead."""

    def attempt(item: T) -> R | Exception:
        try:
            return fn(item)
        except Exception as exc:
            return exc

    if len(items) <= 1:
        return [attempt(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(limit, len(items)), thread_name_prefix="jarvis-fanout") as pool:
        return list(pool.map(attempt, items))
