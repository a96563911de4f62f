"""The pruners behind `context_focus_question`: one small protocol, two implementations.

    Pruner.prune(question, text) -> text      the lines of `text` that answer `question`
    ├── BuiltinPruner   offline: BM25 line relevance plus output structure (jarvis.pruning.builtin)
    └── HttpPruner      a swe-pruner compatible endpoint: POST {"query", "code"} -> {"pruned_code" | "content" | "text"}

A pruner that cannot answer raises `PrunerFailed` with one of the pipeline's reasons; the pipeline then returns the
raw output. Nothing here ever turns a tool's success into an error.
"""

from __future__ import annotations

import json
from typing import Literal, Protocol

import anyio
import httpx2

from jarvis.settings import Settings

FailureReason = Literal["timeout", "http_error", "invalid_response"]
# The fields a swe-pruner compatible answer may carry the pruned text in, in order of preference.
TEXT_FIELDS = ("pruned_code", "content", "text")


class PrunerFailed(Exception):
    def __init__(self, reason: FailureReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class Pruner(Protocol):
    name: str  # shown in the metadata line: `[pruned by NAME: ...]`
    where: str  # shown in logs: "in process" or the endpoint

    def prune(self, question: str, text: str) -> str:
        """The parts of `text` that answer `question`, in their original order; raises `PrunerFailed`.

        Blocking: called from a worker thread, never from the event loop."""
        ...


class BuiltinPruner:
    name = "bm25"
    where = "in process"

    def prune(self, question: str, text: str) -> str:
        from jarvis.pruning.builtin import prune_text  # bm25s and numpy load at the first question, not at start

        return prune_text(text, question)


class HttpPruner:
    """swe-pruner's `/prune` contract over HTTP. `transport` lets tests answer in process."""

    name = "http"

    def __init__(self, url: str, timeout: float, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.where = url
        self.url = url
        self.timeout = timeout
        self.transport = transport

    def prune(self, question: str, text: str) -> str:
        try:
            response = anyio.run(self._post, question, text)
        except (TimeoutError, httpx2.TimeoutException) as exc:
            raise PrunerFailed("timeout", f"pruner timeout after {self.timeout:g} s") from exc
        except httpx2.HTTPError as exc:
            raise PrunerFailed("http_error", f"pruner unreachable ({type(exc).__name__})") from exc
        if not response.is_success:
            raise PrunerFailed("http_error", f"pruner answered HTTP {response.status_code}")
        try:
            payload = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise PrunerFailed("invalid_response", "pruner answer is not JSON") from exc
        if isinstance(payload, dict):
            for field in TEXT_FIELDS:
                if isinstance(payload.get(field), str):
                    return str(payload[field])
        raise PrunerFailed("invalid_response", f"pruner answer has no {'/'.join(TEXT_FIELDS)}")

    async def _post(self, question: str, text: str) -> httpx2.Response:
        """The whole exchange within the timeout: connecting, sending and the answer, however slowly it trickles in.
        (httpx's own timeouts bound each phase and each read, so an answer sent a byte at a time never ends them.)"""
        with anyio.fail_after(self.timeout):
            async with httpx2.AsyncClient(timeout=None, transport=self.transport, trust_env=False) as client:
                return await client.post(self.url, json={"query": question, "code": text})


def configured_pruner(settings: Settings) -> Pruner | None:
    """The pruner the settings choose, or None when pruning is off or `http` has no URL."""
    match settings.effective_pruner:
        case "builtin":
            return BuiltinPruner()
        case "http":
            if settings.pruner_url is None:
                return None
            return HttpPruner(settings.pruner_url, settings.pruner_timeout)
        case "off":
            return None
