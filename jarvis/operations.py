"""Long operations (rebuild, build, bootstrap, restart_infra, test): each runs in its own thread, records its
steps, can be cancelled, and can outlive the call that started it.

A client decides how long a call may take (Codex cuts every call at a fixed timeout), so an operation still
running after `JARVIS_CALL_BUDGET` seconds goes on in the background: the call answers with its id, and
`jarvis_check_status operation=<id>` fetches its progress, then its result. A background operation's record is a
0600 JSON file in Jarvis's state folder (`$XDG_STATE_HOME/jarvis/operations`), so a finished result survives
Jarvis restarting; records older than `KEEP_SECONDS` are removed when the next operation starts.

Nothing here knows about MCP: the binding (`jarvis.mcp_server`) turns steps into progress notifications and a
client's cancellation into `cancel`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from jarvis.cancel import CancelToken
from jarvis.errors import Cancelled, InvalidInput, JarvisError, quoted

log = logging.getLogger("jarvis.operations")

KEEP_SECONDS = 24 * 3600  # a finished result is kept a day (at least the hour the tool promises)
PERSIST_EVERY = 2.0  # seconds between writes of a background operation's progress
STEPS_SHOWN = 12
ID = re.compile(r"[0-9a-f]{8}")
State = Literal["running", "done", "failed", "cancelled"]


def state_folder(environ: Mapping[str, str], home: Path) -> Path:
    """Jarvis's state folder: `$XDG_STATE_HOME/jarvis`, else `~/.local/state/jarvis`."""
    base = environ.get("XDG_STATE_HOME") or str(home / ".local" / "state")
    return Path(base) / "jarvis"


class Record(BaseModel):
    """What is known about one operation, as kept on disk."""

    id: str
    title: str
    state: State = "running"
    started_at: datetime
    seconds: float = 0.0  # elapsed so far, or in all once finished
    steps: list[tuple[float, str]] = []  # (seconds since start, what began then)
    result: str = ""
    pid: int = 0  # the Jarvis process running it


class Operation:
    """One long operation: its record, its cancel token, and the thread running it."""

    def __init__(self, title: str, cancel_note: str = "") -> None:
        self.record = Record(id=secrets.token_hex(4), title=title, started_at=datetime.now(UTC), pid=os.getpid())
        self.cancel = CancelToken()
        self.cancel_note = cancel_note  # what a cancellation leaves behind, e.g. where to look
        self.background = False
        self._started = time.monotonic()
        self._changed = threading.Condition()
        self._write_lock = threading.Lock()
        self._finished = threading.Event()
        self._persisted = 0.0
        self.version = 0  # counts steps and the end, so a follower misses none (`wait`)
        self.store: OperationStore | None = None

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def elapsed(self) -> float:
        return self.record.seconds if self.finished else time.monotonic() - self._started

    @property
    def step(self) -> str:
        return self.record.steps[-1][1] if self.record.steps else "starting"

    def report(self, _done: float, _total: float, message: str) -> None:
        """The handler's progress callback: a new step (a phase, a service, a suite) begins."""
        with self._changed:
            if not self.record.steps or self.record.steps[-1][1] != message:
                self.record.steps.append((round(self.elapsed, 1), message))
                self.version += 1
            self._changed.notify_all()
        if self.background and time.monotonic() - self._persisted >= PERSIST_EVERY:
            self.persist()

    def wait(self, seen: int, timeout: float) -> None:
        """Until something happened after version `seen` (a step, the end), or `timeout` seconds."""
        with self._changed:
            if self.version == seen:
                self._changed.wait(timeout)

    def wait_finished(self, timeout: float) -> bool:
        return self._finished.wait(timeout)

    @property
    def failed(self) -> bool:
        return self.record.state in ("failed", "cancelled")

    def progress_line(self) -> str:
        return f"{self.step} ({self.elapsed:.0f}s)"

    def run(self, work: Callable[[Operation], str]) -> None:
        """The operation's thread: run `work`, record how it ended, never raise."""
        try:
            self._finish("done", work(self))
        except Cancelled as exc:
            self._finish("cancelled", self.cancelled_text(exc))
        except JarvisError as exc:
            self._finish("failed", str(exc))
        except Exception as exc:  # the thread must record an end whatever happens
            log.exception("operation %s failed", self.id)
            self._finish("failed", f"{self.record.title}: internal error {type(exc).__name__}: {exc}")

    def cancelled_text(self, exc: Cancelled) -> str:
        lines = [f"## {self.record.title}: CANCELLED after {self.elapsed:.1f}s ({self.cancel.reason})", str(exc)]
        lines.append(f"steps: {steps_text(self.record.steps)}")
        if self.cancel_note:
            lines.append(self.cancel_note)
        return "\n".join(lines)

    def _finish(self, state: State, result: str) -> None:
        with self._changed:
            self.record.seconds = time.monotonic() - self._started
            self.record.state = state
            self.record.result = result
        if self.background:
            self.persist()  # before anyone waiting for the end may let this process exit
        with self._changed:
            self.version += 1
            self._finished.set()
            self._changed.notify_all()

    def stopping(self, reason: str) -> None:
        """Cancel it; a background one is recorded as cancelled at once, since this process may be killed before
        the work has stopped (the work's own end, if it comes, replaces the record)."""
        self.cancel.cancel(reason)
        with self._changed:
            if self.record.state != "running" or not self.background:
                return
            self.record.state = "cancelled"
            self.record.result = self.cancelled_text(Cancelled("stopped: its processes were being killed"))
        self.persist()

    def persist(self) -> None:
        if self.store is None:
            return
        with self._write_lock:  # snapshots reach the disk in the order they were taken
            self._persisted = time.monotonic()
            with self._changed:
                snapshot = self.record.model_copy(update={"seconds": round(self.elapsed, 1)}, deep=True)
            try:
                self.store.write(snapshot)
            except OSError as exc:
                log.warning("could not keep operation %s on disk: %s", self.id, exc)


def steps_text(steps: list[tuple[float, str]]) -> str:
    shown = steps[-STEPS_SHOWN:]
    earlier = f"({len(steps) - len(shown)} earlier) " if len(steps) > len(shown) else ""
    return earlier + "; ".join(f"{at:.0f}s {what}" for at, what in shown) if steps else "none"


class OperationStore:
    """Background operations' records, one 0600 JSON file each in a 0700 folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write(self, record: Record) -> None:
        from jarvis.atomic import write_atomic  # here: a start need not import filelock

        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.folder / f"{record.id}.json", record.model_dump_json().encode(), mode=0o600)

    def read(self, operation_id: str) -> Record | None:
        try:
            return Record.model_validate_json((self.folder / f"{operation_id}.json").read_bytes())
        except (OSError, ValidationError):
            return None

    def ids(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        found = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [p.stem for p in found if ID.fullmatch(p.stem)]

    def prune(self) -> None:
        if not self.folder.is_dir():
            return
        oldest = time.time() - KEEP_SECONDS
        for path in self.folder.glob("*.json"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < oldest:
                    path.unlink()


class Operations:
    """This Jarvis process's long operations, and the store where background ones are kept (None: memory only)."""

    def __init__(self, store: OperationStore | None = None) -> None:
        self.store = store
        self._live: dict[str, Operation] = {}
        self._lock = threading.Lock()

    def start(self, title: str, work: Callable[[Operation], str], cancel_note: str = "") -> Operation:
        operation = Operation(title, cancel_note)
        operation.store = self.store
        with self._lock:
            self._live = {k: op for k, op in self._live.items() if not op.finished or op.background}
            self._live[operation.id] = operation
        thread = threading.Thread(target=operation.run, args=(work,), name=f"jarvis-op-{operation.id}", daemon=True)
        thread.start()
        return operation

    def latest(self) -> Operation | None:
        with self._lock:
            return next(reversed(self._live.values()), None)

    def detach(self, operation: Operation, budget: float) -> str:
        """The operation goes on in the background; the answer says so and how to fetch its result."""
        operation.background = True
        if self.store is not None:
            self.store.prune()
        operation.persist()
        if operation.finished:  # it ended between the last look and now
            return operation.record.result
        return "\n".join(
            [
                f"## {operation.record.title}: still running after {budget:g}s (JARVIS_CALL_BUDGET); "
                f"it goes on in the background as operation {operation.id}",
                f"so far: {steps_text(operation.record.steps)}",
                f"Fetch its progress, then its result: `jarvis_check_status operation={operation.id}`",
            ]
        )

    def describe(self, operation_id: str) -> str:
        """`jarvis_check_status operation=<id>`: progress while it runs, the whole result once it is done."""
        if not ID.fullmatch(operation_id):
            raise InvalidInput(f"Invalid operation {quoted(operation_id)}: an id is 8 hex digits. {self._known()}")
        live = self._live.get(operation_id)
        record = live.record if live is not None else self.store.read(operation_id) if self.store else None
        if record is None:
            raise InvalidInput(f"Unknown operation {quoted(operation_id)}. {self._known()}")
        header = f"## operation {record.id}: {record.title}"
        if record.state != "running":
            verdict = {"done": "DONE", "failed": "FAILED", "cancelled": "CANCELLED"}[record.state]
            return f"{header} — {verdict} after {record.seconds:.1f}s (started {record.started_at:%H:%M:%S} UTC)\n" + (
                record.result
            )
        if live is None and not _alive(record.pid):
            return (
                f"{header} — INTERRUPTED: the Jarvis process running it (pid {record.pid}) stopped before it "
                f"finished; last steps: {steps_text(record.steps)}. Run it again."
            )
        elapsed = live.elapsed if live is not None else record.seconds
        where = "" if live is not None else f" in Jarvis process {record.pid}"
        return "\n".join(
            [
                f"{header} — RUNNING{where}, {elapsed:.0f}s so far",
                f"steps: {steps_text(record.steps)}",
                f"Fetch again for the result: `jarvis_check_status operation={record.id}`",
            ]
        )

    def _known(self) -> str:
        with self._lock:
            ids = [op_id for op_id, op in self._live.items() if op.background]
        ids += [op_id for op_id in (self.store.ids() if self.store else []) if op_id not in ids]
        return f"Known operations: {', '.join(ids[:10])}" if ids else "No background operation is known."

    def stop_all(self, reason: str, wait: float = 10.0) -> None:
        """Cancel every running operation (Jarvis is stopping) and give each a moment to kill what it runs."""
        with self._lock:
            running = [op for op in self._live.values() if not op.finished]
        for operation in running:
            operation.stopping(reason)
        log.info("stopping %d running operation(s): %s", len(running), reason)
        deadline = time.monotonic() + wait
        for operation in running:
            operation.wait_finished(max(0.0, deadline - time.monotonic()))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process does not run it (else it would be live here): an earlier Jarvis with our pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
