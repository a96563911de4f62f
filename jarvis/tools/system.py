"""`jarvis_system`: lifecycle and inspection of the Compose stack's services."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from jarvis import machine_setup
from jarvis.context import Jarvis
from jarvis.formatting import error_section, log_block, running_summary, state_of, status_table
from jarvis.mcpm_folder import prepare_mcpm_dir
from jarvis.runner import ServiceStatus
from jarvis.settings import default_stack_dir
from jarvis.tools import build
from jarvis.tools.args import log_lines, pick, services_arg

ACTIONS = ("bootstrap", "restart", "restart_infra", "rebuild", "stop", "start", "docker_logs", "docker_status", "build")
RESTART_NOTE = (
    "Jarvis restarts now: this process exits right after this answer, and your MCP client starts it again "
    "(most do on the next call; if tools stay unavailable, reconnect the server in the client)."
)
SETTLE_POLL = 0.5
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
    component: str | None = None,
    progress: Progress = _no_progress,
) -> str:
    action = pick("action", action, ACTIONS)
    if action == "bootstrap":
        return bootstrap(jarvis, progress=progress)
    if action == "restart":
        return RESTART_NOTE  # the server exits once this answer is sent (jarvis.server)
    if action == "build":
        return build.build(jarvis, component, no_cache=bool(no_cache))
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
    results = jarvis.runner.compose_logs_many(services, count, "all")
    return "\n".join(
        error_section(name, result) if isinstance(result, Exception) else log_block(result, name, note)
        for name, result in zip(services, results, strict=True)
    )


def docker_status(jarvis: Jarvis) -> str:
    rows, expected = _statuses(jarvis, [])
    return "\n".join([running_summary(jarvis.project.spec().name, rows, expected), status_table(rows, expected)])


def bootstrap(jarvis: Jarvis, *, progress: Progress = _no_progress) -> str:
    """MCPM folder, a working `docker compose`, the stack up, then a bounded wait until it settles.
    Safe to run twice: nothing existing is rewritten and `up -d` leaves running services alone."""
    report = ["## bootstrap"]
    progress(0, 4, "preparing the MCPM folder")
    report += [f"mcpm: {line}" for line in prepare_mcpm_dir(jarvis.settings.mcpm_dir)]
    progress(1, 4, "checking docker compose")
    report.append(machine_setup.ensure_compose_plugin())
    if jarvis.settings.project_dir == default_stack_dir().resolve():
        report.append(machine_setup.ensure_base_image())  # the bundled stack's images build FROM it
    progress(2, 4, "starting the stack")
    started = time.monotonic()
    jarvis.runner.compose_up([])
    report.append(f"up -d: ok ({time.monotonic() - started:.1f}s)")
    progress(3, 4, "waiting for services to settle")
    rows, expected, settled = _wait_until_settled(jarvis, jarvis.settings.bootstrap_timeout)
    waited = f"{time.monotonic() - started:.1f}s"
    ready = [s.service for s in rows if s.state == "running" and s.health in (None, "healthy")]
    report.append(
        f"settled after {waited}: {len(ready)}/{len(expected)} running or healthy"
        if settled
        else f"NOT SETTLED within {jarvis.settings.bootstrap_timeout:g}s (JARVIS_BOOTSTRAP_TIMEOUT): "
        f"{len(ready)}/{len(expected)} running or healthy"
    )
    problems = [
        f"{s.service} {state_of(s)}{f' ({s.health})' if s.health else ''}" for s in rows if s.service not in ready
    ]
    if problems:
        report.append(f"NEEDS ATTENTION: {', '.join(problems)} (jarvis_diagnose profile_health shows why)")
    report.append(status_table(rows, expected))
    progress(4, 4, "done")
    return "\n".join(report)


def _wait_until_settled(jarvis: Jarvis, timeout: float) -> tuple[list[ServiceStatus], list[str], bool]:
    """Settled: every service has a container that is running and not `starting` its healthcheck, or has
    stopped (an exited container with no restart policy will not come back by waiting)."""
    deadline = time.monotonic() + timeout
    while True:
        rows, expected = _statuses(jarvis, [])
        busy = any(s.state in ("created", "restarting") or s.health == "starting" for s in rows)
        settled = not busy and {s.service for s in rows} >= set(expected)
        if settled or time.monotonic() >= deadline:
            return rows, expected, settled
        time.sleep(SETTLE_POLL)
