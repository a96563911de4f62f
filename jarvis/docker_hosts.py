"""Named Docker hosts (`JARVIS_HOSTS`): which daemon a call talks to, and one runner per host.

`JARVIS_HOSTS=name=endpoint,...` where an endpoint is `unix:///path`, `tcp://host:port` (TLS from Docker's
own DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), `ssh://user@host` or the name of a docker context; a trailing
`(ro)` makes the host read-only. The host `default` is what Docker itself picks (DOCKER_HOST, the current
context, the local socket) unless `JARVIS_HOSTS` names one `default`.

Each host gets its own runner, built on first use and kept: its own clients, connections and retry loop,
so a host that is down only ever delays the calls made to it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from jarvis.cancel import CancelToken
from jarvis.errors import InvalidInput, ReadOnlyHost, quoted
from jarvis.runner import DockerRunner, EngineInfo, ExecResult

DEFAULT_HOST = "default"
READ_ONLY_MARK = "(ro)"
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# Docker's own rule for context names.
CONTEXT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
SCHEMES = ("unix://", "tcp://", "ssh://")

EndpointKind = Literal["default", "unix", "tcp", "ssh", "context"]


class DockerHost(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    endpoint: str | None = None  # None: Docker's own choice (DOCKER_HOST, the current context, the local socket)
    read_only: bool = False

    @property
    def kind(self) -> EndpointKind:
        if self.endpoint is None:
            return "default"
        scheme = self.endpoint.partition("://")[0]
        if scheme in ("unix", "tcp", "ssh"):
            return scheme  # type: ignore[return-value]
        return "context"

    def describe(self) -> str:
        if self.endpoint is None:
            return "DOCKER_HOST or the current context"
        return f"context {self.endpoint}" if self.kind == "context" else self.endpoint


def parse_host(name: str, text: str) -> DockerHost:
    """One `JARVIS_HOSTS` entry; a `ValueError` says what is wrong and what is accepted."""
    if not HOST_NAME.fullmatch(name):
        raise ValueError(f"host name {quoted(name)}: use letters, digits, -, _ and . (at most 64)")
    endpoint = text.strip()
    read_only = endpoint.endswith(READ_ONLY_MARK)
    endpoint = endpoint.removesuffix(READ_ONLY_MARK).strip()
    accepted = "unix:///path, tcp://host:port, ssh://user@host or a docker context name, optionally followed by (ro)"
    if endpoint.startswith(SCHEMES):
        rest = endpoint.partition("://")[2]
        if not rest or any(c.isspace() for c in rest):
            raise ValueError(f"host {name}: {quoted(text)} has no address after the scheme; accepted: {accepted}")
    elif "://" in endpoint or not CONTEXT_NAME.fullmatch(endpoint):
        raise ValueError(f"host {name}: {quoted(text)} is not an endpoint; accepted: {accepted}")
    return DockerHost(name=name, endpoint=endpoint, read_only=read_only)


def configured_hosts(entries: Mapping[str, str]) -> tuple[DockerHost, ...]:
    """The default host first (unless `entries` redefines it), then the named ones in their order."""
    named = [parse_host(name, text) for name, text in entries.items()]
    default = [] if DEFAULT_HOST in entries else [DockerHost(name=DEFAULT_HOST)]
    return (*default, *named)


class ReadOnlyRunner:
    """A read-only host's runner: observation passes through; anything that changes the host is refused,
    whichever tool asks (a second line of defence behind each tool's own check)."""

    def __init__(self, runner: DockerRunner, host: str) -> None:
        self._runner = runner
        self._host = host
        self.compose_ps = runner.compose_ps
        self.compose_logs = runner.compose_logs
        self.compose_logs_many = runner.compose_logs_many
        self.engine_info = runner.engine_info
        self.image_labels = runner.image_labels

    def _refuse(self, what: str) -> ReadOnlyHost:
        return ReadOnlyHost(f"Host {self._host} is read-only ((ro) in JARVIS_HOSTS): {what} is refused there.")

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        raise self._refuse("up")

    def compose_down(self, *, remove_images: bool = False) -> None:
        raise self._refuse("down")

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        raise self._refuse("restart")

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        raise self._refuse("build")

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        raise self._refuse("stop")

    def compose_start(self, services: Sequence[str] = ()) -> None:
        raise self._refuse("start")

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        raise self._refuse("exec")

    def cancellable(self, cancel: CancelToken) -> ReadOnlyRunner:
        return ReadOnlyRunner(self._runner.cancellable(cancel), self._host)

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        raise self._refuse("building an image")


# Builds a host's runner with a retry window in seconds (0: one attempt); given by the composition root.
RunnerFactory = Callable[[DockerHost, float], DockerRunner]


class DockerHosts:
    """The configured hosts and their runners, each built on first use and then kept."""

    def __init__(
        self, hosts: Iterable[DockerHost] = (), build: RunnerFactory | None = None, retry_timeout: float = 0.0
    ) -> None:
        self.hosts = {host.name: host for host in hosts} or {DEFAULT_HOST: DockerHost(name=DEFAULT_HOST)}
        self._build = build
        self._retry_timeout = retry_timeout
        self._runners: dict[tuple[str, float], DockerRunner] = {}
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return list(self.hosts)

    @property
    def several(self) -> bool:
        return len(self.hosts) > 1

    def get(self, name: str | None) -> DockerHost:
        """The host called `name` (None or empty: the default host); an unknown name lists the configured ones."""
        host = self.hosts.get(name or DEFAULT_HOST)
        if host is None:
            raise InvalidInput(f"Unknown host {quoted(name)}. Hosts (JARVIS_HOSTS): {', '.join(self.names)}")
        return host

    def runner(self, name: str | None, *, retry_timeout: float | None = None) -> DockerRunner:
        host = self.get(name)
        key = (host.name, self._retry_timeout if retry_timeout is None else retry_timeout)
        with self._lock:  # building makes no connection: adapters connect on first use
            if key not in self._runners:
                if self._build is None:
                    raise InvalidInput(f"Host {host.name} has no runner here.")
                built = self._build(host, key[1])
                self._runners[key] = ReadOnlyRunner(built, host.name) if host.read_only else built
            return self._runners[key]

    def probe_all(self, timeout: float) -> dict[str, EngineInfo | Exception]:
        """Every host's engine, asked once each (no retries), all at the same time; a host that has not
        answered within `timeout` seconds is reported as such (its call finishes in the background)."""
        outcomes: dict[str, list[EngineInfo | Exception]] = {name: [] for name in self.names}

        def probe(name: str) -> None:
            try:
                outcomes[name].append(self.runner(name, retry_timeout=0).engine_info())
            except Exception as exc:
                outcomes[name].append(exc)

        workers = [threading.Thread(target=probe, args=(name,), daemon=True) for name in self.names]
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + timeout
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        silent = NoAnswer(f"no answer within {timeout:g}s (JARVIS_HOST_TIMEOUT)")
        return {name: found[0] if found else silent for name, found in outcomes.items()}


class NoAnswer(Exception):
    """A host that said nothing in time: neither an answer nor an error."""
