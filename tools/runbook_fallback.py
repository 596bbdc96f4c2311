"""The runbook of a group on a capacity fallback's slice (docs/operate.md, "A group on a fallback slice"; new-user
review of the capacity fallback, m6): which groups run on a slice GKE made for the serving's ComputeClass, how to move
them back to the stack's own pools once those can add a slice, and how to undo the move. GKE labels the nodes of a
class with its name, those of the pools it makes for the class too (:data:`tpu_serving.compute_class.LABEL`); the
pools the plan does not create are GKE's. GKE moves no group back by itself (the class's ``activeMigration`` is off).
The cluster autoscaler removes a node unneeded for 10 minutes by default, cordoned or not: its eligibility check does
not read ``spec.unschedulable`` (kubernetes/autoscaler ``cluster-autoscaler/FAQ.md``, "scale-down-unneeded-time";
``core/scaledown/eligibility/eligibility.go``, ``unremovableReasonAndNodeUtilization``: a node being deleted, one
annotated ``scale-down-disabled``, an unready one), so an idle fallback slice goes about 10 minutes after its group left
it, and the uncordon undoes nothing after that (re-review of the fallback runbook, M1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving.compute_class import LABEL as CLASS_LABEL
from tpu_serving.maintenance_gate import LWS_NAME_LABEL, POOL_LABEL, WORKER_INDEX_LABEL
from tpu_serving_tools.runbook_names import LWS, Names
from tpu_serving_tools.runbook_waits import ready_again
from tpu_serving_tools.runtime.node_pool import classes_of

LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"


def compute_class(plan: Mapping[str, Any]) -> str | None:
    """The ComputeClass the plan creates (:func:`~tpu_serving_tools.runtime.node_pool.classes_of`; a stack file's
    deployment creates one at most), None when it creates none."""
    return min(classes_of(plan.get("resources", [])), default=None)


def fallback_selector(name: str, own: Sequence[str]) -> str:
    """The label selector of the nodes GKE made for ComputeClass ``name``: the class's, in no pool of ``own``."""
    return f"{CLASS_LABEL}={name},{POOL_LABEL} notin ({','.join(own)})"


def standing_groups(plan: Mapping[str, Any], n: Names) -> int:
    """The groups the stack keeps: its HPA's minimum, else the LeaderWorkerSet's ``spec.replicas`` (1 if unset)."""
    if n.hpas and n.min_replicas is not None:
        return n.min_replicas
    for r in plan.get("resources", []):
        inputs = r.get("inputs") or {}
        if r.get("type") == LWS_TYPE and (inputs.get("metadata") or {}).get("name") == n.workload:
            return int((inputs.get("spec") or {}).get("replicas", 1))
    return 1


def fallback_section(plan: Mapping[str, Any], n: Names) -> list[str]:
    """The commands of a LeaderWorkerSet's groups on the class's fallback slices, in the stack's names; none without a
    class. A stack of one standing group (:func:`standing_groups`) is told the move is an outage. GKE keeps the class's
    later steps while the group is recreated (GKE review of the fallback runbook, M1): the runbook says so, and shows
    where the recreated leader landed."""
    name = compute_class(plan)
    if name is None or n.kind != LWS:
        return []
    fallback = f"'{fallback_selector(name, [p.name for p in n.tpu_pools])}'"
    leaders = f"{LWS_NAME_LABEL}={n.workload},{WORKER_INDEX_LABEL}=0"
    leader = f"{n.workload}-<group>"
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    lines = [
        f"## A group on a fallback slice (ComputeClass {name}; docs/operate.md, 'A group on a fallback slice')",
        "# The nodes GKE made for the class, and the groups' leaders with their nodes:",
        f"kubectl get nodes -l {fallback} -L {POOL_LABEL},cloud.google.com/gke-spot",
        f"kubectl -n {n.namespace} get pods -l {leaders} -o wide",
        "# GKE moves no group back. A cordon keeps a recreated group off these nodes, but the class's later steps",
        "# stay: if the own pools cannot add a slice when it is recreated, GKE makes another fallback slice, and the",
        "# move costs a reload for nothing. Move a group only when the own pools have room and capacity: a reservation",
        "# with a free slice, or an own pool's slice back and idle (a repair's; the autoscaler removes it in about 10",
        "# minutes). The capacity-wait ticket says nothing of it: it closed when the group found its fallback slice.",
        "# A cordon does not keep the autoscaler from removing an idle fallback slice either, so the uncordon below",
        "# undoes nothing once the group has been off it for about 10 minutes.",
        f"kubectl cordon -l {fallback}",
    ]
    if standing_groups(plan, n) <= 1:
        lines += [
            "# One group, and the own pool holds one slice: recreating it is an outage of the old pod's termination,",
            "# the slice's creation from zero, and its time to serve (the preview's Time to serve: line). Do it in a",
            "# quiet hour, or leave the group where it is.",
        ]
    else:
        lines += [
            "# One group at a time, and only while the others serve (the wait below, first). While a group reloads",
            "# the HPA may add one, which can take the own slice the moved group was meant for:",
            ready_again(n.namespace, n.workload),
        ]
    return lines + [
        f"kubectl -n {n.namespace} delete pod {leader}   # its leader: the LeaderWorkerSet recreates the group",
        f"kubectl -n {n.namespace} get pod {leader} -o wide   # its node: one of the own pools', or a new fallback slice's?",
        "# Still Pending after about 10 minutes: the own pools had no slice; stop the wait below and uncordon now.",
        f"until [ \"$(kubectl -n {n.namespace} get pod {leader} -o jsonpath='{ready}')\" = True ]; do sleep 30; done"
        "   # the new leader Ready",
        ready_again(n.namespace, n.workload),
        "# Once no group runs on them, let the fallback nodes go (GKE removes an idle pool it made); if the group",
        "# landed on a new fallback slice, this is the undo too:",
        f"kubectl uncordon -l {fallback}",
    ]
