"""`jarvis_system`: lifecycle and inspection of the Compose stack's services."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from jarvis.concurrency import map_concurrently
from jarvis.context import Jarvis
from jarvis.errors import DaemonUnavailable
from jarvis.formatting import error_section, log_block, running_summary, state_of, status_table
from jarvis.runner import ServiceStatus
from jarvis.tools.args import log_lines, pick, services_arg

ACTIONS = ("rebuild", "stop", "start", "restart_infra", "docker_logs", "docker_status")
Progress = Callable[[float, float, str], None]


def _no_progress(*_: object) -> None:
    return None


def handle(
    jarvis: Jarvis,
    *,
    action: str,
    service: str | None = None,
    lines: int | None = None,
    no_cache: bool | None = None,
    progress: Progress = _no_progress,
) -> str:
    action = pick("action", action, ACTIONS)
    if action == "rebuild":
        return rebuild(jarvis, service, no_cache=True if no_cache is None else no_cache, progress=progress)
    if action == "stop":
        return stop(jarvis, service)
    if action == "start":
        return start(jarvis, service)
    if action == "restart_infra":
        return restart_infra(jarvis)
    if action == "docker_logs":
        return docker_logs(jarvis, service, lines)
    return docker_status(jarvis)


def _target(service: str | None) -> str:
    return service or "all services"


def _statuses(jarvis: Jarvis, services: Sequence[str]) -> tuple[list[ServiceStatus], list[str]]:
    """Status rows of the named services (all when empty), and the services expected to show."""
    expected = list(services) or list(jarvis.project.spec().services)
    rows = [s for s in jarvis.runner.compose_ps() if s.service in expected]
    return rows, expected


def rebuild(jarvis: Jarvis, service: str | None, *, no_cache: bool, progress: Progress = _no_progress) -> str:
    """Build (no cache by default, as seed 001 says), then `up -d`; one service leaves the others alone."""
    services = services_arg(jarvis, service)
    spec = jarvis.project.spec()
    targets = services or list(spec.services)
    buildable = [name for name in targets if spec.services[name].builds]
    report = [f"## rebuild {_target(service)}"]
    progress(0, 3, "building")
    if buildable:
        started = time.monotonic()
        jarvis.runner.compose_build(buildable, no_cache=no_cache)
        flag = " --no-cache" if no_cache else ""
        report.append(f"build{flag} {', '.join(buildable)}: ok ({time.monotonic() - started:.1f}s)")
    else:
        images = ", ".join(f"{n}={spec.services[n].image}" for n in targets)
        report.append(f"build: nothing to build, image only ({images})")
    progress(1, 3, "starting")
    started = time.monotonic()
    jarvis.runner.compose_up(services, no_deps=bool(services))
    report.append(f"up -d{' --no-deps' if services else ''}: ok ({time.monotonic() - started:.1f}s)")
    progress(2, 3, "reading status")
    rows, expected = _statuses(jarvis, services)
    report.append(status_table(rows, expected))
    progress(3, 3, "done")
    return "\n".join(report)


def stop(jarvis: Jarvis, service: str | None) -> str:
    services = services_arg(jarvis, service)
    jarvis.runner.compose_stop(services)
    rows, expected = _statuses(jarvis, services)
    stopped = sorted({s.service for s in rows if s.state != "running"})
    still = sorted({s.service for s in rows if s.state == "running"})
    report = [f"## stop {_target(service)}", f"stopped: {', '.join(stopped) or 'none'}"]
    if still:
        report.append(f"STILL RUNNING: {', '.join(still)}")
    report.append(status_table(rows, expected))
    return "\n".join(report)


def start(jarvis: Jarvis, service: str | None) -> str:
    services = services_arg(jarvis, service)
    jarvis.runner.compose_start(services)
    rows, expected = _statuses(jarvis, services)
    running = sorted({s.service for s in rows if s.state == "running"})
    down = sorted(f"{s.service} {state_of(s)}" for s in rows if s.state != "running")
    missing = [name for name in expected if name not in {s.service for s in rows}]
    report = [f"## start {_target(service)}", f"running: {', '.join(running) or 'none'}"]
    if down:
        report.append(f"NOT RUNNING: {', '.join(down)}")
    if missing:
        report.append(f"no container (use rebuild): {', '.join(missing)}")
    report.append(status_table(rows, expected))
    return "\n".join(report)


def restart_infra(jarvis: Jarvis) -> str:
    jarvis.runner.compose_restart([])
    rows, expected = _statuses(jarvis, [])
    summary = running_summary(jarvis.project.spec().name, rows, expected)
    return "\n".join(["## restart_infra", f"restarted; {summary}", status_table(rows, expected)])


def docker_logs(jarvis: Jarvis, service: str | None, lines: int | None) -> str:
    count, note = log_lines(lines)
    services = services_arg(jarvis, service) or list(jarvis.project.spec().services)
    results = map_concurrently(lambda name: jarvis.runner.compose_logs(name, count, "all"), services)
    if all(isinstance(r, DaemonUnavailable) for r in results):
        raise results[0]  # type: ignore[misc]
    return "\n".join(
        error_section(name, result) if isinstance(result, Exception) else log_block(result, name, note)
        for name, result in zip(services, results, strict=True)
    )


def docker_status(jarvis: Jarvis) -> str:
    rows, expected = _statuses(jarvis, [])
    return "\n".join([running_summary(jarvis.project.spec().name, rows, expected), status_table(rows, expected)])
