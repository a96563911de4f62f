"""The JSONC splicer: only the owned members change, every other byte stays, and adding then removing an entry
gives back the original file byte for byte."""

from __future__ import annotations

import json

import pytest

from jarvis.clients.jsonc import JsoncError, edit_members, parse

ENTRY = {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}}

FILES = {
    "jsonc with comments and trailing commas": """{
  // Cursor settings, hand-written
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"] }, // mine
    /* the database */
    "db": {"command": "uvx", "args": ["mcp-server-sqlite"]},
  },
}
""",
    "strict json, 4 spaces": """{
    "theme": "dark",
    "mcpServers": {
        "github": {
            "command": "npx"
        }
    },
    "numStartups": 42
}""",
    "compact one line": '{"mcpServers": {"a": {"command": "x"}}, "b": [1, 2]}',
    "empty section": '{\n  "mcpServers": {},\n  "other": true\n}\n',
    "no section": '{\n\t"other": {"x": 1}\n}\n',
    "empty file": "",
}


@pytest.mark.parametrize("text", FILES.values(), ids=FILES.keys())
def test_add_then_remove_gives_back_every_byte_it_can(text: str) -> None:
    added = edit_members(text, "mcpServers", {"mcpm_time": ENTRY})
    value = parse(added).root.value
    assert value["mcpServers"]["mcpm_time"] == ENTRY
    original = parse(text).root.value if text.strip() else {}
    assert {k: v for k, v in value.items() if k != "mcpServers"} == {
        k: v for k, v in original.items() if k != "mcpServers"
    }
    for line in text.splitlines():
        assert line.strip() in added or "mcpServers" in line or line.strip() in ("}", "},"), line
    removed = edit_members(added, "mcpServers", {"mcpm_time": None})
    if text.strip() and "mcpServers" in text:
        assert removed == text
    else:
        assert parse(removed).root.value == {**original, "mcpServers": {}}


def test_strict_json_stays_strict_json() -> None:
    text = FILES["strict json, 4 spaces"]
    added = edit_members(text, "mcpServers", {"mcpm_time": ENTRY, "mcpm_web": {"url": "http://h/mcp"}})
    assert json.loads(added)["mcpServers"]["mcpm_web"] == {"url": "http://h/mcp"}
    assert '        "mcpm_time": {\n            "command": "uvx",' in added  # the file's 4-space step
    removed = edit_members(added, "mcpServers", {"mcpm_web": None})
    assert json.loads(removed)["mcpServers"] == {"github": {"command": "npx"}, "mcpm_time": ENTRY}
    assert edit_members(removed, "mcpServers", {"mcpm_time": None}) == text


def test_comments_around_removed_and_kept_entries() -> None:
    text = FILES["jsonc with comments and trailing commas"]
    result = edit_members(text, "mcpServers", {"github": None, "mcpm_x": {"command": "y"}})
    assert "// Cursor settings, hand-written" in result
    assert "/* the database */" in result
    assert "server-github" not in result
    assert parse(result).root.value["mcpServers"] == {"db": {"command": "uvx", "args": ["mcp-server-sqlite"]},
                                                      "mcpm_x": {"command": "y"}}  # fmt: skip


def test_replacing_an_entry_keeps_its_place() -> None:
    text = FILES["strict json, 4 spaces"]
    first = edit_members(text, "mcpServers", {"mcpm_a": {"command": "a"}, "mcpm_b": {"command": "b"}})
    second = edit_members(first, "mcpServers", {"mcpm_a": {"command": "changed"}})
    assert list(json.loads(second)["mcpServers"]) == ["github", "mcpm_a", "mcpm_b"]
    assert json.loads(second)["mcpServers"]["mcpm_a"] == {"command": "changed"}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "mcpServers": {\n    "a": 1,,\n  }\n}', "line 3, column 12"),
        ('{"a": "unterminated}', "line 1, column 7"),
        ('{"a": 1} trailing', "line 1, column 10"),
        ("{\n  /* never closed\n}", "line 2, column 3"),
    ],
)
def test_invalid_files_name_line_and_column(text: str, where: str) -> None:
    with pytest.raises(JsoncError, match=where):
        edit_members(text, "mcpServers", {"x": {}})


def test_a_section_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(JsoncError, match='"mcpServers" is not an object'):
        edit_members('{"mcpServers": []}', "mcpServers", {"x": {}})
    with pytest.raises(JsoncError, match="must hold a JSON object"):
        edit_members("[1]", "mcpServers", {"x": {}})


def test_strings_with_escapes_and_comment_markers_inside() -> None:
    text = '{"url": "http://a//b /* no */", "q": "say \\"hi\\" \\\\", "mcpServers": {}}'
    result = edit_members(text, "mcpServers", {"k": {"v": "é"}})
    value = json.loads(result)
    assert value["url"] == "http://a//b /* no */"
    assert value["q"] == 'say "hi" \\'
    assert value["mcpServers"] == {"k": {"v": "é"}}


def test_a_string_as_last_value_gets_its_comma_after_it() -> None:
    text = '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight"\n}\n'
    result = edit_members(text, "mcp", {"a": {"b": 1}})
    assert result == (
        '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight",\n'
        '  "mcp": {\n    "a": {\n      "b": 1\n    }\n  }\n}\n'
    )


def test_windows_line_endings_are_kept() -> None:
    text = FILES["jsonc with comments and trailing commas"].replace("\n", "\r\n")
    added = edit_members(text, "mcpServers", {"mcpm_time": ENTRY})
    assert added.count("\n") == added.count("\r\n")
    assert '    "mcpm_time": {\r\n      "command": "uvx",' in added
    assert edit_members(added, "mcpServers", {"mcpm_time": None}) == text
