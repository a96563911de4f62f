"""Every failure Jarvis anticipates, written for the agent that has to act on it.

    JarvisError                 base: `str(err)` is the whole message an agent sees
    ├── InvalidInput            bad action, parameter or value; names the valid values
    │   └── UnknownService      a service or profile that is not in the project; lists those that are
    ├── ConfigError             a setting that cannot be used; names the key and accepted values
    ├── ProjectError            no compose file, or Compose rejects it
    ├── DaemonUnavailable       the Docker daemon cannot be reached (the only error that is retried)
    ├── NotSupported            the configured adapter cannot do this operation
    ├── NoContainer             the service exists but has no container yet
    └── DockerCommandFailed     Docker or Compose refused or failed; carries the tail of its output

Adapters translate library exceptions into this tree in ONE place each (`_map_errors`), and
`jarvis.server.tool_errors` turns any of them into an MCP tool error (`isError: true`).
"""

from __future__ import annotations

from collections.abc import Iterable


class JarvisError(Exception):
    """Base of every anticipated failure."""


class InvalidInput(JarvisError):
    @classmethod
    def choice(cls, what: str, value: object, valid: Iterable[str]) -> InvalidInput:
        return cls(f"Invalid {what} '{value}'. Valid {what}s: {', '.join(valid)}")


class UnknownService(InvalidInput):
    pass


class ConfigError(JarvisError):
    pass


class ProjectError(JarvisError):
    pass


class DaemonUnavailable(JarvisError):
    """The daemon is not there right now: socket missing, connection refused or reset, restarting."""

    def __init__(self, where: str, why: str) -> None:
        self.where = where
        self.why = why
        super().__init__(self._text())

    def _text(self, attempts: int = 1, seconds: float = 0.0) -> str:
        tried = f" after {attempts} attempts over {seconds:.1f}s" if attempts > 1 else ""
        return (
            f"Docker daemon unavailable at {self.where}{tried}: {self.why}. "
            "Check that Docker is installed and running (`docker info`), and that DOCKER_HOST "
            "or the current docker context points at it."
        )

    def after_retries(self, attempts: int, seconds: float) -> DaemonUnavailable:
        final = DaemonUnavailable(self.where, self.why)
        final.args = (final._text(attempts, seconds),)
        return final


class NotSupported(JarvisError):
    def __init__(self, adapter: str, operation: str, use_instead: str) -> None:
        super().__init__(
            f"The {adapter} adapter cannot {operation}. Set JARVIS_LIFECYCLE_ADAPTER={use_instead} to allow it."
        )


class NoContainer(JarvisError):
    pass


class DockerCommandFailed(JarvisError):
    def __init__(self, what: str, output: str = "", max_lines: int = 20) -> None:
        tail = "\n".join(output.strip().splitlines()[-max_lines:])
        super().__init__(f"{what}" + (f"\n```\n{tail}\n```" if tail else ""))
