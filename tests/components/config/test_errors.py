"""tpu_serving.config.errors: a stack file's validation errors, each in the project's words at its key path."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load
from tpu_serving.config import ConfigError


def test_errors_unknown_backend_is_named():
    """config.errors.describe: the unknown backend's name comes from the error's context."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["backend"] = "vlm"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(p.startswith('tpu-serving:serving.backend = "vlm": unknown serving backend') for p in err.value.problems)
