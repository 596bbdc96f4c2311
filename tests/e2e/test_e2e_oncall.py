"""The operators a stack names may run its runbooks' kubectl steps: tpu_serving_tools.e2e.oncall on a real API
server (its RBAC authorizer answers SubjectAccessReviews). Each stack's RBAC objects come from its plan; the requests
from the kubectl lines of ``tpu-serving runbook`` (GKE review round 53, M1: the on-call group was denied 6 of 9
steps), and from the kubectl commands of every alert page (its ``documentation.content``): each is the operators'
unless the page marks it as the cluster administrators' (SRE review round 31, M1: the pages' first commands were
Forbidden to the on-call group). Marked ``e2e``; the parser's cases run without a control plane."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import SHIPPED, plan_of
from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain, toolchain_file
from tpu_serving_tools.e2e.kube import ApiError
from tpu_serving_tools.e2e.oncall import Request, allowed, command_requests, page_commands, runbook_requests
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.runbook import command as runbook

RBAC = ("Namespace", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
OWNED = ("Namespace", "Role", "RoleBinding")
NODE_STEP_RESOURCES = {"nodes", "pods", "daemonsets"}
"""What the node steps read or change outside the serving namespace: the operators' on a cluster the stack creates."""
"""An existing (shared) cluster's stack grants no node rights: its nodes are the cluster owner's."""


def test_runbook_requests_of_the_production_example_cover_each_kind_of_step() -> None:
    found = runbook_requests(runbook.render(plan_of("vllm-llama33-70b-v6e8").as_json()), "vllm-llama70b")
    assert {
        Request("patch", "autoscaling", "horizontalpodautoscalers", "vllm-llama70b"),
        Request("patch", "", "nodes"),
        Request("list", "", "pods"),
        Request("create", "", "pods/eviction", "vllm-llama70b"),
        Request("get", "apps", "daemonsets"),
        Request("get", "leaderworkerset.x-k8s.io", "leaderworkersets", "vllm-llama70b"),  # in the waits' loops
    } <= found
    loops = "until R=$(kubectl -n x get leaderworkerset y -o jsonpath='{.status.readyReplicas}') && [ 1 ]; do :; done"
    assert runbook_requests(loops, "x") == {
        Request(verb, "leaderworkerset.x-k8s.io", "leaderworkersets", "x") for verb in ("get", "list")
    }
    nodes = "until kubectl get nodes -l a=b -o jsonpath='{range .items[*]}{.status}{end}' | awk 1; do :; done"
    assert runbook_requests(nodes, "x") == {Request(verb, "", "nodes") for verb in ("get", "list")}
    assert runbook_requests("# kubectl -n x delete pod y: prose", "x") == set()
    with pytest.raises(ValueError, match="does not know"):
        runbook_requests("kubectl -n x scale deployment y --replicas 2", "x")


def _every_runbooks_steps(plan: dict) -> set[Request]:
    """What every stack's runbook asks of the API server, whatever its backend: the node steps (read, cordon) and its
    pods read in its namespace; a LeaderWorkerSet stack also waits on its groups. A floor each stack's parsed requests
    must reach, so a runbook or parser that loses a step fails here rather than shrinking a total."""
    serving = plan["outputs"]["namespace"]
    steps = {Request(v, "", "nodes") for v in ("get", "list", "patch")} | {
        Request(v, "", "pods", serving) for v in ("get", "list")
    }
    if any(r["type"] == "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet" for r in plan["resources"]):
        steps |= {Request(v, "leaderworkerset.x-k8s.io", "leaderworkersets", serving) for v in ("get", "list")}
    return steps


def pages(plan: dict) -> dict[str, str]:
    """Each alert policy's page (``documentation.content``) by its display name."""
    return {
        r["inputs"]["displayName"]: r["inputs"]["documentation"]["content"]
        for r in plan["resources"]
        if r["type"] == "gcp:monitoring/alertPolicy:AlertPolicy" and r["inputs"].get("documentation")
    }


def test_page_commands_are_quoted_and_the_cluster_administrators_steps_marked() -> None:
    """Every kubectl command of every shipped stack's pages is in backticks and known to the parser; outside the
    serving namespace (the controllers, the adapter, the collectors) and, on an existing cluster, every cluster-scoped
    command is marked the cluster administrators' (the e2e test below asks the API server about the rest)."""
    seen = 0
    for stack in SHIPPED:
        plan = plan_of(stack).as_json()
        existing = not any(r["type"] == "gcp:container/cluster:Cluster" for r in plan["resources"])
        serving = plan["outputs"]["namespace"]
        for title, content in pages(plan).items():
            for command, admin in page_commands(content):
                seen += 1
                requests = command_requests(command, serving)
                ours = all(r.namespace in (serving, None) for r in requests)
                beyond = {r.resource for r in requests if r.namespace is None} - (
                    {""} if existing else NODE_STEP_RESOURCES
                )
                assert admin == (not ours or bool(beyond)), (stack, title, command)
    assert seen > 200, seen
    page = "`kubectl -n x get gateway,httproute,inferencepool -o wide` then `kubectl get nodes` (a cluster administrator's step)"
    assert page_commands(page) == [
        ("kubectl -n x get gateway,httproute,inferencepool -o wide", False),
        ("kubectl get nodes", True),
    ]
    assert command_requests("kubectl -n x logs job/<the last gate job>", "x") >= {
        Request("get", "batch", "jobs", "x"),
        Request("get", "", "pods/log", "x"),
    }
    assert command_requests("kubectl -n x describe podmonitoring y", "x") == {
        Request("get", "monitoring.googleapis.com", "podmonitorings", "x"),
        Request("list", "monitoring.googleapis.com", "podmonitorings", "x"),
        Request("list", "", "events", "x"),
    }
    with pytest.raises(ValueError, match="outside backticks"):
        page_commands("Find it (kubectl -n x get pods).")


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


def _node(cp: ControlPlane) -> str:
    """A Node (kwok does not manage it: its status is left alone)."""
    if cp.kube.find("v1", "Node", "tpu-0") is None:
        meta = {"name": "tpu-0", "labels": {"cloud.google.com/gke-nodepool": "v6e8a"}}
        cp.kube.create({"apiVersion": "v1", "kind": "Node", "metadata": meta})
    return "tpu-0"


def _cordon(cp: ControlPlane, group: str, node: str) -> int:
    """The status of a cordon (a node patch) made as a member of ``group`` (200, or the API server's refusal)."""
    kube = dataclasses.replace(cp.kube, impersonate=("oncall@example.com", group), _ssl=None)
    try:
        kube.request(
            "PATCH",
            f"/api/v1/nodes/{node}",
            {"spec": {"unschedulable": True}},
            content_type="application/merge-patch+json",
        )
    except ApiError as err:
        return err.status
    return 200


def _page_answers(
    cp: ControlPlane, plan: dict, groups: list[str]
) -> tuple[list[tuple[str, str, bool, bool]], list[str]]:
    """Each page command's (title, command, marked the administrators', allowed to the group: every request of
    it), and the commands another user may run (none should be)."""
    serving = plan["outputs"]["namespace"]
    answers, refused = [], []
    for title, content in pages(plan).items():
        for command, admin in page_commands(content):
            requests = command_requests(command, serving)
            answers.append((title, command, admin, all(allowed(cp, r, "oncall@example.com", groups) for r in requests)))
            if any(allowed(cp, r, "someone@example.com", ["other@example.com"]) for r in requests):
                refused.append(command)
    return answers, refused


@pytest.mark.e2e
def test_operators_may_run_every_kubectl_step_of_their_stacks_runbook() -> None:
    """Each stack alone (its objects created, checked, then deleted: the production example and v5e16 share a
    namespace, GKE review round 54, m3). The authorizer allows every runbook request of the namespace to the group,
    and the node steps on a cluster the stack creates; on an existing cluster the node steps are refused (its
    owner's: GKE review round 54, M1); another user gets none. A real cordon, made as a member of the group, agrees."""
    if not toolchain_file().is_file() or "kube-apiserver" not in load_toolchain():
        pytest.skip("the e2e toolchain has no control plane (make e2e-tools)")
    wrong: dict[str, list[tuple[Request, bool]]] = {}
    denied: dict[str, list[tuple[str, str, bool]]] = {}
    commands = 0
    cordons: dict[str, int] = {}
    missing: dict[str, set[Request]] = {}
    with ControlPlane() as cp:
        node = _node(cp)
        for stack in SHIPPED:
            plan = plan_of(stack).as_json()
            existing = not any(r["type"] == "gcp:container/cluster:Cluster" for r in plan["resources"])
            objects, groups = operator_objects(stack)
            assert groups and {o["kind"] for o in objects} == set(OWNED if existing else RBAC), (stack, groups)
            ordered = sorted(objects, key=lambda o: RBAC.index(o["kind"]))
            for o in ordered:
                if not cp.kube.find(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")):
                    cp.kube.create(o)
            requests = sorted(runbook_requests(runbook.render(plan), plan["outputs"]["namespace"]), key=str)
            assert any(r.namespace is None for r in requests) and any(r.namespace for r in requests), stack
            if lacking := _every_runbooks_steps(plan) - set(requests):
                missing[stack] = lacking
            answers = [(r, allowed(cp, r, "oncall@example.com", groups)) for r in requests]
            if bad := [(r, a) for r, a in answers if a != (r.namespace is not None or not existing)]:
                wrong[stack] = bad
            assert not any(allowed(cp, r, "someone@example.com", ["other@example.com"]) for r in requests), stack
            paged, refused = _page_answers(cp, plan, groups)
            commands += len(paged)
            if bad_pages := [(title, c, ok) for title, c, admin, ok in paged if ok == admin]:
                denied[stack] = bad_pages
            assert not refused, (stack, refused)
            cordons[stack] = _cordon(cp, groups[0], node)
            for o in reversed(ordered):  # the next stack's objects alone answer for it
                if o["kind"] != "Namespace":
                    cp.kube.delete(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace"))
    expected = {s: 403 if s == "vllm-llama33-70b-existing" else 200 for s in SHIPPED}
    assert not missing and not wrong and cordons == expected, (missing, wrong, cordons)
    for stack, bad in denied.items():
        for title, command, ok in bad:
            print(f"{stack}\t{'ALLOWED (marked)' if ok else 'DENIED'}\t{title}\t{command}")
    assert commands > 200 and not denied, (commands, sum(len(b) for b in denied.values()))
