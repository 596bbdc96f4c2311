"""A stockout under a capacity fallback: ``pulumi up`` completes with no slice to be had, and the groups wait for one.

A stack with a capacity fallback creates its serving pools empty (:func:`tpu_serving.catalog.capacity.fallback`): the groups'
pods bring their slices. Here, before ``pulumi up``, every Node of a pool of a ComputeClass (label
``cloud.google.com/compute-class``) is taken away, as a stockout leaves the pool and every fallback step: no VM. Then:

- ``pulumi up`` must complete (no step of it may wait for the groups' pods);
- every pod of the stack's LeaderWorkerSets must be Pending with the real scheduler's ``PodScheduled`` condition False,
  reason ``Unschedulable``: the condition kube-state-metrics exports as ``kube_pod_status_unschedulable``, which the
  capacity-wait ticket reads (:func:`tpu_serving.operations.alerts.serving_alerts.capacity_wait_alert`), and nothing else of the
  stack may be left waiting on them;
- the Nodes come back (a slice is made), and every group must serve, and ``tpu-serving verify`` pass. With a Spot step
  in the stack's fallback they come back as that step makes them: with GKE's Spot label and taint beside the class's
  (:data:`tpu_serving.pools.compute_class.SPOT_LABEL`), so the real scheduler places the groups only if their pods tolerate
  it;
- ``pulumi destroy``.

What this does not show: GKE (a node pool created with no VM, the cluster autoscaler's scale-up, the class's next
step), and Cloud Monitoring's evaluation of the ticket (tests/e2e/test_e2e_alerts.py evaluates it with promtool).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import Any

from tpu_serving.common.naming import NODEPOOL_LABEL
from tpu_serving.pools.compute_class import LABEL as COMPUTE_CLASS_LABEL
from tpu_serving.pools.compute_class import SPOT_LABEL, Fallback
from tpu_serving_tools.verify.checks import Finding
from tpu_serving_tools.verify.expect import expectations_from

from .kube import Kube, Obj
from .lifecycle import up_finding
from .node_loss import wait
from .nodes import hand_to_kwok
from .rollout import leader_worker_sets, live_lws, lws_pods, serving_groups
from .stack_run import StackRun

CHECK = "stockout"
LIFECYCLE_TAINTS = "node.kubernetes.io/"
"""Taints the node lifecycle controller adds and removes: not the pool's, so not given back with a Node."""
WAIT_SECONDS = 90.0
"""How long the pods are given to be created and judged by the scheduler, and the groups to serve once back."""


def classed_nodes(kube: Kube) -> list[Obj]:
    """Every Node of a pool of a ComputeClass."""
    return [n for n in kube.list("v1", "Node") if COMPUTE_CLASS_LABEL in (n["metadata"].get("labels") or {})]


def take_away(kube: Kube, nodes: list[Obj]) -> Finding:
    """Delete the Nodes, and wait until they are gone."""
    for node in nodes:
        kube.delete("v1", "Node", node["metadata"]["name"])
    names = {n["metadata"]["name"] for n in nodes}
    gone = wait(lambda: not names & {n["metadata"]["name"] for n in classed_nodes(kube)}, WAIT_SECONDS)
    detail = f"{len(nodes)} Node(s) of the ComputeClass's pools deleted before pulumi up"
    return Finding(CHECK, "no slice to be had", bool(nodes) and gone is not None, detail if nodes else "no such Node")


def unschedulable(pod: Mapping[str, Any]) -> bool:
    """The scheduler found no node for ``pod``: ``PodScheduled`` False, reason ``Unschedulable``."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
        for c in conditions
    )


def waiting(api_client: Any, namespace: str, name: str) -> Finding:
    """A leader pod per group exists, and every pod of the LeaderWorkerSet is unschedulable. With exclusive placement
    the controller makes a group's workers only once its leader is scheduled ("if exclusive placement is enabled but
    leader pod is not scheduled, don't create the worker sts": lws v0.9.0 pkg/controllers/pod_controller.go
    l.161-164), so a waiting group is its leader alone, which the capacity-wait ticket's pattern holds."""
    lws, _ = live_lws(api_client, namespace, name)
    groups = int(lws["spec"].get("replicas", 1))

    def judged() -> bool:
        pods = lws_pods(api_client, namespace, name)
        return len(pods) >= groups and all(unschedulable(p) for p in pods)

    took = wait(judged, WAIT_SECONDS)
    pods = lws_pods(api_client, namespace, name)
    said = ", ".join(f"{p['metadata']['name']} {'unschedulable' if unschedulable(p) else 'not'}" for p in pods)
    subject = f"LeaderWorkerSet {namespace}/{name}: groups wait for a slice"
    if took is None:
        return Finding(CHECK, subject, False, f"{len(pods)} pod(s) for {groups} group(s): {said or 'none'}")
    return Finding(CHECK, subject, True, f"{said}: Pending, PodScheduled False (Unschedulable)")


def restored(node: Obj) -> tuple[Obj, dict[str, Any]]:
    """The Node ``node`` as it was created (name, labels, pod CIDRs, the pool's taints) and its status."""
    spec = node.get("spec") or {}
    taints = [t for t in spec.get("taints") or [] if not str(t.get("key", "")).startswith(LIFECYCLE_TAINTS)]
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node["metadata"]["name"], "labels": dict(node["metadata"].get("labels") or {})},
        "spec": {"podCIDR": spec.get("podCIDR"), "podCIDRs": spec.get("podCIDRs"), "taints": taints},
    }
    status = node.get("status") or {}
    return body, {k: status[k] for k in ("capacity", "allocatable", "addresses") if k in status}


GKE_MADE_POOL = "gke-made-spot"
"""The pool of the Nodes a class's Spot step makes: a name the stack does not make (GKE picks it), so that
``tpu-serving verify`` meets a group on a pool GKE made for the class (GKE review of the issue 37 item 2 fixes, M3)."""


def as_spot(body: Obj) -> Obj:
    """The Node ``body`` as a class's Spot step makes it: in a pool of GKE's (:data:`GKE_MADE_POOL`), with GKE's Spot
    label and its Spot taint (``NoSchedule``), beside the class's label and taint."""
    metadata, spec = body["metadata"], body["spec"]
    taint = {"key": SPOT_LABEL, "value": "true", "effect": "NoSchedule"}
    labels = {**metadata["labels"], SPOT_LABEL: "true", NODEPOOL_LABEL: GKE_MADE_POOL}
    return {
        **body,
        "metadata": {**metadata, "labels": labels},
        "spec": {**spec, "taints": [*spec["taints"], taint]},
    }


def spot_step(config: Mapping[str, Any]) -> bool:
    """The stack's fallback has a Spot step (``serving.fallback`` of the stack file's ``config:``)."""
    from .run import flat_config

    serving = flat_config(config).get("tpu-serving:serving") or {}
    return Fallback.SPOT.value in (serving.get("fallback") or [])


def serving(api_client: Any, namespace: str, name: str, began: float) -> Finding:
    """Every group of the LeaderWorkerSet serves once the slices are back."""
    lws, size = live_lws(api_client, namespace, name)
    want = int(lws["spec"].get("replicas", 1))
    took = wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == want, WAIT_SECONDS)
    subject = f"LeaderWorkerSet {namespace}/{name}: groups serve once a slice is made"
    if took is None:
        return Finding(CHECK, subject, False, f"fewer than {want} group(s) serve after {WAIT_SECONDS:.0f} s")
    return Finding(
        CHECK, subject, True, f"{want} group(s) serve {time.monotonic() - began:.0f} s after the slices came"
    )


def stockout_lifecycle(report: Any, run: StackRun, api_client: Any, config: Mapping[str, Any]) -> None:
    """``run_stack``'s lifecycle for a stockout (the module's steps)."""
    from tpu_serving_tools.verify import verify_expected

    from .run import VERIFY_WAIT, flat_config

    kube = Kube.of(api_client)
    nodes = classed_nodes(kube)
    report.findings.append(report.step("take-away", lambda: take_away(kube, nodes)))
    if not nodes or not up_finding(report, run):
        return
    state = run.resources()
    lws = leader_worker_sets(state)
    if not lws:
        report.findings.append(Finding(CHECK, "LeaderWorkerSets", False, "the stack's state holds none"))
    report.findings += [report.step("wait", functools.partial(waiting, api_client, ns, name)) for ns, name in lws]
    began = time.monotonic()
    present = {n["metadata"]["name"] for n in classed_nodes(kube)}
    spot = spot_step(config)
    for node in nodes:
        if node["metadata"]["name"] not in present:
            body, status = restored(node)
            hand_to_kwok(kube, as_spot(body) if spot else body, status)
    report.findings += [
        report.step("serve", functools.partial(serving, api_client, ns, name, began)) for ns, name in lws
    ]
    expect = expectations_from(flat_config(config), state, "the e2e stack configuration")
    report.findings += report.step("verify", lambda: verify_expected(api_client, expect, wait=VERIFY_WAIT))
    report.step("destroy", run.destroy)
