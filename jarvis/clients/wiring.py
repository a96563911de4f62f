"""Which client file Jarvis uses for each client, and which Jarvis/MCPM servers and profiles each one holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_file import ClientFile
from jarvis.clients.entries import owner
from jarvis.clients.formats import ClientFileError
from jarvis.errors import JarvisError
from jarvis.host import Host
from jarvis.store.mcpm_store import McpmStore, Snapshot


def path_override(snapshot: Snapshot, key: str) -> str | None:
    """The path set with `jarvis_client config` (kept in clients.json as the Node MCPM's `configPath`)."""
    entry = snapshot.clients.get(key)
    path = entry.get("configPath") if isinstance(entry, dict) else None
    return path if isinstance(path, str) and path else None


def client_file(snapshot: Snapshot, key: str, mcpm_dir: Path, home: Path) -> ClientFile:
    spec = CLIENTS[key]
    return ClientFile(spec, spec.path(home, path_override(snapshot, key)), mcpm_dir)


def installed(snapshot: Snapshot, mcpm_dir: Path, host: Host) -> list[ClientFile]:
    files = [client_file(snapshot, key, mcpm_dir, host.home) for key in CLIENTS]
    return [f for f in files if f.spec.installed(f.path, host.which) or path_override(snapshot, f.spec.key)]


@dataclass
class Wiring:
    servers: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # the user's own entries

    @classmethod
    def of(cls, entries: dict[str, Any]) -> Wiring:
        wiring = cls()
        for key in entries:
            found = owner(key)
            if found is None:
                wiring.others.append(key)
            else:
                (wiring.servers if found[0] == "server" else wiring.profiles).append(found[1])
        return wiring


def wiring_by_client(snapshot: Snapshot, mcpm_dir: Path, host: Host) -> dict[str, Wiring | str]:
    """Each installed client's wiring, or why its file cannot be read."""
    result: dict[str, Wiring | str] = {}
    for file in installed(snapshot, mcpm_dir, host):
        try:
            result[file.spec.key] = Wiring.of(file.entries())
        except ClientFileError as exc:
            result[file.spec.key] = str(exc)
    return result


def still_wired_note(store: McpmStore, kind: str, name: str, host: Host) -> str:
    """A line naming the clients whose files still hold the entry of a server or profile that just went away.
    It follows a change already made, so it never fails the call: what it cannot check, it says."""
    clients = []
    unreadable = []
    try:
        for key, wiring in wiring_by_client(store.read(), store.folder, host).items():
            if not isinstance(wiring, Wiring):
                unreadable.append(key)
            elif name in (wiring.servers if kind == "server" else wiring.profiles):
                clients.append(key)
    except (JarvisError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return f"\nnote: could not check the clients' files for {kind} {name} ({reason}); jarvis_client list shows them"
    note = f"\nstill wired in {', '.join(clients)}: jarvis_client edit remove_{kind}s={name}" if clients else ""
    if unreadable:
        note += (f"\nnote: could not check the clients' files for {kind} {name} in {', '.join(unreadable)} "
                 "(unreadable); jarvis_client list shows why")  # fmt: skip
    return note
