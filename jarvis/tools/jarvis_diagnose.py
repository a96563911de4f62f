"""`jarvis_diagnose`: debugging MCP profiles. Profile P is the Compose service `<prefix>P`, served at the
URL `JARVIS_ENDPOINTS` gives it."""

from __future__ import annotations

import re
from typing import Annotated, Literal, assert_never

from pydantic import Field

from jarvis.concurrency import map_concurrently
from jarvis.endpoint_probe import EndpointReport, probe, probe_many
from jarvis.errors import InvalidInput, JarvisError, quoted
from jarvis.formatting import endpoint_block, endpoint_table, error_section, log_block, state_of
from jarvis.pruning.pipeline import focus
from jarvis.runner import LogStream, ServiceLogs, ServiceStatus
from jarvis.store import sync
from jarvis.store.mcpm_store import McpmStore
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect, WritesWhen
from jarvis.tools.args import FocusQuestion, Lines, log_lines, profile_service

Action = Literal["profile_health", "test_endpoint", "logs", "full", "config_sync"]
EFFECTS: dict[Action, Effect] = {
    "profile_health": "reads", "test_endpoint": "reads", "logs": "reads", "full": "reads",
    "config_sync": WritesWhen("auto_fix"),
}  # fmt: skip
LogType = Literal["stderr", "stdout", "all"]  # LogStream's values, the default first


def jarvis_diagnose(
    jarvis: ToolContext,
    action: Action,
    profile: str | None = None,
    endpoint: str | None = None,
    log_type: LogType = "stderr",
    aggregate: Annotated[bool | None, Field(description="all profiles")] = None,
    lines: Lines | None = None,
    auto_fix: bool | None = None,
    context_focus_question: FocusQuestion = None,
    host: str | None = None,
) -> str:
    on_host = jarvis.on_docker_host(host)  # every action reads Docker (config_sync writes MCPM's files, not Docker)

    def answer(jarvis: ToolContext = on_host) -> str:
        match action:
            case "config_sync":
                return config_sync(jarvis, bool(auto_fix))
            case "profile_health":
                return profile_health(jarvis, profile)
            case "test_endpoint":
                return test_endpoint(jarvis, endpoint, profile)
            case "full":
                return full(jarvis)
            case "logs":
                return focus(
                    context_focus_question,
                    jarvis.settings,
                    tool="jarvis_diagnose.logs",
                    execute=lambda: logs(jarvis, profile, log_type, bool(aggregate), lines),
                )
            case _:
                assert_never(action)

    return on_host.naming_host(answer)


def logs(jarvis: ToolContext, profile: str | None, stream: LogStream, aggregate: bool, lines: int | None) -> str:
    count, note = log_lines(lines)
    profiles = jarvis.settings.profiles
    if aggregate and profile:
        raise InvalidInput("Give either profile or aggregate=true, not both.")
    if not aggregate:
        if not profile:
            raise InvalidInput(f"profile is required (or aggregate=true). Profiles: {', '.join(profiles)}")
        service = profile_service(jarvis, profile)
        return log_block(jarvis.runner.compose_logs(service, count, stream), f"{profile} ({service})", note)

    services, sections = _configured_profiles(jarvis)
    results = jarvis.runner.compose_logs_many(list(services.values()), count, stream) if services else []
    for (name, service), result in zip(services.items(), results, strict=True):
        if isinstance(result, Exception):
            sections[name] = error_section(name, result)
        else:
            sections[name] = log_block(result, f"{name} ({service})", note)
    return "\n".join(sections[name] for name in profiles)


def _configured_profiles(jarvis: ToolContext) -> tuple[dict[str, str], dict[str, str]]:
    """Every configured profile's service; a profile whose service is missing gets an error section instead,
    so one misconfigured profile never hides the others."""
    services: dict[str, str] = {}
    errors: dict[str, str] = {}
    for name in jarvis.settings.profiles:
        try:
            services[name] = profile_service(jarvis, name)
        except JarvisError as exc:
            errors[name] = error_section(name, exc)
    return services, errors


ERROR_WORDS = re.compile(r"error|exception|traceback|fatal|panic|fail|refused|denied|invalid|cannot", re.IGNORECASE)
HEALTH_TAIL = 50  # stderr lines searched for error lines
ERROR_LINES = 5


def profile_health(jarvis: ToolContext, profile: str | None) -> str:
    """State, health, restarts and exit code of each profile's service, and its last error lines."""
    names = [profile] if profile else list(jarvis.settings.profiles)
    services = {name: profile_service(jarvis, name) for name in names}
    return _health_report(jarvis, services, show_all_errors=profile is not None)


def _health_report(jarvis: ToolContext, services: dict[str, str], *, show_all_errors: bool) -> str:
    statuses = {s.service: s for s in jarvis.runner.compose_ps(inspect=True)}
    logs = jarvis.runner.compose_logs_many(list(services.values()), HEALTH_TAIL, "stderr")
    rows, details, healthy = [], [], 0
    for (name, service), stderr in zip(services.items(), logs, strict=True):
        status = statuses.get(service)
        ok = status is not None and status.state == "running" and status.health in (None, "healthy")
        healthy += ok
        rows.append(_health_row(name, status))
        if not ok or show_all_errors:
            details.append(_error_lines(name, status, stderr))
    header = f"## profile health: {healthy}/{len(services)} ok"
    table = ["| profile | state | health | restarts | exit |", "|---|---|---|---|---|", *rows]
    return "\n".join([header, *table, *details])


def _health_row(name: str, status: ServiceStatus | None) -> str:
    if status is None:
        return f"| {name} | no container | - | - | - |"
    restarts = "-" if status.restart_count is None else str(status.restart_count)
    exit_code = "-" if status.exit_code is None else str(status.exit_code)
    return f"| {name} | {status.state} | {status.health or '-'} | {restarts} | {exit_code} |"


def _error_lines(name: str, status: ServiceStatus | None, stderr: ServiceLogs | Exception) -> str:
    verdict = "no container" if status is None else (status.health if status.state == "running" else state_of(status))
    if isinstance(stderr, Exception):
        return f"### {name} — {verdict}: stderr unavailable: {stderr}"
    errors = [line.text for line in stderr.lines if ERROR_WORDS.search(line.text)][-ERROR_LINES:]
    what = "last error lines of stderr"
    if not errors:
        errors = [line.text for line in stderr.lines][-3:]
        what = "last stderr lines (none look like errors)" if errors else "stderr is empty"
    if stderr.tty:
        what += "; TTY: stdout and stderr are one stream"
    body = "\n".join(errors)
    return f"### {name} — {verdict or 'running'}: {what}" + (f"\n```\n{body}\n```" if body else "")


def test_endpoint(jarvis: ToolContext, endpoint: str | None, profile: str | None) -> str:
    if endpoint and profile:
        raise InvalidInput("Give either endpoint or profile, not both.")
    url = endpoint or (_profile_endpoint(jarvis, profile) if profile else None)
    if not url:
        raise InvalidInput(
            "endpoint (an http(s) URL, e.g. http://localhost:6276/mcp) or profile is required. "
            f"Profiles: {', '.join(jarvis.settings.profiles)}"
        )
    if not url.startswith(("http://", "https://")):
        raise InvalidInput(
            f"Invalid endpoint {quoted(url)}: an http(s) URL is required, e.g. http://localhost:6276/mcp"
        )
    report = probe(url, jarvis.settings.endpoint_timeout)
    title = f"{profile} " if profile else ""
    return endpoint_block(report, f"{title}{url}")


def _profile_endpoint(jarvis: ToolContext, profile: str) -> str:
    profile_service(jarvis, profile)  # an unknown profile lists the known ones
    url = jarvis.settings.endpoint_for_profile(profile)
    if not url:
        configured = ", ".join(jarvis.settings.endpoints) or "none"
        raise InvalidInput(
            f"Profile {quoted(profile)} has no endpoint; set JARVIS_ENDPOINTS=profile=url,... "
            f"(configured: {configured})"
        )
    return url


def full(jarvis: ToolContext) -> str:
    """Status, every profile's health and every profile's endpoint, gathered concurrently, in one report."""
    services, problems = _configured_profiles(jarvis)
    with_urls = [
        (name, url) for name in jarvis.settings.profiles if (url := jarvis.settings.endpoint_for_profile(name))
    ]

    def health() -> str:
        return _health_report(jarvis, services, show_all_errors=False) if services else "## profile health: none"

    def endpoints() -> list[EndpointReport]:
        return probe_many([url for _, url in with_urls], jarvis.settings.endpoint_timeout)

    health_text, reports = map_concurrently(lambda part: part(), [health, endpoints])
    return "\n".join(
        [
            f"# full diagnostic — project {jarvis.project.spec().name}",
            error_section("profile health", health_text) if isinstance(health_text, Exception) else str(health_text),
            error_section("endpoints", reports)
            if isinstance(reports, Exception)
            else endpoint_table([name for name, _ in with_urls], reports),  # type: ignore[arg-type]
            *problems.values(),
        ]
    )


def config_sync(jarvis: ToolContext, auto_fix: bool) -> str:
    """Profile metadata against the servers' tags; `auto_fix` applies the safe repairs in one atomic write."""
    store = McpmStore(jarvis.settings.mcpm_dir)
    changes = store.update(sync.repair) if auto_fix else []
    snapshot = store.read()
    findings = sync.audit(snapshot, jarvis.settings.profiles)
    counts = f"{len(snapshot.servers)} servers, {len(snapshot.profile_names())} profiles"
    lines = [f"# config sync: {store.folder} ({counts})"]
    if changes:
        lines += ["## fixed", *(f"- {change}" for change in changes)]
    if not findings:
        lines.append("in sync: every tagged profile has its metadata entry")
        return "\n".join(lines)
    fixable = sum(f.fixable for f in findings)
    lines.append(f"## {len(findings)} finding(s), {fixable} fixable")
    lines += [f"- {f.text}{' [fixable]' if f.fixable else ''}" for f in findings]
    if fixable:
        lines.append("auto_fix=true repairs the fixable ones (adds metadata, drops repeated tags; removes nothing)")
    return "\n".join(lines)
