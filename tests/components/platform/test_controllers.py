"""``ControllerInstallArgs``: its release tag is checked as a field of the arguments, with the other problems."""

from __future__ import annotations

import pytest

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
