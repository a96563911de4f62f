"""Export and import of the whole MCPM setup as one JSON document.

    {"version": "2", "exported_at": ISO-8601, "warning": "...",
     "servers": <servers.json>, "profiles": <profiles_metadata.json>,
     "clients": <clients.json>, "config": <config.json>}

Secrets (found by `jarvis.store.secrets` anywhere in a record: env and header values, arguments, URL passwords
and tokens) and profile API keys become "[SCRUBBED]" unless asked for; the warning names each place. Importing
a scrubbed value keeps the value already stored, so export-then-import changes nothing. An import is parsed and
validated whole before anything is touched, replaces only the sections the document has, and writes all
files in one `McpmStore.update` (together or not at all).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from jarvis.client_names import CLIENT_NAMES
from jarvis.errors import InvalidInput, quoted
from jarvis.store.mcpm_store import Snapshot, first_error
from jarvis.store.models import CONFIG_VALUES, ProfileMeta, ServerRecord, check_config_value, check_launch
from jarvis.store.secrets import SCRUBBED, scrubbed_record, secret_paths, unscrub_record

VERSION = "2"
SECTIONS = ("servers", "profiles", "clients", "config")
M = TypeVar("M", bound=BaseModel)


def export_document(snapshot: Snapshot, *, include_secrets: bool) -> dict[str, Any]:
    servers = {name: record.dump() for name, record in snapshot.servers.items()}
    servers.update({name: raw for name, (raw, _why) in snapshot.unreadable.items()})
    profiles = {name: meta.dump() for name, meta in snapshot.profiles.items()}
    secrets = [path for name, server in servers.items() for path in secret_paths(server, f"servers.{name}")]
    keyed = [name for name, meta in profiles.items() if isinstance(meta.get("api_key"), str) and meta["api_key"]]
    secrets += [f"profiles.{name}.api_key" for name in keyed]
    if include_secrets:
        warning = "Contains secrets: " + (", ".join(secrets) or "none found") + ". Store it safely."
    else:
        servers = {name: scrubbed_record(server) for name, server in servers.items()}
        profiles = {name: {**meta, "api_key": SCRUBBED} if name in keyed else meta for name, meta in profiles.items()}
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


def is_export(data: bytes) -> bool:
    """Whether `data` is a document `export_document` made: the only kind of file `export path=` replaces."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(document, dict)
        and {"version", "exported_at", "warning"} <= document.keys()
        and all(isinstance(document.get(section, {}), dict) for section in SECTIONS)
    )


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


def no_client_path_check(_client: str, _path: str) -> None:
    return None


def parse_document(text: str, check_client_path: Callable[[str, str], object] = no_client_path_check) -> ImportPlan:
    """Parse and validate the whole document; InvalidInput names every problem found (at most 10).
    `check_client_path(client, path)` raises InvalidInput for a `configPath` that cannot be that client's file
    (the client layer knows the clients' files; the store does not import it)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    except RecursionError as exc:
        raise InvalidInput("Invalid JSON: nested too deeply for an export document.") from exc
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
    for name, record in (plan.servers or {}).items():
        launch = (record.command, record.args, record.env, record.url, record.headers)
        problems += _problem(_entry("servers", name), check_launch, *launch)
    plan.profiles = _typed(document, "profiles", ProfileMeta, problems, " (legacy profiles.json goes through migrate)")
    if "clients" in document and isinstance(document["clients"], dict):
        plan.clients = document["clients"]
        for name, entry in plan.clients.items():
            if name not in CLIENT_NAMES:
                problems.append(f"{_entry('clients', name)}: unknown client; clients: {', '.join(CLIENT_NAMES)}")
            elif not isinstance(entry, dict) or not isinstance(entry.get("configPath", ""), str):
                problems.append(f'clients.{name}: must be an object like {{"configPath": "/path"}}')
            elif entry.get("configPath"):
                problems += _problem(f"clients.{name}", check_client_path, name, entry["configPath"])
    if "config" in document and isinstance(document["config"], dict):
        plan.config = document["config"]
        for key in CONFIG_VALUES.keys() & plan.config.keys():
            problems += _problem(f"config.{key}", check_config_value, key, plan.config[key])
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InvalidInput("Nothing was imported: " + "; ".join(problems[:10]) + more)
    return plan


def _entry(section: str, name: str) -> str:
    """Where a problem is, e.g. `servers.time`; a name that is long or holds control characters is quoted."""
    return f"{section}.{name}" if len(name) <= 80 and name.isprintable() else f"{section}.{quoted(name)}"


def _problem(where: str, check: Callable[..., object], *arguments: Any) -> list[str]:
    """What `check` (one of the checks the dedicated actions make) refuses, as one problem of the document."""
    try:
        check(*arguments)
    except InvalidInput as exc:
        return [f"{where}: {exc}"]
    return []


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
            problems.append(f"{_entry(section, name)}: {first_error(exc)}{hint}")
    return typed


def apply_import(snapshot: Snapshot, plan: ImportPlan) -> str:
    """Replace the sections the document has; a [SCRUBBED] part keeps what the store holds. Pure over `snapshot`
    (the plan is not changed), so the store may run it again on a fresher snapshot."""
    lines: list[str] = []
    if plan.servers is not None:
        servers, kept, missing = _restore_scrubbed(snapshot, plan.servers)
        before = {n: r.dump() for n, r in snapshot.servers.items()}
        snapshot.servers = servers
        snapshot.unreadable = {}
        lines.append("servers: " + _diff(before, {n: r.dump() for n, r in servers.items()}))
        if kept:
            lines.append(f"kept stored values for [SCRUBBED] {', '.join(kept)}")
        if missing:
            lines.append(f"STILL REQUIRED (scrubbed, nothing stored): {', '.join(missing)}")
    if plan.profiles is not None:
        before = {n: m.dump() for n, m in snapshot.profiles.items()}
        profiles = {name: _restore_api_key(meta, snapshot.profiles.get(name)) for name, meta in plan.profiles.items()}
        snapshot.profiles = profiles
        lines.append("profiles: " + _diff(before, {n: m.dump() for n, m in profiles.items()}))
    if plan.clients is not None:
        lines.append("clients: " + _diff(snapshot.clients, plan.clients))
        snapshot.clients = dict(plan.clients)
    if plan.config is not None:
        lines.append("config: " + _diff(snapshot.config, plan.config))
        snapshot.config = dict(plan.config)
    return "\n".join(lines)


def _restore_scrubbed(
    snapshot: Snapshot, servers: dict[str, ServerRecord]
) -> tuple[dict[str, ServerRecord], list[str], list[str]]:
    restored: dict[str, ServerRecord] = {}
    kept: list[str] = []
    missing: list[str] = []
    for name, record in servers.items():
        stored = snapshot.servers.get(name)
        raw = stored.dump() if stored else snapshot.unreadable.get(name, (None, ""))[0]
        fields, kept_here, missing_here = unscrub_record(record.dump(), raw)
        restored[name] = ServerRecord.model_validate(fields)
        kept += [name + path for path in kept_here]
        missing += [name + path for path in missing_here]
    return restored, kept, missing


def _restore_api_key(meta: ProfileMeta, stored: ProfileMeta | None) -> ProfileMeta:
    if meta.api_key != SCRUBBED:
        return meta.model_copy(deep=True)
    return meta.model_copy(update={"api_key": stored.api_key if stored else None}, deep=True)


def _diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    added = [n for n in after if n not in before]
    removed = [n for n in before if n not in after]
    changed = [n for n in after if n in before and after[n] != before[n]]
    parts = [f"{label} {', '.join(names)}" for label, names in (("added", added), ("changed", changed),
             ("removed", removed)) if names]  # fmt: skip
    return "; ".join(parts) or "unchanged"
