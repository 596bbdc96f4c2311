"""A TPU VM that stops answering, with no drain: what the real control plane does to the group on it.

The stack goes up and is scaled to two groups (through the scale subresource: ``make e2e`` has no metrics API). Then a
VM of group 0 (a worker's) goes silent: it is taken from kwok, which stops renewing its Lease and its status, as a VM
that hangs or loses its network does. kube-controller-manager's node lifecycle controller marks it unreachable and
taints it ``node.kubernetes.io/unreachable:NoExecute`` once ``--node-monitor-grace-period`` has passed (50 s by
default: k8s.io/kubernetes v1.36.3 cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go); its taint
eviction then deletes the pods on it whose toleration of that taint ran out. The serving pods tolerate it for
``serving.probes.nodeLostSeconds`` (60), not the 300 s the API server would add (``DefaultTolerationSeconds``), so
the deletion must come about a minute after the taint.

With no kubelet to confirm it, a deleted pod on a silent node stays Terminating: it keeps its name, so the worker
StatefulSet of the recreated group cannot make its pod again, and the group cannot serve until the VM's Node is
removed (GKE's auto-repair recreates the VM; PodGC then deletes the pods bound to a Node that no longer exists:
pkg/controller/podgc/gc_controller.go ``gcOrphaned``). The run removes the Node, as the repair does, and group 0 must
then serve again, on a free slice of its shape. The other group must serve throughout.

What this does not show: how long GKE takes to repair a VM (the run removes the Node at once), and an engine's own
reaction to losing a host (under kwok a pod is Ready until deleted).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL, Finding, pod_is_ready

from .controlplane import KWOK_LABEL
from .lifecycle import hpa_targets, up_finding
from .rollout import LWS_GROUP, LWS_PLURAL, LWS_VERSION, REVISION, live_lws, lws_pods, serving_groups
from .stack_run import StackRun

UNREACHABLE = "node.kubernetes.io/unreachable"
"""The taint the node lifecycle controller puts on a Node whose kubelet stopped reporting (k8s.io/api v0.36.3
core/v1/well_known_taints.go l.25, ``TaintNodeUnreachable``)."""

GROUPS = 2
"""The groups the run holds (the flagship stack's ``autoscaling.minReplicas``)."""

TOLERATION_SLACK_SECONDS = 30.0
"""How much later than the pods' toleration their deletion may come: the taint eviction controller's queue and this
run's polling (0.5 s)."""


def wait(condition: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until ``condition`` held, or None after ``timeout``."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            return None
        time.sleep(0.5)
    return time.monotonic() - began


def _node(api_client: Any, name: str) -> Any:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    try:
        return client.CoreV1Api(api_client).read_node(name)
    except ApiException as err:
        if err.status == 404:
            return None
        raise


def tainted(api_client: Any, name: str) -> bool:
    node = _node(api_client, name)
    taints = (node.spec.taints if node is not None and node.spec is not None else None) or []
    return any(t.key == UNREACHABLE and t.effect == "NoExecute" for t in taints)


def group_pods(api_client: Any, namespace: str, name: str, group: str) -> list[Mapping[str, Any]]:
    return [
        p
        for p in lws_pods(api_client, namespace, name)
        if str((p["metadata"].get("labels") or {}).get(LWS_GROUP_LABEL)) == group
    ]


def silence(api_client: Any, node: str) -> None:
    """Take ``node`` from kwok (remove its label): its Lease and status are no longer renewed."""
    from kubernetes import client

    client.CoreV1Api(api_client).patch_node(node, {"metadata": {"labels": {KWOK_LABEL[0]: None}}})


def set_replicas(api_client: Any, target: tuple[str, str], groups: int) -> None:
    """Set the LeaderWorkerSet ``target``'s group count through its scale subresource, as the HPA does."""
    from kubernetes import client

    namespace, name = target
    client.CustomObjectsApi(api_client).patch_namespaced_custom_object_scale(
        LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name, {"spec": {"replicas": groups}}
    )


def scale(
    api_client: Any, target: tuple[str, str], size: int, timeout: float, groups: int = GROUPS, check: str = "node-loss"
) -> Finding:
    """Scale the LeaderWorkerSet ``target`` to ``groups`` through its scale subresource, as the HPA does, and wait
    until that many serve."""
    namespace, name = target
    set_replicas(api_client, target, groups)
    took = wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == groups, timeout)
    subject = f"LeaderWorkerSet {namespace}/{name}: scaled to {groups}"
    return Finding(check, subject, took is not None, f"{groups} groups serve" if took is not None else "not")


def lose_one_node(
    api_client: Any, target: tuple[str, str], node_lost_seconds: int, timeout: float = 240.0
) -> list[Finding]:
    """Silence a VM of group 0 of the LeaderWorkerSet ``target`` (namespace, name) and follow the group until it
    serves again: the taint, the pods' deletion after ``node_lost_seconds``, the group blocked while the VM's Node
    exists, and back once it is removed; group 1 serving throughout."""
    namespace, name = target
    subject = f"LeaderWorkerSet {namespace}/{name}"
    _, size = live_lws(api_client, namespace, name)
    out = [scale(api_client, target, size, timeout)]
    if not out[0].ok:
        return out
    workers = [p for p in group_pods(api_client, namespace, name, "0") if p["metadata"]["name"] != f"{name}-0"]
    if not workers:
        return [*out, Finding("node-loss", subject, False, "group 0 has no worker pod to lose a VM under")]
    node = str(workers[0]["spec"]["nodeName"])
    on_node = {p["metadata"]["name"] for p in workers if p["spec"].get("nodeName") == node}
    silence(api_client, node)
    began = time.monotonic()
    taint_after = wait(lambda: tainted(api_client, node), timeout)
    out.append(
        Finding(
            "node-loss",
            f"Node {node}: tainted unreachable",
            taint_after is not None,
            f"after {taint_after:.0f} s silent" if taint_after is not None else f"not within {timeout:.0f} s",
        )
    )
    if taint_after is None:
        return out
    out.append(deleted_after_toleration(api_client, (namespace, name), on_node, node_lost_seconds, timeout))
    others = serving_groups(group_pods(api_client, namespace, name, "1"), size)
    out.append(Finding("node-loss", f"{subject}: group 1 while group 0 is lost", others == 1, f"{others} serving"))
    out.append(_blocked_while_silent(api_client, target, size, node))
    saved = _node(api_client, node)
    _repair(api_client, saved)
    back = wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == GROUPS, timeout)
    total = time.monotonic() - began
    out.append(
        Finding(
            "node-loss",
            f"{subject}: group 0 serves again once the VM is repaired",
            back is not None,
            f"{GROUPS} groups serve {total:.0f} s after the VM went silent"
            if back is not None
            else f"not within {timeout:.0f} s: {where(api_client, namespace, name, ('0', '1'))}",
        )
    )
    return out


BLOCKED_SECONDS = 60.0
"""How long group 0 is watched while its VM is silent and its Node still exists."""


def where(api_client: Any, namespace: str, name: str, groups: tuple[str, ...] = ("0",)) -> str:
    """The pods of ``groups``: each with its phase, node, readiness, template revision and whether it is being deleted
    (a failed finding's detail: :func:`.rollout.serving_groups` needs every pod of a group Ready, on one revision)."""
    pods = [p for g in groups for p in group_pods(api_client, namespace, name, g)]
    return "; ".join(
        f"{p['metadata']['name']} {p.get('status', {}).get('phase')} on {p['spec'].get('nodeName') or '-'}"
        + ("" if pod_is_ready(p) else " (not Ready)")
        + f" rev {(p['metadata'].get('labels') or {}).get(REVISION, '-')}"
        + (" (deleting)" if p["metadata"].get("deletionTimestamp") else "")
        for p in sorted(pods, key=lambda p: str(p["metadata"]["name"]))
    )


def _blocked_while_silent(api_client: Any, target: tuple[str, str], size: int, node: str) -> Finding:
    """While the silent VM's Node exists, group 0 does not serve: its pod there stays Terminating (no kubelet
    confirms the deletion), and keeps its name from the recreated group's worker StatefulSet."""
    namespace, name = target
    served = wait(lambda: serving_groups(group_pods(api_client, namespace, name, "0"), size) == 1, BLOCKED_SECONDS)
    return Finding(
        "node-loss",
        f"LeaderWorkerSet {namespace}/{name}: group 0 while its VM's Node {node} exists",
        served is None,
        f"does not serve for {BLOCKED_SECONDS:.0f} s: {where(api_client, namespace, name)}"
        if served is None
        else f"serves again after {served:.0f} s, with the VM still silent",
    )


def _repair(api_client: Any, node: Any, timeout: float = 120.0) -> None:
    """GKE's repair of the silent VM: its Node removed (PodGC then deletes the pods bound to it), and the VM back
    under the same name, Ready under kwok."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    name = node.metadata.name
    core.delete_node(name)
    wait(lambda: _node(api_client, name) is None, timeout)
    labels = {k: v for k, v in (node.metadata.labels or {}).items() if k != KWOK_LABEL[0]}
    taints = [
        t for t in (node.spec.taints or []) if t.key != UNREACHABLE and not t.key.startswith("node.kubernetes.io/")
    ]
    body = client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=node.metadata.annotations),
        spec=client.V1NodeSpec(taints=taints or None, pod_cidr=node.spec.pod_cidr, pod_cidrs=node.spec.pod_cidrs),
    )
    core.create_node(body)
    status = {"capacity": node.status.capacity, "allocatable": node.status.allocatable}
    status["addresses"] = [{"type": a.type, "address": a.address} for a in node.status.addresses or []]
    core.patch_node_status(name, {"status": status})
    core.patch_node(name, {"metadata": {"labels": {KWOK_LABEL[0]: KWOK_LABEL[1]}}})


def deleted_after_toleration(
    api_client: Any,
    target: tuple[str, str],
    pods: set[str],
    tolerated: int,
    timeout: float,
    check: tuple[str, str] = ("node-loss", "on the lost VM"),
) -> Finding:
    """The pods on the silenced VM marked for deletion, ``tolerated`` seconds after the taint (within the slack);
    ``check`` names the finding's check and where the pods were."""
    namespace, name = target

    def marked() -> bool:
        live = [p for p in lws_pods(api_client, namespace, name) if p["metadata"]["name"] in pods]
        return all(p["metadata"].get("deletionTimestamp") for p in live)

    took = wait(marked, timeout + tolerated)
    ok = took is not None and tolerated - TOLERATION_SLACK_SECONDS <= took <= tolerated + TOLERATION_SLACK_SECONDS
    detail = (
        f"{', '.join(sorted(pods))} marked for deletion {took:.0f} s after the taint (toleration {tolerated} s)"
        if took is not None
        else f"not marked for deletion within {timeout + tolerated:.0f} s"
    )
    return Finding(check[0], f"LeaderWorkerSet {namespace}/{name}: group 0's pods {check[1]}", ok, detail)


DOCUMENTED_NODE_LOST_SECONDS = 60
"""``serving.probes.nodeLostSeconds`` when the stack file leaves it out, as docs/reference/settings.md states it."""


def node_lost_seconds(config: Mapping[str, Any]) -> int:
    """The stack file's ``serving.probes.nodeLostSeconds``, or its documented default."""
    probes = dict(dict(config.get("serving") or {}).get("probes") or {})
    return int(probes.get("nodeLostSeconds", DOCUMENTED_NODE_LOST_SECONDS))


Lifecycle = Callable[[Any, StackRun, Any, Mapping[str, Any]], None]
"""What ``run_stack`` runs once a stack is up (:func:`tpu_serving_tools.e2e.run.run_stack`'s ``lifecycle``)."""


After = Callable[[StackRun, Any, Mapping[str, Any]], list[Finding]]
"""A step after a scenario that passed: the stack's run, the API client and the stack's configuration."""


def autoscaled_lifecycle(
    check: str, scenario: Callable[[Any, tuple[str, str], int], list[Finding]], after: After | None = None
) -> Lifecycle:
    """A lifecycle that brings the stack up, runs ``scenario`` on the first HPA's LeaderWorkerSet (namespace, name)
    with the stack file's ``serving.probes.nodeLostSeconds``, then ``after`` if every finding of it passed, and
    destroys the stack; its findings are ``check``'s."""

    def lifecycle(report: Any, run: StackRun, api_client: Any, config: Mapping[str, Any]) -> None:
        if not up_finding(report, run):
            return
        targets = hpa_targets(run.resources())
        if not targets:
            report.findings.append(Finding(check, check, False, "the stack has no autoscaled LeaderWorkerSet"))
        else:
            found = report.step(check, lambda: scenario(api_client, targets[0], node_lost_seconds(config)))
            report.findings += found
            if after is not None and all(f.ok for f in found):
                report.findings += report.step(f"{check}-after", lambda: after(run, api_client, config))
        report.step("destroy", run.destroy)

    return lifecycle


node_loss_lifecycle = autoscaled_lifecycle("node-loss", lose_one_node)
"""``run_stack``'s lifecycle for a lost VM: :func:`lose_one_node`."""
