"""`jarvis_server`: MCP servers in MCPM's store: list, info, create, edit, uninstall, search, install, usage.

Records are MCPM 2.x's (`servers.json`), written through `McpmStore` (locked, atomic). Secret-looking env
values and headers are masked in every answer. Names: letters, digits, `-`, `_`, `.`.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from jarvis.clients.wiring import Wiring, still_wired_note, wiring_by_client
from jarvis.context import Jarvis
from jarvis.errors import InvalidInput, JarvisError
from jarvis.store import registry
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ServerRecord
from jarvis.store.secrets import masked
from jarvis.tools.args import pick

ACTIONS = ("list", "info", "install", "uninstall", "search", "edit", "create", "usage")
TYPES = ("stdio", "remote", "http", "streamable-http", "sse")  # the last three are MCPM's names for remote
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
LIST_LIMIT = 200

Args = list[str] | str | None


def handle(
    jarvis: Jarvis,
    *,
    action: str,
    name: str | None = None,
    query: str | None = None,
    type: str | None = None,
    command: str | None = None,
    args: Args = None,
    env: dict[str, str] | None = None,
    url: str | None = None,
    headers: dict[str, str] | None = None,
    replace: bool | None = None,
) -> str:
    action = pick("action", action, ACTIONS)
    store = McpmStore(jarvis.settings.mcpm_dir)
    if action == "list":
        return list_servers(store.read())
    if action == "usage":
        return usage(jarvis, store.read())
    if action == "search":
        return registry.search(jarvis.settings, query)
    server_name = valid_name(name)
    if action == "info":
        return info(store.read(), server_name)
    if action == "create":
        record = new_record(server_name, type, command, split_args(args), env, url, headers)
        return store.update(lambda snapshot: create(snapshot, record))
    if action == "edit":
        changes = {"command": command, "args": split_args(args), "env": env, "url": url, "headers": headers}
        return store.update(lambda snapshot: edit(snapshot, server_name, changes, replace=bool(replace)))
    if action == "install":
        return registry.install(jarvis.settings, store, server_name, env or {})
    text = store.update(lambda snapshot: uninstall(snapshot, server_name))
    return text + still_wired_note(store.read(), store.folder, "server", server_name)


def valid_name(name: str | None) -> str:
    if not name:
        raise InvalidInput("name is required: the server's name (letters, digits, -, _, .).")
    if not NAME.match(name):
        raise InvalidInput(f"Invalid server name '{name}': use letters, digits, -, _ and . (no spaces or slashes).")
    return name


def split_args(args: Args) -> list[str] | None:
    """A JSON array is taken as is; a string is split as a POSIX shell would, quotes included."""
    if args is None or isinstance(args, list):
        return args
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise InvalidInput(f"args: cannot split {args!r} ({exc}); pass a JSON array instead.") from exc


def list_servers(snapshot: Snapshot) -> str:
    names = list(snapshot.servers) + list(snapshot.unreadable)
    lines = [f"# servers: {len(names)}"]
    for server_name in names[:LIST_LIMIT]:
        server = snapshot.servers.get(server_name)
        if server is None:
            lines.append(f"{server_name}  UNREADABLE  ({snapshot.unreadable[server_name][1]})")
            continue
        profiles = ",".join(server.profile_tags) or "-"
        lines.append(f"{server_name}  {server.transport}  {profiles}  {'off' if server.enabled is False else 'on'}")
    if len(names) > LIST_LIMIT:
        lines.append(f"… {len(names) - LIST_LIMIT} more")
    if not names:
        lines.append("none yet: jarvis_server create or install adds one")
    return "\n".join(lines)


def info(snapshot: Snapshot, name: str) -> str:
    server = _existing(snapshot, name)
    fields = server.dump()
    lines = [f"## {name} ({server.transport})"]
    for key in ("command", "args", "url"):
        if fields.get(key) is not None:
            lines.append(f"{key}: {json.dumps(fields[key]) if key == 'args' else fields[key]}")
    for key in ("env", "headers"):
        if fields.get(key):
            lines.append(f"{key}: {json.dumps(masked(fields[key]), ensure_ascii=False)}")
    lines.append(f"profiles: {', '.join(server.profile_tags) or 'none'}")
    lines.append(f"enabled: {'no' if server.enabled is False else 'yes'}")
    known = {"name", "profile_tags", "enabled", "command", "args", "env", "url", "headers"}
    other = {k: v for k, v in fields.items() if k not in known}
    if other:
        lines.append(f"other fields: {json.dumps(other, ensure_ascii=False)[:2000]}")
    return "\n".join(lines)


def new_record(
    name: str,
    kind: str | None,
    command: str | None,
    args: list[str] | None,
    env: dict[str, str] | None,
    url: str | None,
    headers: dict[str, str] | None,
) -> ServerRecord:
    transport = pick("type", kind, TYPES)
    if transport == "stdio":
        if not command:
            raise InvalidInput("A stdio server needs command (and optionally args, env).")
        if url or headers:
            raise InvalidInput("url and headers are for remote servers; a stdio server takes command, args, env.")
        return ServerRecord.stdio(name, command, args or [], env or {})
    if not url or not url.startswith(("http://", "https://")):
        raise InvalidInput(f"A remote server needs url, an http(s) URL (got {url!r}).")
    if command or args or env:
        raise InvalidInput("command, args and env are for stdio servers; a remote server takes url and headers.")
    return ServerRecord.remote(name, url, headers or {})


def create(snapshot: Snapshot, record: ServerRecord) -> str:
    if record.name in snapshot.servers or record.name in snapshot.unreadable:
        raise InvalidInput(f"Server '{record.name}' already exists: edit it, or uninstall it first.")
    snapshot.servers[record.name] = record
    return f"created {record.name} ({record.transport})\n" + info(snapshot, record.name)


def edit(snapshot: Snapshot, name: str, changes: dict[str, Any], *, replace: bool) -> str:
    server = _existing(snapshot, name)
    given = {key: value for key, value in changes.items() if value is not None}
    if not given:
        raise InvalidInput("Nothing to edit: give command, args, env (stdio) or url, headers (remote).")
    allowed = ("command", "args", "env") if server.transport == "stdio" else ("url", "headers")
    wrong = [key for key in given if key not in allowed]
    if wrong:
        raise InvalidInput(
            f"{name} is a {server.transport} server: it takes {', '.join(allowed)}, not {', '.join(wrong)}."
        )
    done = []
    for key, value in given.items():
        if key in ("env", "headers"):
            current: dict[str, Any] = dict(getattr(server, key) or {})
            if replace:
                setattr(server, key, dict(value))
                done.append(f"{key} replaced ({len(value)} keys)")
            else:
                added = [k for k in value if k not in current]
                changed = [k for k in value if k in current and current[k] != value[k]]
                setattr(server, key, {**current, **value})
                done.append(
                    f"{key} merged (added {', '.join(added) or 'none'}; changed {', '.join(changed) or 'none'})"
                )
        elif key == "url" and not str(value).startswith(("http://", "https://")):
            raise InvalidInput(f"url must be an http(s) URL (got {value!r}).")
        else:
            setattr(server, key, value)
            done.append(f"{key} {'replaced' if key == 'args' else 'set'}")
    return f"edited {name}: " + "; ".join(done) + "\n" + info(snapshot, name)


def uninstall(snapshot: Snapshot, name: str) -> str:
    if name in snapshot.unreadable:
        snapshot.unreadable.pop(name)
        return f"uninstalled {name} (an entry MCPM could not read)"
    server = _existing(snapshot, name)
    del snapshot.servers[name]
    profiles = server.profile_tags
    memberships = f"; removed from profile(s) {', '.join(profiles)}" if profiles else "; it was in no profile"
    return f"uninstalled {name} ({server.transport}){memberships}"


def usage(jarvis: Jarvis, snapshot: Snapshot) -> str:
    by_transport: dict[str, int] = {}
    for server in snapshot.servers.values():
        by_transport[server.transport] = by_transport.get(server.transport, 0) + 1
    lines = [
        f"# usage: {len(snapshot.servers)} servers ({', '.join(f'{n} {t}' for t, n in by_transport.items()) or 'none'})"
    ]
    if snapshot.unreadable:
        lines.append(f"unreadable entries: {', '.join(snapshot.unreadable)}")
    states = _service_states(jarvis)
    lines.append("profile | servers | service state")
    for profile in snapshot.profile_names():
        members = snapshot.members(profile)
        service = jarvis.settings.service_for_profile(profile)
        state = states.get(service, "no service") if isinstance(states, dict) else states
        lines.append(f"{profile} | {len(members)}: {', '.join(members) or '-'} | {service} {state}")
    untagged = [name for name, server in snapshot.servers.items() if not server.profile_tags]
    if untagged:
        lines.append(f"in no profile: {', '.join(untagged)}")
    lines.append("clients: " + (_client_usage(wiring_by_client(snapshot, jarvis.settings.mcpm_dir)) or "none wired"))
    return "\n".join(lines)


def _client_usage(by_client: dict[str, Wiring | str]) -> str:
    parts = []
    for key, wiring in by_client.items():
        if isinstance(wiring, str):
            parts.append(f"{key} (unreadable)")
            continue
        uses = [f"{kind} {', '.join(names)}" for kind, names in (("servers", wiring.servers),
                ("profiles", wiring.profiles)) if names]  # fmt: skip
        if uses:
            parts.append(f"{key} ({'; '.join(uses)})")
    return ", ".join(parts)


def _service_states(jarvis: Jarvis) -> dict[str, str] | str:
    try:
        return {s.service: s.state + (f"/{s.health}" if s.health else "") for s in jarvis.runner.compose_ps()}
    except JarvisError as exc:
        return f"unknown ({str(exc).splitlines()[0][:120]})"


def _existing(snapshot: Snapshot, name: str) -> ServerRecord:
    if name in snapshot.unreadable:
        raise InvalidInput(f"Server '{name}' is an entry MCPM cannot read ({snapshot.unreadable[name][1]}).")
    if name not in snapshot.servers:
        known = ", ".join(list(snapshot.servers)[:30]) or "none"
        raise InvalidInput(f"Unknown server '{name}'. Servers: {known}")
    return snapshot.servers[name]
