"""Which client file Jarvis uses for each client, and which Jarvis/MCPM servers and profiles each one holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_file import ClientFile
from jarvis.clients.entries import owner
from jarvis.clients.formats import ClientFileError
from jarvis.store.mcpm_store import Snapshot


def path_override(snapshot: Snapshot, key: str) -> str | None:
    """The path set with `jarvis_client config` (kept in clients.json as the Node MCPM's `configPath`)."""
    entry = snapshot.clients.get(key)
    path = entry.get("configPath") if isinstance(entry, dict) else None
    return path if isinstance(path, str) and path else None


def client_file(snapshot: Snapshot, key: str, mcpm_dir: Path) -> ClientFile:
    spec = CLIENTS[key]
    return ClientFile(spec, spec.path(Path.home(), path_override(snapshot, key)), mcpm_dir)


def installed(snapshot: Snapshot, mcpm_dir: Path) -> list[ClientFile]:
    files = [client_file(snapshot, key, mcpm_dir) for key in CLIENTS]
    return [f for f in files if f.spec.installed(f.path) or path_override(snapshot, f.spec.key)]


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


def wiring_by_client(snapshot: Snapshot, mcpm_dir: Path) -> dict[str, Wiring | str]:
    """Each installed client's wiring, or why its file cannot be read."""
    result: dict[str, Wiring | str] = {}
    for file in installed(snapshot, mcpm_dir):
        try:
            result[file.spec.key] = Wiring.of(file.entries())
        except ClientFileError as exc:
            result[file.spec.key] = str(exc)
    return result


def still_wired_note(snapshot: Snapshot, mcpm_dir: Path, kind: str, name: str) -> str:
    """A line naming the clients whose files still hold the entry of a server or profile that just went away."""
    clients = []
    for key, wiring in wiring_by_client(snapshot, mcpm_dir).items():
        if isinstance(wiring, Wiring) and name in (wiring.servers if kind == "server" else wiring.profiles):
            clients.append(key)
    if not clients:
        return ""
    return f"\nstill wired in {', '.join(clients)}: jarvis_client edit remove_{kind}={name}"
