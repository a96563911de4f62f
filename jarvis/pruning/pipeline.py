"""One request's path: received -> executed -> prune check -> pruner -> pruned, or raw on any failure.

The prune check returns the raw output when there is no question (`no_question`: byte for byte, no metadata line),
when pruning is off or `http` has no URL (`disabled_or_unconfigured`) or when the output is larger than
`JARVIS_PRUNE_MAX_INPUT_BYTES` (`input_too_large`). Error results, "(no output)" and "no matches" answers are never
pruned. A pruner failure (`timeout`, `http_error`, `invalid_response`) returns the raw output too: pruning never
turns a success into an error. Every answer that went through the check ends with one metadata line.

Each step is one log line on stderr (logger `jarvis.pruning`) carrying the request's id, e.g.
`tool.exec_ok request_id=3f9a1c2e tool=bash duration_ms=12 bytes=5120`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from jarvis.pruning.pruners import Pruner, PrunerFailed, configured_pruner
from jarvis.settings import Settings

log = logging.getLogger("jarvis.pruning")

# The parameter every output-heavy tool takes; one declaration so the schema text is the same everywhere.
FocusQuestion = Annotated[
    str | None, Field(description="Return only the output lines relevant to this question (pruned)")
]
SkipReason = Literal["no_question", "disabled_or_unconfigured", "input_too_large", "not_prunable"]
# Answers that carry nothing a pruner could shorten.
NOT_PRUNABLE = ("(no output)", "(no matches found)", "no matches")


@dataclass(frozen=True)
class ToolOutput:
    """What a tool produced: `text` may be pruned; `status` (e.g. `[exit code: 1]`) is always kept whole."""

    text: str
    status: str = ""

    def joined(self) -> str:
        return f"{self.text}\n{self.status}" if self.status else self.text


@dataclass
class Request:
    """One tool call going through the pipeline; logs each step with its id."""

    tool: str
    question: str | None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def receive(cls, tool: str, question: str | None) -> Request:
        request = cls(tool, question or None)
        request._log("tool.request_received", question="yes" if request.question else "no")
        return request

    def invalid(self, problems: str) -> None:
        self._log("tool.request_invalid", problems=repr(problems))

    def executed(self, output: ToolOutput | str) -> None:
        size = len(_as_output(output).joined().encode())
        self._log("tool.exec_ok", duration_ms=_ms(self.started), bytes=size)

    def exec_failed(self, error: BaseException) -> None:
        self._log("tool.exec_failed", duration_ms=_ms(self.started), error=type(error).__name__)

    def respond(self, output: ToolOutput | str, settings: Settings, pruner: Pruner | None = None) -> str:
        """The answer: raw, or pruned with its metadata line. `pruner` defaults to the configured one."""
        output = _as_output(output)
        text, reason = self._focused(output, settings, pruner or configured_pruner(settings))
        mode = "pruned" if reason is None else "raw"
        self._log("tool.respond_ok", mode=mode, reason=reason or "-", bytes=len(text.encode()))
        return text

    def _focused(self, output: ToolOutput, settings: Settings, pruner: Pruner | None) -> tuple[str, str | None]:
        """The answer's text and why it is raw (None: pruned)."""
        skipped = self._skip_reason(output, settings, pruner)
        if skipped == "no_question" or skipped == "not_prunable":
            return output.joined(), skipped
        if skipped is not None or pruner is None:
            reason = skipped or "disabled_or_unconfigured"
            return _with_note(output, _skip_note(reason, output, settings)), reason
        self._log("pruner.call_start", pruner=pruner.name, where=pruner.where)
        called = time.monotonic()
        try:
            pruned = pruner.prune(self.question or "", output.text)
        except PrunerFailed as exc:
            self._log("pruner.call_failed", reason=exc.reason, duration_ms=_ms(called), detail=repr(exc.detail))
            return _with_note(output, f"[not pruned: {exc.detail}, full output]"), exc.reason
        self._log("pruner.call_ok", duration_ms=_ms(called), pruned_bytes=len(pruned.encode()))
        return _with_note(ToolOutput(pruned, output.status), _pruned_note(pruner.name, output.text, pruned)), None

    def _skip_reason(self, output: ToolOutput, settings: Settings, pruner: Pruner | None) -> SkipReason | None:
        if not self.question:
            return "no_question"
        if not output.text.strip() or output.text.strip() in NOT_PRUNABLE:
            return "not_prunable"
        if pruner is None:
            return "disabled_or_unconfigured"
        if len(output.text.encode()) > settings.prune_max_input_bytes:
            return "input_too_large"
        return None

    def _log(self, event: str, **fields: object) -> None:
        details = " ".join(f"{key}={value}" for key, value in fields.items())
        log.info("%s request_id=%s tool=%s %s", event, self.id, self.tool, details)


def focus(
    question: str | None,
    settings: Settings,
    *,
    tool: str,
    execute: Callable[[], ToolOutput | str],
    pruner: Pruner | None = None,
) -> str:
    """Run `execute` as one pipeline request: the output it returns, pruned to what answers `question`.

    A tool adds `context_focus_question: FocusQuestion = None` and wraps the code producing its text:
    `return focus(context_focus_question, settings, tool="jarvis_diagnose.logs", execute=lambda: logs(...))`.
    An exception from `execute` (a tool error) is logged and re-raised: errors are never pruned.
    """
    request = Request.receive(tool, question)
    try:
        output = execute()
    except BaseException as exc:
        request.exec_failed(exc)
        raise
    request.executed(output)
    return request.respond(output, settings, pruner)


def _as_output(output: ToolOutput | str) -> ToolOutput:
    return output if isinstance(output, ToolOutput) else ToolOutput(output)


def _with_note(output: ToolOutput, note: str) -> str:
    return f"{output.joined()}\n{note}"


def _skip_note(reason: SkipReason, output: ToolOutput, settings: Settings) -> str:
    match reason:
        case "input_too_large":
            size, limit = len(output.text.encode()), settings.prune_max_input_bytes
            why = f"output {_size(size)} is over JARVIS_PRUNE_MAX_INPUT_BYTES ({_size(limit)})"
        case _ if settings.effective_pruner == "off":
            why = "pruning is off (JARVIS_PRUNER=off)"
        case _:
            why = "JARVIS_PRUNER=http needs JARVIS_PRUNER_URL"
    return f"[not pruned: {why}, full output]"


def _pruned_note(name: str, raw: str, pruned: str) -> str:
    raw_bytes, pruned_bytes = len(raw.encode()), len(pruned.encode())
    fewer = round(100 * (1 - pruned_bytes / raw_bytes)) if raw_bytes else 0
    lines = f"{len(raw.splitlines()):,} -> {len(pruned.splitlines()):,} lines"
    return f"[pruned by {name}: {lines}, {fewer}% fewer bytes]"


def _size(size: int) -> str:
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)
