"""What the host-maintenance gate remembers from one run to the next, in its state ConfigMap: the windows GKE announced
(GKE takes its label off once the maintenance is active) and the pools it started (GKE takes the perform label off
within a minute). Each is given back to the nodes before :func:`tpu_serving.maintenance_gate.decide` reads them.
Stdlib only, shipped in the gate's ConfigMap beside :mod:`tpu_serving.maintenance_gate`."""

from collections.abc import Mapping, Sequence

from .maintenance_gate import (
    ACTIVE_LABEL,
    POOL_LABEL,
    SCHEDULED_LABEL,
    STARTED_LABEL,
    WINDOW_TAINT,
    Obj,
    _tainted,
    labels_of,
    name_of,
    not_ready_since,
    ready_since,
    window,
)

Window = tuple[float, float]
"""A remembered window: when it opens, and when a run last saw the node's label announce it."""


def _forgets(node: Obj, remembered: Window, now: float) -> bool:
    """A node whose label is gone no longer has its remembered window: the label went before the window opened (the
    gate, or an operator, started the maintenance early, which the perform label shows while it lasts; or it was
    called off: SRE review round 23, M1), or the node has been Ready since after a run last saw the label (the
    maintenance is over, and the VM lost again within the hours after is a loss: GKE review rounds 58 and 59, M1; a
    node that was Ready again before its maintenance took it down keeps it, as the label was still there then)."""
    opens, seen = remembered
    return opens > now or (ready_since(node) or 0.0) > seen


def remember_windows(
    nodes: Sequence[Obj], known: Mapping[str, Window], now: float, keep_seconds: int
) -> tuple[list[Obj], dict[str, Window]]:
    """The nodes with the windows the gate remembers given back, and what it remembers now. GKE labels a node
    ``cloud.google.com/scheduled-maintenance-time`` only while its maintenance "is scheduled by the VM but isn't
    active" (GKE "Monitor maintenance events"), so a watching gate paged a node NotReady in a maintenance ticketed days
    before (SRE review round 21, m1). Each run remembers every labelled node's window and when it saw the label
    (``known``: the last run's), keeps it ``keep_seconds`` from its opening or from its node going NotReady, if later
    (GKE review round 60, M1), unless :func:`_forgets`; GKE's own signals (:func:`in_maintenance`) come first."""
    down = {name_of(n): since for n in nodes if (since := not_ready_since(n)) is not None}
    remembered = {n: w for n, w in known.items() if max(w[0], down.get(n, w[0])) + keep_seconds > now}
    for node in nodes:
        name, opens = name_of(node), window(node)
        if opens is not None:
            remembered[name] = (opens, now)
        elif name in remembered and _forgets(node, remembered[name], now):
            del remembered[name]
    restored = []
    for node in nodes:
        opens = remembered.get(name_of(node), (now + 1, now))[0]
        if SCHEDULED_LABEL not in labels_of(node) and opens <= now:
            meta = node.get("metadata", {})
            node = {**node, "metadata": {**meta, "labels": {**labels_of(node), SCHEDULED_LABEL: str(int(opens))}}}
        restored.append(node)
    return restored, remembered


def remember_started(
    nodes: Sequence[Obj], started: Mapping[str, float], now: float, keep_seconds: int
) -> tuple[list[Obj], dict[str, float]]:
    """The nodes of each pool the gate started (``started``: pool -> when) not Ready since, marked
    :data:`~tpu_serving.maintenance_gate.STARTED_LABEL` (in maintenance, and said as started by the gate: SRE review
    round 26, m2), and the pools still started: GKE may take the perform label off within a minute (a public GPU
    run, GKE review round 60, M1). A pool is forgotten once its listed nodes are all Ready since the start, or
    ``keep_seconds`` on."""
    live = {pool: t for pool, t in started.items() if t + keep_seconds > now}
    listed: set[str] = set()
    cycling: set[str] = set()
    restored = []
    for node in nodes:
        pool = labels_of(node).get(POOL_LABEL, "")
        t = live.get(pool)
        if t is not None:
            listed.add(pool)
            back = ready_since(node)
            if back is None or back <= t:
                cycling.add(pool)
                meta = node.get("metadata", {})
                node = {**node, "metadata": {**meta, "labels": {**labels_of(node), STARTED_LABEL: str(int(t))}}}
        restored.append(node)
    return restored, {pool: t for pool, t in live.items() if pool in cycling or pool not in listed}


IGNORED_SECONDS = 1800
"""How long after the gate labels a pool GKE must show it acted on one of its nodes. A manual start "starts
immediately" (Cloud TPU "Manually start a host maintenance event"); in a public GPU run GKE took the perform label off
within a minute, set its active label and its window taint at once, and the node went NotReady 17 minutes on (GKE
review round 60, M1)."""


def _acted(node: Obj, since: float) -> bool:
    """GKE shows it acted on the node since ``since``: its own maintenance signals, or the node NotReady, or Ready
    again after going down."""
    back = ready_since(node)
    return ACTIVE_LABEL in labels_of(node) or _tainted(node, WINDOW_TAINT) or back is None or back > since


def ignored_starts(nodes: Sequence[Obj], started: Mapping[str, float], now: float) -> dict[str, float]:
    """The pools the gate started :data:`IGNORED_SECONDS` or more ago none of whose listed nodes shows that GKE acted
    (:func:`_acted`), each with when it was started: GKE did not act on the perform label (SRE review round 26, M1:
    Cloud TPU's page has listed a manual start for GKE multi-host v5e pools in some copies and not in others). A pool
    none of whose nodes is listed is not judged."""
    listed: dict[str, list[Obj]] = {}
    for node in nodes:
        listed.setdefault(labels_of(node).get(POOL_LABEL, ""), []).append(node)
    return {
        pool: t
        for pool, t in started.items()
        if now - t >= IGNORED_SECONDS and listed.get(pool) and not any(_acted(n, t) for n in listed[pool])
    }
