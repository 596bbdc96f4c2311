"""slice_capacity.scale_to_zero: the kept serving slices that may go down to zero once their group left them (GKE review
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
