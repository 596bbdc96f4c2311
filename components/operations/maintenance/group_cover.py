"""Cover for lost serving groups: the host-maintenance gate raises an HPA's minimum while a serving node is lost, and
gives it back once the lost groups serve again.

A group whose VM is lost (a zone outage, a silent VM) cannot start again: taint eviction marks its pods for deletion,
but with no kubelet to confirm it they stay Terminating, and the StatefulSet makes no pod of the same name until they
are gone (docs/operate.md, "A VM that goes silent", "A zone outage"). The HPA still counts that group as running, so
at idle load nothing adds one in its place: the stack serves with one group less, without its spare, until someone
patches the HPA (SRE review round 21, M1). The gate does that patch on its next run, for each HPA of the stack:

- **raise**: the groups of the HPA's LeaderWorkerSet with a pod on a lost node (:func:`lost_groups`), and those it
  recorded lost that do not serve yet (still reloading: a second loss meanwhile raises it again, SRE review round 29,
  M1), raise its ``minReplicas`` by as many over the groups it ran before (its ``status.currentReplicas``, at least
  the stack's minimum), and its ``maxReplicas`` to at least that, with the stack's bounds, those groups and the lost
  ones in the annotation :data:`COVER_ANNOTATION`. A minimum found raised above the stack's by at least the lost
  groups, with no annotation (a cover made by hand while the gate was silent), is kept, not added to. The HPA
  controller scales to a raised minimum at once, without reading its metrics ("Current number of replicas below
  Spec.MinReplicas": k8s.io/kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go l.878-881). The added group's
  index is above the standing ones, which the required zone rule binds (:func:`tpu_serving.spread.group_zone_spread`),
  so the scheduler puts it on any zone's free slice, or it waits Pending, which costs nothing, where none is free;
- **give back**: once no serving node is lost and every group that was lost has a Ready leader again, it lowers both
  bounds to the stack's own and removes the annotation; a bound already at or below the stack's (an on-call's
  restore) is left. The HPA's own scale-down behaviour then takes the extra group away.

The stack's own bounds are the ones the plan declares for the HPA, in the gate's environment
(``AUTOSCALER_BOUNDS``, :attr:`tpu_serving.HostMaintenanceGateArgs.autoscaler_bounds`), never the bounds the gate
found when its cover began: those may be a hand cover's, or be changed by a ``pulumi up`` during the cover, which
updates the environment with the HPA (SRE review round 29, M3). Without them (a program that passes none) the bounds
the cover found at its start stand in.

Every run reads the annotation, so a raise survives a gate that missed runs, and a ``pulumi up`` that forced the
bounds back (``PULUMI_K8S_ENABLE_PATCH_FORCE``) is raised again on the next run. Stdlib only: the gate's ConfigMap
holds this file beside :mod:`tpu_serving.maintenance_gate`, whose labels and readiness it reads.
"""

import json
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .maintenance_gate import GROUP_INDEX_LABEL, LWS_NAME_LABEL, WORKER_INDEX_LABEL, Obj, labels_of, pod_ready

COVER_ANNOTATION = "tpu-serving.dev/lost-group-cover"
"""On an HPA the gate covers: ``{"minReplicas": m, "maxReplicas": M, "groups": g, "lost": [...]}``, the stack's
bounds it gives back, the groups it ran before, and the group indices lost since."""


@dataclass(frozen=True)
class Cover:
    """What a run does to one HPA: ``patch`` (a merge patch, None to leave it) and what it says."""

    autoscaler: str
    said: str
    patch: Mapping[str, Any] | None = None


def recorded(hpa: Obj) -> dict[str, Any] | None:
    """The HPA's annotation read back (None when absent or unreadable: an unreadable one is raised afresh)."""
    value = (hpa.get("metadata", {}).get("annotations") or {}).get(COVER_ANNOTATION)
    try:
        record = json.loads(value) if value else None
    except ValueError:
        return None
    keys = ("minReplicas", "maxReplicas", "groups", "lost")
    return record if isinstance(record, dict) and all(k in record for k in keys) else None


def lost_groups(pods: Sequence[Obj], workload: str, lost: Container[str]) -> list[str]:
    """The group indices of ``workload`` (a LeaderWorkerSet) with a pod on a lost node."""
    found = {
        labels_of(p).get(GROUP_INDEX_LABEL, "?")
        for p in pods
        if labels_of(p).get(LWS_NAME_LABEL) == workload and p.get("spec", {}).get("nodeName") in lost
    }
    return sorted(found)


def _serving(pods: Sequence[Obj], workload: str) -> set[str]:
    """The group indices of ``workload`` whose leader is Ready."""
    return {
        labels_of(p).get(GROUP_INDEX_LABEL, "?")
        for p in pods
        if labels_of(p).get(LWS_NAME_LABEL) == workload and labels_of(p).get(WORKER_INDEX_LABEL) == "0" and pod_ready(p)
    }


def _why(workload: str, gone: Sequence[str], reloading: Sequence[str]) -> str:
    """Why a cover raises or keeps: the groups on lost nodes, and those recorded lost that do not serve yet."""
    where = [f"groups {', '.join(gone)} of {workload} are on lost nodes"] if gone else []
    of = "" if gone else f" of {workload}"
    return ", ".join([*where, *([f"groups {', '.join(reloading)}{of} do not serve yet"] if reloading else [])])


def _groups_before(record: Mapping[str, Any] | None, low: int, own_low: int, current: int, waiting: int) -> int:
    """The groups the HPA ran before its groups were lost, to which a cover adds the ``waiting`` ones: the recorded
    groups, at least the stack's minimum ``own_low`` (a ``pulumi up`` may have raised it during the cover); with no
    record, the groups running (``current``, at least ``own_low``) less a minimum raised above the stack's by hand
    (the runbook's cover with the gate silent), and where that raise covers the waiting groups already, the minimum
    less them, so that the gate keeps it and adds none (SRE review round 29, M3)."""
    if record is not None:
        return max(own_low, int(record["groups"]))
    hand = max(0, low - own_low)
    return low - waiting if hand >= waiting else max(own_low, current - hand)


def _give_back(name: str, bounds: tuple[int, int], own: tuple[int, int], declared: bool) -> Cover:
    """The bounds back to the stack's own (``own``), and the annotation removed; a restore only lowers: bounds the
    HPA holds below the stack's already (an on-call's restore) are left."""
    back = {"minReplicas": min(bounds[0], own[0]), "maxReplicas": min(bounds[1], own[1])}
    whose = "the stack's bounds" if declared else "its bounds"
    said = f"giving HPA {name} {whose} back ({back['minReplicas']} to {back['maxReplicas']}): groups serve again"
    return Cover(name, said, {"metadata": {"annotations": {COVER_ANNOTATION: None}}, "spec": back})


def _kept(name: str, low: int, hand: int | None, where: str, reloading: Sequence[str]) -> str:
    """What a run that keeps the minimum says: above the stack's minimum ``hand`` before the gate's cover (by hand,
    kept and not added to), raised while groups are lost, or until the ``reloading`` ones serve again."""
    if hand is not None:
        return f"HPA {name} keeps its minimum {low}, above the stack's {hand} already: {where}"
    if reloading:
        return f"HPA {name} keeps its raised minimum {low} until groups {', '.join(reloading)} serve again"
    return f"HPA {name} keeps its minimum raised to {low}: {where}"


def cover(hpa: Obj, pods: Sequence[Obj], lost: Container[str], own: tuple[int, int] | None = None) -> Cover | None:
    """What the gate does to ``hpa`` with the stack's serving ``pods``, the ``lost`` node names and ``own``, the
    stack's own bounds of the HPA, ``(minReplicas, maxReplicas)`` as the plan declares them (None: a program passed
    none, and the bounds the gate found at the cover's start stand in); None: nothing to do or say."""
    name = str(hpa.get("metadata", {}).get("name", ""))
    spec, status = hpa.get("spec", {}), hpa.get("status") or {}
    workload = str((spec.get("scaleTargetRef") or {}).get("name", ""))
    low, high = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
    record, gone = recorded(hpa), lost_groups(pods, workload, lost)
    if record is None and not gone:
        return None
    found = (int(record["minReplicas"]), int(record["maxReplicas"])) if record else (low, high)
    stack = own or found
    lost_all = sorted({*(record["lost"] if record else ()), *gone})
    # every group recorded lost that does not serve yet, the ones still reloading too (SRE review 29, M1)
    reloading = sorted(set(lost_all) - set(gone) - _serving(pods, workload))
    if not gone and not reloading:
        return _give_back(name, (low, high), stack, own is not None)
    waiting = len(gone) + len(reloading)
    groups = _groups_before(record, low, stack[0], int(status.get("currentReplicas", 0)), waiting)
    want, where = groups + waiting, _why(workload, gone, reloading)
    before = {"minReplicas": stack[0], "maxReplicas": stack[1], "groups": groups, "lost": lost_all}
    patch: dict[str, Any] = {}
    if want > low or record is None or any(record[k] != v for k, v in before.items()):  # a raise writes it again
        patch["metadata"] = {"annotations": {COVER_ANNOTATION: json.dumps(before, separators=(",", ":"))}}
    if want > low:
        patch["spec"] = {"minReplicas": want, "maxReplicas": max(high, want)}
        return Cover(name, f"raising HPA {name}'s minimum from {low} to {want}: {where}", patch)
    return Cover(
        name,
        _kept(name, low, stack[0] if record is None else None, where, reloading if not gone else ()),
        patch or None,
    )
