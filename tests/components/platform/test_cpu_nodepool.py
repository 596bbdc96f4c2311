"""tpu_serving.platform.cpu_nodepool: CpuNodePool, a CPU node pool of its own (the Pathways head's)."""

from __future__ import annotations

import pytest

from tests.fixtures.components import run
from tests.fixtures.pools import cpu_pool_args


def test_cpu_nodepool_refuse_a_cpu_pool_zone_outside_the_region():
    from tpu_serving import CpuNodePool
    from tpu_serving.common.validation import ArgumentsError

    def program():
        CpuNodePool("head", cpu_pool_args(zone="us-central1-a", pool_name="head", service_account_id="head-nodes"))

    with pytest.raises(ArgumentsError) as exc:
        run(program)
    assert exc.value.problems == [
        "CpuNodePoolArgs.zone = 'us-central1-a': zone is outside the region 'us-east5'; valid: us-east5-a, "
        "us-east5-b, us-east5-c"
    ]
