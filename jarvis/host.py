"""Facts about the machine Jarvis runs on: the home folder, the environment and PATH look-ups.

They reach the code through `ToolContext.host`, as settings do, so a test describes the machine it needs
(a temporary home, a PATH without `mcpm`) instead of patching the process's environment.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Host:
    home: Path
    environ: Mapping[str, str]
    which: Callable[[str], str | None]

    def child_environ(self, **extra: str) -> dict[str, str]:
        """The environment of a program Jarvis starts on this machine (its HOME is the home folder), plus `extra`."""
        return {**self.environ, "HOME": str(self.home), **extra}

    @classmethod
    def current(cls) -> Host:
        """This process's machine, read at each call so a changed environment is seen."""
        return cls(home=Path.home(), environ=os.environ, which=shutil.which)

    @classmethod
    def of(cls, home: Path, environ: Mapping[str, str]) -> Host:
        """A described machine: PATH look-ups search `environ["PATH"]` only."""

        def which(name: str) -> str | None:
            return shutil.which(name, path=environ.get("PATH", ""))

        return cls(home=home, environ=dict(environ), which=which)
