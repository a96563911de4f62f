"""Counts and failing test names read from what test runners print.

Each parser recognises one runner's summary (pytest, go test, jest/vitest, mocha, node --test, TAP as bats
prints it); the first that recognises the output wins. Output no parser knows gives empty counts, and the
result then rests on the exit code alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_NAMES = 20


@dataclass
class Counts:
    runner: str = ""  # which parser recognised the output; "" = none
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    failing: list[str] = field(default_factory=list)  # names of failing tests, first MAX_NAMES

    def summary(self) -> str:
        if not self.runner:
            return ""
        parts = [f"{n} {label}" for n, label in (
            (self.passed, "passed"), (self.failed, "failed"), (self.errors, "errors"), (self.skipped, "skipped"),
        ) if n or label == "passed"]  # fmt: skip
        return f"{', '.join(parts)} ({self.runner})"


def parse(output: str) -> Counts:
    for parser in PARSERS:
        counts = parser(output)
        if counts is not None:
            counts.failing = _unique(counts.failing)[:MAX_NAMES]
            return counts
    return Counts()


def _pytest(output: str) -> Counts | None:
    summary = None
    for line in output.splitlines():
        stripped = line.strip("= ")
        if re.search(r"^(\d+ \w+(, )?)+.* in [\d.]+s", stripped) or re.search(r"^no tests ran in [\d.]+s", stripped):
            summary = stripped
    if summary is None:
        return None
    pairs = re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", summary)
    found = {label: int(n) for n, label in pairs}
    return Counts(
        "pytest",
        passed=found.get("passed", 0) + found.get("xpassed", 0),
        failed=found.get("failed", 0),
        skipped=found.get("skipped", 0) + found.get("xfailed", 0),
        errors=found.get("error", 0) + found.get("errors", 0),
        failing=re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE),
    )


def _go(output: str) -> Counts | None:
    results = re.findall(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", output, re.MULTILINE)
    broken = re.findall(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]", output, re.MULTILINE)
    if not results and not broken and not re.search(r"^(?:ok|FAIL|\?) *\t\S+", output, re.MULTILINE):
        return None
    return Counts(
        "go test",
        passed=sum(1 for status, _ in results if status == "PASS"),
        failed=sum(1 for status, _ in results if status == "FAIL"),
        skipped=sum(1 for status, _ in results if status == "SKIP"),
        errors=len(broken),
        failing=[name for status, name in results if status == "FAIL"] + [f"{p} (build failed)" for p in broken],
    )


def _jest_or_vitest(output: str) -> Counts | None:
    lines = re.findall(r"^\s*Tests:?\s+(.*\d+ (?:passed|failed).*)$", output, re.MULTILINE)
    if not lines:
        return None
    found = {label: int(n) for n, label in re.findall(r"(\d+) (passed|failed|skipped|todo)", lines[-1])}
    vitest = "|" in lines[-1]
    names = re.findall(r"^\s*(?:×|✗|FAIL) (.+?)(?: \d+ms)?$", output, re.MULTILINE) if vitest else []
    names += re.findall(r"^\s*● (.+)$", output, re.MULTILINE)
    return Counts(
        "vitest" if vitest else "jest",
        passed=found.get("passed", 0),
        failed=found.get("failed", 0),
        skipped=found.get("skipped", 0) + found.get("todo", 0),
        failing=[n.strip() for n in names if "Test suite failed to run" not in n],
    )


def _mocha(output: str) -> Counts | None:
    passing = re.search(r"^\s+(\d+) passing", output, re.MULTILINE)
    if not passing:
        return None
    failing = re.search(r"^\s+(\d+) failing", output, re.MULTILINE)
    pending = re.search(r"^\s+(\d+) pending", output, re.MULTILINE)
    names = re.findall(r"^\s+\d+\) (.+)$", output[failing.end() :], re.MULTILINE) if failing else []
    return Counts(
        "mocha",
        passed=int(passing.group(1)),
        failed=int(failing.group(1)) if failing else 0,
        skipped=int(pending.group(1)) if pending else 0,
        failing=[n.strip().rstrip(":") for n in names],
    )


def _node_test(output: str) -> Counts | None:
    found = dict(re.findall(r"^(?:ℹ|#) (tests|pass|fail|skipped|todo|cancelled) (\d+)$", output, re.MULTILINE))
    if "tests" not in found or "pass" not in found:
        return None
    names = re.findall(r"^not ok \d+ - (.+)$", output, re.MULTILINE)  # TAP reporter, top-level tests
    names += re.findall(r"^\s*✖ (.+?) \([\d.]+m?s\)$", output, re.MULTILINE)  # spec reporter
    return Counts(
        "node --test",
        passed=int(found["pass"]),
        failed=int(found.get("fail", 0)),
        skipped=int(found.get("skipped", 0)) + int(found.get("todo", 0)),
        errors=int(found.get("cancelled", 0)),
        failing=[n for n in names if n != "failing tests:"],
    )


def _tap(output: str) -> Counts | None:
    if not re.search(r"^1\.\.\d+$", output, re.MULTILINE):
        return None
    results = re.findall(r"^(ok|not ok) \d+ (?:- )?(.*)$", output, re.MULTILINE)
    skipped = [name for status, name in results if status == "ok" and re.search(r"# skip", name, re.IGNORECASE)]
    return Counts(
        "TAP",
        passed=sum(1 for status, _ in results if status == "ok") - len(skipped),
        failed=sum(1 for status, _ in results if status == "not ok"),
        skipped=len(skipped),
        failing=[name for status, name in results if status == "not ok"],
    )


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


PARSERS: list[Callable[[str], Counts | None]] = [_pytest, _go, _jest_or_vitest, _mocha, _node_test, _tap]
