"""`jarvis_check_status`: is Docker there, which Compose, and how is every service of the stack.

A failure is a finding, not a tool error: the report lists it, and its first line says what is wrong when
Docker cannot be reached or answers with an error, so an agent reading one line knows. With several Docker
hosts (JARVIS_HOSTS) the report is about one of them (`host`, else the default one) and ends with every
host's reachability and engine version, all asked at once, each within JARVIS_HOST_TIMEOUT. With `operation`,
the progress or the result of a long operation that went on in the background."""

from __future__ import annotations

from collections.abc import Callable

from jarvis.concurrency import map_concurrently
from jarvis.docker_hosts import NoAnswer
from jarvis.errors import DaemonUnavailable, JarvisError
from jarvis.formatting import running_summary, status_table
from jarvis.runner import EngineInfo
from jarvis.tool_context import ToolContext


def jarvis_check_status(jarvis: ToolContext, host: str | None = None, operation: str | None = None) -> str:
    if operation is not None:
        return jarvis.operations.describe(operation.strip())
    jarvis = jarvis.on_docker_host(host)
    if not jarvis.docker_hosts.several:
        return stack_report(jarvis)
    parts: list[Callable[[], str]] = [lambda: stack_report(jarvis), lambda: hosts_table(jarvis)]
    answers = map_concurrently(lambda part: part(), parts)
    for answer in answers:
        if isinstance(answer, Exception):
            raise answer
    return "\n".join(map(str, answers))


def stack_report(jarvis: ToolContext) -> str:
    settings = jarvis.settings
    title = f"## Jarvis status (host {jarvis.docker_host})" if jarvis.docker_hosts.several else "## Jarvis status"
    report = [title]
    try:
        report.append(f"Compose: {jarvis.project.compose_version()}")
    except JarvisError as exc:
        report.append(f"Compose: FAIL {exc}")
    try:
        spec = jarvis.project.spec()
    except JarvisError as exc:
        report.append(f"Project: FAIL {exc}")
        return "\n".join(report)
    report.append(
        f"Project: {spec.name} ({spec.directory}); adapters lifecycle={settings.lifecycle_adapter} "
        f"observe={settings.observe_adapter}"
    )
    try:
        engine = jarvis.runner.engine_info()
        report.append(f"Docker: ok {engine.version} (API {engine.api_version}) at {engine.host}")
        rows = jarvis.runner.compose_ps()
    except JarvisError as exc:
        report[0] += ": Docker unreachable" if isinstance(exc, DaemonUnavailable) else ": Docker error"
        report.append(f"Docker: FAIL {exc}")
        return "\n".join(report)
    expected = list(spec.services)
    report.append(running_summary(spec.name, rows, expected))
    report.append(status_table(rows, expected))
    return "\n".join(report)


def hosts_table(jarvis: ToolContext) -> str:
    found = jarvis.docker_hosts.probe_all(jarvis.settings.host_timeout)
    rows = []
    for name, result in found.items():
        host = jarvis.docker_hosts.get(name)
        mode = "ro" if host.read_only else "rw"
        if isinstance(result, EngineInfo):
            rows.append(f"| {name} | {mode} | {result.host} | ok {result.version} (API {result.api_version}) |")
        else:
            why = str(getattr(result, "why", result)).splitlines()[0] if str(result) else type(result).__name__
            verdict = "UNREACHABLE" if isinstance(result, DaemonUnavailable | NoAnswer) else "FAIL"
            rows.append(f"| {name} | {mode} | {host.describe()} | {verdict}: {why} |")
    reachable = sum(isinstance(result, EngineInfo) for result in found.values())
    title = f"## hosts: {reachable}/{len(found)} reachable"
    return "\n".join([title, "| host | mode | endpoint | docker |", "|---|---|---|---|", *rows])
