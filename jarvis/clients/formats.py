"""Reading and editing the server section of a client's file, one class per file format (chosen by the client's
catalog entry), each with the same two calls: `read(text)` gives the entries by name; `write(text, changes)`
sets (entry) or removes (None) entries and returns the new text, leaving the rest of the file as it was:
JSON/JSONC by splicing the text (jarvis.clients.jsonc), TOML through tomlkit and YAML through ruamel.yaml's
round-trip mode (both keep comments and layout). Each result is parsed again and compared with the intended
content; any difference is an error and nothing is written.
"""

from __future__ import annotations

import io
import re
import tomllib
from typing import Any, Protocol

import tomlkit
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from jarvis.clients.jsonc import JsoncError, edit_members, parse
from jarvis.errors import JarvisError

Changes = dict[str, dict[str, Any] | None]


class ClientFileError(JarvisError):
    """A client's file cannot be read or edited safely; it was not changed."""


class ClientFormat(Protocol):
    section: str

    def read(self, text: str) -> dict[str, Any]: ...

    def holds_section(self, text: str) -> bool:
        """Whether the file (which `read` accepts) has the servers' section at all, even empty."""
        ...

    def write(self, text: str, changes: Changes) -> str: ...


def _expected(entries: dict[str, Any], changes: Changes) -> dict[str, Any]:
    result = dict(entries)
    for key, entry in changes.items():
        if entry is None:
            result.pop(key, None)
        else:
            result[key] = entry
    return result


class JsonFormat:
    def __init__(self, section: str) -> None:
        self.section = section

    def read(self, text: str) -> dict[str, Any]:
        if not text.strip():
            return {}
        try:
            root = parse(text).root
        except JsoncError as exc:
            raise ClientFileError(f"not valid JSON: {exc}") from exc
        if not root.is_object:
            raise ClientFileError("must hold a JSON object at the top")
        section = root.value.get(self.section, {})
        if not isinstance(section, dict):
            raise ClientFileError(f'"{self.section}" must be an object')
        return section

    def holds_section(self, text: str) -> bool:
        return bool(text.strip()) and parse(text).root.member(self.section) is not None

    def write(self, text: str, changes: Changes) -> str:
        try:
            return edit_members(text, self.section, changes)
        except JsoncError as exc:
            raise ClientFileError(str(exc)) from exc


class TomlFormat:
    def __init__(self, section: str) -> None:
        self.section = section

    def read(self, text: str) -> dict[str, Any]:
        try:
            section = tomllib.loads(text).get(self.section, {})
        except tomllib.TOMLDecodeError as exc:
            raise ClientFileError(f"not valid TOML: {exc}") from exc
        if not isinstance(section, dict):
            raise ClientFileError(f"[{self.section}] must be a table")
        return section

    def holds_section(self, text: str) -> bool:
        return self.section in tomllib.loads(text)

    def write(self, text: str, changes: Changes) -> str:
        entries = self.read(text)
        document = tomlkit.parse(text)
        if self.section not in document:
            document[self.section] = tomlkit.table(is_super_table=True)
        table = document[self.section]
        for key, entry in changes.items():
            if entry is None:
                if key in table:
                    del table[key]
            else:
                item = tomlkit.table()
                item.update(entry)
                table[key] = item
        result = tomlkit.dumps(document)
        if text.endswith("\n") and not text.endswith("\n\n"):
            result = result.rstrip("\n") + "\n"  # keep the file's ending (tomlkit leaves removed tables' gap)
        if tomllib.loads(result).get(self.section, {}) != _expected(entries, changes):
            raise ClientFileError(f"editing [{self.section}] would change more than its own entries")
        return result


def _yaml(text: str = "") -> YAML:
    """Round-trip YAML that indents as `text` does (ruamel's defaults would re-indent the user's lists)."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    mapping = re.search(r"^[^\s#-][^\n]*:[ \t]*\n( +)[^\s#-]", text, re.M)
    sequence = re.search(r"^(?P<parent> *)[^\s#-][^\n]*:[ \t]*\n(?P<dash> *)- ", text, re.M)
    step = len(mapping.group(1)) if mapping else 2
    offset = len(sequence["dash"]) - len(sequence["parent"]) if sequence else 0
    yaml.indent(mapping=step, sequence=offset + 2, offset=offset)
    return yaml


class YamlFormat:
    """A YAML mapping of entries by name (Goose's `extensions`), or with `by_name`, a list of entries that
    carry their name (Continue's `mcpServers`)."""

    def __init__(self, section: str, *, by_name: bool = False) -> None:
        self.section = section
        self.by_name = by_name

    def _load(self, text: str) -> Any:
        try:
            document = _yaml().load(text) if text.strip() else None
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            raise ClientFileError(f"not valid YAML{where}: {getattr(exc, 'problem', exc)}") from exc
        if document is not None and not isinstance(document, dict):
            raise ClientFileError("must hold a YAML mapping at the top")
        return document

    def read(self, text: str) -> dict[str, Any]:
        document = self._load(text) or {}
        section = document.get(self.section)
        if section is None:
            return {}
        if self.by_name:
            if not isinstance(section, list):
                raise ClientFileError(f"{self.section} must be a list")
            return {str(item.get("name")): _plain(item) for item in section if isinstance(item, dict)}
        if not isinstance(section, dict):
            raise ClientFileError(f"{self.section} must be a mapping")
        return {str(key): _plain(value) for key, value in section.items()}

    def holds_section(self, text: str) -> bool:
        return self.section in (self._load(text) or {})

    def write(self, text: str, changes: Changes) -> str:
        entries = self.read(text)
        document = self._load(text)
        if document is None:
            document = {}
        if document.get(self.section) is None:
            document[self.section] = [] if self.by_name else {}
        section = document[self.section]
        for key, entry in changes.items():
            if self.by_name:
                at = [i for i, item in enumerate(section) if isinstance(item, dict) and item.get("name") == key]
                if entry is None:
                    for index in reversed(at):
                        del section[index]
                elif at:
                    section[at[0]] = entry
                else:
                    section.append(entry)
            elif entry is None:
                section.pop(key, None)
            else:
                section[key] = entry
        stream = io.StringIO()
        _yaml(text).dump(document, stream)
        result = stream.getvalue()
        if self.read(result) != _expected(entries, changes):
            raise ClientFileError(f"editing {self.section} would change more than its own entries")
        return result


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists, for comparison and output."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def format_for(file_format: str, section: str) -> ClientFormat:
    if file_format == "toml":
        return TomlFormat(section)
    if file_format == "yaml":
        return YamlFormat(section, by_name=section == "mcpServers")  # Continue lists its servers
    return JsonFormat(section)
