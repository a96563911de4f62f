"""What every tool handler receives: the settings, the Compose project and the DockerRunner, built once."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis.project import ComposeProject
from jarvis.runner import DockerRunner
from jarvis.settings import Settings


@dataclass(frozen=True)
class Jarvis:
    settings: Settings
    project: ComposeProject
    runner: DockerRunner
