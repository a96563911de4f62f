"""Run the same blocking Docker call for several items at once (aggregated logs, per-profile reports).

One long-lived pool: starting threads per call costs more than the small Docker calls it runs (each new
thread must win the GIL before `start()` returns). A fan-out from inside a pool thread runs inline, so
the bounded pool can never wait on itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORKERS = 8
# The Docker libraries are imported on first use, by whichever worker thread needs them first. Python's
# per-module import locks do not keep two threads apart when a package imports itself in a cycle (docker-py:
# `docker` <-> `docker.context`): the second thread gets a partially initialised module and an ImportError.
# Every such first-use import holds this lock.
LIBRARY_IMPORTS = threading.RLock()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def _mark_worker() -> None:
    _local.in_pool = True


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="jarvis-fanout", initializer=_mark_worker)
        return _pool


def map_concurrently(fn: Callable[[T], R], items: Sequence[T]) -> list[R | Exception]:
    """Results in the order of `items`; an item whose call raised gets its exception instead."""

    def attempt(item: T) -> R | Exception:
        try:
            return fn(item)
        except Exception as exc:
            return exc

    if len(items) <= 1 or getattr(_local, "in_pool", False):
        return [attempt(item) for item in items]
    return list(_shared_pool().map(attempt, items))
