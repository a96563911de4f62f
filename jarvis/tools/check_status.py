"""`jarvis_check_status`: is Docker there, which Compose, and how is every service of the stack."""

from __future__ import annotations

from jarvis.context import Jarvis
from jarvis.errors import JarvisError
from jarvis.formatting import running_summary, status_table


def handle(jarvis: Jarvis) -> str:
    settings = jarvis.settings
    report = ["## Jarvis status"]
    try:
        report.append(f"Compose: {jarvis.project.compose_version()}")
    except JarvisError as exc:
        report.append(f"Compose: FAIL {exc}")
    try:
        spec = jarvis.project.spec()
    except JarvisError as exc:
        report.append(f"Project: FAIL {exc}")
        return "\n".join(report)
    report.append(
        f"Project: {spec.name} ({spec.directory}); adapters lifecycle={settings.lifecycle_adapter} "
        f"observe={settings.observe_adapter}"
    )
    try:
        engine = jarvis.runner.engine_info()
        report.append(f"Docker: ok {engine.version} (API {engine.api_version}) at {engine.host}")
        rows = jarvis.runner.compose_ps()
    except JarvisError as exc:
        report.append(f"Docker: FAIL {exc}")
        return "\n".join(report)
    expected = list(spec.services)
    report.append(running_summary(spec.name, rows, expected))
    report.append(status_table(rows, expected))
    return "\n".join(report)
