"""tpu_serving_tools.e2e.stockout on ``vllm-llama31-405b-v6e16`` (a multi-host slice with ``serving.fallback: [spot]``),
against the real control plane: with no Node of the ComputeClass's pools, ``pulumi up`` completes, the
LeaderWorkerSet's pods wait Pending and unschedulable (what the capacity-wait ticket reads), and once the Nodes are
back, as the class's Spot step makes them (GKE's Spot taint), every group serves and ``tpu-serving verify`` passes (issue 37, item 2). Marked ``e2e``.

The unit tests at the end hold the module's judgments to objects shaped as the API server returns them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e import run
from tpu_serving_tools.e2e.controlplane import load_toolchain, toolchain_file
from tpu_serving_tools.e2e.rollout import leader_worker_sets
from tpu_serving_tools.e2e.stockout import as_spot, restored, spot_step, stockout_lifecycle, unschedulable

STACK = "vllm-llama31-405b-v6e16"
SUBJECT = "LeaderWorkerSet vllm-llama405b/vllm"


@pytest.mark.e2e
def test_stockout_lifecycle_up_completes_and_the_groups_wait_then_serve(tmp_path: Path) -> None:
    if not toolchain_file().is_file() or not {"pulumi", "lws-manager"} <= set(load_toolchain()):
        pytest.skip("the e2e toolchain has no Pulumi CLI or LWS manager (make e2e-tools)")
    report = run.run_stack(run.Setup.load(ROOT, tmp_path), STACK, lifecycle=stockout_lifecycle)
    print("\n".join(f.line() for f in report.findings), report.timings)
    assert not report.error, report.error
    found = {f.subject: f for f in report.findings}
    for subject in (
        "no slice to be had",
        "pulumi up",
        f"{SUBJECT}: groups wait for a slice",
        f"{SUBJECT}: groups serve once a slice is made",
    ):
        assert subject in found, [f.line() for f in report.findings]
        assert found[subject].ok, found[subject].line()
    assert report.ok, [f.line() for f in report.findings if not f.ok]
    assert len(report.findings) > 5  # verify's findings too


def _pod(condition: dict[str, str] | None) -> dict:
    return {"status": {"phase": "Pending", "conditions": [condition] if condition else []}}


def test_unschedulable_only_on_the_schedulers_unschedulable_condition() -> None:
    assert unschedulable(_pod({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}))
    assert not unschedulable(_pod({"type": "PodScheduled", "status": "True"}))
    assert not unschedulable(_pod({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}))
    assert not unschedulable(_pod(None))


def test_restored_keeps_the_pools_taints_not_the_lifecycle_controllers() -> None:
    node = {
        "metadata": {"name": "gke-a-0000", "labels": {"cloud.google.com/compute-class": "c-serving"}, "uid": "x"},
        "spec": {
            "podCIDR": "10.0.1.0/24",
            "podCIDRs": ["10.0.1.0/24"],
            "taints": [
                {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
            ],
        },
        "status": {"capacity": {"google.com/tpu": "4"}, "allocatable": {"google.com/tpu": "4"}, "conditions": []},
    }
    body, status = restored(node)
    assert body["metadata"] == {"name": "gke-a-0000", "labels": {"cloud.google.com/compute-class": "c-serving"}}
    assert [t["key"] for t in body["spec"]["taints"]] == ["google.com/tpu"]
    assert status == {"capacity": {"google.com/tpu": "4"}, "allocatable": {"google.com/tpu": "4"}}


def test_leader_worker_sets_are_the_states() -> None:
    state = [
        {
            "type": "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
            "outputs": {"metadata": {"namespace": "n", "name": "v"}},
        },
        {"type": "kubernetes:apps/v1:Deployment", "outputs": {"metadata": {"namespace": "n", "name": "d"}}},
    ]
    assert leader_worker_sets(state) == [("n", "v")]


def test_as_spot_puts_the_node_in_a_pool_of_gkes_with_its_spot_label_and_taint() -> None:
    body = {
        "metadata": {
            "name": "n",
            "labels": {"cloud.google.com/compute-class": "c", "cloud.google.com/gke-nodepool": "p"},
        },
        "spec": {"taints": [{"key": "cloud.google.com/compute-class", "value": "c", "effect": "NoSchedule"}]},
    }
    spot = as_spot(body)
    assert spot["metadata"]["labels"] == {
        "cloud.google.com/compute-class": "c",
        "cloud.google.com/gke-nodepool": "gke-made-spot",
        "cloud.google.com/gke-spot": "true",
    }
    assert spot["spec"]["taints"] == [
        {"key": "cloud.google.com/compute-class", "value": "c", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"},
    ]
    assert body["spec"]["taints"] == [spot["spec"]["taints"][0]]


def test_spot_step_reads_the_stacks_fallback() -> None:
    assert spot_step({"serving": {"fallback": ["on-demand", "spot"]}})
    assert not spot_step({"serving": {"fallback": ["on-demand"]}})
    assert not spot_step({"serving": {}})
    assert spot_step({"tpu-serving:serving": {"fallback": ["spot"]}})
