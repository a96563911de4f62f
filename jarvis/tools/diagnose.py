"""`jarvis_diagnose`: debugging MCP profiles. Profile P is the Compose service `<prefix>P`."""

from __future__ import annotations

from jarvis.context import Jarvis
from jarvis.errors import InvalidInput, JarvisError, all_daemon_unavailable
from jarvis.formatting import error_section, log_block
from jarvis.runner import LogStream
from jarvis.tools.args import log_lines, pick, profile_service

ACTIONS = ("logs",)
LOG_TYPES: tuple[LogStream, ...] = ("stderr", "stdout", "all")


def handle(
    jarvis: Jarvis,
    *,
    action: str,
    profile: str | None = None,
    log_type: str | None = None,
    aggregate: bool | None = None,
    lines: int | None = None,
) -> str:
    pick("action", action, ACTIONS)
    return logs(jarvis, profile, log_type, bool(aggregate), lines)


def logs(jarvis: Jarvis, profile: str | None, log_type: str | None, aggregate: bool, lines: int | None) -> str:
    stream: LogStream = pick("log_type", log_type, LOG_TYPES, default="stderr")  # type: ignore[assignment]
    count, note = log_lines(lines)
    profiles = jarvis.settings.profiles
    if aggregate and profile:
        raise InvalidInput("Give either profile or aggregate=true, not both.")
    if not aggregate:
        if not profile:
            raise InvalidInput(f"profile is required (or aggregate=true). Profiles: {', '.join(profiles)}")
        service = profile_service(jarvis, profile)
        return log_block(jarvis.runner.compose_logs(service, count, stream), f"{profile} ({service})", note)

    # A profile whose service is missing gets its error section; the others are read together.
    sections: dict[str, str] = {}
    services: dict[str, str] = {}
    for name in profiles:
        try:
            services[name] = profile_service(jarvis, name)
        except JarvisError as exc:
            sections[name] = error_section(name, exc)
    results = jarvis.runner.compose_logs_many(list(services.values()), count, stream) if services else []
    if down := all_daemon_unavailable(results):
        raise down
    for (name, service), result in zip(services.items(), results, strict=True):
        if isinstance(result, Exception):
            sections[name] = error_section(name, result)
        else:
            sections[name] = log_block(result, f"{name} ({service})", note)
    return "\n".join(sections[name] for name in profiles)
