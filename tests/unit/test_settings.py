from pathlib import Path

import pytest

from jarvis.errors import ConfigError
from jarvis.settings import DEFAULT_PROFILES, default_stack_dir, load_settings


def test_defaults_use_the_bundled_stack_outside_a_compose_project(tmp_path: Path) -> None:
    settings = load_settings(environ={}, cwd=tmp_path)
    assert settings.project_dir == default_stack_dir().resolve()
    assert settings.profiles == DEFAULT_PROFILES
    assert (settings.lifecycle_adapter, settings.observe_adapter) == ("whales", "dockerpy")
    assert settings.retry_timeout == 10
    assert settings.service_for_profile("research") == "mcpm-research"


def test_current_directory_with_a_compose_file_is_the_project(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    assert load_settings(environ={}, cwd=tmp_path).project_dir == tmp_path.resolve()


def test_toml_then_environment_overrides(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    (tmp_path / "jarvis.toml").write_text('[jarvis]\nprofiles = ["a", "b"]\nretry_timeout = 3\nprofile_prefix = "p-"\n')
    settings = load_settings(environ={"JARVIS_RETRY_TIMEOUT": "7.5", "JARVIS_OBSERVE_ADAPTER": "whales"}, cwd=tmp_path)
    assert settings.profiles == ("a", "b")
    assert settings.profile_prefix == "p-"
    assert settings.retry_timeout == 7.5
    assert settings.observe_adapter == "whales"


def test_env_lists_and_compose_files_resolve_against_the_project(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text("services: {}\n")
    (tmp_path / "two.yaml").write_text("services: {}\n")
    env = {
        "JARVIS_PROJECT_DIR": str(tmp_path),
        "JARVIS_COMPOSE_FILES": "one.yaml:two.yaml",
        "JARVIS_PROFILES": " x , y ",
        "JARVIS_PROJECT_NAME": "proj",
    }
    settings = load_settings(environ=env, cwd=Path("/"))
    assert settings.compose_files == (tmp_path / "one.yaml", tmp_path / "two.yaml")
    assert settings.profiles == ("x", "y")
    assert settings.project_name == "proj"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"JARVIS_LIFECYCLE_ADAPTER": "podman"}, "JARVIS_LIFECYCLE_ADAPTER (lifecycle_adapter)"),
        ({"JARVIS_OBSERVE_ADAPTER": "x"}, "accepted values: whales, dockerpy"),
        ({"JARVIS_RETRY_TIMEOUT": "soon"}, "JARVIS_RETRY_TIMEOUT"),
        ({"JARVIS_RETRY_TIMEOUT": "-1"}, "greater than or equal to 0"),
        ({"JARVIS_PROJECT_DIR": "/nonexistent/dir"}, "is not a directory"),
    ],
)
def test_invalid_values_give_one_line_naming_the_key(tmp_path: Path, env: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ=env, cwd=tmp_path)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_directory_without_compose_file_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no compose file"):
        load_settings(environ={"JARVIS_PROJECT_DIR": str(tmp_path)}, cwd=tmp_path)


def test_unknown_toml_key_and_missing_explicit_config(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(environ={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", environ={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(environ={"JARVIS_CONFIG": str(tmp_path / "nope.toml")}, cwd=tmp_path)


def test_workspace_and_test_suites_from_toml(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    config = tmp_path / "jarvis.toml"
    config.write_text(
        'workspace_dir = "code"\n[test_suites.e2e]\ncommand = ["npm", "run", "e2e"]\ncwd = "web"\n'
        '[test_suites.all]\nsuites = ["python", "e2e"]\ntimeout = 60\n'
    )
    settings = load_settings(config, environ={}, cwd=tmp_path)
    assert settings.workspace_dir == tmp_path / "code"
    assert settings.test_suites["e2e"].command == ["npm", "run", "e2e"]
    assert settings.test_suites["all"].suites == ["python", "e2e"]
    assert load_settings(config, environ={"JARVIS_WORKSPACE_DIR": "/srv"}, cwd=tmp_path).workspace_dir == Path("/srv")
    config.write_text("[test_suites.go]\ntimeout = -5\n")
    with pytest.raises(ConfigError, match=r"test_suites \(test_suites\.go\.timeout\): Input should be greater than 0"):
        load_settings(config, environ={}, cwd=tmp_path)


def test_call_budget_and_wait_timeout_come_from_the_environment_and_are_checked(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    defaults = load_settings(environ={}, cwd=tmp_path)
    assert (defaults.call_budget, defaults.wait_timeout) == (240.0, 120.0)
    settings = load_settings(environ={"JARVIS_CALL_BUDGET": "0", "JARVIS_WAIT_TIMEOUT": "15"}, cwd=tmp_path)
    assert (settings.call_budget, settings.wait_timeout) == (0.0, 15.0)
    with pytest.raises(ConfigError, match=r"JARVIS_CALL_BUDGET \(call_budget\): .*greater than or equal to 0"):
        load_settings(environ={"JARVIS_CALL_BUDGET": "-1"}, cwd=tmp_path)
    with pytest.raises(ConfigError, match=r"JARVIS_WAIT_TIMEOUT \(wait_timeout\): .*greater than 0"):
        load_settings(environ={"JARVIS_WAIT_TIMEOUT": "0"}, cwd=tmp_path)
