"""Compose the DockerRunner Jarvis uses from the two roles in the settings, with retries applied once;
one such runner per Docker host (`build_hosts`).

Lifecycle calls (up, down, build, stop, start, restart) go to `JARVIS_LIFECYCLE_ADAPTER`; observation
calls (ps, logs, exec, engine info) go to `JARVIS_OBSERVE_ADAPTER`; the base image (`image_labels`,
`build_image`) is lifecycle. Each adapter is built, and its library imported, on its first call: `jarvis serve`
lists its tools without importing docker-py or python-on-whales (about 120 ms together).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from jarvis.cancel import CancelToken
from jarvis.compose_project import ComposeCliProject
from jarvis.concurrency import LIBRARY_IMPORTS
from jarvis.docker_hosts import DockerHost, DockerHosts
from jarvis.errors import DaemonUnavailable
from jarvis.retry import call_with_retry
from jarvis.runner import DockerRunner, EngineInfo, ExecResult, ImageBuilder, LogStream, ServiceLogs, ServiceStatus
from jarvis.settings import AdapterName, Settings


class RoutedRunner:
    """A DockerRunner that routes each call to the adapter serving its role, retrying a missing daemon."""

    def __init__(self, lifecycle: DockerRunner, observe: DockerRunner, retry_timeout: float) -> None:
        self.lifecycle = lifecycle
        self.observe = observe
        self.retry_timeout = retry_timeout

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_up, services, no_deps=no_deps)

    def compose_down(self, *, remove_images: bool = False) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_down, remove_images=remove_images)

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_restart, services)

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_build, services, no_cache=no_cache)

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_stop, services)

    def compose_start(self, services: Sequence[str] = ()) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.compose_start, services)

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        return call_with_retry(self.retry_timeout, self.observe.compose_ps, inspect=inspect)

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        return call_with_retry(self.retry_timeout, self.observe.compose_logs, service, lines, stream)

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        def attempt() -> list[ServiceLogs | Exception]:
            results = self.observe.compose_logs_many(services, lines, stream)
            unavailable = [r for r in results if isinstance(r, DaemonUnavailable)]
            if results and len(unavailable) == len(results):
                raise unavailable[0]  # one error, not N; and the retry policy sees it
            return results

        return call_with_retry(self.retry_timeout, attempt)

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        def attempt() -> ExecResult:
            return self.observe.exec_in_service(service, command, timeout=timeout, max_bytes=max_bytes)

        return call_with_retry(self.retry_timeout, attempt)

    def engine_info(self) -> EngineInfo:
        return call_with_retry(self.retry_timeout, self.observe.engine_info)

    def cancellable(self, cancel: CancelToken) -> RoutedRunner:
        lifecycle = self.lifecycle.cancellable(cancel)
        observe = lifecycle if self.observe is self.lifecycle else self.observe.cancellable(cancel)
        return RoutedRunner(lifecycle, observe, self.retry_timeout)

    def image_labels(self, tag: str) -> dict[str, str] | None:
        return call_with_retry(self.retry_timeout, self.lifecycle.image_labels, tag)

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        call_with_retry(self.retry_timeout, self.lifecycle.build_image, tag, context, labels)

    def warm(self) -> None:
        """Build both adapters and their clients now (the libraries' imports, docker-py's API version probe), so
        that the first call does not pay for them. Raises what building raised (no daemon: DockerException)."""
        for adapter in (self.lifecycle, self.observe):
            getattr(adapter, "client", None)  # both adapters build their client on first access


def setup_image_builder() -> ImageBuilder:
    """What `jarvis setup` builds the base image with: the engine API, before any settings or project exist."""
    with LIBRARY_IMPORTS:
        from adapters.dockerpy import DockerPyImages

        return DockerPyImages()


def make_adapter(name: AdapterName, project: ComposeCliProject, host: DockerHost | None = None) -> DockerRunner:
    """The adapter `name` on `host` (None: the default host, as Docker itself resolves it); its library is imported
    here, under the one lock that keeps two threads from importing docker-py halfway at once."""
    with LIBRARY_IMPORTS:
        if name == "whales":
            from adapters.whales import WhalesAdapter

            return WhalesAdapter(project, host=host)
        from adapters.dockerpy import DockerPyAdapter

        return DockerPyAdapter(project, host=host)


class AdapterOnFirstUse:
    """Stands for the adapter `name` on `host` and builds it on the first call made through it."""

    def __init__(self, name: AdapterName, project: ComposeCliProject, host: DockerHost | None = None) -> None:
        self.name = name
        self._project = project
        self._host = host
        self._adapter: DockerRunner | None = None
        self._lock = threading.Lock()

    def build(self) -> DockerRunner:
        with self._lock:
            if self._adapter is None:
                self._adapter = make_adapter(self.name, self._project, self._host)
            return self._adapter

    def __getattr__(self, attribute: str) -> Any:  # only reached for what the adapter has: its methods, its client
        return getattr(self.build(), attribute)


def build_runner(
    settings: Settings,
    project: ComposeCliProject | None = None,
    host: DockerHost | None = None,
    retry_timeout: float | None = None,
) -> RoutedRunner:
    """The runner of one Docker host: its own adapters (clients, connections) and its own retry window."""
    project = project or ComposeCliProject(settings)
    adapters: dict[AdapterName, DockerRunner] = {}
    for name in {settings.lifecycle_adapter, settings.observe_adapter}:
        adapters[name] = cast(DockerRunner, AdapterOnFirstUse(name, project, host))
    return RoutedRunner(
        lifecycle=adapters[settings.lifecycle_adapter],
        observe=adapters[settings.observe_adapter],
        retry_timeout=settings.retry_timeout if retry_timeout is None else retry_timeout,
    )


def build_hosts(settings: Settings, project: ComposeCliProject) -> DockerHosts:
    """Every configured Docker host, each with a runner built on first use."""
    return DockerHosts(
        settings.docker_hosts(),
        lambda host, retry_timeout: build_runner(settings, project, host, retry_timeout),
        settings.retry_timeout,
    )
