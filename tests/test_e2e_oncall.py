"""The operators a stack names may run its runbooks' kubectl steps: tpu_serving_tools.e2e.oncall on a real API
server (its RBAC authorizer answers SubjectAccessReviews). Each stack's RBAC objects come from its plan; the requests
from the kubectl lines of ``tpu-serving runbook`` (GKE review round 53, M1: the on-call group was denied 6 of 9
steps). Marked ``e2e``; the parser's cases run without a control plane."""

from __future__ import annotations

import pytest

from tests.conftest import SHIPPED, plan_of
from tpu_serving_tools import runbook
from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain, toolchain_file
from tpu_serving_tools.e2e.oncall import Request, allowed, runbook_requests
from tpu_serving_tools.offline import kubernetes_objects

RBAC = ("Namespace", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


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


@pytest.mark.e2e
def test_operators_may_run_every_kubectl_step_of_their_stacks_runbook() -> None:
    if not toolchain_file().is_file() or "kube-apiserver" not in load_toolchain():
        pytest.skip("the e2e toolchain has no control plane (make e2e-tools)")
    denied: dict[str, list[Request]] = {}
    checked = 0
    with ControlPlane() as cp:
        for stack in SHIPPED:
            objects, groups = operator_objects(stack)
            assert groups and {o["kind"] for o in objects} == set(RBAC), (stack, groups)
            for o in sorted(objects, key=lambda o: RBAC.index(o["kind"])):
                if not cp.kube.find(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")):
                    cp.kube.create(o)
            plan = plan_of(stack).as_json()
            requests = sorted(runbook_requests(runbook.render(plan), plan["outputs"]["namespace"]), key=str)
            assert requests, stack
            checked += len(requests)
            refused = [r for r in requests if not allowed(cp, r, "oncall@example.com", groups)]
            if refused:
                denied[stack] = refused
            # the authorizer is not answering yes to everyone: the same steps, outside the group, are refused
            assert not any(allowed(cp, r, "someone@example.com", ["other@example.com"]) for r in requests), stack
    assert checked > 80 and not denied, denied
