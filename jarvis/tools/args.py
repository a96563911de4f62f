"""Parameter types and checks shared by the tools; each error names the valid values so the agent can correct
itself. Tool modules import this, never each other."""

from __future__ import annotations

import re
import shlex
from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema

from jarvis.errors import InvalidInput, UnknownService, quoted
from jarvis.tool_context import ToolContext

LINES_DEFAULT = 50
LINES_MAX = 500
# Server and profile names. Always `fullmatch`: `match` with `$` lets "x\n" through.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME_MAX = 100


def _comma_separated(value: object) -> object:
    """Arrays are the published form; a comma-separated string (as earlier Jarvis versions took) is still read."""
    return value.split(",") if isinstance(value, str) else value


def _shell_words(value: object) -> object:
    """Arrays are the published form; a string is split as a POSIX shell would, quotes included."""
    if not isinstance(value, str):
        return value
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise ValueError(f"cannot split it ({exc}); pass an array instead") from exc


# Arrays of strings, published as plain arrays (names and words are strings; validation still checks each one).
NameList = Annotated[list[str] | None, BeforeValidator(_comma_separated), WithJsonSchema({"type": "array"})]
ShellWords = Annotated[list[str] | None, BeforeValidator(_shell_words), WithJsonSchema({"type": "array"})]
# At least 1; more than LINES_MAX is capped, and the answer says so.
Lines = int
# A string-to-string object; published without its value type, which validation still checks.
StringMap = Annotated[dict[str, str] | None, WithJsonSchema({"type": "object"})]
# `context_focus_question` on the output-heavy actions: the answer is cut down to what answers it (jarvis.pruning).
# Short description: the name says the rest, and every tools/list byte is paid on each connection.
FocusQuestion = Annotated[str | None, Field(description="prunes output")]


def unique_names(value: list[str] | None) -> list[str]:
    """The names given, stripped, blanks dropped, each once, in order."""
    return list(dict.fromkeys(item.strip() for item in value or [] if item.strip()))


def is_name(name: str) -> bool:
    """A server or profile name: letters, digits, `-`, `_`, `.`, at most NAME_MAX characters."""
    return len(name) <= NAME_MAX and NAME.fullmatch(name) is not None


def valid_name(name: str | None, what: str = "server") -> str:
    if not name:
        raise InvalidInput(f"name is required: the {what}'s name (letters, digits, -, _, .).")
    if len(name) > NAME_MAX:
        raise InvalidInput(f"Invalid {what} name {quoted(name)}: at most {NAME_MAX} characters.")
    if not is_name(name):
        raise InvalidInput(
            f"Invalid {what} name {quoted(name)}: use letters, digits, -, _ and . (no spaces or slashes)."
        )
    return name


def check_known(what: str, asked: list[str], known: list[str]) -> None:
    """Every name in `asked` must be one of `known` (servers, profiles); the error lists up to 30 of them."""
    unknown = [name if is_name(name) else quoted(name) for name in asked if name not in known]
    if unknown:
        listed = ", ".join(known[:30]) or "none"
        more = f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""
        raise InvalidInput(f"Unknown {what}(s) {', '.join(unknown[:10])}{more}. {what.title()}s: {listed}")


def log_lines(value: int | None) -> tuple[int, str]:
    """`lines`: default 50, at least 1, capped at 500 (the cap is reported, not silent)."""
    if value is None:
        return LINES_DEFAULT, ""
    if value < 1:
        raise InvalidInput(f"Invalid lines '{value}'. lines must be 1-{LINES_MAX} (default {LINES_DEFAULT}).")
    if value > LINES_MAX:
        return LINES_MAX, f"lines capped at {LINES_MAX} (asked {value})"
    return value, ""


def services_arg(jarvis: ToolContext, service: str | None) -> list[str]:
    """`service`: empty means the whole project; otherwise it must be one of the project's services."""
    if not service:
        return []
    jarvis.project.spec().check_services([service])
    return [service]


def profile_service(jarvis: ToolContext, profile: str) -> str:
    profiles = jarvis.settings.profiles
    if profile not in profiles:
        raise UnknownService(f"Unknown profile {quoted(profile)}. Profiles: {', '.join(profiles)}")
    service = jarvis.settings.service_for_profile(profile)
    spec = jarvis.project.spec()
    if service not in spec.services:
        raise UnknownService(
            f"Profile '{profile}' maps to service '{service}', which project {spec.name} does not have. "
            f"Services: {', '.join(spec.services)}"
        )
    return service
