"""The one retry policy: only a daemon that is unavailable is retried, with exponential backoff,
for at most `JARVIS_RETRY_TIMEOUT` seconds in total. User errors and build failures fail at once."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from jarvis.errors import DaemonUnavailable

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = logging.getLogger("jarvis.retry")
P = ParamSpec("P")
T = TypeVar("T")


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0
    log.warning(
        "Docker daemon unavailable at %s (attempt %d, retrying in %.1fs): %s",
        getattr(error, "where", "?"),
        state.attempt_number,
        wait,
        getattr(error, "why", error),
    )


def call_with_retry(timeout: float, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    # Imported here: a start that makes no Docker call does not pay for tenacity (part of the cold start).
    from tenacity import Retrying, retry_if_exception_type, stop_before_delay, wait_exponential

    started = time.monotonic()
    retrying = Retrying(
        retry=retry_if_exception_type(DaemonUnavailable),
        wait=wait_exponential(multiplier=0.1, min=0.1, max=2.0),
        stop=stop_before_delay(timeout),
        before_sleep=_log_retry,
        reraise=True,
    )
    try:
        return retrying(fn, *args, **kwargs)
    except DaemonUnavailable as exc:
        attempts = retrying.statistics.get("attempt_number", 1)
        raise exc.after_retries(attempts, time.monotonic() - started) from exc
