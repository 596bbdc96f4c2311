"""tpu_serving.config.slice_capacity.scale_to_zero: the kept serving slices that may go down to zero once their group left them (GKE review
round 37, M1: a group a repair moved to a free slice of its shape stays there, and its old fixed pool billed idle)."""

from __future__ import annotations

import copy

from tests.fixtures.configs import VLLM, load
from tpu_serving.config.slice_capacity import scale_from_zero, scale_to_zero


def _vllm(pools: int, *, capacity: dict | None = None, **serving: object) -> dict:
    """The VLLM fixture on ``pools`` v5e-16 slice kinds s0, s1, ... (``capacity``: keys of each kind)."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:tpuSlices"] = [
        {"name": f"s{i}", "slice": "v5litepod-16", "diskSizeGb": 300, **(capacity or {})} for i in range(pools)
    ]
    cfg["tpu-serving:serving"].update(slices=[f"s{i}" for i in range(pools)], **serving)
    return cfg


def test_scale_to_zero_keeps_on_the_minimum_and_lets_it_go_down_beside_a_slice_from_zero():
    cfg = load(_vllm(3, rollout="surge", autoscaling={"minReplicas": 1, "maxReplicas": 2}))
    assert scale_from_zero(cfg) == {"s1", "s2"}
    assert scale_to_zero(cfg) == {"s0"}


def test_scale_to_zero_is_empty_without_a_free_slice_of_the_shape():
    # one group per slice, every slice held: a group has nowhere else to go, the pools stay fixed
    cfg = load(_vllm(2, replicas=2))
    assert scale_from_zero(cfg) == set() and scale_to_zero(cfg) == set()


def test_scale_to_zero_leaves_reserved_slices_fixed():
    reserved = {"capacity": "reservation", "reservation": "tpu-v5e-reservation"}
    cfg = load(_vllm(3, capacity=reserved, rollout="surge", autoscaling={"minReplicas": 1, "maxReplicas": 2}))
    assert scale_to_zero(cfg) == set()


def test_stockout_under_a_fallback_says_the_class_for_every_serving_pool_it_creates_empty():
    """GKE review of the issue 37 item 2 fixes, M1: a slice that starts empty and one that may go down to zero, under a
    fallback, both take the class's next step; without one, the first waits for capacity and the second is created
    whole."""
    from tpu_serving.catalog.capacity import FROM_ZERO, TO_ZERO, fallback
    from tpu_serving.config.slice_capacity import stockouts

    shape = {"rollout": "surge", "autoscaling": {"minReplicas": 1, "maxReplicas": 2}}
    plain = load(_vllm(3, **shape))
    classed = load(_vllm(3, fallback=["spot"], **shape))
    assert [stockouts(plain)[n] for n in ("s0", "s1")] == [TO_ZERO, FROM_ZERO]
    assert [stockouts(classed)[n] for n in ("s0", "s1", "s2")] == [fallback(30)] * 3


def test_stockout_under_a_fallback_of_a_reserved_slice_from_zero_names_the_next_step():
    from tpu_serving.catalog.capacity import FROM_ZERO_RESERVED, fallback_reserved
    from tpu_serving.config.slice_capacity import stockouts

    held = {"capacity": "reservation", "reservation": "r"}
    shape = {"rollout": "surge", "autoscaling": {"minReplicas": 1, "maxReplicas": 2}}
    plain = load(_vllm(3, capacity=held, **shape))
    classed = load(_vllm(3, capacity=held, fallback=["spot"], **shape))
    assert stockouts(plain)["s1"] == FROM_ZERO_RESERVED
    assert stockouts(classed)["s1"] == fallback_reserved(30)


def test_stockout_under_a_fallback_says_the_stacks_capacity_wait_minutes():
    """New-user review m7: the text named observability.capacityWaitMinutes, not the stack's minutes; each kind under a
    fallback now says after how many minutes the capacity-wait ticket opens, the stack's own value."""
    from tpu_serving.config.slice_capacity import stockouts

    shape = {"rollout": "surge", "autoscaling": {"minReplicas": 1, "maxReplicas": 2}}
    held = {"capacity": "reservation", "reservation": "r"}
    said = {}
    for kind, cfg in (
        ("on-demand", _vllm(3, fallback=["spot"], **shape)),
        ("reserved", _vllm(3, capacity=held, fallback=["spot"], **shape)),
    ):
        cfg["tpu-serving:observability"] = {"unpaged": True, "capacityWaitMinutes": 45}
        said[kind] = stockouts(load(cfg))["s1"]
    wait = "after 45 minutes (observability.capacityWaitMinutes) the 'Serving groups waiting for capacity' ticket opens"
    assert said["on-demand"].startswith("the pool is created empty") and wait in said["on-demand"], said
    assert said["reserved"].startswith("the pool starts empty") and wait in said["reserved"], said
    assert "30 minutes" not in " ".join(said.values())
