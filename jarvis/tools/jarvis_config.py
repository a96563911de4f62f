"""`jarvis_config`: Jarvis's settings and MCPM's config.json (get, set, list), legacy files (migrate), and the
whole MCPM setup as one JSON document (export, import).

Jarvis settings are set in the jarvis.toml Jarvis reads (comments kept, tomlkit), validated by loading the
candidate file as Jarvis would at start but with no JARVIS_* variable, then renamed into place; they apply from
the next start. Export writes only a new file or a previous export; import reads a regular file of bounded size.
"""

from __future__ import annotations

import contextlib
import json
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, assert_never

import tomlkit
from pydantic import Field, WithJsonSchema
from tomlkit.exceptions import TOMLKitError

from jarvis.atomic import file_mode, read_bytes, write_atomic, write_temp
from jarvis.clients.catalog import CLIENTS
from jarvis.clients.config_path import checked_config_path
from jarvis.errors import ConfigError, InvalidInput, quoted
from jarvis.settings import ENV_NAMES, load_settings, parse_value
from jarvis.store import transfer
from jarvis.store.mcpm_store import McpmStore
from jarvis.store.migrate import migrate
from jarvis.store.models import CONFIG_VALUES, check_config_value
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect, WritesWhen
from jarvis.user_files import IMPORT_LIMIT, UnreadableFile, read_limited, shown, user_path

Action = Literal["get", "set", "list", "migrate", "export", "import"]
EFFECTS: dict[Action, Effect] = {
    "get": "reads", "set": "writes", "list": "reads", "migrate": "writes", "export": WritesWhen("path"),
    "import": "writes",
}  # fmt: skip
MCPM_KEYS = CONFIG_VALUES  # MCPM's config.json keys jarvis_config sets
INLINE_LIMIT = 60_000  # characters of export returned in the answer; beyond, give a path
STALE_CANDIDATE = 600.0  # seconds: a `set` candidate older than this was left by a killed process


def jarvis_config(
    jarvis: ToolContext,
    action: Action,
    key: str | None = None,
    value: Annotated[str | None, Field(description="lists: a,b")] = None,
    path: str | None = None,
    # Published as an object; JSON text is read too, so a broken document is reported with its line and column.
    data: Annotated[
        str | dict[str, Any] | None, WithJsonSchema({"type": "object"}), Field(description="import: an export")
    ] = None,
    include_secrets: bool | None = None,
) -> str:
    store = McpmStore(jarvis.settings.mcpm_dir)
    match action:
        case "list":
            return list_all(jarvis, store)
        case "get":
            return get(jarvis, store, _known_key(key)) if key else list_all(jarvis, store)
        case "set":
            if value is None:
                raise InvalidInput("set needs value (lists: comma-separated; endpoints: profile=url,profile=url).")
            name = _known_key(key)
            if name in MCPM_KEYS:
                return store.update(lambda snapshot: set_mcpm(snapshot.config, name, value))
            return set_jarvis(jarvis, name, value)
        case "migrate":
            return migrate(store)
        case "export":
            return export(jarvis, store, path, bool(include_secrets))
        case "import":
            return import_(jarvis, store, path, json.dumps(data) if isinstance(data, dict) else data)
        case _:
            assert_never(action)


def _known_key(key: str | None) -> str:
    keys = [*ENV_NAMES, *MCPM_KEYS]
    if not key:
        raise InvalidInput(f"key is required. Keys: {', '.join(keys)}")
    if key not in keys:
        raise InvalidInput.choice("key", key, keys)
    return key


def _source(jarvis: ToolContext, key: str) -> str:
    if jarvis.host.environ.get(ENV_NAMES[key]):
        return f"env {ENV_NAMES[key]}"
    return "jarvis.toml" if key in _toml_table(jarvis.settings.config_file) else "default"


def as_setting_text(value: Any) -> str:
    """A setting's value written as its environment variable would hold it."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def get(jarvis: ToolContext, store: McpmStore, key: str) -> str:
    if key in MCPM_KEYS:
        value = store.read().config.get(key)
        return f"{key} = {value if value is not None else '(unset: mcpm uses npx)'} (MCPM config.json)"
    source = _source(jarvis, key)
    where = source if source.startswith("env") else f"{source}; env {ENV_NAMES[key]}"
    running = as_setting_text(getattr(jarvis.settings, key))
    in_file = _toml_table(jarvis.settings.config_file).get(key)
    changed = in_file is not None and as_setting_text(in_file) != running and not source.startswith("env")
    pending = f"; from the next start: {as_setting_text(in_file)}" if changed else ""
    return f"{key} = {running} ({where}){pending}"


def list_all(jarvis: ToolContext, store: McpmStore) -> str:
    lines = [f"# Jarvis settings (file: {jarvis.settings.config_file})"]
    for key in ENV_NAMES:
        lines.append(f"{key} = {as_setting_text(getattr(jarvis.settings, key))} ({_source(jarvis, key)})")
    config = store.read().config
    lines.append(f"# MCPM config.json ({store.folder / 'config.json'})")
    for key, valid in MCPM_KEYS.items():
        lines.append(f"{key} = {config.get(key, '(unset)')} (valid: {', '.join(valid)})")
    other = {k: v for k, v in config.items() if k not in MCPM_KEYS}
    if other:
        lines.append(f"other keys: {json.dumps(other, ensure_ascii=False)[:500]}")
    return "\n".join(lines)


def set_mcpm(config: dict[str, Any], key: str, value: str) -> str:
    check_config_value(key, value)
    before = config.get(key)
    config[key] = value
    return f"{key} = {value} in MCPM config.json (was {before if before is not None else 'unset'})"


EDIT_ATTEMPTS = 5  # another program rewriting jarvis.toml during each of them: give up, the file untouched


def set_jarvis(jarvis: ToolContext, key: str, value: str) -> str:
    target = jarvis.settings.config_file or Path.cwd() / "jarvis.toml"
    try:
        value.encode()
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"value {quoted(value)} is not valid text (a lone surrogate).") from exc
    _remove_stale_candidates(target)
    for _ in range(EDIT_ATTEMPTS):
        try:
            original = read_bytes(target)
        except OSError as exc:
            raise ConfigError(f"Cannot edit {target}: {exc.strerror}. Point JARVIS_CONFIG at a regular file.") from exc
        edited, parsed = _edited_toml(jarvis, target, original, key, value)
        # Replaced only if the file still holds what was read: an edit made meanwhile is never overwritten.
        try:
            if write_atomic(target, edited, mode=file_mode(target, 0o644), expected=original):
                break
        except OSError as exc:
            raise _cannot_write(target, exc) from exc
    else:
        raise ConfigError(f"Not set: {target} kept changing while Jarvis edited it ({EDIT_ATTEMPTS} tries).")
    lines = [
        f"{key} = {as_setting_text(parsed)} written to {target}; applies when Jarvis restarts (jarvis_system restart)."
    ]
    if jarvis.host.environ.get(ENV_NAMES[key]):
        lines.append(f"note: {ENV_NAMES[key]} is set in Jarvis's environment and wins over the file.")
    return "\n".join(lines)


def _edited_toml(jarvis: ToolContext, target: Path, original: bytes | None, key: str, value: str) -> tuple[bytes, Any]:
    """jarvis.toml as read (`original`) with `key` set (comments kept), checked by loading it as Jarvis will."""
    try:
        document = tomlkit.parse((original or b"").decode())
    except (UnicodeDecodeError, TOMLKitError) as exc:
        raise ConfigError(f"Cannot edit {target}: {exc}. Fix the file (or point JARVIS_CONFIG elsewhere).") from exc
    table = document.get("jarvis", document)
    if not isinstance(table, dict):
        raise ConfigError(f"Cannot edit {target}: [jarvis] is not a table.")
    parsed = parse_value(key, value)
    field = type(jarvis.settings).model_fields[key]
    if field.annotation is float:
        try:
            parsed = float(value)
        except ValueError as exc:
            raise InvalidInput(f"{key} must be a number (got {quoted(value)}).") from exc
    table[key] = parsed
    edited = tomlkit.dumps(document).encode()
    try:
        candidate = write_temp(target, edited, mode=0o600)
    except OSError as exc:
        raise _cannot_write(target, exc) from exc
    try:
        # As Jarvis will load it at its next start, but with no JARVIS_* variable: an environment value that
        # overrides the key must not hide an invalid value in the file.
        load_settings(config_path=candidate, environ=_without_jarvis_variables(jarvis.host.environ))
    except ConfigError as exc:
        raise InvalidInput(f"Not set, {target} is unchanged: {exc}") from exc
    finally:
        candidate.unlink(missing_ok=True)
    return edited, parsed


def _cannot_write(target: Path, exc: OSError) -> ConfigError:
    return ConfigError(f"Cannot write {target}: {exc.strerror}. Point JARVIS_CONFIG at a writable file.")


def _without_jarvis_variables(environ: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in environ.items() if not name.startswith("JARVIS_")}


def _remove_stale_candidates(target: Path) -> None:
    """Candidates of `set` a killed process left beside jarvis.toml (a live `set` keeps its own for milliseconds)."""
    for stray in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - stray.lstat().st_mtime > STALE_CANDIDATE:
                stray.unlink()


def _toml_table(path: Path | None) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text()) if path and path.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # shown as no file; loading it at start reports the error
    return dict(data.get("jarvis", data))


def export(jarvis: ToolContext, store: McpmStore, path: str | None, include_secrets: bool) -> str:
    target = _export_target(jarvis, path) if path else None
    document = transfer.export_document(store.read(), include_secrets=include_secrets)
    counts = ", ".join(f"{len(document[s])} {s}" for s in transfer.SECTIONS)
    lines = [f"export: {counts}", f"warning: {document['warning']}"]
    if target:
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


def import_(jarvis: ToolContext, store: McpmStore, path: str | None, data: str | None) -> str:
    if bool(path) == bool(data):
        raise InvalidInput("import needs exactly one of data (the JSON document) or path (a file holding it).")
    if path:
        source = _path(jarvis, path)
        try:
            data = read_limited(source, IMPORT_LIMIT).decode("utf-8")
        except FileNotFoundError as exc:
            raise InvalidInput(f"Cannot read {shown(source)}: no such file.") from exc
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"Cannot read {shown(source)}: it is not UTF-8 text.") from exc
    elif data and len(data) > IMPORT_LIMIT:
        raise InvalidInput(f"data is {len(data):,} characters; the limit is {IMPORT_LIMIT:,}: give path instead.")
    home = jarvis.host.home
    plan = transfer.parse_document(data or "", lambda client, path: checked_config_path(CLIENTS[client], path, home))
    report = store.update(lambda snapshot: transfer.apply_import(snapshot, plan))
    lines = [f"imported into {store.folder}:", report]
    if plan.skipped:
        lines.append(f"skipped (not in the document): {', '.join(plan.skipped)}")
    lines.append('Restart profiles to apply: jarvis_profile(action="restart").')
    return "\n".join(lines)


def _path(jarvis: ToolContext, path: str) -> Path:
    """`path` as given (`~` expanded); a relative one is in the workspace and may not lead out of it."""
    candidate = user_path(path, "path", jarvis.host.home)
    if candidate.is_absolute():
        return candidate
    workspace = jarvis.settings.workspace_dir.resolve()
    if not (workspace / candidate).resolve().is_relative_to(workspace):
        raise InvalidInput(
            f"path {shown(path)} leads out of the workspace {workspace}: a relative path stays inside it; "
            "give an absolute path (or ~/...) to use another folder."
        )
    return workspace / candidate


def _export_target(jarvis: ToolContext, path: str) -> Path:
    """Where `export path=` may write: a new file in an existing folder, or a previous Jarvis export (through a
    symlink, its target). Any other file is the user's and is never replaced."""
    target = _path(jarvis, path)
    elsewhere = "Nothing was written; choose another path (a new file name) for the export."
    if not target.parent.is_dir():
        raise InvalidInput(f"The folder {shown(target.parent)} does not exist. {elsewhere}")
    if target.is_symlink() and not target.exists():
        dangling = f"{shown(target)} is a symlink to {shown(target.readlink())}, which does not exist."
        raise InvalidInput(f"{dangling} {elsewhere}")
    try:
        existing = read_limited(target, IMPORT_LIMIT)
    except FileNotFoundError:
        return target
    except UnreadableFile as exc:
        raise InvalidInput(f"{exc} {elsewhere}") from exc
    if not transfer.is_export(existing):
        raise InvalidInput(
            f"{shown(target)} exists and is not a Jarvis export: Jarvis replaces only its own exports. {elsewhere}"
        )
    return target.resolve()
