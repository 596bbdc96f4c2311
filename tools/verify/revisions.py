"""The rollout check of ``tpu-serving verify``: each LeaderWorkerSet has finished rolling its groups to its latest
revision, as its own controller says (SRE review round 24, m2: a rollout that stalled before its surge group
existed, refused by a quota, left every old group Ready, and every other check passed).

The controller computes it (lws v0.9.0 ``pkg/controllers/leaderworkerset_controller.go`` l.414-507,
``updateConditions``): ``UpdateInProgress`` while fewer groups at or above the partition are on the latest revision
than there are such groups, ``Available`` once every group is ready and those are updated and ready, else
``Progressing``; each condition carries the generation it was computed for (``makeCondition``, l.870-895), so a spec
the controller has not seen yet is not taken for a finished one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .checks import Finding
from .snapshot import Obj, Snapshot, meta

ROLLOUT = "rollout"
AVAILABLE, UPDATING = "Available", "UpdateInProgress"
"""The LeaderWorkerSet condition types (lws v0.9.0 ``api/leaderworkerset/v1/leaderworkerset_types.go``
``LeaderWorkerSetAvailable``, ``LeaderWorkerSetUpdateInProgress``)."""


def _conditions(obj: Obj) -> dict[str, Mapping[str, Any]]:
    status = obj.get("status") or {}
    return {str(c.get("type")): c for c in status.get("conditions") or ()}


def _partition(obj: Obj) -> int:
    strategy = (obj.get("spec") or {}).get("rolloutStrategy") or {}
    return int((strategy.get("rollingUpdateConfiguration") or {}).get("partition") or 0)


def rolled_out(obj: Obj) -> Finding:
    """One LeaderWorkerSet's rollout: done (``Available`` for its current generation, no ``UpdateInProgress``), or
    what its controller says instead."""
    m = meta(obj)
    subject = f"LeaderWorkerSet {m.get('namespace')}/{m.get('name')}"
    replicas = int((obj.get("spec") or {}).get("replicas", 1))
    status = obj.get("status") or {}
    updated, ready = int(status.get("updatedReplicas") or 0), int(status.get("readyReplicas") or 0)
    partition = _partition(obj)
    counts = f"{updated} of {replicas} groups on the latest revision, {ready} ready" + (
        f" (partition {partition}: groups below it stay on the old one)" if partition else ""
    )
    conditions = _conditions(obj)
    generation = m.get("generation")
    stale = [
        t for t, c in conditions.items() if c.get("status") == "True" and c.get("observedGeneration") != generation
    ]
    if stale or not conditions:
        return Finding(ROLLOUT, subject, False, f"its controller has not reconciled generation {generation}; {counts}")
    if (conditions.get(UPDATING) or {}).get("status") == "True":
        return Finding(ROLLOUT, subject, False, f"rollout in progress ({UPDATING}): {counts}")
    if (conditions.get(AVAILABLE) or {}).get("status") != "True":
        return Finding(ROLLOUT, subject, False, f"not {AVAILABLE} (groups not ready): {counts}")
    return Finding(ROLLOUT, subject, True, counts)


def rollouts(snapshot: Snapshot, namespaces: Iterable[str]) -> list[Finding]:
    """:func:`rolled_out` of every LeaderWorkerSet of the namespaces."""
    return [rolled_out(obj) for namespace in namespaces for obj in snapshot.of("LeaderWorkerSet", namespace)]
