"""The operators a stack names may run its runbooks' kubectl steps: tpu_serving_tools.e2e.oncall on a real API
server (its RBAC authorizer answers SubjectAccessReviews). Each stack's RBAC objects come from its plan; the requests
from the kubectl lines of ``tpu-serving runbook`` (GKE review round 53, M1: the on-call group was denied 6 of 9
steps). Marked ``e2e``; the parser's cases run without a control plane."""

from __future__ import annotations

import dataclasses
import time

import pytest

from tests.conftest import SHIPPED, plan_of
from tpu_serving_tools import runbook
from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain, toolchain_file
from tpu_serving_tools.e2e.kube import ApiError
from tpu_serving_tools.e2e.oncall import Request, allowed, runbook_requests
from tpu_serving_tools.offline import kubernetes_objects

RBAC = (
    "Namespace",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ClusterRole",
    "ClusterRoleBinding",
)


def test_runbook_requests_of_the_production_example_cover_each_kind_of_step() -> None:
    found = runbook_requests(runbook.render(plan_of("vllm-llama33-70b-v6e8").as_json()), "vllm-llama70b")
    assert {
        Request("patch", "autoscaling", "horizontalpodautoscalers", "vllm-llama70b"),
        Request("patch", "", "nodes"),
        Request("list", "", "pods"),
        Request("create", "", "pods/eviction", "vllm-llama70b"),
        Request("get", "apps", "daemonsets"),
        Request("watch", "leaderworkerset.x-k8s.io", "leaderworkersets", "vllm-llama70b"),
    } <= found
    with pytest.raises(ValueError, match="does not know"):
        runbook_requests("kubectl -n x scale deployment y --replicas 2", "x")


def operator_objects(stack: str) -> tuple[list[dict], list[str]]:
    """The stack's operator RBAC objects (and its namespace), and the groups they bind."""
    objects = [
        o
        for o in kubernetes_objects(plan_of(stack))
        if o["kind"] in RBAC and (o["kind"] == "Namespace" or "tpu-serving-operator" in o["metadata"]["name"])
    ]
    groups = [
        s["name"] for o in objects if o["kind"] == "RoleBinding" for s in o.get("subjects", []) if s["kind"] == "Group"
    ]
    return objects, groups


def _own_and_other_node(cp: ControlPlane, pool: str) -> tuple[str, str]:
    """A Node of ``pool`` and one of another tenant's pool (kwok does not manage them: their status is left alone)."""
    names = []
    for node, label in (("own-0", pool), ("other-tenant-0", "other-team-v6e8")):
        found = cp.kube.find("v1", "Node", node)
        if found is not None:
            cp.kube.delete("v1", "Node", node)
        meta = {"name": node, "labels": {"cloud.google.com/gke-nodepool": label}}
        names.append(str(cp.kube.create({"apiVersion": "v1", "kind": "Node", "metadata": meta})["metadata"]["name"]))
    return names[0], names[1]


def _node_step(cp: ControlPlane, group: str, node: str, patch: dict) -> int:
    """The status of a node patch made as a member of ``group`` (200, or the API server's refusal)."""
    kube = dataclasses.replace(cp.kube, impersonate=("oncall@example.com", group), _ssl=None)
    try:
        kube.request("PATCH", f"/api/v1/nodes/{node}", patch, content_type="application/merge-patch+json")
    except ApiError as err:
        return err.status
    return 200


CORDON = {"spec": {"unschedulable": True}}
START = {"metadata": {"labels": {"cloud.google.com/perform-maintenance": "true"}}}
OTHER_LABEL = {"metadata": {"labels": {"example.com/mine": "x"}}}


@pytest.mark.e2e
def test_operators_may_run_every_kubectl_step_of_their_stacks_runbook_on_their_own_nodes_only() -> None:
    """Each stack alone (its objects created, checked, then deleted: the production example and v5e16 share a
    namespace, GKE review round 54, m3). The authorizer allows every runbook request to the group and none to
    another user; the admission policy lets the group cordon and start the maintenance of its own pool's node,
    and refuses another tenant's node and any other label (GKE review round 54, M1)."""
    if not toolchain_file().is_file() or "kube-apiserver" not in load_toolchain():
        pytest.skip("the e2e toolchain has no control plane (make e2e-tools)")
    denied: dict[str, list[Request]] = {}
    refused: dict[str, dict[str, int]] = {}
    checked = 0
    with ControlPlane() as cp:
        for stack in SHIPPED:
            objects, groups = operator_objects(stack)
            assert groups and {o["kind"] for o in objects} == set(RBAC), (stack, groups)
            ordered = sorted(objects, key=lambda o: RBAC.index(o["kind"]))
            for o in ordered:
                if not cp.kube.find(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")):
                    cp.kube.create(o)
            plan = plan_of(stack).as_json()
            requests = sorted(runbook_requests(runbook.render(plan), plan["outputs"]["namespace"]), key=str)
            assert requests, stack
            checked += len(requests)
            if blocked := [r for r in requests if not allowed(cp, r, "oncall@example.com", groups)]:
                denied[stack] = blocked
            assert not any(allowed(cp, r, "someone@example.com", ["other@example.com"]) for r in requests), stack
            (policy,) = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
            pools = policy["spec"]["validations"][0]["expression"].split(" in [", 1)[1]
            own, other = _own_and_other_node(cp, pools.split("'")[1])
            time.sleep(2)  # the policy's informer: admission reads it a moment after it is created
            steps = {
                "cordon own": _node_step(cp, groups[0], own, CORDON),
                "start own": _node_step(cp, groups[0], own, START),
                "cordon other tenant's": _node_step(cp, groups[0], other, CORDON),
                "start other tenant's": _node_step(cp, groups[0], other, START),
                "another label on own": _node_step(cp, groups[0], own, OTHER_LABEL),
            }
            expected = {k: 200 if k in ("cordon own", "start own") else 422 for k in steps}
            if steps != expected:
                refused[stack] = steps
            for o in reversed(ordered):  # the next stack's objects alone answer for it
                if o["kind"] != "Namespace":
                    cp.kube.delete(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace"))
    assert checked > 80 and not denied and not refused, (denied, refused)
