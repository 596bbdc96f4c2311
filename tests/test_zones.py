"""Multi-zone resilience, as far as TPUs allow: a slice kind may sit in its own zone of the region."""

from __future__ import annotations

import pytest

from tests.fixtures.configs import VLLM, load, plan_edited, with_change
from tpu_serving.config import ConfigError

STACK = "vllm-llama33-70b-v5e16"


def _second_zone(slices: list) -> None:
    slices[1]["zone"] = "us-west4-b"


def test_zones_each_slice_stays_in_its_one_zone():
    plan = plan_edited(STACK, tpuSlices=_second_zone)
    pools = {r.name: r.inputs for r in plan.of_type("gcp:container/nodePool:NodePool") if "v5e16" in r.name}
    assert pools["vllm70b-v5e16-pool"]["nodeLocations"] == ["us-west4-a"]
    assert pools["vllm70b-v5e16b-pool"]["nodeLocations"] == ["us-west4-b"]
    # The second group's slice (always on at autoscaling.minReplicas 2) is one whole slice in its own zone.
    assert pools["vllm70b-v5e16b-pool"]["nodeCount"] == 4
    assert pools["vllm70b-v5e16b-pool"]["placementPolicy"]["tpuTopology"] == "4x4"
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    assert cpu.inputs["nodeLocations"] == ["us-west4-a"]  # the CPU pool stays in the stack's zone


def test_zones_unset_means_the_stacks_zone():
    cfg = load(VLLM)
    assert cfg.zone_of(cfg.tpu_slices[0]) == "us-west4-a"
    moved = load(with_change("tpu-serving:tpuSlices/0/zone", "us-west4-c", VLLM))
    assert moved.zone_of(moved.tpu_slices[0]) == "us-west4-c"


@pytest.mark.parametrize("zone", ["us-east5-b", "us-west4", "us-west4-bb"])
def test_zones_outside_the_region_are_refused_at_the_slice(zone):
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:tpuSlices/0/zone", zone, VLLM))
    (problem,) = err.value.problems
    assert f"tpu-serving:tpuSlices[0].zone = \"{zone}\": not a zone of the region 'us-west4'" in problem
    assert "valid: zones of the form us-west4-<letter>" in problem
