"""`jarvis_client`: the AI clients' own config files: list, edit, import, config.

Jarvis writes only its own entries (`mcpm_<server>`, `mcpm_profile_<profile>`, MCPM's convention) in each
client's format, through `jarvis.clients.config_file` (backup, lock, atomic write, rest of the file kept).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, assert_never

from pydantic import Field, WithJsonSchema

from jarvis.answer import Answer
from jarvis.client_names import ClientName
from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_file import ClientFile
from jarvis.clients.config_path import checked_config_path
from jarvis.clients.entries import (
    FILES_SERVER,
    Launch,
    from_client,
    launch_of_files_server,
    launch_of_profile,
    launch_of_server,
    mcpm_on_path,
    owner,
    profile_key,
    server_key,
    to_client,
)
from jarvis.clients.formats import ClientFileError
from jarvis.clients.wiring import Wiring, client_file, installed, path_override
from jarvis.errors import InvalidInput
from jarvis.host import Host
from jarvis.pagination import Limit, Offset, page
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ServerRecord
from jarvis.store.secrets import secret_paths
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect, WritesWhen
from jarvis.tools.args import NameList, check_known, is_name, unique_names

Action = Literal["list", "edit", "import", "config"]
EFFECTS: dict[Action, Effect] = {
    "list": "reads", "edit": "writes", "import": "writes", "config": WritesWhen("config_path"),
}  # fmt: skip
RESET = "default"


def jarvis_client(
    jarvis: ToolContext,
    action: Action,
    # Published without its 15 values (list names them all; a wrong one gets them in the error).
    client_name: Annotated[
        ClientName | None, WithJsonSchema({"type": "string", "description": "list shows all"})
    ] = None,
    add_servers: NameList = None,
    remove_servers: NameList = None,
    add_profiles: NameList = None,
    remove_profiles: NameList = None,
    config_path: Annotated[str | None, Field(description="config: 'default' resets")] = None,
    limit: Limit = None,
    offset: Offset = None,
) -> str:
    store = McpmStore(jarvis.settings.mcpm_dir)
    mcpm_dir, host = jarvis.settings.mcpm_dir, jarvis.host
    if action == "list":
        return list_clients(store.read(), mcpm_dir, host, limit, offset)
    if client_name is None:
        raise InvalidInput(f"client_name is required. Valid client_names: {', '.join(CLIENTS)}")
    key: str = client_name
    match action:
        case "config":
            if config_path is None:
                snapshot = store.read()
                return show_config(client_file(snapshot, key, mcpm_dir, host.home), snapshot, host)
            path = None if config_path == RESET else checked_config_path(CLIENTS[key], config_path, host.home)
            return store.update(lambda snapshot: set_config(snapshot, key, path, mcpm_dir, host.home))
        case "import":
            file = client_file(store.read(), key, mcpm_dir, host.home)
            entries = file.entries()
            return store.update(lambda snapshot: import_entries(snapshot, file, entries, host.home))
        case "edit":
            return edit(jarvis, store.read(), key, unique_names(add_servers), unique_names(remove_servers),
                        unique_names(add_profiles), unique_names(remove_profiles))  # fmt: skip
        case _:
            assert_never(action)


LIST_PAGE = 50


def list_clients(
    snapshot: Snapshot, mcpm_dir: Path, host: Host, limit: int | None = None, offset: int | None = None
) -> str:
    """One line per installed client (a page of them), then the catalog's clients that are not installed."""
    files = installed(snapshot, mcpm_dir, host)
    shown = page(files, limit, offset, default=LIST_PAGE, tool="jarvis_client", arguments={"action": "list"})
    lines = [f"# clients: {len(files)} installed of {len(CLIENTS)}"]
    rows: list[dict[str, Any]] = []
    for file in shown.items:
        where = _home_relative(file.path, host.home) + ("" if file.path.exists() else " (no file yet)")
        row: dict[str, Any] = {"client": file.spec.key, "path": str(file.path), "exists": file.path.exists()}
        rows.append(row)
        try:
            wiring = Wiring.of(file.entries())
        except ClientFileError as exc:
            lines.append(f"{file.spec.key}  {where}  UNREADABLE: {exc}")
            row["unreadable"] = str(exc)
            continue
        lines.append(
            f"{file.spec.key}  {where}  servers: {', '.join(wiring.servers) or '-'}; "
            f"profiles: {', '.join(wiring.profiles) or '-'}; own entries: {len(wiring.others)}"
        )
        row.update(servers=wiring.servers, profiles=wiring.profiles, own_entries=len(wiring.others))
    missing = [key for key in CLIENTS if key not in {f.spec.key for f in files}]
    if missing:
        lines.append(f"not installed: {', '.join(missing)}")
    return Answer("\n".join(lines) + shown.footer, {"clients": shown.data(rows), "not_installed": missing})


def edit(
    jarvis: ToolContext,
    snapshot: Snapshot,
    key: str,
    add_servers: list[str],
    remove_servers: list[str],
    add_profiles: list[str],
    remove_profiles: list[str],
) -> str:
    if not (add_servers or remove_servers or add_profiles or remove_profiles):
        raise InvalidInput("Nothing to edit: give add_servers, remove_servers, add_profiles or remove_profiles.")
    check_known("server", add_servers, [*snapshot.servers, FILES_SERVER])
    check_known("profile", add_profiles, snapshot.profile_names())
    clash = [s for s in add_servers if server_key(s).startswith(profile_key(""))]
    if clash:
        raise InvalidInput(
            f"Server(s) {', '.join(clash)}: a name starting with 'profile_' would read as a profile entry "
            "(mcpm_profile_…) in client files; rename the server first."
        )
    home = jarvis.host.home
    file = client_file(snapshot, key, jarvis.settings.mcpm_dir, home)
    spec = file.spec
    entries = file.entries()
    notes: list[str] = []
    changes: dict[str, dict[str, Any] | None] = {}
    via_mcpm = mcpm_on_path(jarvis.host.which)
    if add_servers:
        notes.append("servers run through `mcpm run`" if via_mcpm else "servers start directly (mcpm is not on PATH)")
    resolved: dict[str, list[str]] = {}
    for server in add_servers:
        if server == FILES_SERVER:
            files = launch_of_files_server(sys.executable, jarvis.settings.workspace_dir)
            changes[FILES_SERVER] = to_client(spec.style, FILES_SERVER, files)
            notes.append(f"{FILES_SERVER}: read, bash and grep on {jarvis.settings.workspace_dir}")
            continue
        launch, missing = launch_of_server(snapshot.servers[server], via_mcpm=via_mcpm, environ=jarvis.host.environ)
        changes[server_key(server)] = to_client(spec.style, server_key(server), launch)
        resolved[server_key(server)] = _resolved_env(snapshot.servers[server], launch)
        if missing:
            notes.append(f"{server}: env {', '.join(missing)} still required (unset ${{VAR}} references)")
    for profile in add_profiles:
        launch = launch_of_profile(profile, jarvis.settings.endpoint_for_profile(profile))
        changes[profile_key(profile)] = to_client(spec.style, profile_key(profile), launch)
        if launch.command == "mcpm" and not via_mcpm:
            notes.append(f"{profile}: no endpoint set, so the entry runs `mcpm profile run`, and mcpm is not on PATH")
    for entry_key in [server_key(s) for s in remove_servers] + [profile_key(p) for p in remove_profiles]:
        if entry_key in changes:
            raise InvalidInput(f"{entry_key} is both added and removed.")
        if entry_key in entries:
            changes[entry_key] = None
        else:
            notes.append(f"{entry_key} was not in the file")
    if changes and not file.path.exists() and not spec.installed(file.path, jarvis.host.which):
        notes.append(f"{spec.name} does not look installed here; {_home_relative(file.path, home)} was created for it")
    report = file.change(changes) if changes else None
    done = [f"{'updated' if k in entries else 'added'} {k}" for k, v in changes.items() if v is not None]
    done += [f"removed {k}" for k, v in changes.items() if v is None]
    lines = [f"{spec.key} ({_home_relative(file.path, home)}): {'; '.join(done) or 'nothing to change'}"]
    if report and not report.changed:
        lines[0] = f"{spec.key} ({_home_relative(file.path, home)}): already as asked, file unchanged"
    if report and report.backup:
        lines.append(f"backup: {report.backup}")
    lines += [f"note: {note}" for note in notes]
    if report and report.changed:
        lines += _secrets_note(file.path, home, changes, resolved)
        lines.append(f"Restart {spec.name} to load the change.")
    return "\n".join(lines)


def _resolved_env(record: ServerRecord, launch: Launch) -> list[str]:
    """The env keys whose `${VAR}` reference the entry carries resolved from Jarvis's environment."""
    return [
        key
        for key, value in (record.env or {}).items()
        if value.startswith("${") and launch.env.get(key, value) != value
    ]


def _secrets_note(
    path: Path, home: Path, changes: dict[str, dict[str, Any] | None], resolved: dict[str, list[str]]
) -> list[str]:
    """Which written entries hold secret values in the client's file, and who may read that file."""
    held = []
    for key, entry in changes.items():
        places = secret_paths(entry, "") if entry is not None else []
        places += [f".env.{name}" for name in resolved.get(key, []) if f".env.{name}" not in places]
        if places:
            held.append(f"{key} ({', '.join(p.removeprefix('.') for p in places)})")
    if not held:
        return []
    mode = stat.S_IMODE(path.stat().st_mode)
    who = "only you can read it" if not mode & 0o077 else "OTHER USERS CAN READ IT: chmod 600 it"
    return [
        f"note: secret values written into {_home_relative(path, home)} (mode {mode:04o}, {who}): {'; '.join(held)}. "
        "With mcpm on PATH, server entries run `mcpm run` and the secrets stay in MCPM's store."
    ]


def import_entries(snapshot: Snapshot, file: ClientFile, entries: dict[str, Any], home: Path) -> str:
    """The client's own entries into MCPM's store, under their names; nothing is overwritten."""
    taken: list[str] = []
    skipped: dict[str, list[str]] = {}
    for name, entry in entries.items():
        if owner(name):
            reason = "Jarvis/MCPM entries"
        elif not is_name(name):
            reason = "not valid server names"
        elif name in snapshot.servers or name in snapshot.unreadable:
            same = name in snapshot.servers and same_launch(snapshot.servers[name], _record(name, from_client(entry)))
            reason = "already in the store" if same else "a different server has that name: kept the store's"
        else:
            snapshot.servers[name] = _record(name, from_client(entry))
            taken.append(f"{name} ({snapshot.servers[name].transport})")
            continue
        skipped.setdefault(reason, []).append(name)
    count = sum(len(names) for names in skipped.values())
    lines = [f"import from {file.spec.key} ({_home_relative(file.path, home)}): took {len(taken)}, skipped {count}"]
    if taken:
        lines.append(f"took: {', '.join(taken)}")
    lines += [f"skipped, {reason}: {', '.join(names)}" for reason, names in skipped.items()]
    if not entries:
        lines.append("the file has no MCP servers")
    return "\n".join(lines)


def show_config(file: ClientFile, snapshot: Snapshot, host: Host) -> str:
    source = "set with config" if path_override(snapshot, file.spec.key) else "default"
    state = "exists" if file.path.exists() else "no file yet"
    installed_now = "installed" if file.spec.installed(file.path, host.which) else "not installed"
    lines = [f"{file.spec.key}: {file.path} ({source}; {state}; {installed_now}; {file.spec.file_format})"]
    for name, entry in file.entries().items():
        found = owner(name)
        launch = from_client(entry)
        kind = "stdio" if launch.command else "remote" if launch.url else "custom"
        lines.append(f"{name}  {kind}  {found[0] if found else 'user entry'}")
    return "\n".join(lines)


def set_config(snapshot: Snapshot, key: str, path: Path | None, mcpm_dir: Path, home: Path) -> str:
    """Keep `path` (checked with `checked_config_path`) as the client's file; None resets to the default."""
    spec = CLIENTS[key]
    current = dict(snapshot.clients.get(key) or {})
    if path is None:
        current.pop("configPath", None)
        _store_client(snapshot, key, current)
        return f"{key}: config path reset to the default {spec.path(home)}"
    current["configPath"] = str(path)
    _store_client(snapshot, key, current)
    state = "exists" if path.exists() else "will be created by the first edit"
    return f"{key}: config path set to {path} ({state}); kept in {mcpm_dir / 'clients.json'}"


def _store_client(snapshot: Snapshot, key: str, value: dict[str, Any]) -> None:
    if value:
        snapshot.clients[key] = value
    else:
        snapshot.clients.pop(key, None)


def _record(name: str, launch: Launch) -> ServerRecord:
    if launch.command:
        return ServerRecord.stdio(name, launch.command, launch.args, launch.env)
    if launch.url:
        return ServerRecord.remote(name, launch.url, launch.headers)
    return ServerRecord(name=name, profile_tags=[], enabled=None, config=launch.custom)


def same_launch(stored: ServerRecord, imported: ServerRecord) -> bool:
    """Whether both records start the same server (command, args, env, url, headers, client-specific config)."""
    fields = ("command", "args", "env", "url", "headers", "config")
    return all((getattr(stored, f) or None) == (getattr(imported, f) or None) for f in fields)


def _home_relative(path: Path, home: Path) -> str:
    try:
        return f"~/{path.relative_to(home)}"
    except ValueError:
        return str(path)
