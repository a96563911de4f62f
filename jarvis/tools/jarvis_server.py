"""`jarvis_server`: MCP servers in MCPM's store: list, info, create, edit, uninstall, search, install, usage.

Records are MCPM 2.x's (`servers.json`), written through `McpmStore` (locked, atomic). Secrets are masked
in every answer, wherever they sit in a record (`jarvis.store.secrets`). Names: letters, digits, `-`, `_`, `.`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, assert_never

from pydantic import BeforeValidator, Field

from jarvis.answer import Answer
from jarvis.clients.wiring import Wiring, still_wired_note, wiring_by_client
from jarvis.errors import InvalidInput, JarvisError, quoted
from jarvis.pagination import Limit, Offset, page
from jarvis.store import registry
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ServerRecord, check_launch
from jarvis.store.secrets import masked_record
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect
from jarvis.tools.args import ShellWords, StringMap, valid_name

Action = Literal["list", "info", "install", "uninstall", "search", "edit", "create", "usage"]
EFFECTS: dict[Action, Effect] = {
    "list": "reads", "info": "reads", "install": "writes", "uninstall": "writes", "search": "reads",
    "edit": "writes", "create": "writes", "usage": "reads",
}  # fmt: skip
# MCPM also calls remote servers `http`, `streamable-http` or `sse`: those names are read as `remote`.
REMOTE_ALIASES = ("http", "streamable-http", "sse")
Transport = Annotated[
    Literal["stdio", "remote"], BeforeValidator(lambda value: "remote" if value in REMOTE_ALIASES else value)
]
LIST_PAGE = 100


def jarvis_server(
    jarvis: ToolContext,
    action: Action,
    name: str | None = None,
    query: str | None = None,
    type: Transport | None = None,
    command: str | None = None,
    args: ShellWords = None,
    env: StringMap = None,
    url: str | None = None,
    headers: StringMap = None,
    replace: Annotated[bool | None, Field(description="no merge")] = None,
    limit: Limit = None,
    offset: Offset = None,
) -> str:
    store = McpmStore(jarvis.settings.mcpm_dir)
    match action:
        case "list":
            return list_servers(store.read(), limit, offset)
        case "usage":
            return usage(jarvis, store.read())
        case "search":
            return registry.search(jarvis.settings, query, limit, offset)
        case "info":
            return info(store.read(), valid_name(name))
        case "create":
            record = new_record(valid_name(name), type, command, args, env, url, headers)
            return store.update(lambda snapshot: create(snapshot, record))
        case "edit":
            server_name = valid_name(name)
            check_launch(command, args, env, url, headers)
            changes = {"command": command, "args": args, "env": env, "url": url, "headers": headers}
            return store.update(lambda snapshot: edit(snapshot, server_name, changes, replace=bool(replace)))
        case "install":
            server_name = valid_name(name)
            check_launch(env=env)
            return registry.install(jarvis.settings, store, server_name, env or {})
        case "uninstall":
            server_name = valid_name(name)
            text = store.update(lambda snapshot: uninstall(snapshot, server_name))
            return text + still_wired_note(store, "server", server_name, jarvis.host)
        case _:
            assert_never(action)


def list_servers(snapshot: Snapshot, limit: int | None = None, offset: int | None = None) -> str:
    names = list(snapshot.servers) + list(snapshot.unreadable)
    shown = page(names, limit, offset, default=LIST_PAGE, tool="jarvis_server", arguments={"action": "list"})
    lines = [f"# servers: {len(names)}"]
    rows: list[dict[str, Any]] = []
    for server_name in shown.items:
        server = snapshot.servers.get(server_name)
        if server is None:
            reason = snapshot.unreadable[server_name][1]
            lines.append(f"{server_name}  UNREADABLE  ({reason})")
            rows.append({"name": server_name, "unreadable": reason})
            continue
        profiles = ",".join(server.profile_tags) or "-"
        lines.append(f"{server_name}  {server.transport}  {profiles}  {'off' if server.enabled is False else 'on'}")
        rows.append({"name": server_name, "transport": server.transport, "profiles": list(server.profile_tags),
                     "enabled": server.enabled is not False})  # fmt: skip
    if not names:
        lines.append("none yet: jarvis_server create or install adds one")
    return Answer("\n".join(lines) + shown.footer, {"servers": shown.data(rows)})


def info(snapshot: Snapshot, name: str) -> str:
    server = _existing(snapshot, name)
    fields = masked_record(server.dump())
    lines = [f"## {name} ({server.transport})"]
    for key in ("command", "args", "url"):
        if fields.get(key) is not None:
            lines.append(f"{key}: {json.dumps(fields[key], ensure_ascii=False) if key == 'args' else fields[key]}")
    for key in ("env", "headers"):
        if fields.get(key):
            lines.append(f"{key}: {json.dumps(fields[key], ensure_ascii=False)}")
    lines.append(f"profiles: {', '.join(server.profile_tags) or 'none'}")
    lines.append(f"enabled: {'no' if server.enabled is False else 'yes'}")
    known = {"name", "profile_tags", "enabled", "command", "args", "env", "url", "headers"}
    other = {k: v for k, v in fields.items() if k not in known}
    if other:
        lines.append(f"other fields: {json.dumps(other, ensure_ascii=False)[:2000]}")
    return "\n".join(lines)


def new_record(
    name: str,
    transport: Literal["stdio", "remote"] | None,
    command: str | None,
    args: list[str] | None,
    env: dict[str, str] | None,
    url: str | None,
    headers: dict[str, str] | None,
) -> ServerRecord:
    if transport is None:
        raise InvalidInput("type is required. Valid types: stdio, remote")
    check_launch(command, args, env, url, headers)
    if transport == "stdio":
        if not command:
            raise InvalidInput("A stdio server needs command (and optionally args, env).")
        if url or headers:
            raise InvalidInput("url and headers are for remote servers; a stdio server takes command, args, env.")
        return ServerRecord.stdio(name, command, args or [], env or {})
    if not url or not url.startswith(("http://", "https://")):
        raise InvalidInput(f"A remote server needs url, an http(s) URL (got {quoted(url or '')}).")
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
            raise InvalidInput(f"url must be an http(s) URL (got {quoted(value)}).")
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


def usage(jarvis: ToolContext, snapshot: Snapshot) -> str:
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
    wiring = wiring_by_client(snapshot, jarvis.settings.mcpm_dir, jarvis.host)
    lines.append("clients: " + (_client_usage(wiring) or "none wired"))
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


def _service_states(jarvis: ToolContext) -> dict[str, str] | str:
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
