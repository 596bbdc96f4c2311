"""platform_cluster: what a model stack checks of the platform it reads through its StackReference."""

from tests.conftest import plan_of
from tpu_serving.platform_cluster import release_problem
from tpu_serving.platform_outputs import PlatformOutputs

PLATFORM = PlatformOutputs.model_validate(plan_of("platform-us-east5").outputs["platform"])


def test_release_problem_none_for_the_release_the_platform_runs():
    runs = PLATFORM.controller("lws")
    assert runs is not None and release_problem(PLATFORM, "lws", runs.version) is None


def test_release_problem_names_both_releases_and_the_platform_key():
    problem = release_problem(PLATFORM, "lws", "v0.9.0")
    assert problem is not None
    assert "expects lws v0.9.0, but the platform stack platform-us-east5 runs v0.10.0" in problem
    assert "(sharedPlatform.lwsVersion)" in problem


def test_release_problem_names_a_controller_the_platform_does_not_install():
    problem = release_problem(PLATFORM, "pathways-job", "v0.1.4")
    assert problem is not None
    assert "installs no pathways-job (it installs: lws v0.10.0, jobset v0.12.0, metrics-adapter v0.16.10)" in problem
