"""What the README's "by design" section says an agent can do holds: `jarvis_project test` runs the test code of
any folder it is given (a conftest.py here, really run), while `jarvis_config set` cannot write the commands that
jarvis.toml alone defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.errors import InvalidInput
from jarvis.tools.jarvis_config import jarvis_config
from jarvis.tools.jarvis_project import jarvis_project
from tests.fakes import call, fake_jarvis
from tests.projects import pytest_project

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_says_what_is_by_design_right_after_the_tools() -> None:
    headings = [line for line in README.read_text().splitlines() if line.startswith("## ")]
    assert headings[headings.index("## Tools") + 1] == "## What an agent can do through Jarvis, by design"


def test_project_test_runs_the_code_of_a_folder_outside_the_workspace(tmp_path: Path) -> None:
    folder = pytest_project(tmp_path / "elsewhere", failing=False)
    marker = tmp_path / "ran"
    (folder / "conftest.py").write_text(f"open({str(marker)!r}, 'w').write('conftest ran')\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    text = call(jarvis_project, fake_jarvis(workspace_dir=workspace), action="test", path=str(folder), suite="python")
    assert text.startswith("# tests: python PASS")
    assert marker.read_text() == "conftest ran"


@pytest.mark.parametrize("key", ["build_commands", "test_suites"])
def test_config_set_cannot_write_commands(key: str) -> None:
    with pytest.raises(InvalidInput, match=f"Invalid key '{key}'"):
        call(jarvis_config, fake_jarvis(), action="set", key=key, value='[["sh", "-c", "id"]]')
