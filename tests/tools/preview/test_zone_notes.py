"""tpu_serving_tools.preview.zone_notes: the preview's zone lines (multi-zone resilience, as far as TPUs allow)."""

from __future__ import annotations

from tests.conftest import plan_of
from tests.fixtures.configs import ZONES_STACK as STACK
from tests.fixtures.configs import plan_edited_once
from tpu_serving_tools.preview.zone_notes import zone_summary


def test_zone_notes_zone_summary_names_the_zones_their_cost_and_the_single_replica_fronts():
    from tpu_serving_tools.preview.zone_notes import zone_summary

    lines = zone_summary(plan_edited_once(STACK))
    assert "3 zones (us-west4-a, us-west4-b, us-west4-c), minNodes 1 in each = 3 nodes" in lines[1]
    assert "the other zones' 2 nodes cost $" in lines[1]
    # the serving prober runs two replicas apart (tpu_serving.operations.prober.PROBER_REPLICAS): no single-replica front left
    assert len(lines) == 2 and not [line for line in lines if "prober" in line]
    (saxml,) = [line for line in zone_summary(plan_of("saxml-175b-v5e32x2")) if "single-replica" in line]
    assert "Deployment sax-admin-server" in saxml and "prober" not in saxml


def test_zone_summary_says_the_standing_serving_groups_are_required_apart():
    lines = zone_summary(plan_of("vllm-llama33-70b-v6e8"))
    (line,) = [line for line in lines if line.startswith("  serving groups of LeaderWorkerSet vllm-llama70b/vllm: ")]
    assert line.startswith(
        "  serving groups of LeaderWorkerSet vllm-llama70b/vllm: groups 0, 1 (the standing ones) required apart"
    )
    assert "in a zone outage a group the HPA adds takes the surviving zone's (at its maximum it adds none" in line
    assert not any("serving groups" in line for line in zone_summary(plan_of("vllm-llama33-70b-v5e16")))
