"""Medians for the benchmarks: candidates compared in the same run are interleaved round by round, so a busy
moment of a shared machine falls on all of them alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def interleaved(candidates: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Each candidate returns the seconds it measured; the median per candidate over `rounds` rounds."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, measure in candidates.items():
            samples[name].append(measure())
    return {name: statistics.median(values) for name, values in samples.items()}


def compare(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each call, interleaved, after one warm call each (Jarvis is a long-running server)."""
    for call in calls.values():
        call()
    return interleaved({name: (lambda c=call: seconds(c)) for name, call in calls.items()}, rounds)


def ms(value: float) -> str:
    return f"{value * 1000:,.1f} ms"
