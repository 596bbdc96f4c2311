"""The rollout path of each LeaderWorkerSet: what happens to its groups when their template changes.

The LWS controller's rules are in :mod:`.facts` (from its v0.10.0 source): with ``maxSurge`` 0 it updates
groups in place, from the highest index down, ``maxUnavailable`` at a time; with ``maxSurge`` n it first
adds n groups with the new template (indexes ``replicas`` .. ``replicas + n - 1``), then updates the others
while they serve, and removes the surge groups at the end. The model brings every group up (an HPA's
maximum: the busiest the slices get), then the surge groups, and says where each lands. A surge group that
no slice can take stalls the rollout: the check fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import hpa_bounds, pods_of
from tpu_serving_tools.runtime.quantities import scaled
from tpu_serving_tools.runtime.quota import quota_findings, quotas
from tpu_serving_tools.runtime.result import CategoryResult, Finding
from tpu_serving_tools.runtime.scheduling import at_minimum, group_pods, node_pools, place, step_up


def strategy(obj: Mapping[str, Any], replicas: int) -> tuple[int, int]:
    """``(maxUnavailable, maxSurge)`` of a LeaderWorkerSet at ``replicas`` groups, with the webhook's defaults."""
    conf = ((obj.get("spec") or {}).get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    unavailable = scaled(conf.get("maxUnavailable", F.LWS_DEFAULT_MAX_UNAVAILABLE), replicas, round_up=False)
    surge = scaled(conf.get("maxSurge", F.LWS_DEFAULT_MAX_SURGE), replicas, round_up=True)
    return unavailable, min(surge, replicas)


def _bring_up(view: PlanView, key: tuple[str, str, str], upto: int, pools: list[NodePool]) -> tuple[bool, str]:
    """Groups ``0 .. upto - 1`` up, each provisioning a slice that scales from zero when none is free;
    ``pools`` follows. (ok, what the last group did, or why it could not come up)."""
    originals = {p.name: p for p in node_pools(view)}
    what = "no group"
    for count in range(1, upto + 1):
        step = step_up(view, key, count, pools, originals)
        if not step.ok:
            return False, f"group {count - 1} pending: {step.provisioned}"
        what = f"on {step.pool}" if step.provisioned is None else f"on {step.pool} ({step.provisioned})"
    return True, what


def _slices_of(view: PlanView, key: tuple[str, str, str], groups: int, pools: list[NodePool]) -> list[str]:
    """The pools each group lands on, by group index."""
    pods = pods_of(view, {key: groups})
    placed = place(pods, pools)
    owner = f"{key[1]}/{key[2]}"
    return [
        " + ".join(sorted({placed.pool_of[p.key].name for p in g if p.key in placed.pool_of})) or "nowhere"
        for g in (group_pods(pods, owner, i) for i in range(groups))
    ]


def rollout_findings(view: PlanView) -> list[Finding]:
    """One finding per LeaderWorkerSet: its rollout path, or why a surge group finds no slice."""
    bounds = hpa_bounds(view)
    findings = []
    for obj in view.kubernetes_objects("LeaderWorkerSet"):
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", "default"), "LeaderWorkerSet", str(meta.get("name")))
        name = key[2]
        groups = bounds[key][1] if key in bounds else int((obj.get("spec") or {}).get("replicas", 1))
        unavailable, surge = strategy(obj, groups)
        subject = f"rollout {key[0]}/{name}"
        pools = [at_minimum(p) for p in node_pools(view)]
        ok, what = _bring_up(view, key, groups, pools)
        if not ok:
            findings.append(
                Finding(subject, False, f"the {groups} group(s) do not all come up before a rollout: {what}")
            )
            continue
        slices = _slices_of(view, key, groups, pools)
        order = ", ".join(f"{name}-{g} on {slices[g]}" for g in reversed(range(groups)))
        if surge == 0:
            if unavailable == 0:
                findings.append(Finding(subject, False, "maxUnavailable and maxSurge are both 0: no group ever moves"))
                continue
            serving = max(groups - unavailable, 0)
            findings.append(
                Finding(
                    subject,
                    True,
                    f"in place, {unavailable} group(s) at a time, each recreated on the slice it frees: {order}; "
                    f"{serving} of {groups} group(s) serve meanwhile",
                )
            )
            continue
        ok, what = _bring_up(view, key, groups + surge, pools)
        spare = f"surge group {name}-{groups}" if surge == 1 else f"surge groups {name}-{groups}..{groups + surge - 1}"
        if not ok:
            findings.append(
                Finding(subject, False, f"{spare} finds no slice ({what}): the rollout stalls, the old groups serving")
            )
            continue
        # While the surge groups serve, the namespace quota charges every group, and an old group recreated
        # meanwhile holds its old and new pods together (quota_findings' headroom).
        refused = [
            f"{f.subject}: {f.reason}"
            for f in quota_findings(pods_of(view, {key: groups + surge}), quotas(view))
            if not f.ok
        ]
        if refused:
            findings.append(
                Finding(
                    subject,
                    False,
                    f"{spare} lands {what}, but at {groups + surge} groups the namespace quota refuses pods: "
                    + "; ".join(refused)
                    + ": the surge group never becomes ready and the rollout stalls",
                )
            )
            continue
        findings.append(
            Finding(
                subject,
                True,
                f"{spare} (new template) lands {what}; then, one at a time, each old group is recreated on the "
                f"slice it frees: {order}; the surge group is removed at the end; {groups - unavailable} group(s) or more serve throughout",
            )
        )
    return findings


def check(view: PlanView) -> CategoryResult:
    """The rollout path of every LeaderWorkerSet (none without one)."""
    return CategoryResult("rollout", rollout_findings(view))
