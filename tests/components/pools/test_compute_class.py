"""A serving's capacity fallback (tpu_serving.pools.compute_class, tpu_serving.config.fallback): the ComputeClass spec
against GKE's published schema, its priorities, the refusals, and the pools and pods that take part."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load, with_serving
from tpu_serving import catalog
from tpu_serving.config import ConfigError
from tpu_serving.pools.compute_class import (
    LABEL,
    Fallback,
    TpuComputeClassArgs,
    compute_class_spec,
    fallback_problems,
    node_taints,
    toleration,
    tolerations,
)
from tpu_serving_tools.reference.schema import SchemaError, validate_custom

V6E16 = catalog.resolve_slice_name("v6e-16")
KEY = "tpu-serving:serving.fallback"


def _args(fallback: tuple[Fallback, ...], shape: catalog.SliceShape = V6E16) -> TpuComputeClassArgs:
    return TpuComputeClassArgs(
        shape=shape,
        node_pools=["vllm405b-v6e16"],
        zones=["us-east5-b", "us-east5-b"],
        service_account="vllm405b-v6e16@tpu-serving-demo.iam.gserviceaccount.com",
        fallback=fallback,
        disk_size_gb=300,
    )


def _object(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "c"}, "spec": spec}


def test_compute_class_spec_puts_the_pools_first_then_each_fallback_of_the_whole_slice() -> None:
    spec = compute_class_spec(_args((Fallback.ON_DEMAND, Fallback.FLEX_START, Fallback.SPOT)))
    first, on_demand, flex, spot = spec["priorities"]
    assert first == {"nodepools": ["vllm405b-v6e16"]}
    # v6e-16: 4 VMs of 4 chips, 4x4; count is the chips of one VM (the schema's "count of TPU chips for a node")
    tpu = {"type": "tpu-v6e-slice", "count": 4, "topology": "4x4"}
    disk = {"bootDiskSize": 300}
    assert on_demand == {"tpu": tpu, "spot": False, "reservations": {"affinity": "None"}, "storage": disk}
    assert flex == {
        "tpu": tpu,
        "flexStart": {"enabled": True, "nodeRecycling": {"leadTimeSeconds": 3600}},
        "maxRunDurationSeconds": 604800,
        "storage": disk,
    }
    assert spot == {"tpu": tpu, "spot": True, "storage": disk}
    assert spec["priorityDefaults"] == {"location": {"zones": ["us-east5-b"]}}
    assert spec["nodePoolAutoCreation"] == {"enabled": True}
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["nodePoolConfig"] == {
        "serviceAccount": "vllm405b-v6e16@tpu-serving-demo.iam.gserviceaccount.com",
        "imageStreaming": {"enabled": True},
    }


@pytest.mark.usefixtures("reference")  # GKE's schema is a reference file: without it, how to get it
def test_compute_class_spec_is_valid_against_gkes_schema() -> None:
    validate_custom(_object(compute_class_spec(_args((Fallback.FLEX_START, Fallback.SPOT)))), "gke")


@pytest.mark.usefixtures("reference")  # GKE's schema is a reference file: without it, how to get it
def test_compute_class_spec_schema_check_refuses_a_field_gke_does_not_have() -> None:
    spec = copy.deepcopy(compute_class_spec(_args((Fallback.SPOT,))))
    spec["priorities"][1]["tpu"]["chips"] = 16
    with pytest.raises(SchemaError, match="chips"):
        validate_custom(_object(spec), "gke")


def test_compute_class_spec_names_no_node_account_on_pools_the_stack_does_not_make() -> None:
    args = _args((Fallback.SPOT,))
    spec = compute_class_spec(TpuComputeClassArgs(args.shape, args.node_pools, args.zones, None, args.fallback))
    assert spec["nodePoolConfig"] == {"imageStreaming": {"enabled": True}}


def test_toleration_matches_the_pools_taint() -> None:
    (taint,) = node_taints("vllm405b-serving")
    said = toleration("vllm405b-serving")
    assert (said.key, said.value, said.operator, said.effect) == (taint["key"], taint["value"], "Equal", "NoSchedule")
    assert taint == {"key": LABEL, "value": "vllm405b-serving", "effect": "NO_SCHEDULE"}


def test_tolerations_take_the_class_taint_and_gkes_spot_taint() -> None:
    said = [(t.key, t.operator, t.value, t.effect) for t in tolerations("vllm405b-serving")]
    assert said == [
        (LABEL, "Equal", "vllm405b-serving", "NoSchedule"),
        ("cloud.google.com/gke-spot", "Equal", "true", "NoSchedule"),
    ]


def test_fallback_problems_refuses_a_repeated_step() -> None:
    (found,) = fallback_problems(["spot", "spot"], V6E16)
    assert "each way once" in found


def test_fallback_problems_refuses_flex_start_on_a_generation_without_it() -> None:
    single_host = catalog.slice_shape("tpu7x-standard-1t", "1x1x1")
    assert not single_host.workload_policy
    (found,) = fallback_problems(["flex-start"], single_host)
    assert "no flex-start tpu7x VMs" in found and "v5e, v5p, v6e" in found


def test_fallback_problems_refuses_a_shape_placed_by_a_workload_policy() -> None:
    """GKE review of the capacity fallback, M1: the refusal is this library's limit, and says so (the CRD takes a
    priority's placement.policyName)."""
    (found,) = fallback_problems(["spot"], catalog.resolve_slice_name("tpu7x-16"))
    assert "workload policy: this library makes no ComputeClass for such a slice" in found, found
    assert "placement.policyName" in found and "hold the slice with a reservation" in found, found


def test_fallback_problems_refuses_flex_start_on_a_multi_host_slice() -> None:
    (found,) = fallback_problems(["on-demand", "flex-start"], V6E16)
    assert "v6e-16 spans 4 VMs" in found and "single-host" in found


def test_fallback_problems_takes_the_published_ladder() -> None:
    assert fallback_problems(["on-demand", "flex-start", "spot"], catalog.resolve_slice_name("v6e-8")) == []
    assert fallback_problems(["on-demand", "spot"], V6E16) == []


def test_fallback_problems_refuses_a_cluster_version_without_node_pool_auto_creation_at_its_key() -> None:
    cfg = with_serving(VLLM, fallback=["spot"])
    cfg["tpu-serving:cluster"] = {**cfg["tpu-serving:cluster"], "minMasterVersion": "1.33.2"}
    with pytest.raises(ConfigError) as refused:
        load(cfg)
    (line,) = [p for p in str(refused.value).splitlines() if "fallback needs" in p]
    assert 'tpu-serving:cluster.minMasterVersion = "1.33.2"' in line and "1.33.3-gke.1136000" in line, line


def test_fallback_problems_takes_a_version_with_node_pool_auto_creation() -> None:
    cfg = with_serving(VLLM, fallback=["spot"])
    cfg["tpu-serving:cluster"] = {**cfg["tpu-serving:cluster"], "minMasterVersion": "1.34"}
    assert [str(s) for s in load(cfg).serving.fallback] == ["spot"]  # type: ignore[union-attr]


def test_fallback_problems_refuses_an_unknown_way_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as refused:
        load(with_serving(VLLM, fallback=["reservation"]))
    said = str(refused.value)
    assert KEY in said and "on-demand" in said and "flex-start" in said and "spot" in said, said


def _lws_pods(stack: str) -> list[dict[str, Any]]:
    plan = plan_of(stack)
    (lws,) = [r for r in plan.resources if r.type.endswith(":LeaderWorkerSet")]
    templates = lws.inputs["spec"]["leaderWorkerTemplate"]
    return [t["spec"] for t in templates.values() if isinstance(t, dict) and "spec" in t]


@pytest.mark.parametrize("stack", ["vllm-llama31-405b-v6e16", "vllm-llama33-70b-v6e8"])
def test_compute_class_the_pools_carry_and_the_pods_select_and_tolerate(stack: str) -> None:
    plan = plan_of(stack)
    (cc,) = [r for r in plan.resources if r.type == "kubernetes:cloud.google.com/v1:ComputeClass"]
    name = cc.inputs["metadata"]["name"]
    first = cc.inputs["spec"]["priorities"][0]["nodepools"]
    pools = {
        r.inputs["name"]: r.inputs["nodeConfig"] for r in plan.resources if r.type == "gcp:container/nodePool:NodePool"
    }
    assert first and set(first) <= set(pools)
    for pool in first:
        assert pools[pool]["labels"] == {LABEL: name}
        assert pools[pool]["taints"] == [{"key": LABEL, "value": name, "effect": "NO_SCHEDULE"}]
    specs = _lws_pods(stack)
    assert specs
    for spec in specs:
        assert spec["nodeSelector"][LABEL] == name
        assert {"key": LABEL, "operator": "Equal", "value": name, "effect": "NoSchedule"} in spec["tolerations"]
        spot = {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        assert spot in spec["tolerations"]


def test_compute_class_none_without_a_fallback() -> None:
    plan = plan_of("vllm-llama33-70b-v5e16")
    assert not [r for r in plan.resources if r.type == "kubernetes:cloud.google.com/v1:ComputeClass"]
    assert all(LABEL not in spec["nodeSelector"] for spec in _lws_pods("vllm-llama33-70b-v5e16"))


def test_tpu_compute_class_args_refuse_an_empty_fallback_naming_it() -> None:
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    args = TpuComputeClassArgs(shape=V6E16, node_pools=["p"], zones=["us-east5-b"], service_account=None, fallback=())
    with pytest.raises(ArgumentsError) as refused:
        check_arguments("TpuComputeClass 'x'", args, TpuComputeClassArgs)
    said = "fallback = (): must have at least 1 item: one or more of 'on-demand', 'flex-start' or 'spot'"
    assert said in str(refused.value), str(refused.value)
    assert "leave it out" not in str(refused.value), "the argument is required"


def test_fallback_under_another_backend_names_the_backend_that_takes_it() -> None:
    """``serving.fallback`` on a PathwaysJob serving is a key of backend vllm, not a typo (new-user review of issue 37
    item 2, M2); a key no backend has still reads as unknown alone."""
    with pytest.raises(ConfigError) as refused:
        load(with_serving(None, fallback=["spot"], nosuch=1))
    lines = str(refused.value).splitlines()
    (fallback,) = [p for p in lines if "serving.fallback" in p]
    assert "unknown key; a setting of backend vllm, not of pathways-job;" in fallback, fallback
    (nosuch,) = [p for p in lines if "serving.nosuch" in p]
    assert "a setting of backend" not in nosuch, nosuch


def test_tpu_compute_class_args_obey_the_stack_files_fallback_rules() -> None:
    """New-user review of the capacity fallback, M2: a program's class took flex-start on a multi-host slice and a step
    twice, which the stack file refuses; the same rules now refuse them there, each with its value."""
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    bad = dataclasses.replace(_args((Fallback.FLEX_START, Fallback.FLEX_START)), node_pools=[])
    with pytest.raises(ArgumentsError) as refused:
        check_arguments("TpuComputeClass 'x'", bad, TpuComputeClassArgs)
    text = str(refused.value)
    assert "fallback = ['flex-start', 'flex-start']: flex-start repeated: each way once" in text, text
    assert "flex-start: v6e-16 spans 4 VMs" in text, text
    assert "node_pools = []: the serving's own pools, at least one" in text, text
    assert _args((Fallback.SPOT,)).problems() == []
