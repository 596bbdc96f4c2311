"""Scheduling and quota of the runtime model (tools.runtime.scheduling)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.quota import QUOTA_ADVICE
from tpu_serving_tools.runtime.scheduling import allocatable, node_pools
from tpu_serving_tools.runtime.scheduling_check import check

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"


def _pool(name: str, machine: str, nodes: int = 1, topology: str | None = None, **config: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = {
        "name": name,
        "nodeCount": nodes,
        "nodeLocations": ["z-a"],
        "nodeConfig": {"machineType": machine, **config},
    }
    if topology:
        inputs["placementPolicy"] = {"tpuTopology": topology, "type": "COMPACT"}
    return {
        "urn": f"urn:pool:{name}",
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "custom": True,
        "inputs": inputs,
        "propertyDependencies": {},
    }


def _k8s(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "urn": f"urn:k8s:{obj['kind']}:{obj['metadata']['name']}",
        "type": f"kubernetes:x:{obj['kind']}",
        "name": obj["metadata"]["name"],
        "custom": True,
        "inputs": obj,
        "propertyDependencies": {},
    }


def _deploy(name: str, cpu: str = "1", memory: str = "1Gi", replicas: int = 1, **spec: Any) -> dict[str, Any]:
    c = {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    return _k8s(
        {
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [c], **spec}}},
        }
    )


def _slice_jobset(name: str, slices: int, vms: int, topology: str = "4x4") -> dict[str, Any]:
    c = {
        "name": "w",
        "image": "i",
        "ports": [{"containerPort": 8471}],
        "resources": {"limits": {"google.com/tpu": "4"}},
    }
    pod = {
        "spec": {
            "hostNetwork": True,
            "containers": [c],
            "nodeSelector": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                "cloud.google.com/gke-tpu-topology": topology,
            },
        }
    }
    return _k8s(
        {
            "kind": "JobSet",
            "metadata": {
                "name": name,
                "namespace": "ns",
                "annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"},
            },
            "spec": {
                "replicatedJobs": [
                    {"name": "s", "replicas": slices, "template": {"spec": {"parallelism": vms, "template": pod}}}
                ]
            },
        }
    )


def _quota(cpu: str, memory: str, tpu: str | None = None) -> dict[str, Any]:
    hard = {"requests.cpu": cpu, "requests.memory": memory}
    if tpu:
        hard["requests.google.com/tpu"] = tpu
    return _k8s({"kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard}})


def _view(*resources: dict[str, Any]) -> PlanView:
    return PlanView({"stack": "t", "resources": list(resources)})


def _failures(view: PlanView) -> dict[str, str]:
    return {f.subject: f.reason for f in check(view).failures()}


def test_allocatable_matches_gke_formula():
    a = allocatable("n2-standard-8")
    assert a is not None
    assert a.cpu == pytest.approx(8 - 0.09 - 0.5)  # 6% + 1% + 2*0.5% + 4*0.25% reserved, minus DaemonSets
    assert a.memory == pytest.approx((32 - 3.56 - 100 / 1024 - 1) * 2**30)
    assert allocatable("ct6e-standard-4t").tpu == 4  # type: ignore[union-attr]
    assert allocatable("x9-unknown") is None


def test_node_pools_labels_taints_and_autoscaling():
    auto = _pool("cpu", "n2-standard-8")
    auto["inputs"]["autoscaling"] = {"minNodeCount": 1, "maxNodeCount": 3}
    auto["inputs"]["nodeLocations"] = ["z-a", "z-b"]
    cpu, tpu = node_pools(_view(auto, _pool("tpu", "ct6e-standard-4t", 4, "4x4")))
    assert cpu.nodes == 6 and cpu.taints == () and cpu.labels == {"cloud.google.com/gke-nodepool": "cpu"}
    assert tpu.labels["cloud.google.com/gke-tpu-topology"] == "4x4"
    assert tpu.labels["cloud.google.com/gke-tpu-accelerator"] == "tpu-v6e-slice"
    assert ("google.com/tpu", "present", "NoSchedule") in tpu.taints


def test_scheduling_pod_fits_cpu_pool():
    assert _failures(_view(_pool("cpu", "n2-standard-8"), _deploy("small", "2", "4Gi"))) == {}


def test_scheduling_pod_too_big_for_largest_node():
    failures = _failures(_view(_pool("cpu", "n2-standard-8"), _deploy("big", "24", "132G")))
    assert "needs 24 CPU / 132 GB; largest node of pool cpu (n2-standard-8) has 7.41 CPU" in failures["pod ns/big-0"]


def test_scheduling_capacity_runs_out_across_pods():
    failures = _failures(_view(_pool("cpu", "n2-standard-8", 1), _deploy("d", "5", "1Gi", replicas=2)))
    assert list(failures) == ["pod ns/d-1"] and "no node has room left" in failures["pod ns/d-1"]


def test_scheduling_node_selector_without_pool():
    failures = _failures(_view(_pool("cpu", "n2-standard-8"), _deploy("d", nodeSelector={"pool": "gpu"})))
    assert "no node pool has labels" in failures["pod ns/d-0"]


def test_scheduling_tpu_taint_blocks_pods_without_tpu_or_toleration():
    sel = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice"}
    tpu = _pool("tpu", "ct6e-standard-4t", 4, "4x4")
    assert (
        "tainted google.com/tpu=present:NoSchedule"
        in _failures(_view(tpu, _deploy("d", nodeSelector=sel)))["pod ns/d-0"]
    )
    tol = [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert _failures(_view(tpu, _deploy("d", nodeSelector=sel, tolerations=tol))) == {}


def test_scheduling_exclusive_slices_need_one_pool_each():
    two_pools = [_pool("a", "ct6e-standard-4t", 4, "4x4"), _pool("b", "ct6e-standard-4t", 4, "4x4")]
    assert _failures(_view(*two_pools, _slice_jobset("js", slices=2, vms=4))) == {}
    failures = _failures(_view(two_pools[0], _slice_jobset("js", slices=2, vms=4)))
    assert len(failures) == 4 and all("no free cloud.google.com/gke-nodepool domain" in r for r in failures.values())


def test_scheduling_host_ports_clash_on_shared_node():
    # two exclusive sets in one 8-node pool would need the same pool; without exclusivity, host ports still
    # keep two hostNetwork pods with port 8471 off one node: 5 pods on 4 nodes cannot all land.
    js = _slice_jobset("js", slices=1, vms=5)
    js["inputs"]["metadata"]["annotations"] = {}
    js["inputs"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    js["inputs"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["tolerations"] = [
        {"key": "google.com/tpu", "operator": "Exists"}
    ]
    failures = _failures(_view(_pool("tpu", "ct6e-standard-4t", 4, "4x4"), js))
    assert list(failures) == ["pod ns/js-s-0-4"]


def test_quota_admits_and_rejects_total():
    pool = _pool("cpu", "n2-standard-32", 2)
    assert _failures(_view(pool, _deploy("d", "4", "1Gi", replicas=2), _quota("20", "8Gi"))) == {}
    failures = _failures(_view(pool, _deploy("d", "4", "1Gi", replicas=2), _quota("6", "8Gi")))
    assert failures["quota ns/q"] == "8 CPU > 6 CPU" + QUOTA_ADVICE


def test_quota_rejects_containers_without_requests():
    dep = _deploy("d")
    dep["inputs"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    failures = _failures(_view(_pool("cpu", "n2-standard-8"), dep, _quota("20", "8Gi")))
    assert "containers without a request the quota requires: d-0/c (cpu)" in failures["quota ns/q"]


def test_quota_recreate_headroom():
    pool = _pool("cpu", "n2-standard-32", 2)
    assert "quota ns/q recreate headroom" not in _failures(_view(pool, _deploy("d", "4"), _quota("8", "8Gi")))
    failures = _failures(_view(pool, _deploy("d", "4"), _quota("6", "8Gi")))
    assert failures["quota ns/q recreate headroom"] == (
        "recreating Deployment/d/0 holds old+new pods: 8 CPU > 6 CPU" + QUOTA_ADVICE
    )
    # library review 6, m14: the failure says how a program counts the pods beside its serving
    assert (
        "tpu_serving.traffic.epp.epp_pods" in QUOTA_ADVICE
        and "tpu_serving.operations.maintenance.host_maintenance_job.gate_pods" in QUOTA_ADVICE
    )


def test_scheduling_finds_pathways_head_too_big_before_fix():
    view = PlanView(json.loads((FIXTURES / "pathwaysjob-batch-before-fix.plan.json").read_text()))
    failures = _failures(view)
    head = "pod pathways-batch/pathways-device-check-pathways-head-0-0"
    headroom = "quota pathways-batch/tpu-serving-quota recreate headroom"
    assert list(failures) == [head, headroom]
    assert "needs 24.25 CPU / 132.54 GB; largest node of pool pwbatch-cpu (n2-standard-8)" in failures[head]
    # Before the fix the TPU quota equalled the slice's 16 chips: a restart could not create its pods.
    assert "google.com/tpu" in failures[headroom] or "TPU" in failures[headroom]


def test_scheduling_a_domain_an_exclusive_job_took_is_closed_to_other_jobset_pods():
    """JobSet's exclusive placement is a required pod anti-affinity to every other JobSet job's pods, and the
    scheduler honours an existing pod's anti-affinity too: a non-exclusive JobSet pod cannot join the node pool
    an exclusive job took, even with nodes free in it."""
    pool = _pool("a", "ct6e-standard-4t", 8, "4x4")
    other = _slice_jobset("other", slices=1, vms=1)
    other["inputs"]["metadata"]["annotations"] = {}
    failures = _failures(_view(pool, _slice_jobset("js", slices=1, vms=4), other))
    # the two JobSets may also take one pool, which the tenants' finding says (library review 9, M4)
    assert list(failures) == ["pod ns/other-s-0-0", "pools shared by JobSet ns/js and JobSet ns/other"]
    assert _failures(_view(pool, other)) == {}  # alone, it fits


def test_quota_rejects_a_total_just_over_the_limit():
    pool = _pool("cpu", "n2-standard-32", 2)
    failures = _failures(_view(pool, _deploy("d", "3250m", "1Gi", replicas=2), _quota("6", "8Gi")))
    assert failures["quota ns/q"] == "6.5 CPU > 6 CPU" + QUOTA_ADVICE
