"""tpu_serving.platform.controllers: ControllerInstall's arguments (its release tag is checked as a field of them, with
the other problems) and its registered outputs."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of
from tests.fixtures.components import _children, _components
from tpu_serving.common.validation import ArgumentsError, check_arguments
from tpu_serving.platform.controllers import ControllerInstallArgs, version_problem
from tpu_serving.platform.lws import LWS


def test_controllers_a_release_tag_without_its_v_is_an_arguments_error_naming_the_field():
    """Library review 6, m2: ``version="0.10.0"`` raised a bare ValueError, a traceback under ``pulumi up``."""
    assert version_problem("v0.10.0") == ""
    with pytest.raises(ArgumentsError) as refused:
        check_arguments(
            "ControllerInstall 'lws'", ControllerInstallArgs(LWS, "0.10.0", manifest="http://x"), ControllerInstallArgs
        )
    text = str(refused.value)
    assert "2 problems" in text
    assert "ControllerInstallArgs.version = '0.10.0': a release tag vMAJOR.MINOR.PATCH, e.g. v0.10.0" in text


# ControllerInstall's registered outputs, held to the resources of the same plan they name.


@pytest.mark.parametrize("stack", STACKS)
def test_controller_install_outputs_are_the_manifest_it_applies(stack: str):
    plan = plan_of(stack)
    installs = _components(plan, "ControllerInstall")
    assert installs, "every stack installs a controller"
    for install in installs:
        out = install.registered_outputs or {}
        if out.get("owned") is False:  # the cluster runs it (controllerInstalls: existing): nothing applied
            assert _children(plan, install, "kubernetes:yaml/v2:ConfigGroup") == []
            assert out["upstream"].endswith(f"/{out['version']}/manifests.yaml")
            continue
        (group,) = _children(plan, install, "kubernetes:yaml/v2:ConfigGroup")
        assert [out["url"]] == group.inputs["files"]
        assert (
            f"/{out['version']}/" in out["url"]
            or out["url"].endswith(f"-{out['version']}")
            or (f"-{out['version']}/" in out["url"])
        )
