"""`jarvis_client`: the AI clients' own config files: list, edit, import, config.

Jarvis writes only its own entries (`mcpm_<server>`, `mcpm_profile_<profile>`, MCPM's convention) in each
client's format, through `jarvis.clients.config_file` (backup, lock, atomic write, rest of the file kept).
"""

from __future__ import annotations

from pathlib import Path

from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_file import ClientFile
from jarvis.clients.entries import (
    Launch,
    from_client,
    launch_of_profile,
    launch_of_server,
    mcpm_on_path,
    owner,
    profile_key,
    server_key,
    to_client,
)
from jarvis.clients.formats import ClientFileError, format_for
from jarvis.clients.wiring import Wiring, client_file, installed, path_override
from jarvis.context import Jarvis
from jarvis.errors import InvalidInput
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ServerRecord
from jarvis.tools.args import check_known, pick
from jarvis.tools.profile import Names, names
from jarvis.tools.server import NAME

ACTIONS = ("list", "edit", "import", "config")
RESET = "default"


def handle(
    jarvis: Jarvis,
    *,
    action: str,
    client_name: str | None = None,
    add_server: Names = None,
    remove_server: Names = None,
    add_profile: Names = None,
    remove_profile: Names = None,
    config_path: str | None = None,
) -> str:
    action = pick("action", action, ACTIONS)
    store = McpmStore(jarvis.settings.mcpm_dir)
    if action == "list":
        return list_clients(store.read(), jarvis.settings.mcpm_dir)
    key = pick("client_name", client_name, tuple(CLIENTS))
    if action == "config":
        if config_path is None:
            snapshot = store.read()
            return show_config(client_file(snapshot, key, jarvis.settings.mcpm_dir), snapshot)
        return store.update(lambda snapshot: set_config(snapshot, key, config_path, jarvis.settings.mcpm_dir))
    if action == "import":
        file = client_file(store.read(), key, jarvis.settings.mcpm_dir)
        entries = file.entries()
        return store.update(lambda snapshot: import_entries(snapshot, file, entries))
    return edit(jarvis, store.read(), key, names(add_server), names(remove_server), names(add_profile),
                names(remove_profile))  # fmt: skip


def list_clients(snapshot: Snapshot, mcpm_dir: Path) -> str:
    files = installed(snapshot, mcpm_dir)
    lines = [f"# clients: {len(files)} installed of {len(CLIENTS)}"]
    for file in files:
        where = _home_relative(file.path) + ("" if file.path.exists() else " (no file yet)")
        try:
            wiring = Wiring.of(file.entries())
        except ClientFileError as exc:
            lines.append(f"{file.spec.key}  {where}  UNREADABLE: {exc}")
            continue
        lines.append(
            f"{file.spec.key}  {where}  servers: {', '.join(wiring.servers) or '-'}; "
            f"profiles: {', '.join(wiring.profiles) or '-'}; own entries: {len(wiring.others)}"
        )
    missing = [key for key in CLIENTS if key not in {f.spec.key for f in files}]
    if missing:
        lines.append(f"not installed: {', '.join(missing)}")
    return "\n".join(lines)


def edit(
    jarvis: Jarvis,
    snapshot: Snapshot,
    key: str,
    add_servers: list[str],
    remove_servers: list[str],
    add_profiles: list[str],
    remove_profiles: list[str],
) -> str:
    if not (add_servers or remove_servers or add_profiles or remove_profiles):
        raise InvalidInput("Nothing to edit: give add_server, remove_server, add_profile or remove_profile.")
    check_known("server", add_servers, list(snapshot.servers))
    check_known("profile", add_profiles, snapshot.profile_names())
    clash = [s for s in add_servers if server_key(s).startswith(profile_key(""))]
    if clash:
        raise InvalidInput(
            f"Server(s) {', '.join(clash)}: a name starting with 'profile_' would read as a profile entry "
            "(mcpm_profile_…) in client files; rename the server first."
        )
    file = client_file(snapshot, key, jarvis.settings.mcpm_dir)
    spec = file.spec
    entries = file.entries()
    notes: list[str] = []
    changes: dict[str, dict | None] = {}
    via_mcpm = mcpm_on_path()
    if add_servers:
        notes.append("servers run through `mcpm run`" if via_mcpm else "servers start directly (mcpm is not on PATH)")
    for server in add_servers:
        launch, missing = launch_of_server(snapshot.servers[server], via_mcpm=via_mcpm)
        changes[server_key(server)] = to_client(spec.style, server_key(server), launch)
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
    if changes and not file.path.exists() and not spec.installed(file.path):
        notes.append(f"{spec.name} does not look installed here; {_home_relative(file.path)} was created for it")
    report = file.change(changes) if changes else None
    done = [f"{'updated' if k in entries else 'added'} {k}" for k, v in changes.items() if v is not None]
    done += [f"removed {k}" for k, v in changes.items() if v is None]
    lines = [f"{spec.key} ({_home_relative(file.path)}): {'; '.join(done) or 'nothing to change'}"]
    if report and not report.changed:
        lines[0] = f"{spec.key} ({_home_relative(file.path)}): already as asked, file unchanged"
    if report and report.backup:
        lines.append(f"backup: {report.backup}")
    lines += [f"note: {note}" for note in notes]
    if report and report.changed:
        lines.append(f"Restart {spec.name} to load the change.")
    return "\n".join(lines)


def import_entries(snapshot: Snapshot, file: ClientFile, entries: dict) -> str:
    """The client's own entries into MCPM's store, under their names; nothing is overwritten."""
    taken: list[str] = []
    skipped: dict[str, list[str]] = {}
    for name, entry in entries.items():
        if owner(name):
            reason = "Jarvis/MCPM entries"
        elif not NAME.match(name):
            reason = "not valid server names"
        elif name in snapshot.servers or name in snapshot.unreadable:
            same = name in snapshot.servers and _same(snapshot.servers[name], _record(name, from_client(entry)))
            reason = "already in the store" if same else "a different server has that name: kept the store's"
        else:
            snapshot.servers[name] = _record(name, from_client(entry))
            taken.append(f"{name} ({snapshot.servers[name].transport})")
            continue
        skipped.setdefault(reason, []).append(name)
    count = sum(len(names) for names in skipped.values())
    lines = [f"import from {file.spec.key} ({_home_relative(file.path)}): took {len(taken)}, skipped {count}"]
    if taken:
        lines.append(f"took: {', '.join(taken)}")
    lines += [f"skipped, {reason}: {', '.join(names)}" for reason, names in skipped.items()]
    if not entries:
        lines.append("the file has no MCP servers")
    return "\n".join(lines)


def show_config(file: ClientFile, snapshot: Snapshot) -> str:
    source = "set with config" if path_override(snapshot, file.spec.key) else "default"
    state = "exists" if file.path.exists() else "no file yet"
    installed_now = "installed" if file.spec.installed(file.path) else "not installed"
    lines = [f"{file.spec.key}: {file.path} ({source}; {state}; {installed_now}; {file.spec.file_format})"]
    for name, entry in file.entries().items():
        found = owner(name)
        launch = from_client(entry)
        kind = "stdio" if launch.command else "remote" if launch.url else "custom"
        lines.append(f"{name}  {kind}  {found[0] if found else 'user entry'}")
    return "\n".join(lines)


def set_config(snapshot: Snapshot, key: str, config_path: str, mcpm_dir: Path) -> str:
    spec = CLIENTS[key]
    current = dict(snapshot.clients.get(key) or {})
    if config_path == RESET:
        current.pop("configPath", None)
        _store_client(snapshot, key, current)
        return f"{key}: config path reset to the default {spec.path(Path.home())}"
    path = Path(config_path).expanduser()
    if not path.is_absolute():
        raise InvalidInput(f"config_path must be absolute or start with ~ (got {config_path!r}); '{RESET}' resets.")
    if path.is_dir():
        raise InvalidInput(f"config_path {path} is a folder; give the {spec.file_format.upper()} file itself.")
    if path.exists():
        try:
            format_for(spec.file_format, spec.section).read(path.read_text())
        except (ClientFileError, UnicodeDecodeError, OSError) as exc:
            raise InvalidInput(f"config_path {path} cannot be used for {key}: {exc}") from exc
    current["configPath"] = str(path)
    _store_client(snapshot, key, current)
    state = "exists" if path.exists() else "will be created by the first edit"
    return f"{key}: config path set to {path} ({state}); kept in {mcpm_dir / 'clients.json'}"


def _store_client(snapshot: Snapshot, key: str, value: dict) -> None:
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


def _same(stored: ServerRecord, imported: ServerRecord) -> bool:
    fields = ("command", "args", "env", "url", "headers", "config")
    return all((getattr(stored, f) or None) == (getattr(imported, f) or None) for f in fields)


def _home_relative(path: Path) -> str:
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)
