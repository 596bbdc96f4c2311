"""The scheduling category of ``tpu-serving check``: every pod placed (:mod:`.scheduling`), the namespace quota, each
HPA's path from its minimum to its maximum with a rollout's surge (:mod:`.scheduling_surge`), the DisaggregatedSet
roles and tenants (:mod:`.scheduling_ds`, :mod:`.scheduling_tenants`), the cache disks and the zone spread. It sits
above the modules it gathers, so none of them imports it back."""

from __future__ import annotations

from tpu_serving_tools.runtime import cache_disk, scheduling_ds, scheduling_tenants, zone_spread
from tpu_serving_tools.runtime import scheduling_surge as surge
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import hpa_bounds, pods_of
from tpu_serving_tools.runtime.quota import quota_findings, quotas
from tpu_serving_tools.runtime.result import CategoryResult, Finding
from tpu_serving_tools.runtime.scheduling import at_minimum, minimum_finding, node_pools, place, step_up


def scale_findings(view: PlanView) -> list[Finding]:
    """For each HPA on a LeaderWorkerSet: its minimum scheduled on the pools as they start, then each step up
    to its maximum: the new group pending, one whole slice provisioned (a pool scaling 0 -> its VMs), the
    group scheduled on it; at its maximum a rollout's surge groups, and those of each LeaderWorkerSet no HPA scales
    (:mod:`.scheduling_surge`)."""
    findings = []
    originals = {p.name: p for p in node_pools(view)}
    for (ns, kind, name), (lo, hi) in hpa_bounds(view).items():
        if kind != "LeaderWorkerSet":
            continue
        target = f"scale {ns}/{name}"
        pools = [at_minimum(p) for p in originals.values()]
        findings.append(minimum_finding(view, (ns, kind, name), lo, pools, f"{ns}/{name}-", target))
        for replicas in range(lo + 1, hi + 1):
            step = step_up(view, (ns, kind, name), replicas, pools, originals)
            subject, g = f"{target} {replicas - 1} -> {replicas}", replicas - 1
            if step.provisioned is None:
                findings.append(Finding(subject, True, f"group {g} fits on nodes already up"))
            elif step.pool is None and step.pending is None:
                findings.append(Finding(subject, False, f"group {g} pending; {step.provisioned}"))
            else:
                where = f"group scheduled on {step.pool}" if step.ok else f"still pending: {step.pending}"
                findings.append(Finding(subject, step.ok, f"group {g} pending; {step.provisioned}; {where}"))
        findings += surge.surge_findings(view, (ns, kind, name), hi, pools, originals, f"the HPA's maximum {hi}")
    findings += surge.fixed_surge_findings(view, [at_minimum(p) for p in originals.values()], originals)
    return findings + surge.missing_findings(view, findings) + surge.peak_quota_findings(view)


def check(view: PlanView) -> CategoryResult:
    """One finding per pod (scheduled or why not), plus the quota findings."""
    pods = pods_of(view)
    pools = node_pools(view)
    placement = place(pods, pools)
    findings = [
        Finding(f"pod {p.key}", p.key in placement.node_of, placement.node_of.get(p.key) or placement.failure[p.key])
        for p in pods
    ]
    findings += quota_findings(pods, quotas(view))
    findings += scale_findings(view)  # the peak quota with them
    # DisaggregatedSet roles and their scale paths
    findings += scheduling_ds.role_findings(view, pods, placement)
    findings += scheduling_tenants.findings(view, pods)  # the roles' pool reader, over whole workloads
    findings += scheduling_ds.scale_findings(view)
    findings += cache_disk.findings(pods, pools)
    return CategoryResult("scheduling", findings + zone_spread.findings(pods, pools))
