"""Kubernetes prerequisites in the runtime model (tools/runtime/k8s_prereqs.py): a custom resource needs its
controller's release installed by the plan, new enough, applied first; an object waits for its Namespace. On a small
plan built by hand, as a program that builds the components itself might declare it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.runtime import k8s_prereqs, prereqs
from tpu_serving_tools.runtime.planview import PlanView

LWS_URL = "https://github.com/kubernetes-sigs/lws/releases/download/{v}/manifests.yaml"


def _r(urn: str, type_: str, inputs: dict[str, Any], deps: tuple[str, ...] = (), parent: str = "") -> dict[str, Any]:
    return {
        "urn": urn,
        "type": type_,
        "name": urn,
        "custom": True,
        "parent": parent or None,
        "inputs": inputs,
        "dependencies": list(deps),
    }


def plan(version: str = "v0.10.0", *, lws_deps: tuple[str, ...] = ("install", "ns")) -> dict[str, Any]:
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "llm"},
        "spec": {"leaderWorkerTemplate": {"restartPolicy": "RecreateGroupAfterStart"}},
    }
    return {
        "stack": "s",
        "project": "p",
        "config": {},
        "outputs": {},
        "resources": [
            _r("ns", "kubernetes:core/v1:Namespace", {"metadata": {"name": "llm"}}),
            _r("controller", "tpu-serving:index:ControllerInstall", {}),
            _r(
                "install", "kubernetes:yaml/v2:ConfigGroup", {"files": [LWS_URL.format(v=version)]}, parent="controller"
            ),
            _r("lws", "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet", lws, lws_deps),
            _r("svc", "kubernetes:core/v1:Service", {"metadata": {"name": "vllm-api", "namespace": "llm"}}, ("lws",)),
        ],
    }


def _findings(p: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    view = PlanView(p)
    return {
        f.subject: (f.ok, f.reason) for f in [*k8s_prereqs.kind_findings(view), *k8s_prereqs.namespace_findings(view)]
    }


def test_k8s_prereqs_a_wired_plan_passes():
    assert _findings(plan()) == {
        "kind LeaderWorkerSet lws": (True, "served by LeaderWorkerSet v0.10.0 (install), created after it"),
        "namespace llm": (True, "2 object(s) in it wait for ns"),
    }
    # a dependency on the ControllerInstall component stands for the release it applies
    assert _findings(plan(lws_deps=("controller", "ns")))["kind LeaderWorkerSet lws"][0]


def test_k8s_prereqs_a_custom_resource_without_its_controller_fails():
    p = plan()
    p["resources"] = [r for r in p["resources"] if r["urn"] != "install"]
    ok, reason = _findings(p)["kind LeaderWorkerSet lws"]
    assert not ok and reason.startswith("no controller release in the plan serves leaderworkerset.x-k8s.io")


@pytest.mark.parametrize("version, ok", [("v0.4.0", False), ("v0.8.0", False), ("v0.9.0", True), ("v0.10.0", True)])
def test_k8s_prereqs_a_field_value_newer_than_the_installed_release_fails(version, ok):
    found = _findings(plan(version))["kind LeaderWorkerSet lws"]
    assert found[0] is ok, found
    if not ok:
        assert found[1].startswith(
            "spec.leaderWorkerTemplate.restartPolicy: RecreateGroupAfterStart needs LeaderWorkerSet v0.9.0 or later, "
            f"the plan installs {version}"
        )


def test_k8s_prereqs_a_kind_newer_than_the_installed_release_fails():
    p = plan("v0.9.0")
    scaler = _r("scaler", "kubernetes:disaggregatedset.x-k8s.io/v1:DisaggregatedSetRoleScaler", {}, ("install",))
    p["resources"].append(scaler)
    ok, reason = _findings(p)["kind DisaggregatedSetRoleScaler scaler"]
    assert not ok and reason.startswith("kind DisaggregatedSetRoleScaler needs LeaderWorkerSet v0.10.0 or later")


def test_k8s_prereqs_an_object_created_before_its_crd_or_namespace_fails():
    found = _findings(plan(lws_deps=()))
    ok, reason = found["kind LeaderWorkerSet lws"]
    assert not ok and reason.startswith("does not wait for install, which installs LeaderWorkerSet v0.10.0")
    ok, reason = found["namespace llm"]
    assert not ok and reason.startswith("lws, svc do(es) not wait for Namespace llm (ns)")


def test_k8s_prereqs_are_part_of_the_prerequisites_category():
    p = copy.deepcopy(plan(lws_deps=()))
    subjects = {f.subject: f.ok for f in prereqs.check(PlanView(p)).findings}
    assert subjects["kind LeaderWorkerSet lws"] is False and subjects["namespace llm"] is False


def test_k8s_prereqs_a_pod_priority_class_the_plan_does_not_declare_fails():
    """Every pod template's ``priorityClassName`` is a PriorityClass of the plan or a built-in one: the stack's
    serving class is declared by its Tenancy; without it, the API server refuses the pods (library review 2, M5)."""
    from tests.conftest import plan_of

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v5e16").as_json())
    before = {f.subject: f.ok for f in k8s_prereqs.priority_findings(PlanView(plan))}
    subject = "priority class tpu-serving-online of LeaderWorkerSet vllm-llama70b/vllm"
    assert before[subject] and all(before.values()), before
    plan["resources"] = [r for r in plan["resources"] if r["type"] != "kubernetes:scheduling.k8s.io/v1:PriorityClass"]
    after = {f.subject: f for f in k8s_prereqs.priority_findings(PlanView(plan))}
    assert set(after) == set(before)
    assert not after[subject].ok and after[subject].reason.startswith("the API server refuses the pod")
    assert [s for s, f in after.items() if f.ok] == [
        s
        for s in after
        if s.startswith(("priority class system-cluster-critical", "priority class system-node-critical"))
    ]


def test_k8s_prereqs_a_priority_class_patch_declares_the_class():
    """``TenancyArgs(shared_cluster=True)`` declares the classes as PriorityClassPatch resources (a server-side apply,
    which creates the class when it is absent): the pods naming them pass."""
    from tests.conftest import plan_of

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-existing").as_json())
    assert [r for r in plan["resources"] if r["type"] == "kubernetes:scheduling.k8s.io/v1:PriorityClassPatch"]
    assert {"tpu-serving-online", "tpu-serving-batch"} <= k8s_prereqs.declared_priority_classes(PlanView(plan))
    found = {f.subject: f.ok for f in k8s_prereqs.priority_findings(PlanView(plan))}
    assert found and all(found.values()) and any("tpu-serving-online" in s for s in found), found


def test_k8s_prereqs_gateway_objects_need_the_clusters_gateway_api():
    """Library review 6, m1: a cluster without the Gateway API passed beside a ServingGateway's objects."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    view = PlanView(plan)
    found = {f.subject: f for f in k8s_prereqs.gateway_findings(view)}
    on = found["gateway api on cluster vllm70bv6e"]
    assert on.ok and on.reason == (
        "gatewayApiConfig.channel CHANNEL_STANDARD serves the plan's GCPBackendPolicy, Gateway, HTTPRoute, "
        "HealthCheckPolicy, InferencePool"
    ), on
    assert found["inference pool crd on cluster vllm70bv6e"].ok
    (cluster,) = [r for r in plan["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    del cluster["inputs"]["gatewayApiConfig"]
    cluster["inputs"]["minMasterVersion"] = "1.34.0-gke.1000000"
    found = {f.subject: f for f in k8s_prereqs.gateway_findings(PlanView(plan))}
    off, crd = found["gateway api on cluster vllm70bv6e"], found["inference pool crd on cluster vllm70bv6e"]
    assert not off.ok and "Gateway API support is off (gatewayApiConfig unset)" in off.reason, off
    assert not crd.ok and "GKE serves the InferencePool CRD from 1.34.0-gke.1626000" in crd.reason, crd


def test_k8s_prereqs_gateway_findings_only_where_the_plan_has_gateway_objects():
    assert list(k8s_prereqs.gateway_findings(PlanView(plan_of("saxml-175b-v5e32x2").as_json()))) == []


def test_k8s_prereqs_fuse_volumes_need_the_clusters_fuse_driver():
    """GKE review 65, m2: a pod mounting a Cloud Storage FUSE volume on a cluster without the add-on."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    (on,) = k8s_prereqs.fuse_findings(PlanView(plan))
    assert on.ok and "LeaderWorkerSet vllm-llama70b/vllm" in on.reason, on
    (cluster,) = [r for r in plan["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    cluster["inputs"]["addonsConfig"]["gcsFuseCsiDriverConfig"]["enabled"] = False
    (off,) = k8s_prereqs.fuse_findings(PlanView(plan))
    assert not off.ok and "add-on is off: their pods would stay ContainerCreating" in off.reason, off


def test_k8s_prereqs_objects_in_a_namespace_nothing_makes_fail():
    """Library review 8, M2: a Tenancy given a mistyped namespace passed; the API server refuses its objects."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    assert all(f.ok for f in k8s_prereqs.namespace_findings(PlanView(plan)))
    for r in plan["resources"]:
        if r["type"] == "kubernetes:core/v1:ResourceQuota":
            r["inputs"]["metadata"]["namespace"] = "vllm-llama70bb"
    (bad,) = [f for f in k8s_prereqs.namespace_findings(PlanView(plan)) if not f.ok]
    assert bad.subject == "namespace vllm-llama70bb" and "no Namespace of the plan makes" in bad.reason, bad
    assert bad.reason.endswith("a typo of the serving's namespace (vllm-llama70b)?"), bad
