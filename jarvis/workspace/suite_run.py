"""Run one test suite in its own process group (`jarvis.child_process`): a deadline, and a cancel token, that kill
the whole group; the suite's verdict, counts and output."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jarvis.cancel import CancelToken
from jarvis.child_process import run_in_group
from jarvis.workspace.suite_output import Counts, parse
from jarvis.workspace.suites import Suite, Which

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

# How to get a test runner that is missing, by the command's name.
INSTALL_HINTS = {
    "npm": "install Node.js, which brings npm (https://nodejs.org)",
    "npx": "install Node.js, which brings npx (https://nodejs.org)",
    "node": "install Node.js (https://nodejs.org)",
    "go": "install Go (https://go.dev/dl/)",
    "pytest": "install pytest in the project's virtualenv (`.venv/bin/python -m pip install pytest`) or on PATH",
    "uv": "install uv (https://docs.astral.sh/uv/)",
}
# Exits 0 when the module given as argv[1] can be imported by the interpreter running it.
_HAS_MODULE = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"


@dataclass
class SuiteResult:
    suite: Suite
    status: str  # PASS, FAIL, TIMEOUT, ERROR (could not start)
    seconds: float
    exit_code: int | None = None
    output: str = ""
    counts: Counts = field(default_factory=Counts)
    note: str = ""


def cannot_start(suite: Suite, which: Which) -> str | None:
    """Why `suite` could not even start (its program or its Python test module missing), with how to get it;
    None when it can. A suite that cannot start is an ERROR, never a FAIL: no test ran."""
    program = suite.command[0]
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else suite.cwd / program
        if not path.is_file():
            return f"{program} does not exist"
        if not os.access(path, os.X_OK):
            return f"{program} is not executable (chmod +x {program})"
    elif which(program) is None:
        return f"`{program}` is not on PATH: {INSTALL_HINTS.get(program, f'install {program} or put it on PATH')}"
    if suite.command[1:2] == ("-m",) and len(suite.command) > 2:
        module = suite.command[2]
        check = subprocess.run(
            [program, "-c", _HAS_MODULE, module], capture_output=True, timeout=60, stdin=subprocess.DEVNULL
        )
        if check.returncode != 0:
            where = Path(program).parent.parent if "/" in program else program
            return f"{module} is not installed in {where}: `{program} -m pip install {module}`"
    return None


def run_suite(
    suite: Suite, timeout: float, environ: Mapping[str, str], cancel: CancelToken | None = None
) -> SuiteResult:
    """Run `suite` with the host's environment `environ` (the context's, so a test describes the machine) to its
    end or its timeout; a cancelled token kills its process group and raises `Cancelled`."""
    env = {**environ, "NO_COLOR": "1", "FORCE_COLOR": "0", "CI": environ.get("CI", "true")}
    try:
        done = run_in_group(suite.command, cwd=suite.cwd, env=env, timeout=timeout, cancel=cancel)
    except FileNotFoundError:
        return SuiteResult(suite, "ERROR", 0.0, note=f"command not found: {suite.command[0]}")
    except PermissionError:
        return SuiteResult(suite, "ERROR", 0.0, note=f"not executable: {suite.command[0]}")
    output = ANSI.sub("", done.output)
    if done.timed_out:
        return SuiteResult(suite, "TIMEOUT", done.seconds, None, output, parse(output), f"killed after {timeout:.0f}s")
    status = "PASS" if done.exit_code == 0 else "FAIL"
    return SuiteResult(suite, status, done.seconds, done.exit_code, output, parse(output))
