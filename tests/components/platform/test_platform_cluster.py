"""platform_cluster: what a model stack checks of the platform it reads through its StackReference."""

import pytest

from tests.conftest import plan_of
from tpu_serving.platform.platform_cluster import release_problem
from tpu_serving.platform.platform_outputs import PlatformOutputs

PLATFORM = PlatformOutputs.model_validate(plan_of("platform-us-east5").outputs["platform"])


def test_release_problem_none_for_the_release_the_platform_runs():
    runs = PLATFORM.controller("lws")
    assert runs is not None and release_problem(PLATFORM, "lws", runs.version) is None


def test_release_problem_names_both_releases_and_the_platform_key_when_the_platform_runs_an_older_one():
    problem = release_problem(PLATFORM, "lws", "v0.10.1")
    assert problem is not None
    assert "expects lws v0.10.1 or newer, but the platform stack platform-us-east5 runs v0.10.0" in problem
    assert "(sharedPlatform.lwsVersion)" in problem
    assert "upgrade the platform first" in problem


@pytest.mark.parametrize("expected", ["v0.9.0", "v0.9.9", "v0.10.0"])
def test_release_problem_none_when_the_platform_runs_the_expected_release_or_a_newer_one(expected: str):
    """A model stack built against an older release (one not yet upgraded, or rolled back to its previous file)
    still deploys on a platform that upgraded first (SRE review: equality locked every model's up)."""
    assert release_problem(PLATFORM, "lws", expected) is None


@pytest.mark.parametrize(("expected", "older"), [("v0.11.0", True), ("v1.0.0", True), ("v0.9.10", False)])
def test_release_problem_compares_releases_as_numbers_not_text(expected: str, older: bool):
    assert (release_problem(PLATFORM, "lws", expected) is not None) == older


def test_release_problem_compares_a_tag_of_another_form_by_equality():
    assert release_problem(PLATFORM, "lws", "main") is not None


def test_release_problem_names_a_controller_the_platform_does_not_install():
    problem = release_problem(PLATFORM, "pathways-job", "v0.1.4")
    assert problem is not None
    assert "installs no pathways-job (it installs: lws v0.10.0, jobset v0.12.0, metrics-adapter v0.16.10)" in problem
