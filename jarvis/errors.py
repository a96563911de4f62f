"""Every failure Jarvis anticipates, written for the agent that has to act on it.

    JarvisError                 base: `str(err)` is the whole message an agent sees
    ├── InvalidInput            bad action, parameter or value; names the valid values
    │   ├── UnknownService      a service or profile that is not in the project; lists those that are
    │   ├── ReadOnlyHost        (jarvis.docker_hosts) a change asked of a host marked (ro) in JARVIS_HOSTS
    │   ├── UnreadableFile      (jarvis.user_files) a file the user named that cannot be read safely
    │   └── InvalidArguments    (jarvis.files_server) arguments that contradict each other (JSON-RPC -32602)
    ├── ConfigError             a setting that cannot be used; names the key and accepted values
    ├── ProjectError            no compose file, Compose rejects it, or `docker compose` v2 is missing
    ├── DaemonUnavailable       the Docker daemon cannot be reached (the only error that is retried)
    ├── NotSupported            the configured adapter cannot do this operation
    ├── NoContainer             the service exists but has no container yet
    ├── DockerCommandFailed     Docker or Compose refused or failed; carries the tail of its output
    ├── Cancelled               a long operation stopped because its caller cancelled it (or Jarvis stopped)
    ├── StoreError              (jarvis.store.mcpm_store) an MCPM file that cannot be read or written safely
    ├── RegistryUnavailable     (jarvis.store.registry) MCPM's registry index unreachable, with no cache
    ├── ClientFileError         (jarvis.clients.formats) an AI client's file that does not parse; line and column
    ├── ShareError              (jarvis.share.engine) a share that could not start or whose state is unusable
    ├── TunnelError             (jarvis.share.tunnel) a share's tunnel that did not come up; nothing left running
    ├── NotReadable             (jarvis.files_server) a file the files server cannot read: missing, a folder, binary
    └── CommandTimedOut         (jarvis.files_server) a command ran past its deadline; its process group was killed

Adapters translate library exceptions into this tree in ONE place each (`_map_errors`), and
`jarvis.mcp_server.run_tool` turns any of them into an MCP tool error (`isError: true`).
"""

from __future__ import annotations

from collections.abc import Iterable

QUOTE_LIMIT = 80


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A user's value as an error message shows it: a string in quotes with control characters escaped (a NUL or
    a newline stays visible), anything else as its repr; cut at `limit` characters saying how long it was, so a
    2 MB argument gives a short error."""
    shown = repr(value)[1:-1] if isinstance(value, str) else repr(value)
    if len(shown) > limit:
        shown = f"{shown[:limit]}… ({len(shown):,} characters)"
    return f"'{shown}'" if isinstance(value, str) else shown


class JarvisError(Exception):
    """Base of every anticipated failure."""


class InvalidInput(JarvisError):
    @classmethod
    def choice(cls, what: str, value: object, valid: Iterable[str]) -> InvalidInput:
        return cls(f"Invalid {what} {quoted(value)}. Valid {what}s: {', '.join(valid)}")


class UnknownService(InvalidInput):
    pass


class ReadOnlyHost(InvalidInput):
    pass


class InvalidArguments(InvalidInput):
    """Found from the arguments alone, before anything runs: the files server's `req:invalid_request`."""


class ConfigError(JarvisError):
    pass


class ProjectError(JarvisError):
    pass


class DaemonUnavailable(JarvisError):
    """The daemon is not there right now: socket missing, connection refused or reset, restarting."""

    def __init__(self, where: str, why: str, host: str | None = None) -> None:
        self.where = where
        self.why = why
        self.host = host  # a host named in JARVIS_HOSTS; None: the default host
        super().__init__(self._text())

    def _text(self, attempts: int = 1, seconds: float = 0.0) -> str:
        tried = f" after {attempts} attempts over {seconds:.1f}s" if attempts > 1 else ""
        why = self.why if self.why.endswith((".", "?", "!")) else f"{self.why}."
        if self.host is None:
            return (
                f"Docker daemon unavailable at {self.where}{tried}: {why} "
                "Check that Docker is installed and running (`docker info`), and that DOCKER_HOST "
                "or the current docker context points at it."
            )
        return (
            f"Docker host {self.host} unavailable at {self.where}{tried}: {why} "
            f"Check that its daemon is running and reachable from here, and its entry in JARVIS_HOSTS."
        )

    def after_retries(self, attempts: int, seconds: float) -> DaemonUnavailable:
        final = DaemonUnavailable(self.where, self.why, self.host)
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


class Cancelled(JarvisError):
    """Raised where a cancelled operation stops (after killing what it ran); says what was stopped."""


class NotReadable(JarvisError):
    pass


class CommandTimedOut(JarvisError):
    pass
