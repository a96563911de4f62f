"""`jarvis_config`: Jarvis's settings and MCPM's config.json (get, set, list), legacy files (migrate), and the
whole MCPM setup as one JSON document (export, import).

Jarvis settings are set in the jarvis.toml Jarvis reads (comments kept, tomlkit), validated by loading the
candidate file exactly as Jarvis would at start, then renamed into place; they apply from the next start.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from jarvis.atomic import file_mode, fsync_dir, write_atomic, write_temp
from jarvis.context import Jarvis
from jarvis.errors import ConfigError, InvalidInput
from jarvis.settings import ENV_NAMES, load_settings, parse_value
from jarvis.store import transfer
from jarvis.store.mcpm_store import McpmStore
from jarvis.store.migrate import migrate
from jarvis.tools.args import pick

ACTIONS = ("get", "set", "list", "migrate", "export", "import")
# MCPM's config.json keys and their valid values (`mcpm config set` accepts only these).
MCPM_KEYS = {"node_executable": ("npx", "bunx", "pnpm dlx", "yarn dlx")}
INLINE_LIMIT = 60_000  # characters of export returned in the answer; beyond, give a path


def handle(
    jarvis: Jarvis,
    *,
    action: str,
    key: str | None = None,
    value: str | None = None,
    path: str | None = None,
    data: str | dict[str, Any] | None = None,
    include_secrets: bool | None = None,
) -> str:
    action = pick("action", action, ACTIONS)
    store = McpmStore(jarvis.settings.mcpm_dir)
    if action == "list" or (action == "get" and not key):
        return list_all(jarvis, store)
    if action == "get":
        return get(jarvis, store, _known_key(key))
    if action == "set":
        if value is None:
            raise InvalidInput("set needs value (lists: comma-separated; endpoints: profile=url,profile=url).")
        name = _known_key(key)
        if name in MCPM_KEYS:
            return store.update(lambda snapshot: set_mcpm(snapshot.config, name, value))
        return set_jarvis(jarvis, name, value)
    if action == "migrate":
        return migrate(store)
    if action == "export":
        return export(jarvis, store, path, bool(include_secrets))
    return import_(jarvis, store, path, json.dumps(data) if isinstance(data, dict) else data)


def _known_key(key: str | None) -> str:
    keys = [*ENV_NAMES, *MCPM_KEYS]
    if not key:
        raise InvalidInput(f"key is required. Keys: {', '.join(keys)}")
    if key not in keys:
        raise InvalidInput.choice("key", key, keys)
    return key


def _source(jarvis: Jarvis, key: str) -> str:
    if os.environ.get(ENV_NAMES[key]):
        return f"env {ENV_NAMES[key]}"
    return "jarvis.toml" if key in _toml_table(jarvis.settings.config_file) else "default"


def _shown(value: Any) -> str:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def get(jarvis: Jarvis, store: McpmStore, key: str) -> str:
    if key in MCPM_KEYS:
        value = store.read().config.get(key)
        return f"{key} = {value if value is not None else '(unset: mcpm uses npx)'} (MCPM config.json)"
    source = _source(jarvis, key)
    where = source if source.startswith("env") else f"{source}; env {ENV_NAMES[key]}"
    running = _shown(getattr(jarvis.settings, key))
    in_file = _toml_table(jarvis.settings.config_file).get(key)
    changed = in_file is not None and _shown(in_file) != running and not source.startswith("env")
    pending = f"; from the next start: {_shown(in_file)}" if changed else ""
    return f"{key} = {running} ({where}){pending}"


def list_all(jarvis: Jarvis, store: McpmStore) -> str:
    lines = [f"# Jarvis settings (file: {jarvis.settings.config_file})"]
    for key in ENV_NAMES:
        lines.append(f"{key} = {_shown(getattr(jarvis.settings, key))} ({_source(jarvis, key)})")
    config = store.read().config
    lines.append(f"# MCPM config.json ({store.folder / 'config.json'})")
    for key, valid in MCPM_KEYS.items():
        lines.append(f"{key} = {config.get(key, '(unset)')} (valid: {', '.join(valid)})")
    other = {k: v for k, v in config.items() if k not in MCPM_KEYS}
    if other:
        lines.append(f"other keys: {json.dumps(other, ensure_ascii=False)[:500]}")
    return "\n".join(lines)


def set_mcpm(config: dict[str, Any], key: str, value: str) -> str:
    valid = MCPM_KEYS[key]
    if value not in valid:
        raise InvalidInput(f"Invalid {key} '{value}'. Valid values: {', '.join(valid)}")
    before = config.get(key)
    config[key] = value
    return f"{key} = {value} in MCPM config.json (was {before if before is not None else 'unset'})"


def set_jarvis(jarvis: Jarvis, key: str, value: str) -> str:
    target = jarvis.settings.config_file or Path.cwd() / "jarvis.toml"
    text = target.read_text() if target.is_file() else ""
    document = tomlkit.parse(text)
    table = document.get("jarvis", document)
    parsed = parse_value(key, value)
    field = type(jarvis.settings).model_fields[key]
    if field.annotation is float:
        try:
            parsed = float(value)
        except ValueError as exc:
            raise InvalidInput(f"{key} must be a number (got {value!r}).") from exc
    table[key] = parsed  # type: ignore[index]
    try:
        candidate = write_temp(target, tomlkit.dumps(document).encode(), mode=file_mode(target, 0o644))
    except OSError as exc:
        raise ConfigError(f"Cannot write {target}: {exc.strerror}. Point JARVIS_CONFIG at a writable file.") from exc
    try:
        load_settings(config_path=candidate)  # exactly as Jarvis will load it at its next start
    except ConfigError as exc:
        candidate.unlink(missing_ok=True)
        raise InvalidInput(f"Not set, {target} is unchanged: {exc}") from exc
    os.replace(candidate, target)
    fsync_dir(target.parent)
    lines = [f"{key} = {_shown(parsed)} written to {target}; applies when Jarvis restarts (jarvis_system restart)."]
    if os.environ.get(ENV_NAMES[key]):
        lines.append(f"note: {ENV_NAMES[key]} is set in Jarvis's environment and wins over the file.")
    return "\n".join(lines)


def _toml_table(path: Path | None) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text()) if path and path.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # shown as no file; loading it at start reports the error
    return dict(data.get("jarvis", data))


def export(jarvis: Jarvis, store: McpmStore, path: str | None, include_secrets: bool) -> str:
    document = transfer.export_document(store.read(), include_secrets=include_secrets)
    counts = ", ".join(f"{len(document[s])} {s}" for s in transfer.SECTIONS)
    lines = [f"export: {counts}", f"warning: {document['warning']}"]
    if path:
        target = _path(jarvis, path)
        try:
            write_atomic(target, json.dumps(document, indent=2, ensure_ascii=False).encode() + b"\n", mode=0o600)
        except OSError as exc:
            raise InvalidInput(f"Cannot write {target}: {exc.strerror}; nothing was written.") from exc
        lines.append(f"written to {target} (mode 0600)")
    inline = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    if len(inline) > INLINE_LIMIT:
        if not path:
            raise InvalidInput(f"The export is {len(inline):,} characters, too big to return: give path to write it.")
        return "\n".join(lines)
    return "\n".join(lines) + "\n" + inline


def import_(jarvis: Jarvis, store: McpmStore, path: str | None, data: str | None) -> str:
    if bool(path) == bool(data):
        raise InvalidInput("import needs exactly one of data (the JSON document) or path (a file holding it).")
    if path:
        source = _path(jarvis, path)
        try:
            data = source.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"Cannot read {source}: {exc}") from exc
    plan = transfer.parse_document(data or "")
    report = store.update(lambda snapshot: transfer.apply_import(snapshot, plan))
    lines = [f"imported into {store.folder}:", report]
    if plan.skipped:
        lines.append(f"skipped (not in the document): {', '.join(plan.skipped)}")
    lines.append('Restart profiles to apply: jarvis_profile(action="restart").')
    return "\n".join(lines)


def _path(jarvis: Jarvis, path: str) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else jarvis.settings.workspace_dir / candidate
