"""The runbook of a group on a capacity fallback's slice (docs/operate.md, "A group on a fallback slice"; new-user
review of the capacity fallback, m6): which groups run on a slice GKE made for the serving's ComputeClass, how to move
them back to the stack's own pools once those can add a slice, and how to undo the move. GKE labels the nodes of a
class with its name, those of the pools it makes for the class too (:data:`tpu_serving.pools.compute_class.LABEL`); the
pools the plan does not create are GKE's. GKE moves no group back by itself (the class's ``activeMigration`` is off).
The cluster autoscaler removes a node unneeded for 10 minutes by default, cordoned or not: its eligibility check does
not read ``spec.unschedulable`` (kubernetes/autoscaler ``cluster-autoscaler/FAQ.md``, "scale-down-unneeded-time";
``core/scaledown/eligibility/eligibility.go``, ``unremovableReasonAndNodeUtilization``: a node being deleted, one
annotated ``scale-down-disabled``, an unready one), so an idle fallback slice goes about 10 minutes after its group left
it, and the uncordon undoes nothing after that (re-review of the fallback runbook, M1). It removes nodes of a pool that
autoscales only: an own pool of fixed size (the 70B example's reserved ``v6e8a`` and ``v6e8b``, which
``tpu_serving.config.slice_capacity`` neither starts empty nor lets go down to zero) is neither grown nor shrunk, so a
group takes its slice only while no group holds it (SRE review of the runbook, M3).

The other sections' lines for the class's nodes (SRE review of the runbook, M3: they listed the stack's pools only, by
``cloud.google.com/gke-nodepool``, and missed a group on a pool GKE made): :func:`class_upgrade_lines`,
:func:`class_maintenance_lines`, :func:`class_hold_lines`, :func:`class_lost_vm_lines` and :func:`class_zone_lines`."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving.common.spread import ZONE_LABEL
from tpu_serving.operations.maintenance.maintenance_gate import LWS_NAME_LABEL, POOL_LABEL, WORKER_INDEX_LABEL
from tpu_serving.pools.compute_class import LABEL as CLASS_LABEL
from tpu_serving_tools.runbook.names import LWS, Names, compute_class
from tpu_serving_tools.runbook.waits import ready_again

__all__ = ["compute_class", "fallback_section", "fallback_selector", "standing_groups"]

LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
SET_GROUP = "set GROUP to the index of the group first"
"""The shell's message when ``$GROUP`` is empty (``${GROUP:?...}``): a pasted step that names a group runs nothing
until the reader sets it, as the maintenance block's ``${P:?...}`` (:mod:`tpu_serving_tools.runbook.whole`). A
``<group>`` placeholder read as redirections when pasted (SRE review of the runbook)."""


def fallback_selector(name: str, own: Sequence[str]) -> str:
    """The label selector of the nodes GKE made for ComputeClass ``name``: the class's, in no pool of ``own``."""
    return f"{CLASS_LABEL}={name},{POOL_LABEL} notin ({','.join(own)})"


def _gke_nodes(n: Names) -> str | None:
    """The quoted selector of the nodes GKE made for the stack's class (:func:`fallback_selector`); None without a
    class, or for a workload the class does not place (it is a LeaderWorkerSet's)."""
    if n.compute_class is None or n.kind != LWS:
        return None
    return f"'{fallback_selector(n.compute_class, [p.name for p in n.tpu_pools])}'"


def class_upgrade_lines(n: Names) -> list[str]:
    """The upgrade section's lines for the pools GKE made for the class: the ``gcloud ... --node-pool`` lines name the
    stack's pools only, so a group there serves through them on its node's old version until it moves back."""
    nodes = _gke_nodes(n)
    if nodes is None:
        return []
    return [
        f"# Nodes of pools GKE made for the ComputeClass {n.compute_class} (none listed: no group is on one):",
        f"kubectl get nodes -l {nodes} -L {POOL_LABEL}",
        "# Such a pool is GKE's, not the stack's: the upgrades below do not name it, and its group serves through them",
        "# on its node's old version. Move that group back afterwards (A group on a fallback slice, below), once an",
        "# upgraded own pool has room. An upgrade below that recreates a group while its own pool cannot add a slice",
        "# may put it on such a pool too: list them again at the end.",
    ]


def class_maintenance_lines(n: Names) -> list[str]:
    """The host-maintenance section's lines for the pools GKE made for the class: their pending maintenance, which
    neither the gate nor the steps below start (docs/operate.md, "A group on a fallback slice")."""
    nodes = _gke_nodes(n)
    if nodes is None:
        return []
    pending = f"{nodes[:-1]},cloud.google.com/scheduled-maintenance-time'"
    return [
        f"kubectl get nodes -l {pending} \\",
        f"    -L cloud.google.com/scheduled-maintenance-time,{POOL_LABEL}   # pending on pools GKE made for the class",
        "# The steps below start, drain and move nothing on those: a fallback slice's maintenance comes at its window",
        "# and its group reloads then. To spare it that, move the group back before its window (A group on a fallback",
        "# slice, below). A wait below for a pool's nodes that lists none never ends: the autoscaler removed the idle",
        "# slice of a pool that scales from zero, its group having moved to a fallback slice; stop it (Ctrl-C).",
    ]


def _nodes_line(n: Names, tail: str) -> list[str]:
    """``kubectl get nodes`` of the class's GKE-made nodes, then ``tail``; none on a stack without a class."""
    nodes = _gke_nodes(n)
    return [] if nodes is None else [f"kubectl get nodes -l {nodes}{tail}"]


def class_after_maintenance_lines(n: Names) -> list[str]:
    """The host-maintenance section's last lines on a stack with a class: where the groups landed. A group recreated
    while its pool was in maintenance may have taken a fallback step (one group: the whole service, on Spot perhaps),
    and the LeaderWorkerSet's Available, which the waits read, is true there too (SRE review of the fallback, M1)."""
    return _nodes_line(n, "   # last: a group on a fallback slice now? (A group on a fallback slice, below)")


def class_hold_lines(n: Names, zone: str) -> list[str]:
    """A zone hold's line for the class (:func:`tpu_serving_tools.runbook.command._zone_move`): the cordon holds no slice
    GKE makes for the class, whose zones are the stack's."""
    if _gke_nodes(n) is None:
        return []
    return [
        f"# The cordon holds no slice GKE makes for the class {n.compute_class}: the added group may still land on a",
        f"# new fallback slice in {zone} (the check below sees it).",
    ]


def class_lost_vm_lines(n: Names) -> list[str]:
    """The lost-VM section's listing of the class's nodes GKE made: a group there loses a VM as on an own pool."""
    return _nodes_line(n, f" -L {POOL_LABEL}   # or a node of a pool GKE made for the class: the same steps")


def class_zone_lines(n: Names, one_zone: bool) -> list[str]:
    """The zone-outage section's lines for the class: where its GKE-made nodes are, and that the autoscaling switch
    holds no pool GKE makes for it (the class's zones are the serving slices', so the lost one too)."""
    nodes = _gke_nodes(n)
    if nodes is None:
        return []
    if one_zone:
        return [f"# The class {n.compute_class} makes its fallback slices in that zone only: they go with it."]
    return [
        f"kubectl get nodes -l {nodes} -L {ZONE_LABEL},{POOL_LABEL}   # groups on pools GKE made for the class",
        "# A group there in the lost zone is lost with it, as an own pool's. Nothing below holds a pool GKE makes for",
        "# the class, whose zones are the stack's: the added group may wait on a fallback slice tried in the lost zone",
        "# (check where its leader lands: the map above).",
    ]


def standing_groups(plan: Mapping[str, Any], n: Names) -> int:
    """The groups the stack keeps: its HPA's minimum, else the LeaderWorkerSet's ``spec.replicas`` (1 if unset)."""
    if n.hpas and n.min_replicas is not None:
        return n.min_replicas
    for r in plan.get("resources", []):
        inputs = r.get("inputs") or {}
        if r.get("type") == LWS_TYPE and (inputs.get("metadata") or {}).get("name") == n.workload:
            return int((inputs.get("spec") or {}).get("replicas", 1))
    return 1


def _has_spot(plan: Mapping[str, Any], name: str) -> bool:
    """Whether the class ``name`` has a Spot step (a priority with ``spot: true``)."""
    for r in plan.get("resources", []):
        inputs = r.get("inputs") or {}
        if r.get("type") == CLASS_TYPE and (inputs.get("metadata") or {}).get("name") == name:
            return any(p.get("spot") is True for p in (inputs.get("spec") or {}).get("priorities") or [])
    return False


# GKE, "Spot VMs", "Termination and graceful shutdown of Spot VMs"
# (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms, read in its stored zh-CN copy): "默认情况下,GKE
# 集群在收到抢占通知后,会为 Pod 提供 30 秒的安全终止期 ... 前 15 秒用于关闭您的 Pod,之后 15 秒用于关闭关键系统 Pod" (by
# default a 30 s graceful termination period after the preemption notice: the first 15 s for your Pods, the next 15 s
# for critical system Pods), which can be lengthened to 120 s (a Standard pool's node system config from GKE
# 1.35.0-gke.1171000, or a custom ComputeClass); the stack sets neither. No TPU-specific figure was found: the 15 s a
# review gave for TPU is the pods' share of the 30 s on any GKE Spot node.
SPOT_NOTICE = [
    "# A Spot fallback slice (gke-spot true above) can be preempted at any time: GKE gives its node about 30 s after the",
    "# preemption notice and the serving pods the first 15 of them, far less than their grace period, so requests in",
    "# flight there are cut, and the group is recreated wherever the class then finds a slice.",
]


def _own_pools(n: Names) -> list[str]:
    """What the own pools do for a moved group, by kind: one of fixed size is never grown (its slice takes a group
    only while no group holds it), one that autoscales adds a slice if its capacity allows and drops an idle one. An
    existing cluster's pools are their owner's: the plan does not say which kind they are."""
    fixed = [p.name for p in n.tpu_pools if not p.autoscaling]
    scaled = [p.name for p in n.tpu_pools if p.autoscaling]
    text = []
    if n.existing:
        fixed, scaled = [], []
        text.append(
            f"The serving's pools ({', '.join(p.name for p in n.tpu_pools)}) are the cluster owner's: their settings "
            "say whether the autoscaler adds a slice to one, or a moved group takes one's slice only while it is free."
        )
    if fixed:
        text.append(
            f"Own pools of fixed size ({', '.join(fixed)}): the autoscaler adds no slice to them; a moved group takes "
            "one's slice only while no group holds it."
        )
    if scaled:
        text.append(
            f"Own pools that autoscale ({', '.join(scaled)}): the autoscaler adds a slice if their capacity allows (a "
            "reservation's free VM, the zone's stock), and removes an idle one in about 10 minutes."
        )
    return textwrap.wrap(" ".join(text), width=116, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)


def fallback_section(plan: Mapping[str, Any], n: Names) -> list[str]:
    """The commands of a LeaderWorkerSet's groups on the class's fallback slices, in the stack's names; none without a
    class. A stack of one standing group (:func:`standing_groups`) is told the move is an outage. GKE keeps the class's
    later steps while the group is recreated (GKE review of the fallback runbook, M1): the runbook says so, and shows
    where the recreated leader landed. The group to move is ``$GROUP``, which the reader sets first
    (:data:`SET_GROUP`); a class with a Spot step adds its preemption notice (:data:`SPOT_NOTICE`)."""
    fallback = _gke_nodes(n)
    if n.compute_class is None or fallback is None:
        return []
    leaders = f"{LWS_NAME_LABEL}={n.workload},{WORKER_INDEX_LABEL}=0"
    leader = f'"{n.workload}-${{GROUP:?{SET_GROUP}}}"'
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    lines = [
        f"## A group on a fallback slice (ComputeClass {n.compute_class}; docs/operate.md, 'A group on a fallback slice')",
        "# The nodes GKE made for the class, and the groups' leaders with their nodes:",
        f"kubectl get nodes -l {fallback} -L {POOL_LABEL},cloud.google.com/gke-spot",
        f"kubectl -n {n.namespace} get pods -l {leaders} -o wide",
        *(SPOT_NOTICE if _has_spot(plan, n.compute_class) else []),
        "# GKE moves no group back. A cordon keeps a recreated group off these nodes, but the class's later steps",
        "# stay: if the own pools cannot add a slice when it is recreated, GKE makes another fallback slice, and the",
        "# move costs a reload for nothing. Move a group only when an own pool has room and capacity for it:",
        *_own_pools(n),
        "# The capacity-wait ticket says nothing of it: it closed when the group found its fallback slice.",
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
    wait = f"kubectl -n {n.namespace} get pod \"{n.workload}-$GROUP\" -o jsonpath='{ready}'"
    return lines + [
        f"GROUP=''   # set it first: the index of the group to move (its leader is {n.workload}-<index>, listed above)",
        f"kubectl -n {n.namespace} delete pod {leader}   # its leader: the LeaderWorkerSet recreates the group",
        f"kubectl -n {n.namespace} get pod {leader} -o wide   # its node: one of the own pools', or a new fallback slice's?",
        "# Still Pending after about 10 minutes: the own pools had no slice; stop the wait below and uncordon now.",
        f': "${{GROUP:?{SET_GROUP}}}"; until [ "$({wait})" = True ]; do sleep 30; done   # the new leader Ready',
        ready_again(n.namespace, n.workload),
        "# Once no group runs on them, let the fallback nodes go (GKE removes an idle pool it made); if the group",
        "# landed on a new fallback slice, this is the undo too:",
        f"kubectl uncordon -l {fallback}",
    ]
