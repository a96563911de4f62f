"""Which env values and headers look secret, and how they are shown masked."""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|BEARER|PRIVATE|COOKIE|SESSION", re.I)
REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")  # ${VAR}: resolved from the environment, not a secret


def looks_secret(name: str, value: Any) -> bool:
    return bool(SECRET_NAME.search(name)) and isinstance(value, str) and bool(value) and not REFERENCE.match(value)


def mask(value: str) -> str:
    return f"•••• ({len(value)} chars)"


def masked(values: dict[str, Any] | None) -> dict[str, Any]:
    return {k: mask(v) if looks_secret(k, v) else v for k, v in (values or {}).items()}
