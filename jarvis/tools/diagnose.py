"""`jarvis_diagnose`: debugging MCP profiles. Profile P is the Compose service `<prefix>P`."""

from __future__ import annotations

from jarvis.concurrency import map_concurrently
from jarvis.context import Jarvis
from jarvis.errors import DaemonUnavailable, InvalidInput
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

    def one(name: str) -> str:
        service = profile_service(jarvis, name)
        return log_block(jarvis.runner.compose_logs(service, count, stream), f"{name} ({service})", note)

    results = map_concurrently(one, profiles)
    if all(isinstance(r, DaemonUnavailable) for r in results):
        raise results[0]  # type: ignore[misc]
    return "\n".join(
        error_section(name, result) if isinstance(result, Exception) else result
        for name, result in zip(profiles, results, strict=True)
    )
