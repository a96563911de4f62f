"""`jarvis_profile`: MCPM 2.x profiles (a tag on servers plus a metadata entry): list, create, edit, delete,
suggest, restart. Edits go through `McpmStore` (locked, atomic); restart goes through the DockerRunner."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, assert_never

from pydantic import Field

from jarvis.answer import Answer
from jarvis.clients.wiring import still_wired_note
from jarvis.errors import InvalidInput, JarvisError
from jarvis.pagination import Limit, Offset, page
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ProfileMeta
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect
from jarvis.tools.args import NameList, check_known, profile_service, unique_names, valid_name
from jarvis.workspace import detect

Action = Literal["list", "create", "edit", "delete", "suggest", "restart"]
EFFECTS: dict[Action, Effect] = {
    "list": "reads", "create": "writes", "edit": "writes", "delete": "writes", "suggest": "reads",
    "restart": "writes",
}  # fmt: skip


def jarvis_profile(
    jarvis: ToolContext,
    action: Action,
    name: Annotated[str | None, Field(description="restart: empty = all")] = None,
    new_name: str | None = None,
    add_servers: NameList = None,
    remove_servers: NameList = None,
    description: str | None = None,
    limit: Limit = None,
    offset: Offset = None,
) -> str:
    store = McpmStore(jarvis.settings.mcpm_dir)
    match action:
        case "list":
            return list_profiles(store.read(), limit, offset)
        case "suggest":
            return suggest(jarvis, store.read())
        case "restart":
            return restart(jarvis, name)
        case "create":
            profile_name, adding = valid_name(name, "profile"), unique_names(add_servers)
            return store.update(lambda s: create(s, profile_name, adding, description))
        case "delete":
            profile_name = valid_name(name, "profile")
            text = store.update(lambda s: delete(s, profile_name))
            return text + still_wired_note(store, "profile", profile_name, jarvis.host)
        case "edit":
            profile_name = valid_name(name, "profile")
            adding, removing = unique_names(add_servers), unique_names(remove_servers)
            renamed = valid_name(new_name, "profile") if new_name else None
            text = store.update(lambda s: edit(s, profile_name, renamed, adding, removing, description))
            if renamed and renamed != profile_name:  # clients' entries still carry the old name
                text += still_wired_note(store, "profile", profile_name, jarvis.host)
            return text
        case _:
            assert_never(action)


LIST_PAGE = 100


def list_profiles(snapshot: Snapshot, limit: int | None = None, offset: int | None = None) -> str:
    profiles = snapshot.profile_names()
    shown = page(profiles, limit, offset, default=LIST_PAGE, tool="jarvis_profile", arguments={"action": "list"})
    lines = [f"# profiles: {len(profiles)}"]
    rows: list[dict[str, Any]] = []
    for profile in shown.items:
        members = snapshot.members(profile)
        meta = snapshot.profiles.get(profile)
        about = f" — {meta.description}" if meta and meta.description else ""
        missing = "" if meta else " (no metadata: jarvis_diagnose config_sync)"
        lines.append(f"{profile} ({len(members)}): {', '.join(members) or '-'}{about}{missing}")
        rows.append({"name": profile, "servers": members, "description": meta.description if meta else None,
                     "metadata": meta is not None})  # fmt: skip
    if not profiles:
        lines.append("none yet: jarvis_profile create adds one")
    return Answer("\n".join(lines) + shown.footer, {"profiles": shown.data(rows)})


def create(snapshot: Snapshot, name: str, servers: list[str], description: str | None) -> str:
    if name in snapshot.profile_names():
        raise InvalidInput(f"Profile '{name}' already exists: edit it, or delete it first.")
    check_known("server", servers, list(snapshot.servers))
    snapshot.profiles[name] = ProfileMeta.new(name, description)
    for server in servers:
        snapshot.servers[server].profile_tags = [*snapshot.servers[server].profile_tags, name]
    return f"created profile {name} with {len(servers)} server(s): {', '.join(servers) or '-'}"


def edit(
    snapshot: Snapshot,
    name: str,
    new_name: str | None,
    adding: list[str],
    removing: list[str],
    description: str | None,
) -> str:
    _existing(snapshot, name)
    if not (new_name or adding or removing or description is not None):
        raise InvalidInput("Nothing to edit: give new_name, add_servers, remove_servers or description.")
    check_known("server", adding + removing, list(snapshot.servers))
    both = sorted(set(adding) & set(removing))
    if both:
        raise InvalidInput(f"Server(s) both added and removed: {', '.join(both)}.")
    done: list[str] = []
    members = snapshot.members(name)
    for server in adding:
        if server in members:
            done.append(f"{server} already in {name}")
        else:
            snapshot.servers[server].profile_tags = [*snapshot.servers[server].profile_tags, name]
            done.append(f"added {server}")
    for server in removing:
        if server not in members:
            done.append(f"{server} was not in {name}")
        else:
            snapshot.servers[server].profile_tags = [t for t in snapshot.servers[server].profile_tags if t != name]
            done.append(f"removed {server}")
    meta = snapshot.profiles.get(name) or ProfileMeta.new(name)
    if description is not None:
        meta.description = description or None
        done.append("description set")
    if name in snapshot.profiles or description is not None or new_name:
        snapshot.profiles[name] = meta  # a tag-only profile gets metadata only when there is some to keep
    if new_name and new_name != name:
        if new_name in snapshot.profile_names():
            raise InvalidInput(f"Cannot rename {name} to {new_name}: profile '{new_name}' exists.")
        for record in snapshot.servers.values():
            if name in record.profile_tags:
                record.profile_tags = [new_name if t == name else t for t in record.profile_tags]
        meta.name = new_name
        snapshot.profiles = {(new_name if k == name else k): v for k, v in snapshot.profiles.items()}
        done.append(f"renamed to {new_name} ({len(snapshot.members(new_name))} server tag(s) updated)")
    final = new_name or name
    return f"edited profile {name}: " + "; ".join(done) + f"\nnow {final}: {', '.join(snapshot.members(final)) or '-'}"


def delete(snapshot: Snapshot, name: str) -> str:
    _existing(snapshot, name)
    members = snapshot.members(name)
    for server in members:
        snapshot.servers[server].profile_tags = [t for t in snapshot.servers[server].profile_tags if t != name]
    snapshot.profiles.pop(name, None)
    return f"deleted profile {name}; its tag removed from {len(members)} server(s): {', '.join(members) or '-'}"


# What a project holds -> words that name matching servers (in a server's name, command or args).
SUGGEST_WORDS = {
    "postgres": ("postgres", "pg"), "mysql": ("mysql",), "mongodb": ("mongo",), "redis": ("redis",),
    "qdrant": ("qdrant",), "elasticsearch": ("elastic",), "python": ("python", "pypi"),
    "node": ("npm", "node"), "typescript": ("npm", "node", "typescript"), "go": ("go", "golang"),
    "rust": ("rust", "cargo"), "react": ("react", "browser", "playwright"), "next.js": ("browser", "playwright"),
    "git": ("git", "github"), "docker": ("docker",),
}  # fmt: skip


def suggest(jarvis: ToolContext, snapshot: Snapshot) -> str:
    """Profiles ranked by how many of their servers match what the workspace contains."""
    workspace = detect.scan(jarvis.settings.workspace_dir)
    traits = [*workspace.languages, *workspace.frameworks, *workspace.databases]
    traits += ["git"] if workspace.is_git else []
    traits += ["docker"] if workspace.compose_files else []
    words = {trait: SUGGEST_WORDS[trait] for trait in traits if trait in SUGGEST_WORDS}
    lines = [f"# suggest for {workspace.root}: {', '.join(traits) or 'nothing detected'}"]
    ranked = []
    for profile in snapshot.profile_names():
        reasons = []
        for server in snapshot.members(profile):
            record = snapshot.servers[server]
            text = " ".join([server, record.command or "", *(record.args or []), record.url or ""]).lower()
            tokens = set(re.split(r"[^a-z0-9]+", text))
            # Short words must be whole tokens ("pg", "go"); longer ones may sit inside one ("postgres-mcp").
            matched = [t for t, keys in words.items() if any(k in tokens or (len(k) > 4 and k in text) for k in keys)]
            if matched:
                reasons.append(f"{server} ({', '.join(matched)})")
        ranked.append((len(reasons), profile, reasons))
    ranked.sort(key=lambda item: -item[0])
    for score, profile, reasons in ranked:
        if score:
            lines.append(f"{profile}: {', '.join(reasons)}")
    if not any(score for score, _, _ in ranked):
        lines.append("no profile's servers match this project; jarvis_server search finds servers for it")
    return "\n".join(lines)


def restart(jarvis: ToolContext, profile: str | None) -> str:
    """Restart `<prefix><profile>` (every configured profile when none is named), then each one's state."""
    chosen = [profile] if profile else list(jarvis.settings.profiles)
    services: dict[str, str] = {}
    lines = []
    for name in chosen:
        try:
            services[name] = profile_service(jarvis, name)
        except JarvisError as exc:
            if profile:
                raise
            lines.append(f"{name}: skipped ({exc})")
    if services:
        jarvis.runner.compose_restart(list(services.values()))
    states = {s.service: s for s in jarvis.runner.compose_ps()}
    head = [f"# restarted {len(services)} profile(s)"]
    for name, service in services.items():
        status = states.get(service)
        state = f"{status.state}{f' ({status.health})' if status.health else ''}" if status else "no container"
        head.append(f"{name} ({service}): {state}")
    return "\n".join(head + lines)


def _existing(snapshot: Snapshot, name: str) -> None:
    if name not in snapshot.profile_names():
        raise InvalidInput(f"Unknown profile '{name}'. Profiles: {', '.join(snapshot.profile_names()) or 'none'}")
