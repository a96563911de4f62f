"""Export and import of the whole MCPM setup as one JSON document (the seed's backup format).

    {"version": "2", "exported_at": ISO-8601, "warning": "...",
     "servers": <servers.json>, "profiles": <profiles_metadata.json>,
     "clients": <clients.json>, "config": <config.json>}

Secret-looking values (env, headers, profile API keys) become "[SCRUBBED]" unless asked for. Importing a
scrubbed value keeps the value already stored, so export-then-import changes nothing. An import is parsed and
validated whole before anything is touched, replaces only the sections the document has, and writes all
files in one `McpmStore.update` (together or not at all).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from jarvis.clients.catalog import CLIENTS
from jarvis.errors import InvalidInput
from jarvis.store.mcpm_store import Snapshot, first_error
from jarvis.store.models import ProfileMeta, ServerRecord
from jarvis.store.secrets import looks_secret

VERSION = "2"
SCRUBBED = "[SCRUBBED]"
SECTIONS = ("servers", "profiles", "clients", "config")
M = TypeVar("M", bound=BaseModel)


def export_document(snapshot: Snapshot, *, include_secrets: bool) -> dict[str, Any]:
    servers = {name: record.dump() for name, record in snapshot.servers.items()}
    servers.update({name: raw for name, (raw, _why) in snapshot.unreadable.items()})
    profiles = {name: meta.dump() for name, meta in snapshot.profiles.items()}
    paths = _secret_paths(servers, profiles)
    if not include_secrets:
        for section, name, *keys in paths:
            target = (servers if section == "servers" else profiles)[name]
            for key in keys[:-1]:
                target = target[key]
            target[keys[-1]] = SCRUBBED
    secrets = [".".join(path) for path in paths]
    if include_secrets:
        warning = "Contains secrets: " + (", ".join(secrets) or "none found") + ". Store it safely."
    else:
        warning = "Secret-looking values replaced by [SCRUBBED]: " + (", ".join(secrets) or "none") + \
            ". Importing keeps the stored value for each; include_secrets=true exports them."  # fmt: skip
    return {
        "version": VERSION,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "warning": warning,
        "servers": servers,
        "profiles": profiles,
        "clients": snapshot.clients,
        "config": snapshot.config,
    }


def _secret_paths(servers: dict[str, Any], profiles: dict[str, Any]) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    for name, server in servers.items():
        for section in ("env", "headers"):
            values = server.get(section) if isinstance(server, dict) else None
            if isinstance(values, dict):
                paths += [("servers", name, section, k) for k, v in values.items() if looks_secret(k, v)]
    for name, meta in profiles.items():
        if isinstance(meta, dict) and isinstance(meta.get("api_key"), str) and meta["api_key"]:
            paths.append(("profiles", name, "api_key"))
    return paths


@dataclass
class ImportPlan:
    servers: dict[str, ServerRecord] | None = None
    profiles: dict[str, ProfileMeta] | None = None
    clients: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> list[str]:
        return [name for name in SECTIONS if getattr(self, name) is None]


def parse_document(text: str) -> ImportPlan:
    """Parse and validate the whole document; InvalidInput names every problem found (at most 10)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    if not isinstance(document, dict):
        raise InvalidInput("The document must be a JSON object with servers, profiles, clients and/or config.")
    plan = ImportPlan()
    problems: list[str] = []
    if not any(name in document for name in SECTIONS):
        raise InvalidInput(f"Nothing to import: the document has none of {', '.join(SECTIONS)}.")
    for name in SECTIONS:
        if name in document and not isinstance(document[name], dict):
            problems.append(f"{name} must be an object")
    plan.servers = _typed(document, "servers", ServerRecord, problems)
    plan.profiles = _typed(document, "profiles", ProfileMeta, problems, " (legacy profiles.json goes through migrate)")
    if "clients" in document and isinstance(document["clients"], dict):
        plan.clients = document["clients"]
        for name, entry in plan.clients.items():
            if name not in CLIENTS:
                problems.append(f"clients.{name}: unknown client; clients: {', '.join(CLIENTS)}")
            elif not isinstance(entry, dict) or not isinstance(entry.get("configPath", ""), str):
                problems.append(f'clients.{name}: must be an object like {{"configPath": "/path"}}')
    if "config" in document and isinstance(document["config"], dict):
        plan.config = document["config"]
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InvalidInput("Nothing was imported: " + "; ".join(problems[:10]) + more)
    return plan


def _typed(
    document: dict[str, Any], section: str, model: type[M], problems: list[str], hint: str = ""
) -> dict[str, M] | None:
    """A section's entries as `model`, or None when the document has no such object; problems are collected."""
    if not isinstance(document.get(section), dict):
        return None
    typed: dict[str, M] = {}
    for name, raw in document[section].items():
        try:
            typed[name] = model.model_validate(raw)
        except ValidationError as exc:
            problems.append(f"{section}.{name}: {first_error(exc)}{hint}")
    return typed


def apply_import(snapshot: Snapshot, plan: ImportPlan) -> str:
    """Replace the sections the document has; a [SCRUBBED] value keeps what the store holds."""
    lines: list[str] = []
    if plan.servers is not None:
        kept, missing = _restore_scrubbed(snapshot, plan.servers)
        before = {n: r.dump() for n, r in snapshot.servers.items()}
        snapshot.servers = dict(plan.servers)
        snapshot.unreadable = {}
        lines.append("servers: " + _diff(before, {n: r.dump() for n, r in plan.servers.items()}))
        if kept:
            lines.append(f"kept stored values for [SCRUBBED] {', '.join(kept)}")
        if missing:
            lines.append(f"STILL REQUIRED (scrubbed, nothing stored): {', '.join(missing)}")
    if plan.profiles is not None:
        before = {n: m.dump() for n, m in snapshot.profiles.items()}
        for name, meta in plan.profiles.items():
            if meta.api_key == SCRUBBED:
                stored = snapshot.profiles.get(name)
                meta.api_key = stored.api_key if stored else None
        snapshot.profiles = dict(plan.profiles)
        lines.append("profiles: " + _diff(before, {n: m.dump() for n, m in plan.profiles.items()}))
    if plan.clients is not None:
        lines.append("clients: " + _diff(snapshot.clients, plan.clients))
        snapshot.clients = dict(plan.clients)
    if plan.config is not None:
        lines.append("config: " + _diff(snapshot.config, plan.config))
        snapshot.config = dict(plan.config)
    return "\n".join(lines)


def _restore_scrubbed(snapshot: Snapshot, servers: dict[str, ServerRecord]) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    missing: list[str] = []
    for name, record in servers.items():
        for section in ("env", "headers"):
            values = getattr(record, section)
            if not values:
                continue
            stored_record = snapshot.servers.get(name)
            stored = (getattr(stored_record, section) or {}) if stored_record else {}
            for key, value in list(values.items()):
                if value != SCRUBBED:
                    continue
                if key in stored and stored[key] != SCRUBBED:
                    values[key] = stored[key]
                    kept.append(f"{name}.{section}.{key}")
                else:
                    del values[key]
                    missing.append(f"{name}.{section}.{key}")
    return kept, missing


def _diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    added = [n for n in after if n not in before]
    removed = [n for n in before if n not in after]
    changed = [n for n in after if n in before and after[n] != before[n]]
    parts = [f"{label} {', '.join(names)}" for label, names in (("added", added), ("changed", changed),
             ("removed", removed)) if names]  # fmt: skip
    return "; ".join(parts) or "unchanged"
