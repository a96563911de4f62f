"""Surgical edits of JSON files that may hold comments and trailing commas (JSONC: VS Code, Cursor, Claude).

A client's file is the user's: Jarvis changes the members it owns in one object and leaves every other byte
where it was. The parser keeps the source offsets of every object member; an edit is a splice of the text,
indented like its neighbours. `python-json5`/`json-five` parse JSONC but cannot write back a splice, and the
one Python port of VS Code's `jsonc-parser.modify` is a months-old native binding, hence this small module.
Every edit is checked by parsing the result and comparing it with the intended value (see `edit_members`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    def __init__(self, message: str, text: str, position: int) -> None:
        self.line = text.count("\n", 0, position) + 1
        self.column = position - (text.rfind("\n", 0, position) + 1) + 1
        super().__init__(f"{message} (line {self.line}, column {self.column})")


@dataclass
class Member:
    key: str
    key_start: int
    value: Node
    comma: int | None = None  # offset of the comma after the value, if any


@dataclass
class Node:
    start: int
    end: int
    value: Any = None
    members: list[Member] = field(default_factory=list)  # objects only
    is_object: bool = False

    def member(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None  # JSON.parse keeps the last of repeated keys


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.has_comments = False

    def fail(self, message: str) -> JsoncError:
        return JsoncError(message, self.text, self.pos)

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
                self.has_comments = True
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
                self.has_comments = True
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        char = self.text[self.pos]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        start = self.pos
        if char == '"':
            parsed = self.string()  # advances self.pos: read it before building the node
            return Node(start, self.pos, parsed)
        for literal, constant in _LITERALS.items():
            if self.text.startswith(literal, start):
                self.pos += len(literal)
                return Node(start, self.pos, constant)
        match = _NUMBER.match(self.text, start)
        if not match:
            raise self.fail(f"unexpected character {char!r}")
        self.pos = match.end()
        return Node(start, self.pos, json.loads(match.group()))

    def string(self) -> str:
        start = self.pos
        self.pos += 1
        while True:
            end = self.text.find('"', self.pos)
            if end < 0:
                self.pos = start
                raise self.fail("unterminated string")
            backslashes = len(self.text[self.pos : end]) - len(self.text[self.pos : end].rstrip("\\"))
            self.pos = end + 1
            if backslashes % 2 == 0:
                break
        try:
            text: str = json.loads(self.text[start : self.pos])
            return text
        except json.JSONDecodeError as exc:
            self.pos = start
            raise self.fail(f"invalid string: {exc.msg}") from exc

    def object(self) -> Node:
        node = Node(self.pos, self.pos, {}, is_object=True)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if self.pos >= len(self.text) or self.text[self.pos] != '"':
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            member = Member(key, key_start, self.value())
            node.members.append(member)
            node.value[key] = member.value.value
            self.skip()
            if self.text.startswith(",", self.pos):
                member.comma = self.pos
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> Node:
        node = Node(self.pos, self.pos, [])
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            node.value.append(self.value().value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        node.end = self.pos
        return node


@dataclass
class Document:
    text: str
    root: Node
    has_comments: bool


def parse(text: str) -> Document:
    """Parse JSON with comments and trailing commas, keeping offsets. Raises JsoncError (line, column)."""
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected content after the end of the document")
    return Document(text, root, parser.has_comments)


def edit_members(text: str, section: str, changes: dict[str, Any | None]) -> str:
    """Set (value) or remove (None) members of the top-level object `section`, creating it when missing.
    Everything else in `text` keeps its bytes. The result is parsed again and must hold exactly the
    intended value, or JsoncError is raised and the caller writes nothing."""
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):  # a Windows file: edit as \n, give back \r\n
        return edit_members(text.replace("\r\n", "\n"), section, changes).replace("\n", "\r\n")
    if not text.strip():
        text = "{}\n"
    document = parse(text)
    if not document.root.is_object:
        raise JsoncError("the file must hold a JSON object", text, document.root.start)
    unit = _indent_unit(text)
    expected = json.loads(json.dumps(document.root.value))
    wanted = dict(expected.get(section) or {}) if isinstance(expected.get(section), dict) else None
    target = document.root.member(section)
    if target is not None and not target.value.is_object:
        raise JsoncError(f'"{section}" is not an object', text, target.value.start)
    additions = {k: v for k, v in changes.items() if v is not None}
    if target is None:
        if not additions:
            return text
        result = _insert(text, document.root, section, additions, unit)
        wanted = additions
    else:
        result = text
        for key in [k for k, v in changes.items() if v is None and target.value.member(k)]:
            result = _remove(result, section, key)
        for key, value in additions.items():
            result = _set(result, section, key, value, unit)
        wanted = {**(wanted or {}), **additions}
        for key in [k for k, v in changes.items() if v is None]:
            wanted.pop(key, None)
    expected[section] = wanted
    if parse(result).root.value != expected:
        raise JsoncError(f"editing {section} would change more than its own entries; nothing written", text, 0)
    return result


def _section(text: str, section: str) -> tuple[Document, Node]:
    document = parse(text)
    member = document.root.member(section)
    assert member is not None
    return document, member.value


def _set(text: str, section: str, key: str, value: Any, unit: str) -> str:
    _document, node = _section(text, section)
    member = node.member(key)
    if member is None:
        return _insert(text, node, key, {key: value}, unit, single=True)
    indent = _line_indent(text, member.key_start) or ""  # a key sharing its line: continue without indent
    rendered = _render(value, indent, unit)
    return text[: member.value.start] + rendered + text[member.value.end :]


def _insert(text: str, node: Node, key: str, values: dict[str, Any], unit: str, *, single: bool = False) -> str:
    """Add member(s) at the end of object `node`: one member `key` (single) or `key: values`."""
    entry_value = values[key] if single else values
    if not node.members:
        outer = _indent_of_line(text, node.start)
        inner = outer + unit
        rendered = f"{json.dumps(key)}: {_render(entry_value, inner, unit)}"
        interior = text[node.start + 1 : node.end - 1]
        closing = f"\n{outer}}}" if not interior.strip() else interior + "}"
        return text[: node.start] + "{\n" + inner + rendered + closing + text[node.end :]
    last = node.members[-1]
    after_value = last.comma + 1 if last.comma is not None else last.value.end
    line_end = _end_of_line_comment(text, after_value)
    indent = _line_indent(text, last.key_start)
    if indent is None or line_end is None:  # a compact object like `{"a": 1}`: stay on its line
        rendered = f"{json.dumps(key)}: {json.dumps(entry_value, ensure_ascii=False)}"
        insertion = f" {rendered}" if last.comma is not None else f", {rendered}"
        return text[:after_value] + insertion + text[after_value:]
    rendered = f"{json.dumps(key)}: {_render(entry_value, indent, unit)}"
    trailing = "," if last.comma is not None else ""  # keep the file's trailing-comma style
    text = text[:line_end] + f"\n{indent}{rendered}{trailing}" + text[line_end:]
    if last.comma is None:
        text = text[: last.value.end] + "," + text[last.value.end :]
    return text


def _remove(text: str, section: str, key: str) -> str:
    _document, node = _section(text, section)
    index = max(i for i, m in enumerate(node.members) if m.key == key)
    member = node.members[index]
    if len(node.members) == 1:
        return text[: node.start] + "{}" + text[node.end :]
    start = _line_start_if_blank_before(text, member.key_start)
    stop = member.comma + 1 if member.comma is not None else member.value.end
    line_end = _end_of_line_comment(text, stop)
    if start != member.key_start and line_end is not None:
        stop = min(line_end + 1, len(text))  # the member's whole line, its trailing comment included
    else:
        while stop < len(text) and text[stop] in " \t":
            stop += 1
    previous = node.members[index - 1] if index else None
    if member.comma is None and previous is not None and previous.comma is not None:
        # the last member goes: the comma before it must go too (strict JSON readers refuse a trailing one)
        between = text[previous.comma + 1 : start]
        if start == member.key_start and not between.strip():
            between = ""  # same line: `{"a": 1, "b": 2}` becomes `{"a": 1}`
        return text[: previous.comma] + between + text[stop:]
    return text[:start] + text[stop:]


def _render(value: Any, indent: str, unit: str) -> str:
    rendered = json.dumps(value, indent=unit or None, ensure_ascii=False)
    return rendered.replace("\n", "\n" + indent)


def _indent_unit(text: str) -> str:
    """The file's indentation step: the leading whitespace of its first indented line; two spaces if none."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _line_indent(text: str, position: int) -> str | None:
    """Whitespace from the line start to `position`, or None when something else precedes it on the line."""
    line_start = text.rfind("\n", 0, position) + 1
    before = text[line_start:position]
    return before if before.strip() == "" else None


def _indent_of_line(text: str, position: int) -> str:
    line_start = text.rfind("\n", 0, position) + 1
    line = text[line_start:position]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _line_start_if_blank_before(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1 if _line_indent(text, position) is not None else position


def _end_of_line_comment(text: str, position: int) -> int | None:
    """The newline ending the line at `position` when only blanks or a // comment follow; else None."""
    match = re.compile(r"[ \t]*(?://[^\n]*)?(?:\n|$)").match(text, position)
    if not match:
        return None
    end = match.end()
    return end - 1 if text[end - 1 : end] == "\n" else end
