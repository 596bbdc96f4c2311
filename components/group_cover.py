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
  its minimum),
  and its ``maxReplicas`` to at least that, with what it had before in the annotation :data:`COVER_ANNOTATION`. The
  HPA controller scales to a raised minimum at once, without reading its metrics ("Current number of replicas below
  Spec.MinReplicas": k8s.io/kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go l.878-881). The added group's
  index is above the standing ones, which the required zone rule binds (:func:`tpu_serving.spread.group_zone_spread`),
  so the scheduler puts it on any zone's free slice, or it waits Pending, which costs nothing, where none is free;
- **give back**: once no serving node is lost and every group that was lost has a Ready leader again, it sets both
  bounds back from the annotation and removes it. The HPA's own scale-down behaviour then takes the extra group
  away.

Every run reads the annotation, so a raise survives a gate that missed runs, and a ``pulumi up`` that forced the
bounds back (``PULUMI_K8S_ENABLE_PATCH_FORCE``) is raised again on the next run. Stdlib only: the gate's ConfigMap
holds this file beside :mod:`tpu_serving.maintenance_gate`, whose labels and readiness it reads.
"""

import json
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .maintenance_gate import LWS_NAME_LABEL, WORKER_INDEX_LABEL, Obj, _labels, pod_ready

COVER_ANNOTATION = "tpu-serving.dev/lost-group-cover"
"""On an HPA the gate raised: ``{"minReplicas": m, "maxReplicas": M, "groups": g, "lost": [...]}``, its bounds and
the groups it ran before, and the group indices lost since."""
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
"""The label the LWS pod webhook sets on every pod of a group to its index (kubernetes-sigs/lws v0.9.0
api/leaderworkerset/v1/leaderworkerset_types.go ``GroupIndexLabelKey``); the name and worker-index labels are
:mod:`tpu_serving.maintenance_gate`'s."""


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
        _labels(p).get(GROUP_INDEX_LABEL, "?")
        for p in pods
        if _labels(p).get(LWS_NAME_LABEL) == workload and p.get("spec", {}).get("nodeName") in lost
    }
    return sorted(found)


def _serving(pods: Sequence[Obj], workload: str) -> set[str]:
    """The group indices of ``workload`` whose leader is Ready."""
    return {
        _labels(p).get(GROUP_INDEX_LABEL, "?")
        for p in pods
        if _labels(p).get(LWS_NAME_LABEL) == workload and _labels(p).get(WORKER_INDEX_LABEL) == "0" and pod_ready(p)
    }


def _why(workload: str, gone: Sequence[str], reloading: Sequence[str]) -> str:
    """Why a cover raises or keeps: the groups on lost nodes, and those recorded lost that do not serve yet."""
    where = f"groups {', '.join(gone)} of {workload} are on lost nodes"
    return where + (f", groups {', '.join(reloading)} do not serve yet" if reloading else "")


def cover(hpa: Obj, pods: Sequence[Obj], lost: Container[str]) -> Cover | None:
    """What the gate does to ``hpa`` with the stack's serving ``pods`` and the ``lost`` node names (None: nothing to
    do or say)."""
    name = str(hpa.get("metadata", {}).get("name", ""))
    spec, status = hpa.get("spec", {}), hpa.get("status") or {}
    workload = str((spec.get("scaleTargetRef") or {}).get("name", ""))
    low, high = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
    record, gone = recorded(hpa), lost_groups(pods, workload, lost)
    if gone:
        before = record or {
            "minReplicas": low,
            "maxReplicas": high,
            "groups": max(low, int(status.get("currentReplicas", 0))),
            "lost": [],
        }
        before = {**before, "lost": sorted({*before["lost"], *gone})}
        # every group recorded lost that does not serve yet, the ones still reloading too (SRE review 29, M1)
        reloading = sorted(set(before["lost"]) - set(gone) - _serving(pods, workload))
        want = int(before["groups"]) + len(gone) + len(reloading)
        where = _why(workload, gone, reloading)
        annotated = {"metadata": {"annotations": {COVER_ANNOTATION: json.dumps(before, separators=(",", ":"))}}}
        if low >= want:  # raised enough already: the record keeps the groups it waits for
            said = f"HPA {name} keeps its minimum raised to {low}: {where}"
            return Cover(name, said, None if record is not None and record["lost"] == before["lost"] else annotated)
        patch = {**annotated, "spec": {"minReplicas": want, "maxReplicas": max(high, want)}}
        return Cover(name, f"raising HPA {name}'s minimum from {low} to {want}: {where}", patch)
    if record is None:
        return None
    waiting = sorted(set(record["lost"]) - _serving(pods, workload))
    if waiting:
        return Cover(name, f"HPA {name} keeps its raised minimum {low} until groups {', '.join(waiting)} serve again")
    back = {"minReplicas": int(record["minReplicas"]), "maxReplicas": int(record["maxReplicas"])}
    patch = {"metadata": {"annotations": {COVER_ANNOTATION: None}}, "spec": back}
    said = f"giving HPA {name} its bounds back ({back['minReplicas']} to {back['maxReplicas']}): groups serve again"
    return Cover(name, said, patch)
