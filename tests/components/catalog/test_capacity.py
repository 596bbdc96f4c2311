"""Capacity types of a TPU slice: the rules GKE imposes and the node pool fields each renders."""

from __future__ import annotations

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tests.fixtures.pools import SA, pool_args
from tpu_serving.catalog import capacity
from tpu_serving.catalog.capacity import Capacity
from tpu_serving.pools.nodepool import node_pool_args, pool_ignore_changes


def test_capacity_on_demand_renders_a_fixed_slice():
    args = node_pool_args(pool_args(), "c-a", SA)
    assert args.node_count == 4 and args.autoscaling is None
    assert "reservation_affinity" not in args.node_config and "flex_start" not in args.node_config
    assert args.management == {"auto_repair": True, "auto_upgrade": True}


def test_capacity_spot_renders_spot_vms():
    assert node_pool_args(pool_args(capacity="spot"), "c-a", SA).node_config["spot"] is True


def test_capacity_specific_reservation_names_it():
    cfg = node_pool_args(pool_args(capacity="reservation", reservation="tpu-res"), "c-a", SA).node_config
    assert cfg["reservation_affinity"] == {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["tpu-res"],
    }


def test_capacity_any_reservation_names_none():
    cfg = node_pool_args(pool_args(capacity="any-reservation"), "c-a", SA).node_config
    assert cfg["reservation_affinity"] == {"consume_reservation_type": "ANY_RESERVATION"}


def test_capacity_flex_start_scales_the_whole_slice_from_zero():
    args = node_pool_args(pool_args(capacity="flex-start", max_run_duration_hours=24), "c-a", SA)
    assert args.node_config["flex_start"] is True
    assert args.node_config["max_run_duration"] == "86400s"
    assert args.node_config["reservation_affinity"] == {"consume_reservation_type": "NO_RESERVATION"}
    assert args.node_count is None and args.initial_node_count == 0
    assert args.autoscaling == {"total_min_node_count": 0, "total_max_node_count": 4, "location_policy": "ANY"}
    assert args.placement_policy == {"type": "COMPACT", "tpu_topology": "4x4"}
    assert args.management["auto_repair"] is False


@pytest.mark.parametrize(
    "capacity_, spot, reservation, expected",
    [
        ("on-demand", True, None, Capacity.SPOT),
        ("on-demand", False, "r", Capacity.RESERVATION),
        ("on-demand", False, None, Capacity.ON_DEMAND),
        ("flex-start", False, None, Capacity.FLEX_START),
    ],
)
def test_capacity_older_spellings_still_mean_what_they_meant(capacity_, spot, reservation, expected):
    assert capacity.effective(capacity_, spot, reservation) is expected


@pytest.mark.parametrize(
    "kwargs, fragments",
    [
        (dict(spot=True, reservation="r"), ["spot and reservation are mutually exclusive"]),
        (dict(capacity="flex-start", spot=True), ["spot = true and capacity = flex-start"]),
        (dict(capacity="flex-start", reservation="r"), ["reservation = 'r' with capacity = flex-start"]),
        (dict(capacity="any-reservation", reservation="r"), ["consumes any matching reservation"]),
        (dict(capacity="reservation"), ["capacity = reservation needs reservation"]),
        (dict(max_run_duration_hours=24), ["max_run_duration_hours = 24 with capacity = on-demand"]),
    ],
)
def test_capacity_refused_combinations_name_the_fields(kwargs, fragments):
    found = pool_args(**kwargs).problems()
    assert len(found) == 1 and all(f in found[0] for f in fragments), found


def test_tpu_capacity_refuses_queued_with_its_reason_and_lists_only_tpu_choices():
    """New-user review of the capacity fallback, m2: a refusal's valid values listed ``queued``, which GKE documents for
    GPU node pools only; it is no choice now, and a stack file's slice that says it is told why."""
    from pydantic import TypeAdapter, ValidationError

    from tpu_serving.common.validation import ArgumentsError, check_arguments
    from tpu_serving.pools.nodepool import TpuNodePoolArgs

    assert "queued" not in {str(c) for c in Capacity}
    with pytest.raises(ValidationError) as refused:
        TypeAdapter(capacity.TpuCapacity).validate_python("queued")
    said = str(refused.value)
    assert "queued provisioning (ProvisioningRequest) is documented for GPU node pools only" in said, said
    assert "valid: 'on-demand', 'spot', 'reservation', 'any-reservation', 'flex-start'" in said, said
    assert TypeAdapter(capacity.TpuCapacity).validate_python("spot") is Capacity.SPOT
    with pytest.raises(ArgumentsError) as component:
        check_arguments("TpuNodePool 'x'", pool_args(capacity="queued"), TpuNodePoolArgs)
    assert "'any-reservation' or 'flex-start'" in str(component.value), str(component.value)


def test_capacity_refused_combinations_pass_no_further():
    assert pool_args(capacity="flex-start", max_run_duration_hours=168).problems() == []
    assert pool_args(capacity="reservation", reservation="r").problems() == []


def test_capacity_refusals_read_exactly():
    """The whole message, not a fragment: it is what a user reads at preview."""
    assert pool_args(spot=True, reservation="r").problems() == [
        "spot and reservation are mutually exclusive: Spot VMs consume no reservation"
    ]
    assert pool_args(capacity="any-reservation", reservation="r").problems() == [
        "reservation = 'r' with capacity = any-reservation: any-reservation consumes any matching reservation; "
        "a named reservation needs capacity = reservation"
    ]
    assert pool_args(capacity="spot", reservation="r").problems() == [
        "reservation = 'r' with capacity = spot: spot consumes no reservation; "
        "a named reservation needs capacity = reservation"
    ]


def test_capacity_stockout_says_what_a_stockout_does_to_pulumi_up_for_every_type():
    assert set(capacity.STOCKOUT) == set(Capacity)
    assert "fails the node pool's creation, and so pulumi up" in capacity.STOCKOUT[Capacity.ON_DEMAND]
    assert "pulumi up succeeds whatever the stock" in capacity.STOCKOUT[Capacity.FLEX_START]
    assert "a zone's stockout does not touch them" in capacity.STOCKOUT[Capacity.RESERVATION]


def test_capacity_obtained_output_of_each_stack_names_each_slice_kind_and_its_stockout():
    """Each stack's preview says how each slice kind gets its VMs and what a stockout then does (SRE review M2):
    an always-on on-demand slice fails pulumi up, a from-zero one leaves its group Pending."""
    from tpu_serving_tools.preview.stack import capacity_summary

    outputs = plan_of("vllm-llama33-70b-v5e16").as_json()["outputs"]
    obtained = outputs["capacity"]["obtained"]
    # the two groups' slices are created whole (a stockout fails pulumi up) and may go down to zero once a group
    # left them for a free slice of their shape (GKE review 37, M1); the HPA's third and the surge spare start empty
    for kept in ("v5e16", "v5e16b"):
        assert obtained[kept].startswith("on-demand: the pool is created with its whole slice (a stockout then fails")
        assert "the autoscaler removes the slice once no group runs on it" in obtained[kept]
    for empty in ("v5e16c", "v5e16s"):
        assert obtained[empty].startswith("on-demand: the pool starts empty and the autoscaler adds the whole slice")
    assert any(line.startswith("  slices v5e16: on-demand: the pool is created") for line in capacity_summary(outputs))
    # a stack without a slice that starts empty keeps fixed pools: a stockout fails its pool and pulumi up
    fixed = plan_of("llama31-405b-v6e16").as_json()["outputs"]["capacity"]["obtained"]
    assert all(v.startswith("on-demand: a stockout fails the node pool's creation") for v in fixed.values()), fixed
    existing = plan_of("vllm-llama33-70b-existing").as_json()["outputs"]["capacity"]["obtained"]
    assert set(existing.values()) == {"an existing node pool: its capacity is its owner's"}


def test_capacity_a_reserved_slice_consumes_its_reservation():
    """phases.build_pools (mutmut_42): a slice's `reservation` reaches its node pools' reservation affinity."""

    def reserve(slices):
        slices[0].update(capacity="reservation", reservation="tpu-res")

    plan = plan_edited("vllm-llama33-70b-v5e16", tpuSlices=reserve)
    pools = [
        p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["nodeConfig"]["machineType"][:2] == "ct"
    ]
    affinities = [p.inputs["nodeConfig"].get("reservationAffinity") for p in pools]
    assert [a["values"] for a in affinities if a] == [["tpu-res"]], affinities  # the first of three slice kinds


def test_capacity_reserved_pools_upgrade_without_a_surge_node():
    """GKE and SRE reviews round 42, M3: GKE's default surge upgrade first adds a node, which a reservation sized to
    the stack's slices cannot give; the upgrade then fails and is retried. A reserved pool upgrades with maxSurge 0."""
    reserved = node_pool_args(pool_args(capacity="reservation", reservation="tpu-res"), "c-a", SA)
    settings = reserved.upgrade_settings
    assert (settings.strategy, settings.max_surge, settings.max_unavailable) == ("SURGE", 0, 1)
    (pool,) = [
        p
        for p in plan_of("vllm-llama33-70b-v6e8").resources
        if p.name == "vllm70bv6e-v6e8a" and p.type.endswith(":NodePool")
    ]
    assert pool.inputs["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert node_pool_args(pool_args(), "c-a", SA).upgrade_settings is None
    assert node_pool_args(pool_args(capacity="any-reservation"), "c-a", SA).upgrade_settings is None


def test_capacity_obtained_says_a_reserved_slice_from_zero_takes_the_next_step_of_its_fallback():
    """vllm-llama33-70b-v6e8 has a capacity fallback: its reserved slice from zero takes the class's next step when
    the reservation has none free (slice_capacity.stockout's tests hold FROM_ZERO_RESERVED without one)."""
    obtained = plan_of("vllm-llama33-70b-v6e8").outputs["capacity"]["obtained"]
    assert obtained["v6e8c"] == f"reservation: {capacity.fallback_reserved(30)}"
    assert obtained["v6e8a"] == f"reservation: {capacity.STOCKOUT[Capacity.RESERVATION]}"


@pytest.mark.parametrize(
    "reservation",
    ["tpu-res", "projects/owner-project/reservations/tpu-res", "tpu-res/reservationBlocks/block-1"],
)
def test_capacity_reservation_names_the_affinity_takes(reservation):
    from tpu_serving.common.validation import argument_problems

    assert argument_problems(pool_args(capacity="reservation", reservation=reservation)) == []


@pytest.mark.parametrize("reservation", ["Chat_v6e8-a", "tpu-res-", "1res", "projects/p/reservations/r", "a" * 64])
def test_capacity_reservation_name_the_api_refuses(reservation):
    from tpu_serving.common.validation import argument_problems

    (problem,) = argument_problems(pool_args(capacity="reservation", reservation=reservation))
    assert problem.startswith("TpuNodePoolArgs.reservation = ") and ": must be a Compute Engine reservation" in problem


def test_capacity_a_classed_pool_that_may_go_to_zero_is_created_empty_and_keeps_a_slice_it_holds():
    """Issue 37, item 2: with a capacity fallback no pool creation waits on TPU capacity (node_count 0: the provider's
    InitialNodeCount 0), and the pool ignores node_count afterwards, so a pool made before the fallback keeps its
    slice; without the class, or on a pool not autoscaled to zero, the pool is created whole."""
    classed = pool_args(compute_class="c-serving", scale_to_zero=("c-a",))
    made = node_pool_args(classed, "c-a", SA)
    assert made.node_count == 0 and made.initial_node_count is None
    assert made.autoscaling == {"total_min_node_count": 0, "total_max_node_count": 4, "location_policy": "ANY"}
    assert pool_ignore_changes(classed, "c-a") == ["node_count"]
    assert node_pool_args(pool_args(scale_to_zero=("c-a",)), "c-a", SA).node_count == 4
    assert node_pool_args(pool_args(compute_class="c-serving"), "c-a", SA).node_count == 4


def test_capacity_obtained_says_a_fallback_slice_waits_instead_of_failing_pulumi_up():
    obtained = plan_of("vllm-llama31-405b-v6e16").outputs["capacity"]["obtained"]
    assert obtained["v6e16"] == f"on-demand: {capacity.fallback(30)}"
    # the stack's own minutes (observability.capacityWaitMinutes, 30 by default), not the setting's name alone
    assert "after 30 minutes (observability.capacityWaitMinutes) the 'Serving groups" in obtained["v6e16"]
    (pool,) = [
        p for p in plan_of("vllm-llama31-405b-v6e16").of_type("gcp:container/nodePool:NodePool") if "v6e16" in p.name
    ]
    assert pool.inputs["nodeCount"] == 0 and "initialNodeCount" not in pool.inputs
