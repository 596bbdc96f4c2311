"""Workloads on TPU pools of their own: two workloads whose TPU pods may land on one node pool fail (library review 9,
M4).

A workload is a LeaderWorkerSet, JobSet, PathwaysJob, Deployment or Job the plan declares (a DisaggregatedSet with
its child LeaderWorkerSets: its roles are held apart by :func:`.scheduling_ds.role_findings`). Its pools are those
one of its TPU pods' kinds (a LeaderWorkerSet's leaders or workers, a JobSet's replicated job) may land on by
nodeSelector, node affinity and tolerations (:func:`.scheduling_ds.pools_each_may_take`, the roles' reader). Groups
of one workload sharing its pools is what they are for.

A failure, not a warning. The placement the scheduling category reports is a greedy first-fit of the plan's pods,
one workload after the other; the kube-scheduler binds each pod to any node whose labels the pod admits, in no such
order (kube-scheduler filters every feasible node, then scores them: "Kubernetes Scheduler",
https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/#kube-scheduler-implementation), so one
workload's group may take a slice the other's reservation was sized for. Each host-maintenance gate then watches,
and labels for maintenance, pools that hold the other workload's groups, and an HPA's scale-up or a group recreated
after a repair leaves the other workload's group Pending on its own pool. A ResourceQuota per namespace does not
keep them apart (it counts chips, not pools). The fix is one label: a nodeSelector on ``cloud.google.com/gke-nodepool``
(GKE's node pool label), which ``VllmServingArgs.node_pools`` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from tpu_serving_tools.runtime import ds_facts as D
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling_ds import pools_each_may_take, role_children

Workload = tuple[str, str]
"""``(namespace, Kind/name)`` of a workload the plan declares."""


def _units(view: PlanView, pods: Sequence[Pod]) -> dict[tuple[Workload, str, str], set[tuple[str, str, str]]]:
    """Per (workload, owner, role) of a pod that requests TPUs: its pods' (namespace, owner, role); a
    DisaggregatedSet's child LeaderWorkerSets (one per role and slice) are its own."""
    parent = {
        (c.namespace, f"LeaderWorkerSet/{c.name}"): (c.namespace, f"{D.DS_KIND}/{c.ds}")
        for _, _, kids in role_children(view)
        for c in kids
    }
    out: dict[tuple[Workload, str, str], set[tuple[str, str, str]]] = {}
    for p in pods:
        if p.requests_tpu:
            own = (p.namespace, p.owner)
            out.setdefault((parent.get(own, own), p.owner, p.role), set()).add((p.namespace, p.owner, p.role))
    return out


def findings(view: PlanView, pods: Sequence[Pod]) -> list[Finding]:
    """One failure per two workloads whose TPU pods may land on a pool in common, naming both, the pools and the fix;
    nothing when every workload's TPU pods keep to pools of their own (the count line is unchanged)."""
    may: dict[Workload, set[str]] = {}
    for (workload, _, _), pools in pools_each_may_take(view, pods, _units(view, pods)).items():
        may.setdefault(workload, set()).update(pools)
    out = []
    for (a, mine), (b, theirs) in combinations(sorted(may.items()), 2):
        shared = sorted(mine & theirs)
        if not shared:
            continue
        names = [f"{kind} {ns}/{name}" for ns, kind, name in ((w[0], *w[1].split("/", 1)) for w in (a, b))]
        out.append(
            Finding(
                f"pools shared by {names[0]} and {names[1]}",
                False,
                f"the TPU pods of both may land on pool(s) {', '.join(shared)}: nothing in their selectors or "
                "affinity keeps each on pools of its own, and the kube-scheduler, unlike this check's greedy "
                "placement, may put one's group on a slice the other was given (its scale-up or a recreated group "
                "then waits Pending, and each host-maintenance gate watches the other's pools); pin each to its "
                "pools (VllmServingArgs.node_pools; a pod template of your own: a nodeSelector on "
                "cloud.google.com/gke-nodepool)",
            )
        )
    return out
