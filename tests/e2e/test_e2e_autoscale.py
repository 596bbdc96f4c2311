"""The e2e run's HPA step (tools/e2e/autoscale.py): the HPAs read off a stack's plan, the metric the stand-in adapter
is given named from the stack file (not the plan), and the step's findings against a fake API server whose HPA
controller reads only the values written under the HPA's own metric name: it fails when the value is below target
(no scale-up) and when the plan's HPA reads another name. The real controller's run is tests/e2e/test_e2e_metrics_adapter.py
and ``python -m tpu_serving_tools.e2e.command``."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e.autoscale import (
    IDLE,
    Hpa,
    at_rest,
    groups_placed,
    hpa_scale,
    hpas,
    leaders,
    series_name,
    stack_metric,
)
from tpu_serving_tools.preview import strict_yaml
from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL, LWS_NAME_LABEL, LWS_WORKER_LABEL

HPA_STACKS = ("vllm-llama33-70b-v6e8", "vllm-llama33-70b-v5e16", "vllm-llama33-70b-existing")


def _state(stack: str) -> list[dict[str, Any]]:
    return list(json.loads((ROOT / "tests" / "golden" / f"{stack}.plan.json").read_text())["resources"])


def _config(stack: str) -> dict[str, Any]:
    return dict(strict_yaml.load(ROOT / "stacks" / f"Pulumi.{stack}.yaml")["config"])


@pytest.mark.parametrize("stack", HPA_STACKS)
def test_hpas_of_each_autoscaling_plan_read_the_metric_the_stand_in_is_given(stack):
    (hpa,) = hpas(_state(stack))
    assert hpa.target == "vllm" and hpa.average == 5.0 and hpa.down_window == 3600
    assert (hpa.low, hpa.high) == ((2, 2) if stack.endswith("existing") else (2, 3))
    assert hpa.metric == stack_metric(_config(stack)) == "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"


def test_series_name_and_the_default_gauge():
    assert series_name("foo") == "prometheus.googleapis.com|foo|gauge"
    assert stack_metric({"serving": {"autoscaling": {"minReplicas": 1}}}) == series_name("vllm:num_requests_waiting")


def _pod(name: str, group: int, worker: int, node: str = "") -> dict[str, Any]:
    labels = {LWS_NAME_LABEL: "vllm", LWS_GROUP_LABEL: str(group), LWS_WORKER_LABEL: str(worker)}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"nodeName": node} if node else {}}


def test_groups_placed_wants_each_group_on_one_pool_of_its_own():
    pools = {"a0": "pool-a", "a1": "pool-a", "b0": "pool-b", "c0": "pool-c"}
    pods = [_pod("vllm-0", 0, 0, "a0"), _pod("vllm-0-1", 0, 1, "a1"), _pod("vllm-1", 1, 0, "b0")]
    assert groups_placed(pods, pools, [1]) == ""
    assert "no pod" in groups_placed(pods, pools, [2])
    assert "on no Node" in groups_placed([*pods, _pod("vllm-2", 2, 0)], pools, [2])
    assert "shared" in groups_placed([*pods, _pod("vllm-2", 2, 0, "a0")], pools, [2])
    assert "shared" in groups_placed([*pods, _pod("vllm-2", 2, 0, "c0"), _pod("vllm-2-1", 2, 1, "b0")], pools, [2])


@dataclass
class FakeCluster:
    """An API server with one LeaderWorkerSet of groups of two, a pool per group, and an HPA controller reading the
    values written under the live HPA's metric name (the real controller's arithmetic, ``horizontal.go``: the ratio
    of the average to the target times the current replicas, rounded up, within the bounds; a lower one held by its
    scale-down window)."""

    hpa_spec: Hpa
    live_metric: str
    replicas: int = 2
    values: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def write(self, namespace: str, pod: str, metric: str, value: str) -> None:
        self.values[(namespace, pod, metric)] = value

    def _pods(self) -> list[dict[str, Any]]:
        return [
            _pod(f"vllm-{g}" + (f"-{w}" if w else ""), g, w, f"n{g}-{w}") for g in range(self.replicas) for w in (0, 1)
        ]

    def node_pools(self) -> dict[str, str]:
        return {f"n{g}-{w}": f"pool-{g}" for g in range(5) for w in (0, 1)}

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        leaders_only = f"{LWS_WORKER_LABEL}=0" in selector
        return [p for p in self._pods() if not leaders_only or p["metadata"]["labels"][LWS_WORKER_LABEL] == "0"]

    def lws(self, namespace: str, name: str) -> dict[str, Any]:
        selector = f"{LWS_NAME_LABEL}=vllm,{LWS_WORKER_LABEL}=0"
        return {"spec": {"replicas": self.replicas}, "status": {"hpaPodSelector": selector}}

    def hpa(self, namespace: str, name: str) -> dict[str, Any]:
        from tpu_serving_tools.e2e.autoscale import _quantity

        h = self.hpa_spec
        seen = [
            self.values.get((namespace, p["metadata"]["name"], self.live_metric)) for p in self.pods(namespace, "0")
        ]
        got = [_quantity(v) for v in seen if v is not None]
        if not got:
            reason = ("False", "FailedGetPodsMetric")
            return {"status": {"desiredReplicas": self.replicas, "conditions": [_cond("ScalingActive", *reason)]}}
        average = sum(got) / len(got)
        wanted = min(max(math.ceil(average / h.average * self.replicas), h.low), h.high)
        able = ("True", "ScaleDownStabilized" if wanted < self.replicas else "ReadyForNewScale")
        self.replicas = max(wanted, self.replicas)
        metric = {"type": "Pods", "pods": {"current": {"averageValue": f"{average:g}"}}}
        limited = ("True", "TooManyReplicas") if wanted == h.high else ("False", "DesiredWithinRange")
        conditions = [_cond("ScalingActive", "True", "ValidMetricFound"), _cond("AbleToScale", *able)]
        conditions.append(_cond("ScalingLimited", *limited))
        return {"status": {"desiredReplicas": self.replicas, "currentMetrics": [metric], "conditions": conditions}}


def _cond(kind: str, status: str, reason: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _step(cluster: FakeCluster, metric: str, **kw: Any) -> list[Any]:
    clock = Clock()
    return hpa_scale(cluster, cluster, cluster.hpa_spec, metric, clock=clock, sleep=clock.sleep, **kw)


def test_hpa_scale_reaches_the_maximum_and_sees_the_scale_down_recommended():
    (hpa,) = hpas(_state("vllm-llama33-70b-v6e8"))
    cluster = FakeCluster(hpa, hpa.metric)
    up, down = _step(cluster, stack_metric(_config("vllm-llama33-70b-v6e8")))
    assert up.ok and "desiredReplicas 3, LeaderWorkerSet spec.replicas 3" in up.detail, up.detail
    assert "= 10000m on 2 leaders (target 5)" in up.detail
    assert down.ok and "recommendation only" in down.detail and "ScaleDownStabilized" in down.detail, down.detail
    assert cluster.values[(hpa.namespace, "vllm-2", hpa.metric)] == IDLE  # the new group's leader too


def test_hpa_scale_fails_when_the_metric_is_below_target():
    (hpa,) = hpas(_state("vllm-llama33-70b-v6e8"))
    cluster = FakeCluster(hpa, hpa.metric)
    (up,) = _step(cluster, hpa.metric, load=0.5)
    assert not up.ok and "desiredReplicas 2, LeaderWorkerSet spec.replicas 2" in up.detail, up.detail


def test_hpa_scale_fails_when_the_plans_hpa_reads_another_metric():
    state = copy.deepcopy(_state("vllm-llama33-70b-v6e8"))
    (hpa_resource,) = [r for r in state if r["type"].endswith("HorizontalPodAutoscaler")]
    hpa_resource["inputs"]["spec"]["metrics"][0]["pods"]["metric"]["name"] = series_name("vllm:num_requests_running")
    (hpa,) = hpas(state)
    cluster = FakeCluster(hpa, hpa.metric)  # the live HPA reads what the patched plan says
    (up,) = _step(cluster, stack_metric(_config("vllm-llama33-70b-v6e8")))
    assert not up.ok and "ScalingActive False/FailedGetPodsMetric" in up.detail, up.detail


def test_hpa_scale_without_a_leader_fails_and_at_rest_writes_the_idle_value():
    (hpa,) = hpas(_state("vllm-llama33-70b-existing"))
    cluster = FakeCluster(hpa, hpa.metric, replicas=0)
    (found,) = _step(cluster, hpa.metric)
    assert not found.ok and "no leader pod" in found.detail
    cluster.replicas = 2
    at_rest(cluster, cluster, _state("vllm-llama33-70b-existing"), hpa.metric, timeout=0)
    assert leaders(cluster, hpa) == ["vllm-0", "vllm-1"]
    assert {k[1]: v for k, v in cluster.values.items()} == {"vllm-0": IDLE, "vllm-1": IDLE}
    (up,) = _step(cluster, hpa.metric)  # minReplicas = maxReplicas: read, nothing to add, no scale-down to see
    assert up.ok and "desiredReplicas 2" in up.detail


def _real_run(tmp_path: Path) -> dict[str, str]:
    from tpu_serving_tools.e2e import run
    from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file

    if not toolchain_file().is_file() or not {"pulumi", "lws-manager", "test-adapter"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI, LWS manager or test-adapter (make e2e-tools)")
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), "vllm-llama33-70b-v6e8")
    return {f"{f.check} {f.subject}": f.detail for f in report.findings if not f.ok}


@pytest.mark.e2e
def test_hpa_scale_below_target_scales_nothing_on_the_real_controller(tmp_path, monkeypatch):
    """The shipped flagship with the scale-up's value at half the target: the real HPA controller keeps two groups,
    and the step fails (its scale-down part is not reached); everything else passes."""
    from tpu_serving_tools.e2e import autoscale

    monkeypatch.setattr(autoscale, "LOAD", 0.5)
    failed = _real_run(tmp_path)
    assert list(failed) == ["autoscale HPA vllm-llama70b/vllm: scale-up"], failed
    assert "= 2500m on 2 leaders" in next(iter(failed.values()))
    assert "desiredReplicas 2, LeaderWorkerSet spec.replicas 2" in next(iter(failed.values()))
