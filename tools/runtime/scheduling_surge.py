"""A LeaderWorkerSet rollout's surge groups on the node pools: would each be scheduled, or would the rollout stall?

A LeaderWorkerSet whose ``spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge`` is above 0 rolls by first adding
that many groups of the new revision beside its ``spec.replicas`` ones. LWS reads the surge against the replicas at
the time of the rollout, scaled as an int-or-percent rounded up and capped at the replicas
(kubernetes-sigs/lws v0.10.0 pkg/controllers/leaderworkerset_controller.go l.289 ``lwsReplicas := *lws.Spec.Replicas``,
l.304 ``GetScaledValueFromIntOrPercent(&...MaxSurge, int(lwsReplicas), true)``, l.312-316 "No need to burst more than
the replicas" and ``burstReplicas := lwsReplicas + int32(maxSurge)``; v0.9.0 l.283, l.298, l.306-310: the same). The
leader StatefulSet then holds ``replicas + maxSurge`` groups, the surge groups taking the next indexes, with the new
template (its partition is ``replicas``: Case 2 of ``rollingUpdateParameters``, v0.10.0 l.329-338, v0.9.0 l.323-332; the
StatefulSet controller creates a pod at or above the partition from the new revision, as
``tpu_serving.platform.lws.canary_partition`` cites).

The HPA moves ``spec.replicas`` between its minimum and maximum; the replicas plus their surge grow with it, so the
model rolls at the HPA's maximum (after the scale path's steps, on the slices they provisioned), or at
``spec.replicas`` when no HPA scales the LeaderWorkerSet (its groups first stepped up from the pools at their minimum,
as the scale path does). Each surge group is placed like a step of the scale path (:func:`.scheduling.step_up`): on
nodes already up, else on exactly one whole slice of an empty autoscaled pool.

A surge group that stays pending stalls the rollout: LWS counts the groups done from the highest index down, which is
the pending surge group's, so it moves its partition past no more than ``maxUnavailable`` old groups
(``rollingUpdatePartition``, v0.10.0 l.649-679; v0.9.0 l.643-673), and it keeps every surge group while more than
``maxSurge`` groups are unready or not updated (``calculateRollingUpdateReplicas``, v0.10.0 l.691-702; v0.9.0 l.685-696).
With ``maxUnavailable: 0`` (the library's ``rollout: surge``) no old group is ever updated.

One finding per surge group, ``scale <ns>/<lws> rollout surge <n> at <N>``; a LeaderWorkerSet with a maxSurge above 0
that yields no surge group gets a failing finding of its own, so the count never shrinks silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, Resources, hpa_bounds
from tpu_serving_tools.runtime.quantities import scaled
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import Step, step_up

LWS_KIND = "LeaderWorkerSet"


def _rolling(lws: Mapping[str, Any], field: str, default: int) -> object:
    strategy = (lws.get("spec") or {}).get("rolloutStrategy") or {}
    return (strategy.get("rollingUpdateConfiguration") or {}).get(field, default)


def max_surge(lws: Mapping[str, Any]) -> object:
    """The LeaderWorkerSet's maxSurge as written (an int or a percentage), the webhook's default when unset."""
    return _rolling(lws, "maxSurge", F.LWS_DEFAULT_MAX_SURGE)


def max_unavailable(lws: Mapping[str, Any], replicas: int) -> int:
    """maxUnavailable scaled against ``replicas``, rounded down (leaderworkerset_controller.go v0.10.0 l.308)."""
    return scaled(_rolling(lws, "maxUnavailable", F.LWS_DEFAULT_MAX_UNAVAILABLE), replicas, round_up=False)


def surge_groups(lws: Mapping[str, Any], replicas: int) -> int:
    """The groups a rollout of ``lws`` adds beside ``replicas``: maxSurge scaled against them, rounded up, capped at
    them (leaderworkerset_controller.go v0.10.0 l.304, l.312-315)."""
    return min(scaled(max_surge(lws), replicas, round_up=True), replicas)


def _declares_surge(lws: Mapping[str, Any]) -> bool:
    """Whether the maxSurge written is above 0 (any replica count: ``1%`` of one replica is one group)."""
    return scaled(max_surge(lws), 100, round_up=True) > 0


def _key(lws: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = lws.get("metadata") or {}
    return str(meta.get("namespace", "default")), LWS_KIND, str(meta.get("name"))


def surging(view: PlanView) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """Every LeaderWorkerSet of the plan whose maxSurge is above 0, by ``(namespace, kind, name)``."""
    return {_key(o): o for o in view.kubernetes_objects(LWS_KIND) if _declares_surge(o)}


def surge_findings(
    view: PlanView,
    key: tuple[str, str, str],
    replicas: int,
    pools: list[NodePool],
    originals: Mapping[str, NodePool],
    at: str,
) -> list[Finding]:
    """A rollout of LeaderWorkerSet ``key`` at ``replicas`` groups (``at`` says why that count): each surge group
    placed after those before it, on nodes already up or on a slice provisioned from zero (``pools`` is updated)."""
    lws = surging(view).get(key)
    if lws is None:
        return []
    ns, _, name = key
    out = []
    for n in range(1, surge_groups(lws, replicas) + 1):
        step = step_up(view, key, replicas + n, pools, originals)
        group = f"the new revision's surge group {n} (group {replicas + n - 1})"
        ok = step.ok
        reason = f"a rollout at {at}: {group} {_placed(step)}" if ok else _stalls(at, group, step, lws, replicas)
        out.append(Finding(f"scale {ns}/{name} rollout surge {n} at {replicas}", ok, reason))
    return out


def _placed(step: Step) -> str:
    """Where a surge group that was scheduled went."""
    if step.provisioned is None:
        return "fits on nodes already up"
    return f"pending; {step.provisioned}; scheduled on {step.pool}"


def _stalls(at: str, group: str, step: Step, lws: Mapping[str, Any], replicas: int) -> str:
    """Why a rollout whose surge group stays pending stalls: the scheduler's reason, then what LWS does about it."""
    why = step.provisioned if step.pending is None else f"{step.provisioned}; still pending: {step.pending}"
    unavailable = max_unavailable(lws, replicas)
    updates = "no old group" if unavailable == 0 else f"at most maxUnavailable ({unavailable}) old group(s)"
    return (
        f"the rollout stalls: at {at}, {group} stays pending ({step.waiting}; {why}); while it is pending LWS "
        f"updates {updates} (it counts the groups done from the highest index, the surge group's, down)"
    )


def fixed_surge_findings(
    view: PlanView, pools_at_minimum: Sequence[NodePool], originals: Mapping[str, NodePool]
) -> list[Finding]:
    """The surge groups of each surging LeaderWorkerSet no HPA scales: its ``spec.replicas`` groups stepped up from
    the pools at their minimum (as the scale path does; their pods' own findings say why one is not scheduled),
    then its surge groups."""
    scaled_by_hpa = set(hpa_bounds(view))
    out = []
    for key, lws in surging(view).items():
        if key in scaled_by_hpa:
            continue
        replicas = int((lws.get("spec") or {}).get("replicas", 1))
        pools = list(pools_at_minimum)
        for count in range(1, replicas + 1):
            step_up(view, key, count, pools, originals)
        out += surge_findings(view, key, replicas, pools, originals, f"spec.replicas {replicas} (no HPA)")
    return out


def missing_findings(view: PlanView, findings: Sequence[Finding]) -> list[Finding]:
    """A failing finding for each surging LeaderWorkerSet that no surge finding examined (zero replicas: LWS caps the
    surge at them; or a path of the model that skipped it): a count that shrinks must not pass."""
    out = []
    for (ns, _, name), lws in surging(view).items():
        prefix = f"scale {ns}/{name} rollout surge "
        if not any(f.subject.startswith(prefix) for f in findings):
            out.append(
                Finding(
                    f"scale {ns}/{name} rollout surge",
                    False,
                    f"maxSurge {max_surge(lws)} but no surge group was placed (LWS caps the surge at the replicas, "
                    "so none at 0 replicas): nothing shows the rollout has a slice to surge onto",
                )
            )
    return out


def _largest_unit(pods: Sequence[Pod]) -> tuple[str, Resources]:
    """The restart unit of ``pods`` whose pods request the most (by TPU, then CPU, then memory), and its requests."""
    units: dict[str, Resources] = {}
    for p in pods:
        units[p.restart_unit] = units.get(p.restart_unit, Resources()) + p.requests
    if not units:
        return "", Resources()
    return max(units.items(), key=lambda u: (u[1].tpu, u[1].cpu, u[1].memory))


def peak_quota_findings(view: PlanView) -> list[Finding]:
    """Per ResourceQuota of a namespace whose LeaderWorkerSet an HPA scales: its pods at the HPA's maximum, with a
    rollout's surge groups and the recreate of its largest restart unit beside them, fit the quota (library review 4,
    M4: a TPU quota of the standing slices let the HPA add no group, and stalled every rollout at the maximum, while
    every other line passed). Quota is charged when a pod is created, and a terminating pod still counts
    (https://kubernetes.io/docs/concepts/policy/resource-quotas/), so a group recreated at the peak holds its old and
    new pods, as :func:`.quota.quota_findings` holds at the standing size: without the recreate, a quota sized for
    fewer groups (a program's ``neighbours(args)`` without the autoscaling: two groups, their surge and a recreate,
    100 CPU where three need 124) passed, its recreate headroom taking the HPA's last group."""
    from tpu_serving_tools.runtime.pods import pods_of
    from tpu_serving_tools.runtime.quota import _over, quotas

    lws = {
        (str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"])): o
        for o in view.kubernetes_objects(LWS_KIND)
    }
    peak = {
        (ns, kind, name): hi + surge_groups(lws[(ns, name)], hi)
        for (ns, kind, name), (_, hi) in hpa_bounds(view).items()
        if kind == LWS_KIND and (ns, name) in lws
    }
    if not peak:
        return []
    pods = pods_of(view, peak)
    out = []
    for q in quotas(view):
        scaled_here = sorted(f"{name} at {n} groups" for (ns, _, name), n in peak.items() if ns == q.namespace)
        if not scaled_here:
            continue
        mine = [p for p in pods if p.namespace == q.namespace]
        unit, recreated = _largest_unit(mine)
        over = _over(sum((p.requests for p in mine), Resources()) + recreated, q)
        said = f"with {', '.join(scaled_here)} (the HPA's maximum and a rollout's surge) and {unit} recreated"
        out.append(
            Finding(
                f"quota {q.namespace}/{q.name} at the HPA's maximum",
                not over,
                f"{said}: {'; '.join(over)}: the quota refuses the groups past it" if over else f"{said}: fits",
            )
        )
    return out
