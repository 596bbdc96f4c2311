"""Multi-zone resilience, as far as TPUs allow: a slice kind may sit in its own zone of the region."""

from __future__ import annotations

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load, plan_edited, plan_edited_once, with_change
from tpu_serving.common import gcp_zones, naming
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.zone_notes import zone_summary

STACK = "vllm-llama33-70b-v5e16"


def _second_zone(slices: list) -> None:
    slices[1]["zone"] = "us-west4-b"


def test_zones_each_slice_stays_in_its_one_zone():
    plan = plan_edited(STACK, tpuSlices=_second_zone)
    pools = {r.name: r.inputs for r in plan.of_type("gcp:container/nodePool:NodePool") if "v5e16" in r.name}
    assert pools["vllm70b-v5e16"]["nodeLocations"] == ["us-west4-a"]
    assert pools["vllm70b-v5e16b"]["nodeLocations"] == ["us-west4-b"]
    # The second group's slice (always on at autoscaling.minReplicas 2) is one whole slice in its own zone.
    assert pools["vllm70b-v5e16b"]["nodeCount"] == 4
    assert pools["vllm70b-v5e16b"]["placementPolicy"]["tpuTopology"] == "4x4"
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    # the CPU pool spans the region's zones, the stack's first
    assert cpu.inputs["nodeLocations"] == ["us-west4-a", "us-west4-b", "us-west4-c"]


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
    assert problem.endswith("valid: us-west4-a, us-west4-b, us-west4-c")


@pytest.mark.parametrize("zone", ["us-west4-z", "us-west4-d"])
def test_zones_a_letter_the_region_does_not_have_is_refused_with_its_zones(zone):
    # us-west4 has a, b and c (Google's regions and zones page, components/common/gcp_zones.py)
    for key in ("tpu-serving:zone", "tpu-serving:tpuSlices/0/zone"):
        with pytest.raises(ConfigError) as err:
            load(with_change(key, zone, VLLM))
        (problem,) = err.value.problems
        assert f"= \"{zone}\": not a zone of the region 'us-west4'" in problem
        assert problem.endswith("valid: us-west4-a, us-west4-b, us-west4-c")


def test_zones_a_region_without_an_a_zone_names_its_own():
    # us-east1 has b, c and d; us-central1 a, b, c and f
    assert naming.zone_problem("us-east1-a", "us-east1").endswith("valid: us-east1-b, us-east1-c, us-east1-d")
    assert naming.zone_problem("us-east1-d", "us-east1") == ""
    assert naming.zone_problem("us-central1-f", "us-central1") == ""
    assert "valid: us-central1-a, us-central1-b, us-central1-c, us-central1-f" in naming.zone_problem(
        "us-east5-b", "us-central1"
    )


def test_zones_a_region_the_table_does_not_hold_is_checked_for_the_form_only():
    # a region opened after the table was read is not refused; its zone's form still is
    assert gcp_zones.zones_of("us-west9") is None
    assert naming.zone_problem("us-west9-q", "us-west9") == ""
    assert "zones of the form us-west9-<letter>" in naming.zone_problem("us-west4-a", "us-west9")


def test_zones_table_names_regions_and_zones_of_the_form():
    assert len(gcp_zones.REGION_ZONES) >= 40
    for region, zones in gcp_zones.REGION_ZONES.items():
        assert not naming.region_problem(region), region
        assert len(zones) >= 3 and len(set(zones)) == len(zones), region
        for zone in zones:
            assert naming.ZONE.match(zone) and naming.ZONE.match(zone).group(1) == region, zone
    # every zone the TPU zone table lists of the form <region>-<letter> is a zone of the table
    from tpu_serving.catalog import tpu_zones

    for zones in tpu_zones.TPU_ZONES.values():
        for zone in zones:
            if naming.ZONE.match(zone):
                assert zone in gcp_zones.REGION_ZONES[tpu_zones.region_of(zone)], zone


def test_gcp_zones_pool_zones_spans_the_region_the_stacks_zone_first():
    assert gcp_zones.pool_zones("us-east5", "us-east5-b") == ("us-east5-b", "us-east5-a", "us-east5-c")
    assert gcp_zones.pool_zones("us-west4", "us-west4-a", ("us-west4-c", "us-west4-a")) == ("us-west4-c", "us-west4-a")
    # a region the table does not hold: its zones are not known, so none is guessed
    assert gcp_zones.pool_zones("xx-new1", "xx-new1-a") == ("xx-new1-a",)


def test_zones_cpu_pool_spread_problem_counts_the_minimum_in_each_zone():
    from tpu_serving.config.checks import cpu_pool_spread_problem

    assert cpu_pool_spread_problem("k", 1, zones=3) == ""
    assert "valid: 2 or more" in cpu_pool_spread_problem("k", 1)
    assert "valid: 1 or more in each of its 3 zones" in cpu_pool_spread_problem("k", 0, zones=3)


def test_zones_cpu_pool_zones_named_are_the_pools():
    plan = plan_edited(STACK, cluster=lambda c: c.__setitem__("cpuPoolZones", ["us-west4-b", "us-west4-c"]))
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    assert cpu.inputs["nodeLocations"] == ["us-west4-b", "us-west4-c"]


def test_zones_cost_bills_the_cpu_pools_other_zones_on_their_own_line():
    items = plan_edited_once(STACK).outputs["cost"]["items"]
    (more,) = [i for i in items if i["what"].startswith("cpu pool (minimum, ")]
    assert more["what"] == "cpu pool (minimum, 2 more zones: us-west4-b, us-west4-c): 2 x n2-standard-8"


def test_zone_notes_zone_summary_names_the_zones_their_cost_and_the_single_replica_fronts():
    from tpu_serving_tools.preview.zone_notes import zone_summary

    lines = zone_summary(plan_edited_once(STACK))
    assert "3 zones (us-west4-a, us-west4-b, us-west4-c), minNodes 1 in each = 3 nodes" in lines[1]
    assert "the other zones' 2 nodes cost $" in lines[1]
    # the serving prober runs two replicas apart (tpu_serving.operations.prober.PROBER_REPLICAS): no single-replica front left
    assert len(lines) == 2 and not [line for line in lines if "prober" in line]
    (saxml,) = [line for line in zone_summary(plan_of("saxml-175b-v5e32x2")) if "single-replica" in line]
    assert "Deployment sax-admin-server" in saxml and "prober" not in saxml


def test_zones_tpu_cluster_args_refuse_a_cpu_pool_zone_outside_the_region():
    from tpu_serving.platform.cluster import TpuClusterArgs

    args = TpuClusterArgs(
        project="my-project",
        region="us-west4",
        zone="us-west4-a",
        name="c",
        cpu_pool_zones=["us-west4-a", "us-east1-b", "us-west4-a"],
    )
    found = args.problems()
    assert (
        "cpu_pool_zones[1] = 'us-east1-b': zone is outside the region 'us-west4'; valid: us-west4-a, us-west4-b, us-west4-c"
        in found
    )
    assert "cpu_pool_zones[2] = 'us-west4-a': named twice" in found
    assert TpuClusterArgs(project="my-project", region="us-west4", zone="us-west4-a", name="c").cpu_zones == (
        "us-west4-a",
        "us-west4-b",
        "us-west4-c",
    )


def test_per_zone_minimum_keeps_two_nodes_in_all_unless_set():
    from tpu_serving.common.gcp_zones import per_zone_minimum

    assert [per_zone_minimum(None, z) for z in (1, 2, 3)] == [2, 1, 1]
    assert [per_zone_minimum(3, z) for z in (1, 3)] == [3, 3]
    assert per_zone_minimum(0, 2) == 0


def test_zone_summary_says_the_standing_serving_groups_are_required_apart():
    lines = zone_summary(plan_of("vllm-llama33-70b-v6e8"))
    (line,) = [line for line in lines if line.startswith("  serving groups of LeaderWorkerSet vllm-llama70b/vllm: ")]
    assert line.startswith(
        "  serving groups of LeaderWorkerSet vllm-llama70b/vllm: groups 0, 1 (the standing ones) required apart"
    )
    assert "in a zone outage a group the HPA adds takes the surviving zone's (at its maximum it adds none" in line
    assert not any("serving groups" in line for line in zone_summary(plan_of("vllm-llama33-70b-v5e16")))
