"""`jarvis_system`: lifecycle and inspection of the Compose stack's services."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from typing import Annotated, Literal, assert_never

from pydantic import Field

from jarvis import machine_setup
from jarvis.answer import Answer
from jarvis.errors import InvalidInput
from jarvis.formatting import error_section, log_block, running_summary, state_of, status_table
from jarvis.mcpm_folder import prepare_mcpm_dir
from jarvis.pagination import Limit, Offset, page
from jarvis.pruning.pipeline import focus
from jarvis.runner import ServiceStatus
from jarvis.settings import default_stack_dir
from jarvis.tool_context import Progress, ToolContext, no_progress
from jarvis.tool_signature import Effect
from jarvis.tools import build
from jarvis.tools.args import FocusQuestion, Lines, ShellWords, log_lines, services_arg

Action = Literal[
    "bootstrap", "restart", "restart_infra", "rebuild", "stop", "start", "docker_logs", "docker_status", "build",
    "exec",
]  # fmt: skip
EFFECTS: dict[Action, Effect] = {
    "bootstrap": "writes", "restart": "writes", "restart_infra": "writes", "rebuild": "writes", "stop": "writes",
    "start": "writes", "docker_logs": "reads", "docker_status": "reads", "build": "writes", "exec": "writes",
}  # fmt: skip
COMPOSE_LEFT = "Compose is left as far as it got: `jarvis_system action=docker_status` shows each service's state."
# Long operations (progress, cancellation, the call budget), each with what a cancellation leaves behind.
LONG: dict[Action, str] = {
    "bootstrap": COMPOSE_LEFT,
    "rebuild": COMPOSE_LEFT,
    "restart_infra": COMPOSE_LEFT,
    "build": "Images and files built before the cancellation stay.",
    "exec": "",
}
EXEC_TIMEOUT = 30
EXEC_TIMEOUT_MAX = 3600
EXEC_MAX_BYTES = 20_000  # per stream
STDERR_TAIL = 5  # lines of stderr shown for each service that did not settle
RESTART_NOTE = (
    "Jarvis restarts now: this process exits right after this answer, and your MCP client starts it again "
    "(most do on the next call; if tools stay unavailable, reconnect the server in the client)."
)
SETTLE_POLL = 0.5
STATUS_PAGE = 100


def jarvis_system(
    jarvis: ToolContext,
    action: Action,
    service: str | None = None,
    lines: Lines | None = None,
    no_cache: Annotated[bool | None, Field(description="rebuild: default true")] = None,
    component: build.Component | None = None,  # None: all
    wait: bool | None = None,  # until healthy, like `docker compose up --wait`
    command: ShellWords = None,
    timeout_s: int | None = None,
    context_focus_question: FocusQuestion = None,
    limit: Limit = None,
    offset: Offset = None,
    host: str | None = None,
) -> str:
    changes = EFFECTS[action] == "writes"
    reads = ", ".join(name for name, effect in EFFECTS.items() if effect == "reads")
    on_host = jarvis.on_docker_host(host, change=action if changes else None, serves=reads)

    def answer(jarvis: ToolContext = on_host) -> str:
        match action:
            case "bootstrap":
                return bootstrap(jarvis, progress=jarvis.progress)
            case "restart":
                jarvis.exit_after_answer()  # the process exits once this answer is sent
                return RESTART_NOTE
            case "build":
                return focus(
                    context_focus_question,
                    jarvis.settings,
                    tool="jarvis_system.build",
                    execute=lambda: build.build(jarvis, component or "all", no_cache=bool(no_cache)),
                )
            case "rebuild":
                keep_cache = no_cache is False  # rebuild skips the cache unless asked not to
                return focus(
                    context_focus_question,
                    jarvis.settings,
                    tool="jarvis_system.rebuild",
                    execute=lambda: rebuild(
                        jarvis, service, no_cache=not keep_cache, progress=jarvis.progress, wait=bool(wait)
                    ),
                )
            case "stop":
                return stop(jarvis, service)
            case "start":
                return start(jarvis, service, wait=bool(wait))
            case "restart_infra":
                return restart_infra(jarvis, wait=bool(wait))
            case "exec":
                return exec_command(jarvis, service, command, timeout_s)
            case "docker_logs":
                return focus(
                    context_focus_question,
                    jarvis.settings,
                    tool="jarvis_system.docker_logs",
                    execute=lambda: docker_logs(jarvis, service, lines),
                )
            case "docker_status":
                return docker_status(jarvis, limit, offset)
            case _:
                assert_never(action)

    return on_host.naming_host(answer)


def _target(service: str | None) -> str:
    return service or "all services"


def _statuses(jarvis: ToolContext, services: Sequence[str]) -> tuple[list[ServiceStatus], list[str]]:
    """Status rows of the named services (all when empty), and the services expected to show."""
    expected = list(services) or list(jarvis.project.spec().services)
    rows = [s for s in jarvis.runner.compose_ps() if s.service in expected]
    return rows, expected


def rebuild(
    jarvis: ToolContext, service: str | None, *, no_cache: bool, progress: Progress = no_progress, wait: bool = False
) -> str:
    """Build (no cache by default: a rebuild should not reuse stale layers), then `up -d`; one service leaves
    the others alone. `wait`: then wait for the services to settle."""
    services = services_arg(jarvis, service)
    spec = jarvis.project.spec()
    targets = services or list(spec.services)
    buildable = [name for name in targets if spec.services[name].builds]
    report = [f"## rebuild {_target(service)}"]
    progress(0, 3, f"building {', '.join(buildable) or 'nothing'}")
    if buildable:
        started = time.monotonic()
        jarvis.runner.compose_build(buildable, no_cache=no_cache)
        flag = " --no-cache" if no_cache else ""
        report.append(f"build{flag} {', '.join(buildable)}: ok ({time.monotonic() - started:.1f}s)")
    else:
        images = ", ".join(f"{n}={spec.services[n].image}" for n in targets)
        report.append(f"build: nothing to build, image only ({images})")
    progress(1, 3, f"up -d {_target(service)}")
    started = time.monotonic()
    jarvis.runner.compose_up(services, no_deps=bool(services))
    report.append(f"up -d{' --no-deps' if services else ''}: ok ({time.monotonic() - started:.1f}s)")
    progress(2, 3, "reading status")
    report += _after(jarvis, services, wait=wait)
    progress(3, 3, "done")
    return "\n".join(report)


def _after(jarvis: ToolContext, services: Sequence[str], *, wait: bool) -> list[str]:
    """What an action's answer ends with: the services' status table, or with `wait` the settle report."""
    if wait:
        return settle_report(jarvis, services, jarvis.settings.wait_timeout, "JARVIS_WAIT_TIMEOUT")
    rows, expected = _statuses(jarvis, services)
    return [status_table(rows, expected)]


def stop(jarvis: ToolContext, service: str | None) -> str:
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


def start(jarvis: ToolContext, service: str | None, *, wait: bool = False) -> str:
    services = services_arg(jarvis, service)
    jarvis.runner.compose_start(services)
    if wait:
        return "\n".join([f"## start {_target(service)}", *_after(jarvis, services, wait=True)])
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


def restart_infra(jarvis: ToolContext, *, wait: bool = False) -> str:
    jarvis.progress(0, 2, "restarting every service")
    jarvis.runner.compose_restart([])
    if wait:
        return "\n".join(["## restart_infra", "restarted", *_after(jarvis, [], wait=True)])
    rows, expected = _statuses(jarvis, [])
    summary = running_summary(jarvis.project.spec().name, rows, expected)
    return "\n".join(["## restart_infra", f"restarted; {summary}", status_table(rows, expected)])


def docker_logs(jarvis: ToolContext, service: str | None, lines: int | None) -> str:
    count, note = log_lines(lines)
    services = services_arg(jarvis, service) or list(jarvis.project.spec().services)
    results = jarvis.runner.compose_logs_many(services, count, "all")
    return "\n".join(
        error_section(name, result) if isinstance(result, Exception) else log_block(result, name, note)
        for name, result in zip(services, results, strict=True)
    )


def docker_status(jarvis: ToolContext, limit: int | None = None, offset: int | None = None) -> str:
    """The summary counts the whole stack; the table is one page of its services (all their containers)."""
    rows, expected = _statuses(jarvis, [])
    project = jarvis.project.spec().name
    shown = page(expected, limit, offset, default=STATUS_PAGE, tool="jarvis_system",
                 arguments={"action": "docker_status"})  # fmt: skip
    on_page = [s for s in rows if s.service in shown.items]
    text = "\n".join([running_summary(project, rows, expected), status_table(on_page, shown.items)]) + shown.footer
    containers = [s.model_dump(mode="json", exclude={"restart_count"}) for s in on_page]
    containers += [{"service": name, "state": "no container"} for name in shown.items if name not in
                   {s.service for s in on_page}]  # fmt: skip
    running = sum(1 for s in rows if s.state == "running")
    return Answer(text, {"project": project, "running": running, "services": shown.data(containers)})


def bootstrap(jarvis: ToolContext, *, progress: Progress = no_progress) -> str:
    """MCPM folder, a working `docker compose`, the stack up, then a bounded wait until it settles.
    Safe to run twice: nothing existing is rewritten and `up -d` leaves running services alone."""
    report = ["## bootstrap"]
    progress(0, 4, "preparing the MCPM folder")
    report += [f"mcpm: {line}" for line in prepare_mcpm_dir(jarvis.settings.mcpm_dir)]
    progress(1, 4, "checking docker compose")
    report.append(machine_setup.ensure_compose_plugin(jarvis.host))
    if jarvis.settings.project_dir == default_stack_dir().resolve():
        report.append(machine_setup.ensure_base_image(jarvis.runner))  # the bundled stack's images build FROM it
    progress(2, 4, "starting the stack")
    started = time.monotonic()
    jarvis.runner.compose_up([])
    report.append(f"up -d: ok ({time.monotonic() - started:.1f}s)")
    progress(3, 4, "waiting for services to settle")
    report += settle_report(jarvis, [], jarvis.settings.bootstrap_timeout, "JARVIS_BOOTSTRAP_TIMEOUT")
    progress(4, 4, "done")
    return "\n".join(report)


def _settled(rows: Sequence[ServiceStatus]) -> bool:
    """A service has settled when each of its containers is healthy (with a healthcheck), running (without one),
    or has exited (a stopped container will not come back by waiting)."""
    return bool(rows) and all(
        s.state in ("exited", "dead") or (s.state == "running" and s.health in (None, "healthy")) for s in rows
    )


def settle_report(jarvis: ToolContext, services: Sequence[str], timeout: float, setting: str) -> list[str]:
    """Wait up to `timeout` seconds for the services (all when empty) to settle; then say which did not, with
    the last lines each wrote to stderr, and the status table."""
    started = time.monotonic()
    targets = list(services) or list(jarvis.project.spec().services)
    while True:
        rows = [s for s in jarvis.runner.compose_ps() if s.service in targets]
        waiting = [name for name in targets if not _settled([s for s in rows if s.service == name])]
        if not waiting or time.monotonic() - started >= timeout:
            break
        jarvis.progress(0, 0, f"waiting for {', '.join(waiting)}")
        jarvis.cancel.sleep(SETTLE_POLL, f"waiting for {', '.join(waiting)} to settle")
    ready = [s.service for s in rows if s.state == "running" and s.health in (None, "healthy")]
    counts = f"{len(ready)}/{len(targets)} running or healthy"
    if not waiting:
        report = [f"settled after {time.monotonic() - started:.1f}s: {counts}"]
    else:
        states = ", ".join(_described(name, rows) for name in waiting)
        report = [f"NOT SETTLED within {timeout:g}s ({setting}): {states}; {counts}"]
    exited = [f"{s.service} {state_of(s)}" for s in rows if s.state in ("exited", "dead")]
    if exited:
        report.append(f"exited: {', '.join(exited)}")
    if waiting:
        logs = jarvis.runner.compose_logs_many(waiting, STDERR_TAIL, "stderr")
        for name, result in zip(waiting, logs, strict=True):
            title = f"{name} did not settle"
            report.append(error_section(title, result) if isinstance(result, Exception) else log_block(result, title))
    report.append(status_table(rows, targets))
    return report


def _described(service: str, rows: Sequence[ServiceStatus]) -> str:
    own = [s for s in rows if s.service == service]
    if not own:
        return f"{service} (no container)"
    return ", ".join(f"{service} {state_of(s)}{f' ({s.health})' if s.health else ''}" for s in own)


def exec_command(jarvis: ToolContext, service: str | None, command: list[str] | None, timeout_s: int | None) -> str:
    """`command` (argv, no shell) in the service's running container, through the engine API."""
    if not service:
        raise InvalidInput(f"exec needs service: one of {', '.join(jarvis.project.spec().services)}.")
    services_arg(jarvis, service)
    if not command or not command[0]:
        raise InvalidInput('exec needs command: an argv array, e.g. ["ls", "-la", "/"] (no shell unless you call one).')
    timeout = EXEC_TIMEOUT if timeout_s is None else timeout_s
    if not 1 <= timeout <= EXEC_TIMEOUT_MAX:
        raise InvalidInput(f"Invalid timeout_s {timeout}: 1-{EXEC_TIMEOUT_MAX} seconds (default {EXEC_TIMEOUT}).")
    jarvis.progress(0, 1, f"exec in {service}: {shlex.join(command)}"[:200])
    started = time.monotonic()
    result = jarvis.runner.exec_in_service(service, command, timeout=timeout, max_bytes=EXEC_MAX_BYTES)
    seconds = time.monotonic() - started
    if result.exit_code is None:
        verdict = f"TIMEOUT after {timeout}s: {result.note}"
    else:
        verdict = f"exit {result.exit_code} ({seconds:.1f}s)"
    lines = [f"## exec in {service}: {verdict}", f"`{shlex.join(command)}`"]
    for name, text, size in (
        ("stdout", result.stdout, result.stdout_bytes),
        ("stderr", result.stderr, result.stderr_bytes),
    ):
        if not size:
            lines.append(f"{name}: empty")
            continue
        kept = len(text.encode())
        cut = f", last {kept:,} shown" if size > kept else ""
        lines.append(f"{name} ({size:,} bytes{cut}):")
        lines.append(f"```\n{text.rstrip(chr(10))}\n```")
    return "\n".join(lines)
