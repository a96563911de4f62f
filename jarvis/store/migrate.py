"""Legacy MCPM files to the 2.x layout, idempotently, reporting every change.

- `profiles.json` of MCPM 1.x (`{profile: [server config, ...]}`): each server joins servers.json (an existing
  server of the same name is kept and only tagged) and is tagged with the profile; metadata is created.
- `profiles.json` of the Node MCPM (`{profile: {"servers": [names], "description": ...}}`): metadata with the
  description, tags on the named servers (names missing from servers.json are reported).
- servers.json entries of the Node MCPM lack the `name` field 2.x requires (added) and carry a `type` field
  that 2.x derives from the other fields (dropped).
- `clients.json` of the Node MCPM (`{client: {configPath, profiles, servers}}`): the `configPath` is kept as
  Jarvis's client path; the `profiles`/`servers` lists were bookkeeping that never reached the client's file,
  so they are dropped and reported (add them for real with `jarvis_client edit`).
- config.json keys of MCPM 1.x (`active_client`, `active_target`, `stashed_servers`, `router`, `share`): dropped.
Every file is first copied to `backups/jarvis-migration-<time>/`; the store's files change together.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jarvis.store.mcpm_store import FILES, McpmStore, Snapshot, StoreError
from jarvis.store.models import ProfileMeta, ServerRecord

LEGACY_PROFILES = "profiles.json"
V1_CONFIG_KEYS = ("active_client", "active_target", "stashed_servers", "router", "share")


def migrate(store: McpmStore) -> str:
    folder = store.folder
    legacy = _read_legacy(folder / LEGACY_PROFILES)
    if not _migrate(store.read(), legacy):  # a dry run on a copy: nothing to do means nothing touched
        return "Nothing to migrate: the files are already in MCPM 2.x form."
    backup = folder / "backups" / f"jarvis-migration-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"
    backup.mkdir(parents=True)
    for name in (*FILES, LEGACY_PROFILES):
        if (folder / name).is_file():
            shutil.copy2(folder / name, backup / name)
    report = store.update(lambda snapshot: _migrate(snapshot, legacy))
    if legacy is not None:
        (folder / LEGACY_PROFILES).unlink()  # its content now lives in the 2.x files; a copy is in the backup
        report.append("removed profiles.json (now in servers.json tags and profiles_metadata.json)")
    report.append(f"copies of the files before migration: {backup}")
    return "Migrated to MCPM 2.x:\n" + "\n".join(f"- {line}" for line in report)


def _read_legacy(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text() or "{}")
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                         "nothing was migrated.") from exc  # fmt: skip
    if not isinstance(data, dict):
        raise StoreError(f"{path} must hold a JSON object; nothing was migrated.")
    return data


def _migrate(snapshot: Snapshot, legacy: dict[str, Any] | None) -> list[str]:
    report: list[str] = []
    named = []
    for name, (raw, _why) in list(snapshot.unreadable.items()):
        if isinstance(raw, dict) and "name" not in raw:  # the Node MCPM keyed servers by name only
            try:
                snapshot.servers[name] = ServerRecord.model_validate({"name": name, **raw})
            except ValidationError:
                continue
            del snapshot.unreadable[name]
            named.append(name)
    if named:
        report.append(f"added the name field to {', '.join(named)} (the Node MCPM left it out; 2.x needs it)")
    if legacy is not None:
        report += _profiles(snapshot, legacy)
        if not legacy:
            report.append("profiles.json was empty")
    typed = [name for name, server in snapshot.servers.items() if "type" in (server.model_extra or {})]
    for name in typed:
        (snapshot.servers[name].model_extra or {}).pop("type")
    if typed:
        report.append(f"dropped the Node MCPM's type field from {', '.join(typed)} (2.x derives it)")
    report += _clients(snapshot)
    old_keys = [key for key in V1_CONFIG_KEYS if key in snapshot.config]
    for key in old_keys:
        del snapshot.config[key]
    if old_keys:
        report.append(f"config.json: dropped MCPM 1.x keys {', '.join(old_keys)}")
    return report


def _profiles(snapshot: Snapshot, legacy: dict[str, Any]) -> list[str]:
    report = []
    for profile, value in legacy.items():
        if isinstance(value, list):  # MCPM 1.x: full server configs
            names = []
            for raw in value:
                name = raw.get("name") if isinstance(raw, dict) else None
                if not isinstance(name, str) or not name:
                    report.append(f"{profile}: skipped an entry without a name")
                    continue
                if name not in snapshot.servers:
                    try:
                        snapshot.servers[name] = _v1_server(name, raw)
                    except ValidationError as exc:
                        report.append(f"{profile}: skipped {name} ({exc.errors()[0]['msg']})")
                        continue
                    report.append(f"{profile}: added server {name}")
                _tag(snapshot, name, profile)
                names.append(name)
            description: str | None = "Migrated from MCPM v1"
        elif isinstance(value, dict):  # Node MCPM: server names
            names = [n for n in value.get("servers") or [] if isinstance(n, str)]
            missing = [n for n in names if n not in snapshot.servers]
            if missing:
                report.append(f"{profile}: servers not in servers.json, not tagged: {', '.join(missing)}")
            names = [n for n in names if n in snapshot.servers]
            for name in names:
                _tag(snapshot, name, profile)
            description = value.get("description") if isinstance(value.get("description"), str) else None
        else:
            report.append(f"{profile}: not a v1 list or a Node object; left out")
            continue
        if profile not in snapshot.profiles:
            snapshot.profiles[profile] = ProfileMeta.new(profile, description)
        report.append(f"profile {profile}: {len(names)} server(s) tagged{': ' + ', '.join(names) if names else ''}")
    return report


def _v1_server(name: str, raw: dict[str, Any]) -> ServerRecord:
    if raw.get("command"):
        return ServerRecord.stdio(name, raw["command"], list(raw.get("args") or []), dict(raw.get("env") or {}))
    if raw.get("url"):  # kept as a remote server (MCPM's own migration turned these into a guessed npx command)
        return ServerRecord.remote(name, raw["url"], dict(raw.get("headers") or {}))
    return ServerRecord.model_validate({**raw, "name": name, "profile_tags": []})


def _tag(snapshot: Snapshot, name: str, profile: str) -> None:
    server = snapshot.servers[name]
    if profile not in server.profile_tags:
        server.profile_tags = [*server.profile_tags, profile]


def _clients(snapshot: Snapshot) -> list[str]:
    report = []
    for client, entry in list(snapshot.clients.items()):
        if not isinstance(entry, dict):
            continue
        stale = {key: entry[key] for key in ("profiles", "servers") if key in entry}
        if not stale:
            continue
        rest = {key: value for key, value in entry.items() if key not in stale}
        if rest:
            snapshot.clients[client] = rest
        else:
            del snapshot.clients[client]
        listed = ", ".join(f"{key} {', '.join(map(str, value or [])) or '-'}" for key, value in stale.items())
        report.append(f"clients.json {client}: dropped bookkeeping ({listed}); jarvis_client edit wires them for real")
    return report
