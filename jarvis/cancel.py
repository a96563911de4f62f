"""A cancel token a long operation polls: set by the client's cancellation, Ctrl-C in `jarvis call`, or Jarvis
stopping. The MCP SDK cancels only the handler's async scope; the work runs in a thread, which nothing can
interrupt, so the thread checks this token wherever it waits (child processes, polls, sleeps)."""

from __future__ import annotations

import threading

from jarvis.errors import Cancelled


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self, doing: str = "") -> None:
        """Raise `Cancelled` when cancelled; `doing` says what stops there."""
        if self._event.is_set():
            raise Cancelled(f"stopped {doing}" if doing else "stopped")

    def sleep(self, seconds: float, doing: str = "") -> None:
        """Sleep, or raise `Cancelled` as soon as the token is set."""
        self._event.wait(seconds)
        self.check(doing)
