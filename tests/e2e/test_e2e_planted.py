"""Planted breaks against the real components: a control plane with the real LeaderWorkerSet manager (installed as
the library installs it) and kwok Nodes of a v5e 4x4 pool (four VMs of four chips) and a CPU pool. Each break is
judged by ``tpu-serving verify``'s checks or refused by the API server, with the real component's own message;
the same workload without the break passes. Marked ``e2e``; skipped without the toolchain's LWS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tpu_serving.platform import controllers as library_controllers
from tpu_serving.platform.lws import ONE_GROUP_PER_NODE_POOL
from tpu_serving_tools.e2e import controllers, nodes
from tpu_serving_tools.e2e.controlplane import (
    ControlPlane,
    load_toolchain,
    toolchain_file,
    toolchain_files,
    toolchain_stages,
)
from tpu_serving_tools.e2e.kube import ApiError, Obj, wait_for
from tpu_serving_tools.verify.checks import Finding, Pool, placement, pods_ready, workloads
from tpu_serving_tools.verify.snapshot import read

pytestmark = pytest.mark.e2e

POOL = nodes.Pool("planted-v5e16", "ct5lp-hightpu-4t", "us-west4-a", "4x4", 4, 4)
VERIFY_POOLS = {POOL.name: Pool(POOL.name, "tpu-v5-lite-podslice", "4x4", 4, 4)}
TPU = "google.com/tpu"


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    if not toolchain_file().is_file() or "lws-manager" not in load_toolchain():
        pytest.skip("the e2e toolchain has no lws-manager (make e2e-tools)")
    folder = tmp_path_factory.mktemp("planted")
    stages = controllers.kubelet_stages(toolchain_stages(), folder / "stages", [controllers.LWS.namespace])
    with ControlPlane(run_timeout=900, tools=load_toolchain(), stages=stages) as plane:
        # two CPU nodes: the library's controller replicas are required on different nodes (DoNotSchedule)
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a", initial_nodes=2, max_nodes=2))
        nodes.create_nodes(plane, POOL)
        controllers.install_release(plane, Path(toolchain_files()["lws-manifests"]), library_controllers.LWS)
        controllers.run_controller(plane, controllers.LWS, timeout=180)
        yield plane


def _namespace(cp: ControlPlane, name: str) -> str:
    cp.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def lws(name: str, namespace: str, chips: int = 4, selector: dict[str, str] | None = None) -> Obj:
    """A LeaderWorkerSet of one group of four TPU pods, one VM each (as the vLLM backend builds a 4x4 group)."""
    pod: dict[str, Any] = {
        "nodeSelector": selector
        or {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "4x4"},
        "containers": [
            {
                "name": "engine",
                "image": "example.invalid/engine:1",
                "resources": {"requests": {TPU: str(chips)}, "limits": {TPU: str(chips)}},
            }
        ],
    }
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        # one group per node pool (one slice), as the library's LeaderWorkerSets ask
        "metadata": {"name": name, "namespace": namespace, "annotations": dict(ONE_GROUP_PER_NODE_POOL)},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 4, "workerTemplate": {"spec": pod}}},
    }


def _api(cp: ControlPlane) -> Any:
    from kubernetes import config as kube_config

    return kube_config.new_client_from_config(config_file=str(cp.kubeconfig))  # type: ignore[no-untyped-call]


def _failed(findings: list[Finding]) -> list[str]:
    return [f.line() for f in findings if not f.ok]


def _pods(cp: ControlPlane, namespace: str, count: int) -> list[Obj]:
    return wait_for(
        f"{count} pods in {namespace}",
        lambda: (found := cp.kube.list("v1", "Pod", namespace)) and len(found) >= count and found,
        timeout=180,
        seen=lambda: (
            ", ".join(
                f"{p['metadata']['name']} {p['status'].get('phase')}" for p in cp.kube.list("v1", "Pod", namespace)
            )
            + " | "
            + " | ".join(e["message"] for e in cp.kube.list("v1", "Event", namespace) if e.get("type") == "Warning")[
                -700:
            ]
        ),
    )


def _remove(cp: ControlPlane, namespace: str, name: str) -> None:
    """Delete the LeaderWorkerSet and wait for its pods to go: the next break needs the pool's VMs."""
    cp.kube.delete("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", name, namespace)
    wait_for(f"the pods of {namespace}/{name} gone", lambda: not cp.kube.list("v1", "Pod", namespace), timeout=90)


def test_e2e_planted_service_named_like_its_leaderworkerset(cp: ControlPlane):
    ns = _namespace(cp, "svc-name")
    cp.kube.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "engine", "namespace": ns},
            "spec": {"selector": {"app": "engine"}, "ports": [{"port": 8000}]},
        }
    )
    cp.kube.create(lws("engine", ns))
    _pods(cp, ns, 4)
    failed = _failed(workloads(read(_api(cp), [ns]), [ns], serving=True))
    assert any(
        line.startswith(f"FAIL controller Service {ns}/engine: not owned by the LeaderWorkerSet") for line in failed
    ), failed
    _remove(cp, ns, "engine")
    # restored: no Service of that name, and the controller's headless Service is there
    ok_ns = _namespace(cp, "svc-name-ok")
    cp.kube.create(lws("engine", ok_ns))
    _pods(cp, ok_ns, 4)
    assert wait_for("the headless Service", lambda: cp.kube.find("v1", "Service", "engine", ok_ns), timeout=60)
    assert _failed(workloads(read(_api(cp), [ok_ns]), [ok_ns], serving=True)) == []
    _remove(cp, ok_ns, "engine")


def test_e2e_planted_worker_asking_half_its_vm_chips(cp: ControlPlane):
    ns = _namespace(cp, "half-chips")
    cp.kube.create(lws("half", ns, chips=2))
    pods = _pods(cp, ns, 4)
    wait_for(
        "the pods scheduled", lambda: all(p["spec"].get("nodeName") for p in cp.kube.list("v1", "Pod", ns)), timeout=90
    )
    failed = _failed(placement(read(_api(cp), [ns]), [ns], VERIFY_POOLS))
    # the real scheduler spreads the four pods over the four VMs (no two share one here), each with half its chips
    assert sorted(failed) == sorted(
        f"FAIL placement  Pod {ns}/{p['metadata']['name']}: asks for 2 of the VM's 4 chips" for p in pods
    ), failed
    _remove(cp, ns, "half")


def test_e2e_planted_node_selector_on_a_topology_no_pool_has(cp: ControlPlane):
    ns = _namespace(cp, "topology")
    selector = {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    cp.kube.create(lws("nowhere", ns, selector=selector))
    _pods(cp, ns, 1)

    def scheduler_said() -> str:
        events = cp.kube.list("v1", "Event", ns)
        return next((e["message"] for e in events if e.get("reason") == "FailedScheduling"), "")

    message = wait_for("the scheduler's FailedScheduling event", scheduler_said, timeout=90)
    assert "didn't match Pod's node affinity/selector" in message, message
    failed = _failed(pods_ready(read(_api(cp), [ns]), [ns]))
    assert failed and all("not scheduled" in line or "Pending" in line for line in failed), failed
    _remove(cp, ns, "nowhere")


def test_e2e_planted_immutable_field_changed_in_place(cp: ControlPlane):
    """The LWS webhook refuses a change of ``subGroupPolicy`` in place; the library replaces the object when a
    path of :data:`tpu_serving.platform.lws.IMMUTABLE_PATHS` changes, and that path is this one."""
    from tpu_serving.platform.lws import IMMUTABLE_PATHS

    ns = _namespace(cp, "immutable")
    obj = lws("grouped", ns)
    obj["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] = {"subGroupSize": 2}
    cp.kube.create(obj)
    obj["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] = {"subGroupSize": 4}
    with pytest.raises(ApiError) as refused:
        cp.kube.apply(obj)
    assert 'admission webhook "vleaderworkerset.kb.io" denied the request' in refused.value.message
    assert "field is immutable" in refused.value.message
    assert IMMUTABLE_PATHS == ("spec.leaderWorkerTemplate.subGroupPolicy",)
    _remove(cp, ns, "grouped")


def test_e2e_two_models_of_one_name_in_two_namespaces(cp: ControlPlane):
    """Not a break: two LeaderWorkerSets named alike in two namespaces each get their headless Service and one whole
    slice (a second pool of four VMs is added for the second). Each selects its own pool by name: LWS's exclusive-topology
    anti-affinity has no namespace selector (lws v0.9.0 pkg/webhooks/pod_webhook.go l.212-226), so it keeps apart
    the groups of one namespace only; two groups of two namespaces that select only the accelerator and topology
    were seen to take VMs of the same pool and leave each other unschedulable ("4 Insufficient google.com/tpu, 5
    node(s) didn't match Pod's node affinity/selector")."""
    second = nodes.Pool("planted-v5e16-b", "ct5lp-hightpu-4t", "us-west4-a", "4x4", 4, 4)
    if not cp.kube.list("v1", "Node", label_selector=f"cloud.google.com/gke-nodepool={second.name}"):
        nodes.create_nodes(cp, second)
    pools = {**VERIFY_POOLS, second.name: Pool(second.name, "tpu-v5-lite-podslice", "4x4", 4, 4)}
    spaces = [_namespace(cp, "team-a"), _namespace(cp, "team-b")]
    for ns, pool in zip(spaces, pools, strict=True):
        selector = {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
            "cloud.google.com/gke-tpu-topology": "4x4",
            "cloud.google.com/gke-nodepool": pool,
        }
        cp.kube.create(lws("llama", ns, selector=selector))
    for ns in spaces:
        _pods(cp, ns, 4)
        wait_for(
            f"the pods of {ns} scheduled",
            lambda ns=ns: all(p["spec"].get("nodeName") for p in cp.kube.list("v1", "Pod", ns)),
            timeout=90,
            seen=lambda ns=ns: " | ".join(
                e["message"] for e in cp.kube.list("v1", "Event", ns) if e.get("reason") == "FailedScheduling"
            )[-600:],
        )
    snapshot = read(_api(cp), spaces)
    assert _failed(workloads(snapshot, spaces, serving=True)) == []
    found = placement(snapshot, spaces, pools)
    assert _failed(found) == []
    groups = sorted(f.line() for f in found if " group " in f.line())
    assert groups == [
        "ok   placement  group team-a/llama/0: 4 VMs of 1 whole slice",
        "ok   placement  group team-b/llama/0: 4 VMs of 1 whole slice",
    ]
    for ns in spaces:
        _remove(cp, ns, "llama")
