"""The preview's ``Maintenance:`` line of every serving stack, one builder for all backends: whether one zonal wave of
TPU host maintenance can take every group, who starts it and where the runbook is (:mod:`tpu_serving.operations.maintenance.host_maintenance`
holds the facts and the alert policies it speaks of)."""

from collections.abc import Sequence

from .host_maintenance import GATE_MINUTES, LABELS_SINCE, RUNBOOK, SCHEDULED_LABEL


def zone_line(
    pools: Sequence[tuple[str, str]],
    gated: bool = False,
    startable: bool = True,
    watched: bool = False,
    spread: str | None = None,
    covered: bool = False,
    whole: bool = False,
) -> str:
    """The preview's ``Maintenance:`` line: whether the serving slices' node pools (``(pool, zone)`` pairs) share a
    zone, and so whether one zonal maintenance wave can take every group; who starts it (``gated``: the stack's
    host-maintenance gate; ``startable``: the pools take a manual start, :func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`; ``watched``: the
    gate runs, and where it does not start the maintenance, watches) and where the runbook is; ``spread``: why the
    slices cannot span two zones (:func:`tpu_serving.catalog.tpu_zones.one_zone_only`), None where they can; ``covered``: the
    gate covers a group down for a maintenance (its HPA's minimum raised, :mod:`tpu_serving.operations.maintenance.group_cover`), which a
    free slice then serves, billed meanwhile (SRE review round 25, m3: the preview did not say so); ``whole``: the
    workload restarts as a whole (a JobSet, a PathwaysJob), so its pools are started at once, not one at a time (SRE
    review 30, M2; GKE's parallel strategy, https://cloud.google.com/kubernetes-engine/docs/how-to/
    perform-host-maintenance-accelerators: "the least disruptive method of performing changes is to have a single
    window of complete downtime for all nodes")."""
    zones = sorted({z for _, z in pools})
    if gated:
        who = (
            f"the stack's host-maintenance gate starts it every {GATE_MINUTES} minutes at most one pool at a time, "
            "the pool whose "
            "window opens first, while every standing group serves (hostMaintenance)"
        )
    elif startable and whole:
        who = (
            "start it on every serving pool with maintenance pending at once, one window of downtime for all (any "
            "slice's disruption restarts every slice: pool after pool would stop the service once per pool), done "
            "once every node of those pools is Ready again since you labelled them and the workload serves again"
        )
    elif startable:
        who = (
            "start it one pool at a time, the next once every node of the last one is Ready again since you labelled "
            "it and the groups serve again"
        )
    elif len(pools) == 1:  # new-user review 11, m1: no other pool's window, no slice to move the group to
        who = (
            "Cloud TPU lists no manual start for this pool (GKE single-host v5e or v6e, or TPU7x), so it comes at "
            "its window; there is no other serving slice to move the group to"
        )
    else:
        who = (
            "Cloud TPU lists no manual start for these pools (GKE single-host v5e or v6e, or TPU7x), so it comes at "
            "its window, which another pool's can overlap: move a group off its slice only when two serving pools' "
            "windows open within a maintenance and a reload (7 hours) of each other"
        )
    if watched and not gated:
        who += (
            "; the stack's host-maintenance gate starts none, but watches: it tickets such windows, and pages a node "
            "that holds a serving pod NotReady for 10 minutes (a node in maintenance: 6 hours) or windows about to "
            "leave too few groups serving"
        )
    if covered:
        who += (
            "; a group whose pod stays on a node in maintenance is covered like a lost one: the gate raises the HPA's "
            "minimum by it until it serves again, so a free slice takes one more group for the maintenance and its "
            "reload (a from-zero pool's slice is billed meanwhile)"
        )
    how = (
        f"GKE labels a node {SCHEDULED_LABEL} before its VM's host maintenance (GKE {LABELS_SINCE} or later); "
        f"{who} ({RUNBOOK})"
    )
    if len(pools) == 1:
        return f"the only serving slice ({pools[0][0]}, {zones[0]}): its host maintenance stops the service; {how}"
    if len(zones) == 1:
        return (
            f"all {len(pools)} serving slices are in {zones[0]}: one zonal maintenance wave can take every group at "
            f"once, which more slices in the same zone do not prevent ({spread or 'tpuSlices[].zone spreads them'}); "
            f"{how}"
        )
    return (
        f"the {len(pools)} serving slices span {', '.join(zones)}: a zonal maintenance wave takes only the groups "
        f"of its zone; {how}"
    )


# --------------------------------------------------------------------------- the gate's alerts
