"""Which `docker-compose` plugin the docker CLI would run: the config's extra folders, then $DOCKER_CONFIG's."""

from __future__ import annotations

import json
from pathlib import Path

from jarvis.compose_binary import compose_binary_identity, compose_plugin_path


def plugin_in(folder: Path, body: str = "#!/bin/sh\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docker-compose").write_text(body)
    return folder / "docker-compose"


def test_the_first_plugin_found_in_the_docker_cli_order_is_the_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "config"))
    own = plugin_in(tmp_path / "config" / "cli-plugins")
    assert compose_plugin_path() == own
    extra = plugin_in(tmp_path / "extra")
    (tmp_path / "config" / "config.json").write_text(json.dumps({"cliPluginsExtraDirs": [str(tmp_path / "extra")]}))
    assert compose_plugin_path() == extra


def test_identity_follows_links_and_changes_with_the_binary(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "config"))
    target = plugin_in(tmp_path / "store")
    (tmp_path / "config" / "cli-plugins").mkdir(parents=True)
    (tmp_path / "config" / "cli-plugins" / "docker-compose").symlink_to(target)
    (tmp_path / "config" / "config.json").write_text("{ not json")  # ignored, as the defaults then apply
    before = compose_binary_identity()
    assert before[1] is not None
    assert before[1][0] == str(target.resolve())
    target.write_text("#!/bin/sh\n# another build\n")
    assert compose_binary_identity() != before
