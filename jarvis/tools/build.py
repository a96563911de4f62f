"""`jarvis_system build`'s work: build one component (jarvis, mcpm, daemon) or all of them, a section each.

Commands are argv lists run without a shell, each in its own process group with a timeout (a cancelled
operation kills the group); `build_commands` in jarvis.toml replaces a component's defaults. A failed build is
reported as FAILED with its output's tail, not hidden.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from jarvis.child_process import run_in_group
from jarvis.errors import Cancelled, JarvisError
from jarvis.mcpm_folder import prepare_mcpm_dir
from jarvis.tool_context import ToolContext

Component = Literal["jarvis", "mcpm", "daemon", "all"]
COMMAND_TIMEOUT = 600
OUTPUT_TAIL = 1500
PACKAGES = [str(Path(__file__).resolve().parents[2] / name) for name in ("jarvis", "adapters")]


def default_commands(component: str) -> list[list[str]]:
    if component == "jarvis":
        # Compile every module, then start the server far enough to build its tool list (no daemon needed).
        return [[sys.executable, "-m", "compileall", "-q", *PACKAGES], [sys.executable, "-m", "jarvis", "tools"]]
    return []


def build(jarvis: ToolContext, chosen: Component, *, no_cache: bool) -> str:
    steps: dict[str, Callable[[], tuple[bool, list[str]]]] = {
        "jarvis": lambda: _run_commands(jarvis, "jarvis"),
        "mcpm": lambda: _build_mcpm(jarvis),
        "daemon": lambda: _build_daemon(jarvis, no_cache=no_cache),
    }
    names = list(steps) if chosen == "all" else [chosen]
    sections = []
    for name in names:
        started = time.monotonic()
        jarvis.progress(0, 0, f"build {name}")
        try:
            ok, lines = steps[name]()
        except JarvisError as exc:
            if chosen != "all" or isinstance(exc, Cancelled):
                raise
            ok, lines = False, [str(exc)]
        verdict = "ok" if ok else "FAILED"
        sections.append("\n".join([f"## build {name} — {verdict} ({time.monotonic() - started:.1f}s)", *lines]))
    return "\n".join(sections)


def _build_mcpm(jarvis: ToolContext) -> tuple[bool, list[str]]:
    lines = prepare_mcpm_dir(jarvis.settings.mcpm_dir)
    ok = not any("left alone" in line for line in lines)
    if "mcpm" in jarvis.settings.build_commands:
        commands_ok, output = _run_commands(jarvis, "mcpm")
        return ok and commands_ok, lines + output
    return ok, lines


def _build_daemon(jarvis: ToolContext, *, no_cache: bool) -> tuple[bool, list[str]]:
    if "daemon" in jarvis.settings.build_commands:
        return _run_commands(jarvis, "daemon")
    spec = jarvis.project.spec()
    buildable = [name for name, service in spec.services.items() if service.builds]
    if not buildable:
        return False, [f"project {spec.name} has no service with a build section; nothing to build"]
    jarvis.runner.compose_build(buildable, no_cache=no_cache)
    return True, [f"docker compose build{' --no-cache' if no_cache else ''} {' '.join(buildable)}: ok"]


def _run_commands(jarvis: ToolContext, component: str) -> tuple[bool, list[str]]:
    commands = jarvis.settings.build_commands.get(component) or default_commands(component)
    lines: list[str] = []
    for argv in commands:
        shown = " ".join(argv)
        jarvis.progress(0, 0, f"build {component}: {shown}"[:200])
        try:
            done = run_in_group(argv, cwd=jarvis.settings.project_dir, timeout=COMMAND_TIMEOUT, cancel=jarvis.cancel)
        except FileNotFoundError:
            return False, [*lines, f"`{shown}`: command not found"]
        except PermissionError:
            return False, [*lines, f"`{shown}`: not executable"]
        if done.timed_out:
            return False, [*lines, f"`{shown}`: TIMEOUT after {COMMAND_TIMEOUT}s (its process group was killed)"]
        if done.exit_code != 0:
            output = done.output.strip()[-OUTPUT_TAIL:]
            return False, [*lines, f"`{shown}`: exit {done.exit_code}", f"```\n{output}\n```"]
        lines.append(f"`{shown}`: ok")
    return True, lines
