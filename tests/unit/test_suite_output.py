"""Counts and failing names from real runners' output (samples as each runner prints them)."""

from __future__ import annotations

import pytest

from jarvis.workspace.suite_output import parse

PYTEST = """\
tests/test_a.py .F.s                                                     [100%]
=========================== short test summary info ============================
FAILED tests/test_a.py::test_b - AssertionError: boom
ERROR tests/test_c.py::test_setup - RuntimeError
=========== 1 failed, 2 passed, 1 skipped, 1 error in 0.12s ===========
"""
PYTEST_QUIET = "..F\nFAILED t.py::test_x - assert 0\n1 failed, 2 passed in 0.03s\n"
GO = """\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
    math_test.go:12: got 1, want 3
--- FAIL: TestSub (0.00s)
=== RUN   TestSkip
--- SKIP: TestSkip (0.00s)
FAIL
FAIL\texample.com/m\t0.003s
FAIL\texample.com/broken [build failed]
"""
JEST = """\
  ● math › subtracts

    expect(received).toBe(expected)

Tests:       1 failed, 3 passed, 4 total
"""
VITEST = """\
 × math > subtracts 3ms
 Test Files  1 failed (1)
      Tests  1 failed | 2 passed (3)
"""
MOCHA = """\
  math
    ✓ adds
    1) subtracts

  1 passing (5ms)
  1 failing
  2 pending

  1) math
       subtracts:
     AssertionError
"""
NODE_TAP = "TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n1..2\n# tests 2\n# pass 1\n# fail 1\n# skipped 0\n"
NODE_SPEC = "✔ adds (0.5ms)\n✖ subtracts (1.2ms)\nℹ tests 2\nℹ pass 1\nℹ fail 1\nℹ skipped 0\n"
BATS = "1..3\nok 1 starts\nnot ok 2 stops cleanly\nok 3 skipped one # skip not ready\n"


@pytest.mark.parametrize(
    ("output", "runner", "passed", "failed", "skipped", "errors", "failing"),
    [
        (PYTEST, "pytest", 2, 1, 1, 1, ["tests/test_a.py::test_b", "tests/test_c.py::test_setup"]),
        (PYTEST_QUIET, "pytest", 2, 1, 0, 0, ["t.py::test_x"]),
        (GO, "go test", 1, 1, 1, 1, ["TestSub", "example.com/broken (build failed)"]),
        (JEST, "jest", 3, 1, 0, 0, ["math › subtracts"]),
        (VITEST, "vitest", 2, 1, 0, 0, ["math > subtracts"]),
        (MOCHA, "mocha", 1, 1, 2, 0, ["math"]),
        (NODE_TAP, "node --test", 1, 1, 0, 0, ["subtracts"]),
        (NODE_SPEC, "node --test", 1, 1, 0, 0, ["subtracts"]),
        (BATS, "TAP", 1, 1, 1, 0, ["stops cleanly"]),
    ],
)
def test_runner_summaries_are_counted(
    output: str, runner: str, passed: int, failed: int, skipped: int, errors: int, failing: list[str]
) -> None:
    counts = parse(output)
    assert (counts.runner, counts.passed, counts.failed, counts.skipped, counts.errors) == (
        runner,
        passed,
        failed,
        skipped,
        errors,
    )
    assert counts.failing == failing


def test_unknown_output_gives_no_counts_and_an_empty_summary() -> None:
    counts = parse("make: *** [check] Error 2\n")
    assert counts.runner == ""
    assert counts.summary() == ""
    assert parse(PYTEST).summary() == "2 passed, 1 failed, 1 errors, 1 skipped (pytest)"
