"""Dense markdown an agent reads in few tokens: one renderer per kind of result."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jarvis.endpoint_probe import EndpointReport
from jarvis.runner import LogLine, ServiceLogs, ServiceStatus

STREAM_MARK = {"stdout": "O", "stderr": "E", "tty": "T"}


def state_of(status: ServiceStatus) -> str:
    if status.exit_code is not None:
        return f"{status.state}({status.exit_code})"
    return status.state


def status_table(statuses: Sequence[ServiceStatus], expected: Iterable[str] = ()) -> str:
    """One row per container, plus one per expected service that has no container at all."""
    rows = [
        f"| {s.service} | {state_of(s)} | {s.health or '-'} | {', '.join(map(str, s.ports)) or '-'} |" for s in statuses
    ]
    present = {s.service for s in statuses}
    rows += [f"| {name} | no container | - | - |" for name in expected if name not in present]
    if not rows:
        return "No containers."
    return "\n".join(["| service | state | health | ports |", "|---|---|---|---|", *rows])


def running_summary(project: str, statuses: Sequence[ServiceStatus], expected: Sequence[str]) -> str:
    running = sum(1 for s in statuses if s.state == "running")
    return f"{project}: {running}/{max(len(expected), len(statuses))} running"


def log_block(logs: ServiceLogs, title: str, note: str = "") -> str:
    notes = [n for n in (note, _log_notes(logs)) if n]
    what = "all streams" if logs.requested == "all" else logs.requested
    header = f"## {title} — {what}, {len(logs.lines)} line{'s' if len(logs.lines) != 1 else ''}"
    body = _log_lines(logs.lines, show_stream=logs.requested == "all" or logs.tty)
    parts = [header, *(f"_{n}_" for n in notes)]
    parts.append(f"```\n{body}\n```" if body else f"(no {what} output)")
    return "\n".join(parts)


def _log_notes(logs: ServiceLogs) -> str:
    if logs.tty:
        return "TTY service: stdout and stderr are one merged stream (T); showing it whole"
    if logs.approximate:
        return "streams split by the docker CLI: order between O and E is approximate"
    if logs.requested == "all":
        return "O=stdout E=stderr, daemon order"
    return ""


def _log_lines(lines: Sequence[LogLine], show_stream: bool) -> str:
    out = []
    day = None
    for line in lines:
        stamp = ""
        if line.time is not None:
            if line.time.date() != day:
                day = line.time.date()
                out.append(f"-- {day.isoformat()} UTC")
            stamp = f"{line.time:%H:%M:%S}.{line.time.microsecond // 1000:03d} "
        mark = f"{STREAM_MARK[line.stream]} " if show_stream else ""
        out.append(f"{stamp}{mark}{line.text}")
    return "\n".join(out)


def error_section(title: str, error: Exception) -> str:
    return f"## {title} — ERROR\n{error}"


TOOL_NAMES_SHOWN = 25


def endpoint_block(report: EndpointReport, title: str) -> str:
    took = f"{report.seconds:.2f}s"
    if not report.ok:
        lines = [f"## endpoint {title} — FAILED at {report.failed_at} ({took})", str(report.error)]
        if report.server:
            lines.append(f"server: {report.server}, protocol {report.protocol}")
        lines.append(_endpoint_hint(report))
        return "\n".join(lines)
    names = ", ".join(report.tools[:TOOL_NAMES_SHOWN])
    more = f" …and {len(report.tools) - TOOL_NAMES_SHOWN} more" if len(report.tools) > TOOL_NAMES_SHOWN else ""
    return "\n".join(
        [
            f"## endpoint {title} — OK ({took})",
            f"server: {report.server}, protocol {report.protocol}",
            f"tools ({len(report.tools)}): {names or 'none'}{more}",
        ]
    )


def endpoint_table(profiles: Sequence[str], reports: Sequence[EndpointReport]) -> str:
    if not reports:
        return "## endpoints: none configured (JARVIS_ENDPOINTS)"
    ok = sum(r.ok for r in reports)
    rows = [
        f"| {name} | {r.url} | OK | {r.server} | {len(r.tools)} |"
        if r.ok
        else f"| {name} | {r.url} | FAILED at {r.failed_at}: {r.error} | {r.server or '-'} | - |"
        for name, r in zip(profiles, reports, strict=True)
    ]
    return "\n".join(
        [
            f"## endpoints: {ok}/{len(reports)} ok",
            "| profile | url | result | server | tools |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def _endpoint_hint(report: EndpointReport) -> str:
    if report.failed_at == "tools/list":
        return "hint: the server answered initialize but not tools/list: one of its servers likely failed to start"
    if report.error and "Connect" in report.error:
        return "hint: nothing listens there: is the profile's service running and publishing that port?"
    return "hint: something answered, but not as an MCP streamable HTTP endpoint (wrong path or port?)"
