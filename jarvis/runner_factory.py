"""Compose the DockerRunner Jarvis uses from the two roles in the settings, with retries applied once.

Lifecycle calls (up, down, build, stop, start, restart) go to `JARVIS_LIFECYCLE_ADAPTER`; observation
calls (ps, logs, exec, engine info) go to `JARVIS_OBSERVE_ADAPTER`.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.dockerpy import DockerPyAdapter
from adapters.whales import WhalesAdapter
from jarvis.errors import DaemonUnavailable
from jarvis.project import ComposeProject
from jarvis.retry import call_with_retry
from jarvis.runner import DockerRunner, EngineInfo, ExecResult, LogStream, ServiceLogs, ServiceStatus
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
            if results and all(isinstance(r, DaemonUnavailable) for r in results):
                raise results[0]  # one error, not N; and the retry policy sees it
            return results

        return call_with_retry(self.retry_timeout, attempt)

    def exec_in_service(self, service: str, command: Sequence[str]) -> ExecResult:
        return call_with_retry(self.retry_timeout, self.observe.exec_in_service, service, command)

    def engine_info(self) -> EngineInfo:
        return call_with_retry(self.retry_timeout, self.observe.engine_info)


def make_adapter(name: AdapterName, project: ComposeProject) -> DockerRunner:
    return WhalesAdapter(project) if name == "whales" else DockerPyAdapter(project)


def build_runner(settings: Settings, project: ComposeProject | None = None) -> RoutedRunner:
    project = project or ComposeProject(settings)
    adapters: dict[AdapterName, DockerRunner] = {}
    for name in {settings.lifecycle_adapter, settings.observe_adapter}:
        adapters[name] = make_adapter(name, project)
    return RoutedRunner(
        lifecycle=adapters[settings.lifecycle_adapter],
        observe=adapters[settings.observe_adapter],
        retry_timeout=settings.retry_timeout,
    )
