"""Smoke test of the e2e harness: a real control plane (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok) schedules a TPU pod onto a kwok Node shaped like a GKE TPU VM, kwok runs it, and the API
server's ResourceQuota admission refuses a pod over quota. Each assertion is also shown failing on a planted break
(``test_e2e_planted_*``). Marked ``e2e``: ``make e2e``; skipped when the toolchain's JSON is missing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.conftest import require_toolchain
from tpu_serving_tools.e2e import addresses, nodes
from tpu_serving_tools.e2e.controlplane import SYSTEM_NAMESPACES, ControlPlane
from tpu_serving_tools.e2e.kube import ApiError, Kube, Obj, WaitTimeout, wait_for

pytestmark = pytest.mark.e2e

TPU_POOL = nodes.Pool("smoke-v5e4", "ct5lp-hightpu-4t", "us-west4-a", topology="2x2", initial_nodes=1)
"""A single-host v5e slice: one ct5lp-hightpu-4t VM with 4 chips."""
TPU_SELECTOR = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "2x2",
}
TPU_TOLERATION = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
_names = (f"smoke-{n}" for n in itertools.count())


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    require_toolchain()
    with ControlPlane(run_timeout=600) as plane:
        nodes.create_nodes(plane, TPU_POOL)
        yield plane


def namespace(kube: Kube) -> str:
    name = next(_names)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    wait_for(f"service account default in {name}", lambda: kube.find("v1", "ServiceAccount", "default", name),
             timeout=30)  # fmt: skip
    return name


def deployment(ns: str, *, selector: dict[str, str], tolerations: list[dict[str, str]], chips: int = 4) -> Obj:
    tpu = {"google.com/tpu": str(chips)} if chips else {"cpu": "1"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "server", "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "server"}},
            "template": {
                "metadata": {"labels": {"app": "server"}},
                "spec": {
                    "nodeSelector": selector,
                    "tolerations": tolerations,
                    "containers": [{"name": "server", "image": "example.invalid/server:1",
                                    "resources": {"requests": tpu, "limits": tpu}}],
                },
            },
        },
    }  # fmt: skip


def the_pod(kube: Kube, ns: str) -> Obj | None:
    pods = kube.list("v1", "Pod", ns, label_selector="app=server")
    return pods[0] if pods else None


def running_and_ready(kube: Kube, ns: str, timeout: float = 60) -> Obj:
    """The Deployment's pod once scheduled, Running and Ready; WaitTimeout otherwise."""

    def probe() -> Obj | None:
        pod = the_pod(kube, ns)
        status = (pod or {}).get("status") or {}
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or ())
        return pod if pod and status.get("phase") == "Running" and ready else None

    def seen() -> str:
        pod = the_pod(kube, ns) or {}
        return f"pod phase {(pod.get('status') or {}).get('phase')}, node {(pod.get('spec') or {}).get('nodeName')}"

    found: Obj = wait_for(f"the pod of Deployment {ns}/server Running and Ready", probe, timeout=timeout, seen=seen)
    return found


def failed_scheduling(kube: Kube, ns: str, timeout: float = 60) -> str:
    """The scheduler's FailedScheduling message for the Deployment's pod."""

    def probe() -> str:
        pod = the_pod(kube, ns)
        events = kube.list("v1", "Event", ns)
        return next((e["message"] for e in events if pod and e["involvedObject"]["name"] == pod["metadata"]["name"]
                     and e["reason"] == "FailedScheduling"), "")  # fmt: skip

    message: str = wait_for(f"a FailedScheduling event in {ns}", probe, timeout=timeout)
    return message


def quota(kube: Kube, ns: str, chips: int) -> None:
    kube.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "tpu", "namespace": ns},
                 "spec": {"hard": {"requests.google.com/tpu": str(chips)}}})  # fmt: skip
    wait_for("the quota's status", lambda: (kube.get("v1", "ResourceQuota", "tpu", ns).get("status") or {}).get("hard"),
             timeout=30)  # fmt: skip


def pod(ns: str, chips: int) -> Obj:
    tpu = {"google.com/tpu": str(chips)} if chips else {"cpu": "1"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"want-{chips}", "namespace": ns},
            "spec": {"tolerations": [TPU_TOLERATION], "containers": [
                {"name": "c", "image": "example.invalid/c:1", "resources": {"requests": tpu, "limits": tpu}}]}}  # fmt: skip


def refused(kube: Kube, obj: Obj) -> str:
    """The API server's message refusing ``obj``; AssertionError when it is admitted."""
    try:
        kube.create(obj)
    except ApiError as err:
        assert err.status == 403, err
        return err.message
    raise AssertionError(f"{obj['kind']} {obj['metadata']['name']} was admitted")


def test_e2e_tpu_pod_scheduled_to_the_tpu_node_running_and_ready(cp: ControlPlane):
    ns = namespace(cp.kube)
    cp.kube.create(deployment(ns, selector=TPU_SELECTOR, tolerations=[TPU_TOLERATION]))
    found = running_and_ready(cp.kube, ns)
    assert found["spec"]["nodeName"] == "gke-smoke-v5e4-0000"
    assert found["status"]["podIP"].startswith(addresses.POD_PREFIX)
    assert found["status"]["hostIP"] == f"{cp.addresses.prefix}250.1"


def test_e2e_resource_quota_refuses_a_pod_over_quota(cp: ControlPlane):
    ns = namespace(cp.kube)
    quota(cp.kube, ns, chips=4)
    message = refused(cp.kube, pod(ns, chips=8))
    assert message == (
        'pods "want-8" is forbidden: exceeded quota: tpu, requested: requests.google.com/tpu=8, '
        "used: requests.google.com/tpu=0, limited: requests.google.com/tpu=4"
    )


def test_e2e_planted_selector_matching_no_node_stays_pending(cp: ControlPlane):
    ns = namespace(cp.kube)
    wrong = {**TPU_SELECTOR, "cloud.google.com/gke-tpu-topology": "4x4"}
    cp.kube.create(deployment(ns, selector=wrong, tolerations=[TPU_TOLERATION]))
    with pytest.raises(WaitTimeout, match="pod phase Pending, node None"):
        running_and_ready(cp.kube, ns, timeout=10)
    assert failed_scheduling(cp.kube, ns) == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_e2e_tpu_request_tolerates_the_tpu_taint_as_on_gke(cp: ControlPlane):
    """GKE's ExtendedResourceToleration admission plugin: a pod that asks for google.com/tpu tolerates the taint."""
    for d in cp.kube.list("apps/v1", "Deployment"):  # the one TPU node's chips, free for this test's pod
        if d["metadata"]["name"] == "server":
            cp.kube.delete("apps/v1", "Deployment", "server", d["metadata"]["namespace"])
    wait_for("the other tests' TPU pods gone", lambda: not cp.kube.list("v1", "Pod", label_selector="app=server"),
             timeout=60)  # fmt: skip
    ns = namespace(cp.kube)
    cp.kube.create(deployment(ns, selector=TPU_SELECTOR, tolerations=[]))
    found = running_and_ready(cp.kube, ns)
    assert {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"} in found["spec"]["tolerations"]


def test_e2e_planted_pod_without_tpu_request_stays_off_the_tpu_node(cp: ControlPlane):
    ns = namespace(cp.kube)
    cp.kube.create(deployment(ns, selector=TPU_SELECTOR, tolerations=[], chips=0))
    with pytest.raises(WaitTimeout):
        running_and_ready(cp.kube, ns, timeout=10)
    assert failed_scheduling(cp.kube, ns).startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")


def test_e2e_planted_pod_within_quota_is_admitted(cp: ControlPlane):
    ns = namespace(cp.kube)
    quota(cp.kube, ns, chips=4)
    with pytest.raises(AssertionError, match="Pod want-4 was admitted"):
        refused(cp.kube, pod(ns, chips=4))


def test_e2e_control_plane_start_waits_for_the_default_service_accounts():
    """A run's inventory, taken as soon as the control plane is up, already holds the ``default`` ServiceAccount of
    every system namespace: otherwise destroy finds those the controller made after the inventory "left"."""
    require_toolchain()
    with ControlPlane(run_timeout=300) as plane:
        found = {ns: plane.kube.find("v1", "ServiceAccount", "default", ns) for ns in SYSTEM_NAMESPACES}
    assert len(SYSTEM_NAMESPACES) == 4
    assert {ns for ns, account in found.items() if account} == set(SYSTEM_NAMESPACES), found


def test_e2e_terminating_namespaces_names_what_holds_a_namespace(cp: ControlPlane):
    """tpu_serving_tools.e2e.stack_run.terminating_namespaces: a namespace whose object keeps a finalizer is reported
    with the namespace controller's own condition (what a destroy that timed out on a namespace now says)."""
    from tpu_serving_tools.e2e.stack_run import terminating_namespaces

    ns = namespace(cp.kube)
    held = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "held", "namespace": ns, "finalizers": ["tpu-serving.dev/e2e-hold"]}}  # fmt: skip
    cp.kube.create(held)
    assert f"namespace {ns} " not in terminating_namespaces(cp.kubeconfig)
    cp.kube.request("DELETE", f"/api/v1/namespaces/{ns}", None)
    said = wait_for(
        "the namespace controller's condition",
        lambda: (
            next((line for line in terminating_namespaces(cp.kubeconfig).splitlines() if f" {ns} " in line), None)
            if "Remaining" in terminating_namespaces(cp.kubeconfig)
            else None
        ),
        timeout=60,
    )
    assert said.startswith(f"namespace {ns} still being deleted: ") and "NamespaceFinalizersRemaining" in said, said
    cp.kube.patch(cp.kube.get("v1", "ConfigMap", "held", ns), {"metadata": {"finalizers": None}})
    wait_for(f"namespace {ns} gone", lambda: cp.kube.find("v1", "Namespace", ns) is None, timeout=60)
