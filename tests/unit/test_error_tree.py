"""errors.py draws the whole error tree: every JarvisError subclass in the package appears in it."""

from __future__ import annotations

import importlib
import pkgutil

import adapters
import jarvis
from jarvis import errors
from jarvis.errors import JarvisError


def all_subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= all_subclasses(sub)
    return found


def test_every_error_class_is_in_the_tree_drawn_in_errors_py() -> None:
    for package in (jarvis, adapters):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    tree = errors.__doc__ or ""
    names = {cls.__name__ for cls in all_subclasses(JarvisError) if cls.__module__.startswith(("jarvis", "adapters"))}
    assert len(names) >= 10
    missing = sorted(name for name in names if f"── {name} " not in tree)
    assert not missing, f"errors.py's tree lacks {missing}"
