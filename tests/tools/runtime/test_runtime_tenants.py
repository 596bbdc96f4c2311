"""Workloads on TPU pools of their own (tools.runtime.scheduling_tenants; library review 9, M4): a second serving on
the same slice shape, its node_pools left at the default, may take the first's slices."""

from __future__ import annotations

import copy
from typing import Any

from tests.conftest import plan_of
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.scheduling_check import check

POOL_LABEL = "cloud.google.com/gke-nodepool"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"


def _lws(plan: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in plan["resources"] if r["inputs"].get("kind") == "LeaderWorkerSet")


def _pin(lws: dict[str, Any], pool: str) -> None:
    for t in lws["inputs"]["spec"]["leaderWorkerTemplate"].values():
        if isinstance(t, dict) and "spec" in t:
            t["spec"]["nodeSelector"] = {**t["spec"]["nodeSelector"], POOL_LABEL: pool}


def _unclass(lws: dict[str, Any]) -> None:
    """The LeaderWorkerSet's pods without their ComputeClass's selector and toleration (``serving.fallback`` unset)."""
    for t in lws["inputs"]["spec"]["leaderWorkerTemplate"].values():
        if isinstance(t, dict) and "spec" in t:
            t["spec"]["nodeSelector"].pop(COMPUTE_CLASS_LABEL)
            t["spec"]["tolerations"] = [x for x in t["spec"]["tolerations"] if x.get("key") != COMPUTE_CLASS_LABEL]


def _second_tenant(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with a copy of its LeaderWorkerSet in namespace ``reason`` named ``vllm405``."""
    out = copy.deepcopy(plan)
    other = copy.deepcopy(_lws(out))
    other["urn"] += "-reason"
    other["name"] += "-reason"
    other["inputs"]["metadata"] = {**other["inputs"]["metadata"], "namespace": "reason", "name": "vllm405"}
    out["resources"].append(other)
    return out


def _shared(plan: dict[str, Any]) -> list[tuple[str, bool, str]]:
    return [(f.subject, f.ok, f.reason) for f in check(PlanView(plan)).findings if f.subject.startswith("pools ")]


def test_two_servings_on_one_slice_shape_fail_naming_both_the_pools_and_node_pools():
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    assert _shared(plan) == []  # one serving's groups share its pools
    ((subject, ok, why),) = _shared(_second_tenant(plan))
    assert not ok and subject == (
        "pools shared by LeaderWorkerSet reason/vllm405 and LeaderWorkerSet vllm-llama70b/vllm"
    ), subject
    assert "may land on pool(s) vllm70bv6e-v6e8a, vllm70bv6e-v6e8b, vllm70bv6e-v6e8c, vllm70bv6e-v6e8s" in why, why
    assert "VllmServingArgs.node_pools" in why, why


def test_two_servings_pinned_to_pools_of_their_own_pass():
    tenants = _second_tenant(plan_of("vllm-llama33-70b-v6e8").as_json())
    first, second = [r for r in tenants["resources"] if r["inputs"].get("kind") == "LeaderWorkerSet"]
    _pin(first, "vllm70bv6e-v6e8a")
    _pin(second, "vllm70bv6e-v6e8b")
    assert _shared(tenants) == []
    _pin(second, "vllm70bv6e-v6e8a")
    assert [s for s, _, _ in _shared(tenants)] == [
        "pools shared by LeaderWorkerSet reason/vllm405 and LeaderWorkerSet vllm-llama70b/vllm"
    ]


def test_roles_of_one_disaggregated_set_are_no_two_workloads():
    assert _shared(plan_of("vllm-llama33-70b-disagg-v6e8x2").as_json()) == []


def test_a_serving_beside_a_disaggregated_set_on_its_slice_shape_fails():
    """The DisaggregatedSet's pools are its roles' together (each role's child LeaderWorkerSets read on their own)."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-disagg-v6e8x2").as_json())
    grafted = copy.deepcopy(_lws(plan_of("vllm-llama33-70b-v6e8").as_json()))
    _unclass(grafted)  # a serving of the shape with no ComputeClass of its own
    plan["resources"].append(grafted)
    ((subject, ok, why),) = _shared(plan)
    assert not ok and subject == (
        "pools shared by LeaderWorkerSet vllm-llama70b/vllm and DisaggregatedSet vllm-pd70b/vllm"
    ), subject
    assert "vllmpd70b-decode-0" in why and "vllmpd70b-prefill-0" in why, why
