"""An in-memory DockerRunner driven by plain functions, and a fixed project: unit tests need no daemon."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jarvis.cancel import CancelToken
from jarvis.compose_project import ProjectSpec, ServiceSpec
from jarvis.concurrency import map_concurrently
from jarvis.host import Host
from jarvis.runner import DockerRunner, EngineInfo, ExecResult, LogLine, LogStream, ServiceLogs, ServiceStatus
from jarvis.settings import Settings
from jarvis.tool_context import Progress, ToolContext
from jarvis.tool_signature import Handler, ToolSignature

# The tools Jarvis declares, in order (checked over stdio and in process).
TOOL_NAMES = [
    "jarvis_check_status",
    "jarvis_system",
    "jarvis_diagnose",
    "jarvis_project",
    "jarvis_server",
    "jarvis_profile",
    "jarvis_client",
    "jarvis_config",
    "jarvis_share",
]
SERVICES = ("mcpm-essentials", "mcpm-memory", "mcpm-dev-core", "mcpm-data", "mcpm-research")


class StaticProject:
    """A `ComposeProject` with fixed services."""

    def __init__(self, services: Sequence[str] = SERVICES, builds: Sequence[str] = ("mcpm-research",)) -> None:
        self._spec = ProjectSpec(
            name="fake",
            directory=Path("/fake"),
            services={
                s: ServiceSpec(name=s, image=None if s in builds else "img", builds=s in builds) for s in services
            },
        )

    def spec(self) -> ProjectSpec:
        return self._spec

    def compose_version(self) -> str:
        return "v5.0.0"


class FakeRunner:
    """Records every call; `handlers[method](*args)` decides the answer (raise to fail)."""

    def __init__(self, **handlers: Callable[..., Any]) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.handlers = handlers
        self.cancel: CancelToken | None = None  # the token of the last operation it was bound to

    def _call(self, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        self.calls.append((method, args, kwargs))
        handler = self.handlers.get(method)
        return handler(*args, **kwargs) if handler else default

    def compose_up(self, services: Sequence[str] = (), *, no_deps: bool = False) -> None:
        self._call("compose_up", list(services), no_deps=no_deps)

    def compose_down(self, *, remove_images: bool = False) -> None:
        self._call("compose_down", remove_images=remove_images)

    def compose_restart(self, services: Sequence[str] = ()) -> None:
        self._call("compose_restart", list(services))

    def compose_build(self, services: Sequence[str] = (), *, no_cache: bool = False) -> None:
        self._call("compose_build", list(services), no_cache=no_cache)

    def compose_stop(self, services: Sequence[str] = ()) -> None:
        self._call("compose_stop", list(services))

    def compose_start(self, services: Sequence[str] = ()) -> None:
        self._call("compose_start", list(services))

    def compose_ps(self, *, inspect: bool = False) -> list[ServiceStatus]:
        return self._call("compose_ps", default=[running(s) for s in SERVICES])

    def compose_logs(self, service: str, lines: int, stream: LogStream = "all") -> ServiceLogs:
        default = ServiceLogs(service=service, requested=stream, lines=(LogLine(stream="stderr", text=f"{service} e"),))
        return self._call("compose_logs", service, lines, stream, default=default)

    def compose_logs_many(
        self, services: Sequence[str], lines: int, stream: LogStream = "all"
    ) -> list[ServiceLogs | Exception]:
        return map_concurrently(lambda service: self.compose_logs(service, lines, stream), services)

    def exec_in_service(self, service: str, command: Sequence[str], *, timeout: float, max_bytes: int) -> ExecResult:
        default = ExecResult(exit_code=0, stdout="", stderr="")
        return self._call(
            "exec_in_service", service, list(command), timeout=timeout, max_bytes=max_bytes, default=default
        )

    def cancellable(self, cancel: CancelToken) -> FakeRunner:
        self.cancel = cancel
        return self

    def engine_info(self) -> EngineInfo:
        return self._call("engine_info", default=EngineInfo(host="unix:///fake.sock", version="1", api_version="1.41"))

    def image_labels(self, tag: str) -> dict[str, str] | None:
        return self._call("image_labels", tag)

    def build_image(self, tag: str, context: Path, labels: Mapping[str, str]) -> None:
        self._call("build_image", tag, context, dict(labels))

    def called(self, method: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(args, kwargs) for name, args, kwargs in self.calls if name == method]


def running(service: str, **fields: Any) -> ServiceStatus:
    return ServiceStatus(service=service, container=f"fake-{service}-1", state="running", **fields)


def fake_jarvis(runner: DockerRunner | None = None, host: Host | None = None, **settings: Any) -> ToolContext:
    values: dict[str, Any] = {"project_dir": Path("/fake")}
    values.update(settings)
    return ToolContext(
        settings=Settings.model_validate(values),
        project=StaticProject(),
        runner=runner or FakeRunner(),
        host=host or Host.current(),
    )


def call(handler: Handler, context: ToolContext, progress: Progress | None = None, **arguments: Any) -> str:
    """Call a tool as the MCP binding does: arguments validated against the handler's signature first."""
    effects = getattr(sys.modules[handler.__module__], "EFFECTS", None)
    if progress is not None:
        context = dataclasses.replace(context, progress=progress)
    return ToolSignature.of(handler, effects).call(context, arguments)
