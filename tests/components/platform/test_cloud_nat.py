"""tpu_serving.platform.cloud_nat: the stack's Cloud NAT, or an existing one it names (cloudNat: existing)."""

from __future__ import annotations

import pytest

from tests.fixtures.configs import VLLM, load


@pytest.mark.parametrize(
    "cluster, problem",
    [
        ({"cloudNat": "existing"}, "name the NAT's Cloud Router and the NAT"),
        ({"existingNat": "n", "existingNatRouter": "r"}, "they need cloudNat = existing"),
    ],
)
def test_cloud_nat_security_an_existing_nat_is_named_exactly_when_used(cluster, problem):
    from tpu_serving.config import ConfigError

    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:cluster": {"name": "vllm", **cluster}})
    assert problem in str(err.value)
