"""MCPM's registry index (`jarvis_server search` / `install`), fetched with a short deadline and cached where
MCPM caches it (`servers_cache.json`: `{"servers": {...}, "last_refresh": ISO}`).

Unlike MCPM, a fetch never hangs (one deadline for the whole download); offline, the cache is used and its
age is said; with no cache the call fails at once with what to do. `JARVIS_REGISTRY_URL` may be a local file.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jarvis.answer import Answer
from jarvis.atomic import write_atomic
from jarvis.errors import InvalidInput, JarvisError, quoted
from jarvis.pagination import page
from jarvis.settings import Settings
from jarvis.store.mcpm_store import McpmStore, Snapshot
from jarvis.store.models import ServerRecord
from jarvis.store.secrets import masked_record

CACHE = "servers_cache.json"
CACHE_TTL = 3600.0  # MCPM's: an hour
MAX_BYTES = 64 * 1024 * 1024
SEARCH_PAGE = 20
PLACEHOLDER = re.compile(r"^\$\{[^}]+\}$|^<.*>$|YOUR_|your[-_ ]", re.I)


class RegistryUnavailable(JarvisError):
    pass


def load_index(settings: Settings) -> tuple[dict[str, Any], str]:
    """(servers by name, where they came from)."""
    source = settings.registry_url
    if not source.startswith(("http://", "https://")):
        path = Path(source.removeprefix("file://")).expanduser()
        return _servers(_read_json(path), str(path)), f"registry file {path}"
    cache = settings.mcpm_dir / CACHE
    cached = _read_cache(cache)
    if cached and cached[1] < CACHE_TTL:
        return cached[0], f"registry cache ({_age(cached[1])} old)"
    try:
        servers = _fetch(source, settings.registry_timeout)
    except RegistryUnavailable as exc:
        if cached:
            return cached[0], f"OFFLINE ({exc}); registry cache from {_age(cached[1])} ago"
        raise RegistryUnavailable(
            f"{exc}, and there is no cache at {cache}. Connect to the network, or set JARVIS_REGISTRY_URL to a "
            "local copy of the index (a servers.json file)."
        ) from None
    document = {"servers": servers, "last_refresh": datetime.now(UTC).isoformat()}
    write_atomic(cache, json.dumps(document, indent=2).encode(), mode=0o644)
    return servers, f"registry {source}"


def search(settings: Settings, query: str | None, limit: int | None = None, offset: int | None = None) -> str:
    if not query or not query.strip():
        raise InvalidInput("query is required for search, e.g. query='github' or query='web search'.")
    servers, source = load_index(settings)
    words = query.lower().split()
    hits = [(name, entry) for name, entry in servers.items() if all(w in _haystack(name, entry) for w in words)]
    shown = page(hits, limit, offset, default=SEARCH_PAGE, tool="jarvis_server",
                 arguments={"action": "search", "query": query})  # fmt: skip
    lines = [f"# search {quoted(query)}: {len(hits)} found ({source})"]
    rows: list[dict[str, str]] = []
    for name, entry in shown.items:
        description = (str(entry.get("description") or "").splitlines()[0:1] or [""])[0][:120]
        lines.append(f"{name} — {description}")
        rows.append({"name": name, "description": description})
    if not hits:
        lines.append("no server matches every word; try fewer words")
    return Answer("\n".join(lines) + shown.footer, {"query": query, "source": source, "servers": shown.data(rows)})


def install(settings: Settings, store: McpmStore, name: str, env: dict[str, str]) -> str:
    servers, source = load_index(settings)
    if name not in servers:
        close = [n for n in servers if name.lower() in n.lower()][:10]
        hint = f" Close: {', '.join(close)}" if close else " Use search to find its name."
        raise InvalidInput(f"'{name}' is not in the registry ({source}).{hint}")
    record, missing = record_from_entry(name, servers[name], env)

    def add(snapshot: Snapshot) -> None:
        if name in snapshot.servers or name in snapshot.unreadable:
            raise InvalidInput(f"Server '{name}' is already installed: edit it, or uninstall it first.")
        snapshot.servers[name] = record

    store.update(add)
    lines = [f"installed {name} ({record.transport}) from {source}"]
    shown = masked_record(record.dump())
    if record.transport == "stdio":
        lines.append(f"command: {shown['command']} {' '.join(shown.get('args') or [])}")
    else:
        lines.append(f"url: {shown['url']}")
    if missing:
        lines.append("STILL REQUIRED (written as ${NAME} references, resolved from the environment when run):")
        lines += [f"- {key}: {why}" for key, why in missing.items()]
        lines.append(f"set them: jarvis_server action=edit name={name} env={{...}}, or export them")
    return "\n".join(lines)


def record_from_entry(name: str, entry: dict[str, Any], env: dict[str, str]) -> tuple[ServerRecord, dict[str, str]]:
    """The recommended installation (else the first) as a record, and the env values still required."""
    installations = entry.get("installations") or {}
    if not isinstance(installations, dict) or not installations:
        raise InvalidInput(f"Registry entry '{name}' has no installation method.")
    chosen = next((i for i in installations.values() if isinstance(i, dict) and i.get("recommended")), None)
    chosen = chosen or next(iter(installations.values()))
    arguments = entry.get("arguments") or {}
    if chosen.get("url"):
        return ServerRecord.remote(name, str(chosen["url"]), dict(chosen.get("headers") or {})), {}
    if not chosen.get("command"):
        raise InvalidInput(f"Registry entry '{name}' has neither a command nor a url to install.")
    values: dict[str, str] = {}
    missing: dict[str, str] = {}
    for key, value in (chosen.get("env") or {}).items():
        if key in env:
            values[key] = env[key]
        elif isinstance(value, str) and value and not PLACEHOLDER.search(value):
            values[key] = value
        else:
            values[key] = "${" + key + "}"
            details = arguments.get(key) or {}
            missing[key] = str(details.get("description") or "no description in the registry")[:160]
    extra = sorted(set(env) - set(values))
    values.update({key: env[key] for key in extra})
    args = [str(a) for a in chosen.get("args") or []]
    return ServerRecord.stdio(name, str(chosen["command"]), args, values), missing


def _fetch(url: str, timeout: float) -> dict[str, Any]:
    import requests  # on first fetch: `jarvis serve` starts without its ~40 ms import

    deadline = time.monotonic() + timeout
    try:
        with requests.get(url, timeout=timeout, stream=True) as response:
            response.raise_for_status()
            body = bytearray()
            for chunk in response.iter_content(65536):
                body += chunk
                if time.monotonic() > deadline:
                    raise RegistryUnavailable(f"registry {url} did not answer within {timeout:.0f}s")
                if len(body) > MAX_BYTES:
                    raise RegistryUnavailable(f"registry {url} sent more than {MAX_BYTES} bytes")
    except requests.RequestException as exc:
        raise RegistryUnavailable(f"registry {url} unreachable ({type(exc).__name__})") from exc
    try:
        return _servers(json.loads(body), url)
    except InvalidInput as exc:
        raise RegistryUnavailable(str(exc)) from exc


def _read_cache(path: Path) -> tuple[dict[str, Any], float] | None:
    try:
        document = json.loads(path.read_text())
        refreshed = datetime.fromisoformat(document["last_refresh"])
        if refreshed.tzinfo is None:
            refreshed = refreshed.replace(tzinfo=UTC)
        return _servers(document, str(path)), (datetime.now(UTC) - refreshed).total_seconds()
    except (OSError, ValueError, KeyError, TypeError, InvalidInput):
        return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise RegistryUnavailable(f"registry file {path} cannot be read ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise RegistryUnavailable(f"registry file {path} is not valid JSON (line {exc.lineno})") from exc


def _servers(document: Any, where: str) -> dict[str, Any]:
    """The index is MCPM's `{name: entry}` or its cache's `{"servers": {name: entry}}`."""
    if isinstance(document, dict) and isinstance(document.get("servers"), dict):
        document = document["servers"]
    if not isinstance(document, dict):
        raise InvalidInput(f"{where} does not hold a registry index (an object of servers)")
    return {str(k): v for k, v in document.items() if isinstance(v, dict)}


def _haystack(name: str, entry: dict[str, Any]) -> str:
    parts = [name, entry.get("display_name"), entry.get("description"), *(entry.get("tags") or [])]
    parts += list(entry.get("categories") or [])
    return " ".join(str(p) for p in parts if p).lower()


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"
