"""`jarvis_system build`: build one component (jarvis, mcpm, daemon) or all of them, a section each.

Commands are argv lists run without a shell, with a timeout; `build_commands` in jarvis.toml replaces a
component's defaults. A failed build is reported as FAILED with its output's tail, not hidden.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from jarvis.context import Jarvis
from jarvis.errors import JarvisError
from jarvis.mcpm_folder import prepare_mcpm_dir
from jarvis.tools.args import pick

COMPONENTS = ("jarvis", "mcpm", "daemon", "all")
COMMAND_TIMEOUT = 600
OUTPUT_TAIL = 1500
PACKAGES = [str(Path(__file__).resolve().parents[2] / name) for name in ("jarvis", "adapters")]


def default_commands(component: str) -> list[list[str]]:
    if component == "jarvis":
        # Compile every module, then start the server far enough to build its tool list (no daemon needed).
        return [[sys.executable, "-m", "compileall", "-q", *PACKAGES], [sys.executable, "-m", "jarvis", "tools"]]
    return []


def build(jarvis: Jarvis, component: str | None, *, no_cache: bool) -> str:
    chosen = pick("component", component, COMPONENTS, default="all")
    steps: dict[str, Callable[[], tuple[bool, list[str]]]] = {
        "jarvis": lambda: _run_commands(jarvis, "jarvis"),
        "mcpm": lambda: _build_mcpm(jarvis),
        "daemon": lambda: _build_daemon(jarvis, no_cache=no_cache),
    }
    names = list(steps) if chosen == "all" else [chosen]
    sections = []
    for name in names:
        started = time.monotonic()
        try:
            ok, lines = steps[name]()
        except JarvisError as exc:
            if chosen != "all":
                raise
            ok, lines = False, [str(exc)]
        verdict = "ok" if ok else "FAILED"
        sections.append("\n".join([f"## build {name} — {verdict} ({time.monotonic() - started:.1f}s)", *lines]))
    return "\n".join(sections)


def _build_mcpm(jarvis: Jarvis) -> tuple[bool, list[str]]:
    lines = prepare_mcpm_dir(jarvis.settings.mcpm_dir)
    ok = not any("left alone" in line for line in lines)
    if "mcpm" in jarvis.settings.build_commands:
        commands_ok, output = _run_commands(jarvis, "mcpm")
        return ok and commands_ok, lines + output
    return ok, lines


def _build_daemon(jarvis: Jarvis, *, no_cache: bool) -> tuple[bool, list[str]]:
    if "daemon" in jarvis.settings.build_commands:
        return _run_commands(jarvis, "daemon")
    spec = jarvis.project.spec()
    buildable = [name for name, service in spec.services.items() if service.builds]
    if not buildable:
        return False, [f"project {spec.name} has no service with a build section; nothing to build"]
    jarvis.runner.compose_build(buildable, no_cache=no_cache)
    return True, [f"docker compose build{' --no-cache' if no_cache else ''} {' '.join(buildable)}: ok"]


def _run_commands(jarvis: Jarvis, component: str) -> tuple[bool, list[str]]:
    commands = jarvis.settings.build_commands.get(component) or default_commands(component)
    lines = []
    for argv in commands:
        shown = " ".join(argv)
        try:
            done = subprocess.run(
                argv,
                cwd=jarvis.settings.project_dir,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            return False, [*lines, f"`{shown}`: command not found"]
        except subprocess.TimeoutExpired:
            return False, [*lines, f"`{shown}`: TIMEOUT after {COMMAND_TIMEOUT}s"]
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip()[-OUTPUT_TAIL:]
            return False, [*lines, f"`{shown}`: exit {done.returncode}", f"```\n{output}\n```"]
        lines.append(f"`{shown}`: ok")
    return True, lines
