"""tpu_serving.config.checks: the stack file's checks that read more than one setting."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load
from tpu_serving.config import ConfigError


def test_edges_inference_pool_version_gate_names_the_version():
    """config.checks.gateway_problems (mutmut_28): the refused minMasterVersion is quoted as the stack gives it."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:cluster"]["minMasterVersion"] = "1.30.1-gke.1"
    cfg["tpu-serving:gateway"] = {"inferencePool": True}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(
        p.startswith('tpu-serving:cluster.minMasterVersion = "1.30.1-gke.1": gateway.inferencePool needs GKE')
        for p in err.value.problems
    ), err.value.problems
