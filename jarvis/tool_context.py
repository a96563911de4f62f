"""What every tool handler receives: the settings, the Compose project, the DockerRunner, the host's facts and the
long operations (built once per server), plus, per call, its progress reporter, its cancel token and the way to
restart Jarvis.

`runner` talks to one Docker host, `docker_host` (the default one unless a tool was called with `host`);
`on_docker_host` gives the same context on another configured host."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from jarvis.cancel import CancelToken
from jarvis.compose_project import ComposeProject
from jarvis.docker_hosts import DEFAULT_HOST, DockerHosts
from jarvis.errors import DaemonUnavailable, JarvisError, ReadOnlyHost
from jarvis.host import Host
from jarvis.operations import Operations
from jarvis.runner import DockerRunner
from jarvis.settings import Settings

Progress = Callable[[float, float, str], None]
log = logging.getLogger("jarvis.tool_context")
LIST_WAIT = 2.0  # seconds the warm-up waits for the first tools/list (a client may call without listing)


def no_progress(_done: float, _total: float, _message: str) -> None:
    return None


def stay_running() -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    settings: Settings
    project: ComposeProject
    runner: DockerRunner
    host: Host = field(default_factory=Host.current)
    # Progress notifications: a no-op unless the client sent a progress token.
    progress: Progress = no_progress
    # Set when the call is cancelled; long work polls it and stops (its runner is bound to it too).
    cancel: CancelToken = field(default_factory=CancelToken)
    # Long operations of this server, and the background ones kept on disk.
    operations: Operations = field(default_factory=Operations)
    # Called by `jarvis_system restart`: ends the process once the answer is sent, so the client starts it again.
    exit_after_answer: Callable[[], None] = stay_running
    # Every configured Docker host (JARVIS_HOSTS), and the one `runner` talks to.
    docker_hosts: DockerHosts = field(default_factory=DockerHosts)
    docker_host: str = DEFAULT_HOST

    def on_docker_host(self, name: str | None, *, change: str | None = None, serves: str = "") -> ToolContext:
        """This context on Docker host `name` (None: the default host). `change` names what the call will change
        there: a read-only host refuses it, saying what it `serves` instead. An unknown name lists the hosts."""
        host = self.docker_hosts.get(name)
        if change and host.read_only:
            raise ReadOnlyHost(
                f"Host {host.name} is read-only ((ro) in JARVIS_HOSTS): {change} changes it and is refused there."
                + (f" On {host.name}: {serves}" if serves else "")
            )
        if host.name == self.docker_host:
            return self
        runner = self.docker_hosts.runner(host.name).cancellable(self.cancel)  # a long operation's token too
        return dataclasses.replace(self, runner=runner, docker_host=host.name)

    def naming_host(self, answer: Callable[[], str]) -> str:
        """`answer()`, and its errors, headed by the Docker host's name when more than one host is configured."""
        if not self.docker_hosts.several:
            return answer()
        try:
            return f"host: {self.docker_host}\n{answer()}"
        except JarvisError as exc:
            if not (isinstance(exc, DaemonUnavailable) and exc.host == self.docker_host):  # that one names it
                exc.args = (f"host {self.docker_host}: {exc}",)  # a JarvisError's message is its one argument
            raise

    def warm_in_background(
        self, *loads: Callable[[], object], after: threading.Event | None = None
    ) -> list[threading.Thread]:
        """Do in daemon threads what the first call would otherwise wait for: the project's model (`docker
        compose config`, about 100 ms), and `loads` (the tools' modules) then the runner's adapters (imports,
        docker-py's client). For after `initialize`, so the handshake is not delayed; once `after` is set (the
        first `tools/list` answered, at most LIST_WAIT seconds), so it does not compete with that answer.
        Never raises: without Docker nothing is cached, and the first call reports the problem as it would have.
        """
        warm_runner = getattr(self.runner, "warm", None)  # the routed runner has it; fakes need nothing
        steps = ((self.project.spec,), (*loads, *([warm_runner] if warm_runner else [])))
        threads = [
            threading.Thread(target=self._warm, args=(part, after), name="jarvis-warm-up", daemon=True)
            for part in steps
        ]
        for thread in threads:
            thread.start()
        return threads

    def _warm(self, steps: tuple[Callable[[], object], ...], after: threading.Event | None) -> None:
        if after is not None:
            after.wait(LIST_WAIT)
            time.sleep(0.02)  # the answer is written just after the list is made
        started = time.monotonic()
        for step in steps:
            try:
                step()
            except Exception as exc:  # a warm-up must never take the server down
                log.debug("warm-up step skipped: %s", exc)
        log.info("warm-up done in %.0f ms", (time.monotonic() - started) * 1000)
