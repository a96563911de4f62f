"""Checks shared by the tools; each error names the valid values so the agent can correct itself."""

from __future__ import annotations

from collections.abc import Sequence

from jarvis.context import Jarvis
from jarvis.errors import InvalidInput, UnknownService

LINES_DEFAULT = 50
LINES_MAX = 500


def pick(what: str, value: str | None, valid: Sequence[str], default: str | None = None) -> str:
    if value is None or value == "":
        if default is None:
            raise InvalidInput(f"{what} is required. Valid {what}s: {', '.join(valid)}")
        return default
    if value not in valid:
        raise InvalidInput.choice(what, value, valid)
    return value


def check_known(what: str, asked: list[str], known: list[str]) -> None:
    """Every name in `asked` must be one of `known` (servers, profiles); the error lists up to 30 of them."""
    unknown = [name for name in asked if name not in known]
    if unknown:
        listed = ", ".join(known[:30]) or "none"
        raise InvalidInput(f"Unknown {what}(s) {', '.join(unknown)}. {what.title()}s: {listed}")


def log_lines(value: int | None) -> tuple[int, str]:
    """`lines`: default 50, at least 1, capped at 500 (the cap is reported, not silent)."""
    if value is None:
        return LINES_DEFAULT, ""
    if value < 1:
        raise InvalidInput(f"Invalid lines '{value}'. lines must be 1-{LINES_MAX} (default {LINES_DEFAULT}).")
    if value > LINES_MAX:
        return LINES_MAX, f"lines capped at {LINES_MAX} (asked {value})"
    return value, ""


def services_arg(jarvis: Jarvis, service: str | None) -> list[str]:
    """`service`: empty means the whole project; otherwise it must be one of the project's services."""
    if not service:
        return []
    jarvis.project.spec().check_services([service])
    return [service]


def profile_service(jarvis: Jarvis, profile: str) -> str:
    profiles = jarvis.settings.profiles
    if profile not in profiles:
        raise UnknownService(f"Unknown profile '{profile}'. Profiles: {', '.join(profiles)}")
    service = jarvis.settings.service_for_profile(profile)
    spec = jarvis.project.spec()
    if service not in spec.services:
        raise UnknownService(
            f"Profile '{profile}' maps to service '{service}', which project {spec.name} does not have. "
            f"Services: {', '.join(spec.services)}"
        )
    return service
