"""The runbook of a group on a capacity fallback's slice (docs/operate.md, "A group on a fallback slice"; new-user
review of the capacity fallback, m6): which groups run on a slice GKE made for the serving's ComputeClass, how to move
them back to the stack's own pools once those can add a slice, and how to undo the move. GKE labels the nodes of a
class with its name, those of the pools it makes for the class too (:data:`tpu_serving.compute_class.LABEL`); the
pools the plan does not create are GKE's. GKE moves no group back by itself (the class's ``activeMigration`` is off).
A StatefulSet, and so a LeaderWorkerSet's leaders, scales down from its highest ordinal
(https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/, "Deployment and Scaling Guarantees")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving.compute_class import LABEL as CLASS_LABEL
from tpu_serving.maintenance_gate import LWS_NAME_LABEL, POOL_LABEL, WORKER_INDEX_LABEL
from tpu_serving_tools.runbook_names import LWS, Names
from tpu_serving_tools.runbook_waits import ready_again

COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"


def compute_class(plan: Mapping[str, Any]) -> str | None:
    """The ComputeClass the plan creates (its first), None when it creates none."""
    for r in plan.get("resources", []):
        if r.get("type") == COMPUTE_CLASS:
            return str(((r.get("inputs") or {}).get("metadata") or {}).get("name"))
    return None


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


def _replicas(n: Names, count: int) -> str:
    """The LeaderWorkerSet's groups set to ``count`` (a patch: the operators' Role patches LeaderWorkerSets)."""
    return f'kubectl -n {n.namespace} patch {LWS} {n.workload} --type merge -p \'{{"spec":{{"replicas":{count}}}}}\''


def fallback_section(plan: Mapping[str, Any], n: Names) -> list[str]:
    """The commands of a LeaderWorkerSet's groups on the class's fallback slices, in the stack's names; none without a
    class. A stack of one standing group (:func:`standing_groups`) is told the move is an outage, or adds a group
    first."""
    name = compute_class(plan)
    if name is None or n.kind != LWS:
        return []
    standing = standing_groups(plan, n)
    fallback = f"'{fallback_selector(name, [p.name for p in n.tpu_pools])}'"
    leaders = f"{LWS_NAME_LABEL}={n.workload},{WORKER_INDEX_LABEL}=0"
    lines = [
        f"## A group on a fallback slice (ComputeClass {name}; docs/operate.md, 'A group on a fallback slice')",
        "# The nodes GKE made for the class, and the groups' leaders with their nodes:",
        f"kubectl get nodes -l {fallback} -L {POOL_LABEL},cloud.google.com/gke-spot",
        f"kubectl -n {n.namespace} get pods -l {leaders} -o wide",
        "# GKE moves no group back. Once the stack's own pools can add a slice, keep new pods off the fallback nodes:",
        f"kubectl cordon -l {fallback}",
    ]
    if standing <= 1:
        lines += [
            "# One group: recreating it is an outage of its time to serve (the preview's Time to serve: line). To move",
            "# without one, add a group on the own pools first (it needs room for two slices at once):",
            _replicas(n, 2),
            ready_again(n.namespace, n.workload),
        ]
    lines += [
        "# Then, one group at a time and only while the others serve, recreate a group on a fallback node (its",
        "# leader; the LeaderWorkerSet recreates the group and the autoscaler grows the own pool for it):",
        f"kubectl -n {n.namespace} delete pod {n.workload}-<group>",
        ready_again(n.namespace, n.workload),
    ]
    if standing <= 1:
        lines += [
            _replicas(n, 1) + "   # once group 0 serves again: the LeaderWorkerSet removes group 1",
            "# (a pulumi up --refresh, or one that updates the LeaderWorkerSet, sets replicas back to the stack's count)",
        ]
    return lines + [
        "# Undo, if the recreated group stays Pending past its startup window (the own pools still cannot add a",
        "# slice): let it back onto the fallback nodes (GKE makes a new fallback slice if it removed the idle one):",
        f"kubectl uncordon -l {fallback}",
    ]
