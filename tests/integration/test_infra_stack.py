"""The real infrastructure stack needs a registry, so here Compose validates it and Jarvis reads it."""

import pytest

from jarvis.compose_project import ComposeCliProject
from jarvis.settings import DEFAULT_PROFILES, Settings, bundled_stacks_dir

pytestmark = pytest.mark.docker


def test_infra_stack_is_valid_and_has_one_service_per_profile() -> None:
    settings = Settings(project_dir=bundled_stacks_dir() / "infra")
    spec = ComposeCliProject(settings).spec()
    assert spec.name == "jarvis-infra"
    assert {settings.service_for_profile(p) for p in DEFAULT_PROFILES} | {"postgres", "qdrant"} == set(spec.services)
    assert all(spec.services[settings.service_for_profile(p)].builds for p in DEFAULT_PROFILES)
