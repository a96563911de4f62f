"""The MCPM folder preparation, atomic writes and build's validation and failure reporting, on real files."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from jarvis.atomic import write_atomic
from jarvis.errors import InvalidInput
from jarvis.mcpm_folder import prepare_mcpm_dir
from jarvis.tools import build
from jarvis.tools.jarvis_system import jarvis_system
from tests.fakes import call, fake_jarvis


def test_atomic_write_replaces_whole_file_private_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "servers.json"
    write_atomic(target, b"{}\n")
    write_atomic(target, b'{"a": 1}\n')
    assert target.read_bytes() == b'{"a": 1}\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(target.parent) == ["servers.json"]


def test_mcpm_folder_creates_only_what_is_missing_and_never_rewrites(tmp_path: Path) -> None:
    folder = tmp_path / "mcpm"
    folder.mkdir()
    (folder / "servers.json").write_text('{"time": {"name": "time", "command": "uvx"}}')
    (folder / "config.json").write_text("{broken")
    report = prepare_mcpm_dir(folder)
    assert report[0] == f"{folder}: present"
    assert "servers.json: kept (1 entries)" in report
    assert "profiles_metadata.json: created (empty)" in report
    assert any(line.startswith("config.json: NOT VALID JSON, left alone") for line in report)
    assert (folder / "config.json").read_text() == "{broken"
    assert json.loads((folder / "profiles_metadata.json").read_text()) == {}
    assert prepare_mcpm_dir(folder)[2] == "profiles_metadata.json: kept (0 entries)"  # twice is safe


def test_invalid_component_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInput, match="Valid components: jarvis, mcpm, daemon, all"):
        call(jarvis_system, fake_jarvis(), action="build", component="frontend")


def test_a_failing_build_command_is_reported_with_its_output(tmp_path: Path) -> None:
    failing = [[sys.executable, "-c", "import sys; print('compiling'); sys.exit('syntax error in x.py')"]]
    jarvis = fake_jarvis(project_dir=tmp_path, build_commands={"jarvis": failing}, mcpm_dir=tmp_path / "m")
    text = build.build(jarvis, "all", no_cache=False)
    assert "## build jarvis — FAILED" in text
    assert "exit 1" in text
    assert "syntax error in x.py" in text
    assert "## build mcpm — ok" in text
    assert "## build daemon — ok" in text  # the fake project's mcpm-research builds
    missing = fake_jarvis(project_dir=tmp_path, build_commands={"jarvis": [["no-such-tool-xyz"]]})
    assert "`no-such-tool-xyz`: command not found" in build.build(missing, "jarvis", no_cache=False)


def test_default_jarvis_build_compiles_and_lists_tools(tmp_path: Path) -> None:
    text = build.build(fake_jarvis(project_dir=tmp_path), "jarvis", no_cache=False)
    assert text.startswith("## build jarvis — ok")
    assert "-m compileall -q" in text
    assert "-m jarvis tools`: ok" in text
