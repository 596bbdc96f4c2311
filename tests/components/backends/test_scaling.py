"""Autoscaling by whole slices: the HPA, the slices that scale from zero, the adapter's identity, the scale path."""

from __future__ import annotations

import copy
import functools

import pytest

from tests.conftest import plan_of, resource
from tests.fixtures.configs import (
    SERVING_AUTOSCALED,
    autoscaled_jetstream,
    load,
    plan_edited,
    plan_edited_once,
    two_slices,
)
from tests.fixtures.pools import pool_args
from tpu_serving.common.validation import ArgumentsError
from tpu_serving.operations.autoscaling import AutoscalingSettings, ServingAutoscalerArgs, hpa_args, quantity
from tpu_serving.pools.nodepool import TpuNodePool
from tpu_serving_tools.preview.offline import Plan, kubernetes_objects
from tpu_serving_tools.reference import schema
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.scheduling_check import scale_findings

STACK = "vllm-llama33-70b-v5e16"
NODEPOOL = "gcp:container/nodePool:NodePool"


def _hpa(plan) -> dict:
    return resource(plan, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", "vllm70b-autoscaler-hpa").inputs


def test_scaling_hpa_scales_the_leaderworkerset_on_the_leaders_queue():
    spec = _hpa(plan_of(STACK))["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "vllm",
    }
    # two groups at the least, one slice each: N+1 at low load (SRE review M2); a third under load
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 3)
    assert spec["metrics"] == [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"},
                "target": {"type": "AverageValue", "averageValue": "5"},
            },
        }
    ]
    # One group (one slice) per step, and a slow scale-down.
    assert spec["behavior"]["scaleUp"]["policies"] == [{"type": "Pods", "value": 1, "periodSeconds": 60}]
    assert (
        spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 3600
    )  # the startup window (autoscaling.scale_down_window)


def test_scaling_vllm_metric_unset_reads_the_waiting_requests():
    plan = plan_edited(STACK, serving=lambda s: s["autoscaling"].pop("metric"))
    assert _hpa(plan)["spec"]["metrics"][0]["pods"]["metric"]["name"] == (
        "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    )


def test_scaling_leaderworkerset_leaves_replicas_to_the_hpa():
    lws = resource(plan_of(STACK), "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet", "vllm70b-serving-lws")
    assert "replicas" not in lws.inputs["spec"]
    fixed = resource(
        plan_of("vllm-llama31-405b-v6e16"),
        "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
        "vllm405b-serving-lws",
    )
    assert fixed.inputs["spec"]["replicas"] == 1


@functools.cache
def _one_group_minimum() -> Plan:
    """The flagship with ``autoscaling.minReplicas: 1`` (the stack holds two): its second slice scales from zero."""
    return plan_edited(STACK, serving=lambda s: s["autoscaling"].update(minReplicas=1))


def test_scaling_slices_above_the_minimum_scale_from_zero_as_whole_slices():
    pools = {r.name: r.inputs for r in _one_group_minimum().of_type(NODEPOOL)}
    always_on, from_zero = pools["vllm70b-v5e16"], pools["vllm70b-v5e16b"]
    # the kept slice is created whole and may go down to zero once its group left it (GKE review 37, M1)
    assert always_on["nodeCount"] == 4 and "initialNodeCount" not in always_on
    assert always_on["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert "nodeCount" not in from_zero and from_zero["initialNodeCount"] == 0
    assert from_zero["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert from_zero["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert from_zero["management"]["autoRepair"] is True  # on-demand, not flex-start


def test_scaling_minimum_moves_the_always_on_slices():
    plan = plan_edited(STACK, serving=lambda s: s["autoscaling"].update(minReplicas=2))
    pools = {r.name: r.inputs for r in plan.of_type(NODEPOOL) if "v5e16" in r.name}
    spare = pools.pop("vllm70b-v5e16s")  # the surge rollout's spare slice stays empty until a rollout
    third = pools.pop("vllm70b-v5e16c")  # the HPA's third group's slice, empty until load adds it
    assert len(pools) == 2 and all(p["nodeCount"] == 4 and "initialNodeCount" not in p for p in pools.values())
    assert all("nodeCount" not in p and p["initialNodeCount"] == 0 for p in (spare, third))
    assert all(p["autoscaling"]["totalMinNodeCount"] == 0 for p in (*pools.values(), spare, third))


def test_scaling_adapter_is_installed_and_reads_monitoring_as_its_own_principal():
    plan = plan_of(STACK)
    assert plan.outputs["controllers"]["custom.metrics.k8s.io"] == "v0.16.10"
    group = resource(plan, "kubernetes:yaml/v2:ConfigGroup", "vllm70b-metrics-adapter-manifests")
    assert group.inputs["files"] == [
        "https://raw.githubusercontent.com/GoogleCloudPlatform/k8s-stackdriver/cm-sd-adapter-v0.16.10/"
        "custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml"
    ]
    viewer = resource(plan, "gcp:projects/iAMMember:IAMMember", "vllm70b-autoscaler-adapter-viewer")
    assert viewer.inputs["role"] == "roles/monitoring.viewer"
    assert viewer.inputs["member"] == (
        "principal://iam.googleapis.com/projects/<unknown>/locations/global/workloadIdentityPools/"
        "tpu-serving-demo.svc.id.goog/subject/ns/custom-metrics/sa/custom-metrics-stackdriver-adapter"
    )
    hpa = resource(plan, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", "vllm70b-autoscaler-hpa")
    waits_for = {u.rsplit("::", 1)[1] for u in hpa.dependencies}
    # The adapter's objects, the LeaderWorkerSet it scales, the APIs (the engine expands components to children).
    assert {"vllm70b-metrics-adapter-manifests", "vllm70b-serving-lws", "vllm70b-apis-monitoring"} <= waits_for


def test_scaling_stacks_without_autoscaling_have_no_hpa_and_no_adapter():
    for stack in ("vllm-llama31-405b-v6e16", "vllm-llama31-405b-tpu7x16"):
        plan = plan_of(stack)
        assert not plan.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")
        assert "custom.metrics.k8s.io" not in plan.outputs["controllers"]
    # without a capacity fallback (the v6e16 stack's lets its pool go down to zero once a group left it) no TPU pool
    # autoscales
    tpu = [r for r in plan_of("vllm-llama31-405b-tpu7x16").of_type(NODEPOOL) if r.name.endswith("-tpu7x16")]
    assert tpu and all(not r.inputs.get("autoscaling") for r in tpu)


def test_scaling_quantity_renders_fractions_in_milli_units():
    assert quantity(5.0) == "5"
    assert quantity(2.5) == "2500m"


def test_scaling_settings_refuse_a_minimum_above_the_maximum():
    assert AutoscalingSettings(max_replicas=2, min_replicas=3).problems() == [
        "min_replicas (3) must not exceed max_replicas (2)"
    ]
    args = ServingAutoscalerArgs(
        project="p", namespace="n", target="vllm", settings=AutoscalingSettings(max_replicas=4), metric="m"
    )
    assert hpa_args(args).spec.max_replicas == 4


def test_scaling_node_pool_refuses_a_from_zero_pool_it_does_not_have():
    args = pool_args(pool_names=("a-0", "a-1"), scale_from_zero=("b-1",))
    with pytest.raises(ArgumentsError, match=r"scale_from_zero\[0\] = 'b-1': not one of pool_names"):
        TpuNodePool("x", args)


def test_scaling_node_pool_refuses_a_to_zero_pool_it_does_not_have_or_that_starts_empty():
    args = pool_args(pool_names=("a-0", "a-1"), scale_from_zero=("a-1",), scale_to_zero=("b-0", "a-1"))
    with pytest.raises(ArgumentsError) as err:
        TpuNodePool("x", args)
    text = str(err.value)
    assert "scale_to_zero[0] = 'b-0': not one of pool_names" in text
    assert "scale_to_zero[1] = 'a-1': also in scale_from_zero (a pool starts empty or whole)" in text


# --------------------------------------------------------------------------- the runtime model's scale path


def _view(edit=None) -> PlanView:
    plan = copy.deepcopy(_one_group_minimum().as_json())
    if edit:
        edit(plan)
    return PlanView(plan)


def _inputs(plan: dict, name: str) -> dict:
    return next(r for r in plan["resources"] if r["name"] == name)["inputs"]


def test_scaling_runtime_shows_a_pending_group_a_slice_provisioned_and_the_group_scheduled():
    found = {f.subject: f for f in scale_findings(_view())}
    start = found["scale vllm-llama70b/vllm at minReplicas 1"]
    step = found["scale vllm-llama70b/vllm 1 -> 2"]
    assert start.ok and step.ok
    assert step.reason == (
        "group 1 pending; slice vllm70b-v5e16b provisioned (0 -> 4 ct5lp-hightpu-4t VMs at once); "
        "group scheduled on vllm70b-v5e16b"
    )


def test_scaling_runtime_refuses_a_step_beyond_the_slices():
    def more(plan):  # four slices: three for the groups, the surge rollout's spare; a fifth group has none
        _inputs(plan, "vllm70b-autoscaler-hpa")["spec"]["maxReplicas"] = 5

    step = {f.subject: f for f in scale_findings(_view(more))}["scale vllm-llama70b/vllm 4 -> 5"]
    assert not step.ok
    assert "group 4 pending; no node pool that scales from zero takes the group" in step.reason


def test_scaling_runtime_refuses_half_a_slice():
    def half(plan):
        _inputs(plan, "vllm70b-v5e16b")["autoscaling"]["totalMaxNodeCount"] = 2

    step = {f.subject: f for f in scale_findings(_view(half))}["scale vllm-llama70b/vllm 1 -> 2"]
    assert not step.ok
    assert "adds 2 VMs at once, the group needs 4: not exactly one whole slice" in step.reason


def test_scaling_runtime_minimum_needs_always_on_slices():
    def everything_from_zero(plan):
        pool = _inputs(plan, "vllm70b-v5e16")
        del pool["nodeCount"]
        pool["autoscaling"] = {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}

    start = {f.subject: f for f in scale_findings(_view(everything_from_zero))}[
        "scale vllm-llama70b/vllm at minReplicas 1"
    ]
    assert not start.ok and "pods pending before any scale-up" in start.reason


# --------------------------------------------------------------------------- JetStream: one slice per group

JETSTREAM = "llama31-405b-v6e16"


def _jetstream_autoscaled():
    return plan_edited_once(JETSTREAM, tpuSlices=two_slices, serving=autoscaled_jetstream)


def test_scaling_jetstream_hpa_reads_the_prefill_backlog_by_default():
    plan = _jetstream_autoscaled()
    (hpa,) = [o for o in kubernetes_objects(plan) if o["kind"] == "HorizontalPodAutoscaler"]
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "jetstream-pathways",
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 2)
    (metric,) = hpa["spec"]["metrics"]
    assert metric["pods"]["metric"] == {"name": "prometheus.googleapis.com|jetstream_prefill_backlog_size|gauge"}
    assert schema.validate_all([hpa], plan.outputs["controllers"]) == []
    assert plan.outputs["autoscaling"]["metric"] == "prometheus.googleapis.com|jetstream_prefill_backlog_size|gauge"
    assert plan.outputs["controllers"]["custom.metrics.k8s.io"] == "v0.16.10"


def test_scaling_jetstream_metric_setting_overrides_the_backlog():
    plan = plan_edited(
        JETSTREAM,
        tpuSlices=two_slices,
        serving=lambda s: s.update(autoscaling={"maxReplicas": 2, "metric": "jetstream_slots_used_percentage"}),
    )
    (hpa,) = [o for o in kubernetes_objects(plan) if o["kind"] == "HorizontalPodAutoscaler"]
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == (
        "prometheus.googleapis.com|jetstream_slots_used_percentage|gauge"
    )


def test_scaling_jetstream_groups_take_one_slice_and_leave_replicas_to_the_hpa():
    plan = _jetstream_autoscaled()
    (lws,) = [o for o in kubernetes_objects(plan) if o["kind"] == "LeaderWorkerSet"]
    assert "replicas" not in lws["spec"]
    template = lws["spec"]["leaderWorkerTemplate"]
    assert template["size"] == 5 and "subGroupPolicy" not in template  # one slice's 4 VMs + the leader
    rm = next(c for c in template["leaderTemplate"]["spec"]["containers"] if c["name"] == "pathways-rm")
    assert "--instance_count=1" in rm["args"]
    assert lws["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    pools = {r.name: r.inputs for r in plan.of_type(NODEPOOL) if "v6e16" in r.name}
    assert sorted(("autoscaling" in p, p.get("initialNodeCount", -1)) for p in pools.values()) == [
        (True, -1),
        (True, 0),
    ]


def test_scaling_jetstream_runtime_shows_the_scale_path():
    found = {f.subject: f for f in scale_findings(PlanView(_jetstream_autoscaled().as_json()))}
    start = found["scale llama405b/jetstream-pathways at minReplicas 1"]
    step = found["scale llama405b/jetstream-pathways 1 -> 2"]
    assert start.ok and step.ok, (start.reason, step.reason)
    assert step.reason.startswith("group 1 pending; slice llama405b-v6e16-1 provisioned (0 -> 4 ct6e-standard-4t")
    assert step.reason.endswith("group scheduled on llama405b-v6e16-1")


def test_scaling_jetstream_config_with_two_slices_is_accepted():
    cfg = load(SERVING_AUTOSCALED)
    assert cfg.serving.autoscaling.max_replicas == 2 and cfg.serving.autoscaling.metric is None


def test_scaling_jetstream_refuses_groups_over_several_slices_naming_why():
    from tpu_serving.config import ConfigError

    data = copy.deepcopy(SERVING_AUTOSCALED)
    data["tpu-serving:serving"].update(mode="disaggregated", autoscaling={"maxReplicas": 1})
    data["tpu-serving:serving"]["maxtext"]["prometheusPort"] = None
    with pytest.raises(ConfigError) as err:
        load(data)
    problems = [p for p in err.value.problems if p.startswith("tpu-serving:serving.autoscaling")]
    assert len(problems) == 3  # every problem at once: the maximum, the mode, the metrics
    maximum, mode, metrics = problems
    assert maximum.startswith("tpu-serving:serving.autoscaling.maxReplicas = 1: serving.slices provide 2 4x4 slices")
    assert "GKE provisions each slice's node pool on its own" in maximum and "set maxReplicas to 2" in maximum
    assert mode.startswith('tpu-serving:serving.autoscaling: mode "disaggregated" spreads each group over two slices')
    assert "maxtext.prometheusPort (unset)" in metrics and "9090" in metrics


def test_scale_down_window_waits_out_a_groups_start_within_the_apis_bounds() -> None:
    """SRE review round 45, M2: the 900 s window let the HPA remove a Ready group while a lower one still reloaded for
    up to an hour."""
    from tpu_serving.operations.autoscaling import scale_down_window

    assert [scale_down_window(None, s) for s in (None, 600, 2400, 3600, 7200)] == [900, 900, 2400, 3600, 3600]
    assert scale_down_window(300, 3600) == 300  # the stack's own window wins


def test_add_autoscaler_scale_down_window_is_the_production_examples_startup_window() -> None:
    (hpa,) = plan_of("vllm-llama33-70b-v6e8").of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")
    assert hpa.inputs["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 3600
    assert plan_of("vllm-llama33-70b-v6e8").outputs["autoscaling"]["scaleDownWindowSeconds"] == 3600


def test_add_autoscaler_of_a_model_stack_makes_no_metrics_adapter_grant():
    """GKE review m2: a model stack's HPA reads through its platform's adapter, whose grant the platform makes."""
    plan = plan_of("vllm-llama33-70b-platform")
    assert [r for r in plan.resources if r.type == "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"]
    assert not [r for r in plan.resources if r.name.endswith("-adapter-viewer")]
