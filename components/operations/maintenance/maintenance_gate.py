"""The host-maintenance gate: starts a serving pool's pending TPU host maintenance while every standing group serves.

A stdlib-only program (it runs alone in ``gcr.io/distroless/python3-debian13:nonroot``, shipped in a ConfigMap by
:class:`tpu_serving.host_maintenance_job.HostMaintenanceGate`, which runs it every 5 minutes as a CronJob). Each run
reads the serving pools' nodes, the serving pods and the HPAs from the Kubernetes API with the pod's ServiceAccount
token, decides (:func:`decide`, pure), logs one JSON line to stdout and, when it goes ahead, labels the pending nodes
of ONE pool ``cloud.google.com/perform-maintenance=true``: the pool whose window opens first. It never labels a
second pool while one is in maintenance, NotReady or cordoned, so two pools' windows that overlap no longer take
every group down at once.

GKE facts (cited again in :mod:`tpu_serving.host_maintenance`, where the ticket is):

- ``cloud.google.com/scheduled-maintenance-time``: the node label GKE sets while its VM has upcoming maintenance, the
  window's start in Unix epoch seconds (GKE "Monitor maintenance events",
  cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events);
- ``cloud.google.com/perform-maintenance=true``: the node label that starts the pending maintenance now; GKE removes
  it once the maintenance completes, which can take a few hours (GKE "Perform host maintenance for nodes running
  training and inference workloads", cloud.google.com/kubernetes-engine/docs/how-to/perform-host-maintenance-
  accelerators, and "Manage GKE node disruption for GPUs and TPUs",
  cloud.google.com/kubernetes-engine/docs/concepts/handle-disruption-gpu-tpu: host events bypass GKE's maintenance
  windows and exclusions; a host event on one VM of a TPU slice interrupts the whole slice);
- GKE's logging agent reads a JSON line on stdout as a structured entry and takes its ``severity`` field as the
  entry's severity (cloud.google.com/logging/docs/structured-logging, "Special JSON fields in messages"): the ERROR
  lines page through the stack's log-match policy.

Pods of a LeaderWorkerSet carry ``leaderworkerset.sigs.k8s.io/name`` and ``leaderworkerset.sigs.k8s.io/worker-index``
(``"0"`` on the leader: kubernetes-sigs/lws v0.9.0 api/leaderworkerset/v1/leaderworkerset_types.go
``SetNameLabelKey``, ``WorkerIndexLabelKey``). An HPA whose ``spec.behavior.scaleDown.selectPolicy`` is ``Disabled``
never scales down (kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/, "Disable scale down").

Nothing here imports the library. The CronJob lays its ConfigMap out as the package ``tpu_serving``, run with
``python -m``: this file (the decisions, pure), :mod:`.gate_memory` (the windows remembered), :mod:`.group_cover` (an
HPA's minimum raised while a node is lost), :mod:`.gate_fallback` (groups on fallback slices), :mod:`.gate_run` (a run).
"""

import calendar
import time
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

POOL_LABEL = "cloud.google.com/gke-nodepool"
CLASS_LABEL = "cloud.google.com/compute-class"  # on a ComputeClass's nodes, its name (tpu_serving.compute_class.LABEL)
SCHEDULED_LABEL = "cloud.google.com/scheduled-maintenance-time"
PERFORM_LABEL = "cloud.google.com/perform-maintenance"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
"""Set on every pod of a group to its index by the LWS pod webhook (lws v0.9.0 ``GroupIndexLabelKey``)."""
LWS_API = "leaderworkerset.x-k8s.io/v1"
"""The LeaderWorkerSet API a watching gate reads ``spec.replicas`` from (its CRD's group and served version)."""
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the kubelet mounts the pod's ServiceAccount token and the cluster's CA (kubernetes.io/docs/tasks/
run-application/access-api-from-pod/, "Directly accessing the REST API")."""

Obj = Mapping[str, Any]

IN_MAINTENANCE_DUE_SECONDS = 7200
"""While the only hold is a pool in maintenance (the gate's own start, as a rule), the next pool's window pages only
this close: a maintenance can take a few hours (GKE "Perform host maintenance for nodes running training and inference
workloads"); two hours ahead there is still time to move a group. Farther out, the hold is the gate working, not a
page (SRE review round 48, M2: it paged twice an hour on the maintenance it had started)."""


@dataclass(frozen=True)
class Gate:
    """What one run checks: the stack's serving pools, its LeaderWorkerSets and its groups."""

    pools: tuple[str, ...]
    namespace: str
    leader_worker_sets: tuple[str, ...]
    fewest_groups: int
    """The standing groups (the HPA's minimum, else the fixed count)."""
    due_seconds: int = 86400
    """A hold within this long of a window's opening pages."""
    lost_seconds: int = 600
    """A node holding a serving pod NotReady this long pages."""
    maintenance_seconds: int = 21600
    """How long a node in maintenance may be NotReady before that pages too."""
    autoscalers: tuple[str, ...] = ()
    bounds: tuple[tuple[str, int, int], ...] = ()  # (hpa, minReplicas, maxReplicas): its own, which a cover gives back
    close_seconds: int = 25200
    """Two serving pools' windows closer than this can take both groups at once (a watching gate pages them)."""
    surge: int = 0
    """``maxSurge`` of the LeaderWorkerSets' rollouts: one or more, and a scale-down by one group removes no serving
    group while a lower one is in maintenance (LWS keeps it), so the gate does not hold for the HPA."""
    state: str = ""
    """The ConfigMap in which the gate remembers the windows GKE announced (:func:`remember_windows`); empty: none."""
    compute_class: str = ""
    """The serving's ComputeClass: the nodes GKE makes for it are watched as the pools' (lost, windows, holds)."""
    away_seconds: int = 3600  # a group this long on a slice of the class opens a ticket (tpu_serving.gate_fallback)
    starts: bool = True
    """Starts a pool's pending maintenance; False on pools for which Cloud TPU lists no manual start (single-host v5e
    or v6e, TPU7x): the gate then only watches, and pages a lost node (the stack's fast signal of a silent VM)."""


@dataclass(frozen=True)
class Decision:
    """What a run does and says: ``start`` (label ``nodes`` of ``pool``), ``hold``, ``idle`` or ``watch``."""

    action: str
    severity: str
    message: str
    pool: str = ""
    nodes: tuple[str, ...] = ()
    pages: tuple[str, ...] = field(default=())
    """Why the run pages (a hold near its window, a lost node), empty when it does not."""
    tickets: tuple[str, ...] = field(default=())
    """Why a watching run opens a ticket (a WARNING line: two serving pools' windows close), empty when it does not."""
    lost: tuple[str, ...] = field(default=())
    """The nodes NotReady for ``lost_seconds`` holding a serving pod, in maintenance or not (:func:`lost_node_names`
    with ``exempt=False``), whose groups the HPAs cover (:mod:`tpu_serving.group_cover`)."""
    fallback: str = ""  # the ticket on groups long on a fallback slice (tpu_serving.gate_fallback.away)


def serves(node: Obj, gate: Gate) -> bool:
    """The node is in one of the gate's pools, or carries the serving's ComputeClass (a pool GKE made for it)."""
    pool, named = labels_of(node).get(POOL_LABEL), labels_of(node).get(CLASS_LABEL)
    return pool in gate.pools or bool(gate.compute_class) and named == gate.compute_class


def labels_of(obj: Obj) -> Mapping[str, str]:
    """An object's ``metadata.labels``, empty when it has none."""
    labels: Mapping[str, str] = obj.get("metadata", {}).get("labels") or {}
    return labels


def name_of(obj: Obj) -> str:
    """An object's ``metadata.name``, ``""`` when it has none."""
    return str(obj.get("metadata", {}).get("name", ""))


def rfc3339(value: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return None


def window(node: Obj) -> float | None:
    """When the node's pending maintenance opens (its scheduled-maintenance-time label); None: unset or unreadable."""
    value = labels_of(node).get(SCHEDULED_LABEL)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


ACTIVE_LABEL = "cloud.google.com/active-node-maintenance"
WINDOW_TAINT = "cloud.google.com/maintenance-window-started"
TERMINATION_TAINT = "cloud.google.com/impending-node-termination"
"""GKE's own signals on a node. A maintenance under way: the label ``active-node-maintenance`` (``ONGOING``: google/
skills gke-ai-troubleshooting-handle-disruption-gpu-tpu SKILL.md 1.0.1; other values in a public GPU run, GKE review
round 60, M1, so any value) and the taint ``maintenance-window-started``, kept until the node is Ready again. Any
termination, a preemption too: the taint ``impending-node-termination``, which holds the next pool but spares no page
(GKE review round 60, m1; SRE review round 25, m4)."""


STARTED_LABEL = "tpu-serving.dev/gate-started"
"""Not on any real node: what :func:`tpu_serving.gate_memory.remember_started` marks the nodes of a pool the gate
started with (the start's epoch seconds) until they are Ready again, for this run's decision only."""


def in_maintenance(node: Obj, now: float) -> bool:
    """Under way by GKE's own signals (:data:`ACTIVE_LABEL` with any value, :data:`WINDOW_TAINT`), started (the
    perform label, or by the gate: :data:`STARTED_LABEL`), or its window has opened (a readable label in the past)."""
    opens = window(node)
    return (
        ACTIVE_LABEL in labels_of(node)
        or _tainted(node, WINDOW_TAINT)
        or labels_of(node).get(PERFORM_LABEL) == "true"
        or STARTED_LABEL in labels_of(node)
        or (opens is not None and opens <= now)
    )


def _under_way(node: Obj, now: float) -> bool:
    """:func:`in_maintenance` less a bare perform label: a label GKE did not act on stays with no time bound (the gate
    cannot take it off), and must not spare a real loss of that VM the page (SRE review round 27, m1). GKE takes the
    label off once it acts, and marks the node itself; the gate's own record (:data:`STARTED_LABEL`) lasts 6 hours."""
    labels = {k: v for k, v in labels_of(node).items() if k != PERFORM_LABEL}
    return in_maintenance({**node, "metadata": {**node.get("metadata", {}), "labels": labels}}, now)


def _maintenance_said(node: Obj, now: float) -> str:
    """How :func:`_busy` says a node in maintenance: a pool the gate started whose node shows nothing of it any more
    is said so, as ``kubectl get node`` shows no label (SRE review round 26, m2)."""
    started, labels = labels_of(node).get(STARTED_LABEL), labels_of(node)
    if started is None or ACTIVE_LABEL in labels or labels.get(PERFORM_LABEL) == "true" or _tainted(node, WINDOW_TAINT):
        return "in maintenance"
    ago = int(now - float(started)) if started.isdigit() else 0
    return f"started by the gate {ago} s ago, not Ready again since; the state ConfigMap's started"


def _tainted(node: Obj, key: str) -> bool:
    return any(t.get("key") == key for t in node.get("spec", {}).get("taints") or [])


def pending(node: Obj, now: float) -> bool:
    """Maintenance is scheduled and not started: the scheduled-maintenance-time label, without the perform label and
    before its window (an unreadable window counts as pending)."""
    return SCHEDULED_LABEL in labels_of(node) and not in_maintenance(node, now)


def not_ready_since(node: Obj) -> float | None:
    """Since when the node's Ready condition has not been True (its lastTransitionTime), None while it is Ready."""
    for c in node.get("status", {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return None if c.get("status") == "True" else (rfc3339(c.get("lastTransitionTime", "")) or 0.0)
    return 0.0


def ready_since(node: Obj) -> float | None:
    """Since when the node has been Ready (its Ready condition's lastTransitionTime), None while it is not."""
    for c in node.get("status", {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") == "True":
            return rfc3339(c.get("lastTransitionTime", "")) or 0.0
    return None


def pod_ready(pod: Obj) -> bool:
    """Ready and not being deleted: a terminating pod keeps its Ready condition through its preStop hook and grace
    period (k8s.io/api v0.36.3 core/v1 types.go, ``ObjectMeta.DeletionTimestamp`` in apimachinery's meta/v1
    types.go), but its group is going away."""
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return False
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def lost_node_names(
    nodes: Sequence[Obj], pods: Sequence[Obj], gate: Gate, now: float, exempt: bool = True
) -> list[tuple[str, int]]:
    """The nodes holding a serving pod that have been NotReady for ``lost_seconds``, less, with ``exempt``, those in
    maintenance for less than ``maintenance_seconds`` (:func:`_under_way`: an unreadable scheduled-maintenance-time
    label, or a bare perform label, exempts nothing), each with its seconds NotReady. The page spares a maintenance;
    the cover does not: a serving pod bound to a node in maintenance keeps its group down (SRE review 24, M1)."""
    holding = {p.get("spec", {}).get("nodeName") for p in pods}
    found = []
    for node in nodes:
        since = not_ready_since(node)
        if since is None or name_of(node) not in holding or now - since < gate.lost_seconds:
            continue
        if exempt and _under_way(node, now) and now - since < gate.maintenance_seconds:
            continue
        found.append((name_of(node), int(now - since)))
    return found


def _lost_page(node: str, seconds: int) -> str:
    return f"node {node} NotReady for {seconds} s holds a serving pod"


def _busy(nodes: Sequence[Obj], now: float) -> list[tuple[Obj, list[str]]]:
    """The pools' nodes in maintenance, about to be terminated, NotReady or cordoned, each with why."""
    busy = []
    for node in nodes:
        why = [
            w
            for w, yes in (
                (_maintenance_said(node, now), in_maintenance(node, now)),
                ("terminating", _tainted(node, TERMINATION_TAINT)),
                ("NotReady", not_ready_since(node) is not None),
                ("cordoned", bool(node.get("spec", {}).get("unschedulable"))),
            )
            if yes
        ]
        if why:
            busy.append((node, why))
    return busy


def _groups_hold(pods: Sequence[Obj], gate: Gate, scale_downs_held: bool) -> str:
    """Why the serving pods hold the gate, or ``""``."""
    leaders = [p for p in pods if labels_of(p).get(WORKER_INDEX_LABEL) == "0"]
    ready = sum(1 for p in leaders if pod_ready(p))
    if not pods or not leaders:
        return f"0 of {gate.fewest_groups} standing groups Ready (no serving pod found)"
    unready = sorted(name_of(p) for p in pods if not pod_ready(p))
    if unready:
        return f"{ready} of {len(leaders)} leaders Ready; not Ready: {', '.join(unready)}"
    if len(leaders) < gate.fewest_groups:
        return f"{len(leaders)} of {gate.fewest_groups} standing groups run"
    if holes := _holes(leaders):  # a surge group serves while a standing one is gone (SRE review 37, M2)
        return f"no leader in group(s) {holes}: a group is being recreated, or its pods are refused"
    if len(leaders) > gate.fewest_groups and not scale_downs_held and gate.surge < 1:
        return (
            f"{len(leaders)} groups run, above the {gate.fewest_groups} standing ones, and the HPA may scale down "
            f"while a pool is in maintenance: hold its scale-down (spec.behavior.scaleDown.selectPolicy: Disabled on "
            f"{', '.join(gate.autoscalers) or 'the HPA'}) to let it go ahead"
        )
    return ""


def _holes(leaders: Sequence[Obj]) -> str:
    """Per LeaderWorkerSet, the group indices below its highest leader's that have no leader (``name/index``)."""
    found: dict[str, set[int]] = {}
    for p in leaders:
        if (index := labels_of(p).get(GROUP_INDEX_LABEL, "")).isdigit():
            found.setdefault(labels_of(p).get(LWS_NAME_LABEL, ""), set()).add(int(index))
    return ", ".join(f"{n}/{i}" for n, got in sorted(found.items()) for i in range(max(got)) if i not in got)


def _first_pool(
    nodes: Sequence[Obj], now: float, holding: Container[str] = ()
) -> tuple[str, float | None, tuple[str, ...]]:
    """The pool with pending nodes to start first, its window and its pending nodes: a pool none of whose nodes
    holds a serving pod (``holding``: their names) first, as its maintenance costs no group, then the window that
    opens first (an unreadable window last)."""
    by_pool: dict[str, list[Obj]] = {}
    for node in nodes:
        if pending(node, now):
            by_pool.setdefault(labels_of(node).get(POOL_LABEL, ""), []).append(node)
    opens = {p: min((w for n in ns if (w := window(n)) is not None), default=None) for p, ns in by_pool.items()}
    serves = {p: any(name_of(n) in holding for n in ns) for p, ns in by_pool.items()}
    pool = min(by_pool, key=lambda p: (serves[p], opens[p] is None, opens[p] or 0.0, p))
    return pool, opens[pool], tuple(sorted(name_of(n) for n in by_pool[pool]))


def _serving_windows(
    nodes: Sequence[Obj], pods: Sequence[Obj], now: float
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """The windows of the pools whose nodes hold a serving pod (each pool's first), and those pods: pending, or
    opened while the node still serves (:func:`_opened_serving`, at ``now``: its group can go any time)."""
    on: dict[str, list[str]] = {}
    for p in pods:
        on.setdefault(p.get("spec", {}).get("nodeName", ""), []).append(name_of(p))
    opens: dict[str, float] = {}
    held: dict[str, list[str]] = {}
    for node in nodes:
        opened = now if _opened_serving(node, now) else window(node) if pending(node, now) else None
        if opened is not None and name_of(node) in on:
            pool = labels_of(node).get(POOL_LABEL, "")
            opens[pool] = min(opens.get(pool, opened), opened)
            held.setdefault(pool, []).extend(on[name_of(node)])
    return opens, held


def _opened_serving(node: Obj, now: float) -> bool:
    """A Ready node whose maintenance has not taken it yet: its window (the label's time, or the one remembered) has
    opened and it has been Ready since before then, or GKE's window taint or the perform label is on it. A window opens
    a period hours wide (SRE review round 26, M2: in a public GPU run the node served 17 minutes past the taint)."""
    since = ready_since(node)
    if since is None:
        return False
    opens = window(node)
    started = _tainted(node, WINDOW_TAINT) or labels_of(node).get(PERFORM_LABEL) == "true"
    return started or (opens is not None and since <= opens <= now)


def close_windows(
    nodes: Sequence[Obj], pods: Sequence[Obj], gate: Gate, now: float, wanted: int | None = None
) -> tuple[list[str], list[str]]:
    """``(tickets, pages)`` of serving pools' maintenance that can take two groups at once. A ticket: two pools
    holding serving pods whose windows open within ``close_seconds`` of each other, the first within ``due_seconds``
    (the notice comes days ahead). A page (:func:`_going_page`): the windows that open within
    :data:`IN_MAINTENANCE_DUE_SECONDS` would leave fewer Ready groups than one less than the standing ones, whatever
    took the others (a maintenance under way, a repair, a crash)."""
    opens, held = _serving_windows(nodes, pods, now)
    ordered = sorted(opens, key=lambda p: (opens[p], p))
    tickets = [
        f"pools {a} and {b} hold serving pods and their windows open {int(opens[a] - now)} s and "
        f"{int(opens[b] - now)} s from now, within {gate.close_seconds} s of each other: before {a}'s window, add a "
        f"group and move the group of {', '.join(sorted(held[a]))} off {a} (docs/operate.md, 'Pools with no "
        "manual start')"
        for a, b in zip(ordered, ordered[1:], strict=False)
        if opens[b] - opens[a] < gate.close_seconds and opens[a] - now <= gate.due_seconds
    ]
    return tickets, _going_page(nodes, pods, gate, (opens, now), wanted)


def _going_page(
    nodes: Sequence[Obj],
    pods: Sequence[Obj],
    gate: Gate,
    clock: tuple[Mapping[str, float], float],
    wanted: int | None = None,
) -> list[str]:
    """The page when the Ready groups less those whose pool's window opens within :data:`IN_MAINTENANCE_DUE_SECONDS`
    fall below one less than the groups the stack runs (its leaders, Ready or not, at least the standing groups): one
    group down for one maintenance is allowed, two are not (SRE review round 15, M1). ``wanted``, the LeaderWorkerSets'
    ``spec.replicas`` together, bounds the leaders counted: a rollout's surge group is not one the load asked for (SRE
    review round 16, m1: it paged during every surge rollout)."""
    opens, now = clock
    pool_of = {name_of(n): labels_of(n).get(POOL_LABEL, "") for n in nodes}
    leaders = [p for p in pods if labels_of(p).get(WORKER_INDEX_LABEL) == "0"]
    ready = [p for p in leaders if pod_ready(p)]
    soon = {pool for pool, opened in opens.items() if opened - now <= IN_MAINTENANCE_DUE_SECONDS}
    going = sorted(name_of(p) for p in ready if pool_of.get(p.get("spec", {}).get("nodeName", "")) in soon)
    running = len(leaders) if wanted is None else min(len(leaders), wanted)
    left, runs = len(ready) - len(going), max(gate.fewest_groups, running)
    if not going or left >= runs - 1:
        return []
    return [
        f"within {IN_MAINTENANCE_DUE_SECONDS} s the maintenance windows of pools {', '.join(sorted(soon))} take the "
        f"groups of {', '.join(going)}: {len(ready)} of {runs} groups are Ready now, {left} would serve; add a group "
        "now (docs/operate.md, 'Pools with no manual start')"
    ]


def _watch(
    nodes: Sequence[Obj], pods: Sequence[Obj], gate: Gate, clock: tuple[float, int | None], pages: tuple[str, ...]
) -> Decision:
    """A gate that starts nothing: it names the pending nodes, pages the lost ones (``pages``) and a second group
    about to go, and tickets two serving pools whose windows are close (:func:`close_windows`)."""
    now, wanted = clock
    tickets, urgent = close_windows(nodes, pods, gate, now, wanted)
    pages += tuple(urgent)
    waiting = ", ".join(sorted(name_of(n) for n in nodes if pending(n, now))) or "none"
    message = f"watching {len(nodes)} serving nodes; pending host maintenance, which comes at its window: {waiting}"
    severity = "ERROR" if pages else "WARNING" if tickets else "INFO"
    return Decision("watch", severity, message, pages=pages, tickets=tuple(tickets))


def decide(
    nodes: Sequence[Obj],
    pods: Sequence[Obj],
    gate: Gate,
    now: float,
    scale_downs_held: bool,
    wanted: int | None = None,
    upgrading: str = "",
) -> Decision:
    """What one run does. ``nodes``: the serving pools' nodes; ``pods``: the serving pods (leaders and workers of
    the stack's LeaderWorkerSets); ``scale_downs_held``: every HPA of the stack has its scale-down disabled;
    ``wanted``: the LeaderWorkerSets' ``spec.replicas`` together (a watching gate reads them), None if unread;
    ``upgrading``: what the node upgrade runbook set in the state ConfigMap for its session (a starting gate holds)."""
    nodes = [n for n in nodes if serves(n, gate)]
    names = set(gate.leader_worker_sets)
    pods = [p for p in pods if labels_of(p).get(LWS_NAME_LABEL) in names]
    pages = tuple(_lost_page(n, s) for n, s in lost_node_names(nodes, pods, gate, now))
    decision = _decide(nodes, pods, gate, (now, scale_downs_held, wanted), pages, upgrading)
    down = lost_node_names(nodes, pods, gate, now, exempt=False)
    return replace(decision, lost=tuple(n for n, _ in down))


def _decide(
    nodes: Sequence[Obj],
    pods: Sequence[Obj],
    gate: Gate,
    clock: tuple[float, bool, int | None],
    pages: tuple[str, ...],
    upgrading: str = "",
) -> Decision:
    """:func:`decide` on the stack's own nodes and pods; ``clock``: now, the HPA hold, the groups asked for."""
    now, scale_downs_held, wanted = clock
    if not gate.starts:
        return _watch(nodes, pods, gate, (now, wanted), pages)
    own = [n for n in nodes if labels_of(n).get(POOL_LABEL) in gate.pools]  # a pool GKE made is not the gate's to start
    if not any(pending(n, now) for n in own):
        severity = "ERROR" if pages else "INFO"
        return Decision("idle", severity, "no pending host maintenance on the serving pools", pages=pages)
    pool, opens, chosen = _first_pool(own, now, {p.get("spec", {}).get("nodeName", "") for p in pods})
    when = f"window opens in {int(opens - now)} s" if opens is not None else "window unreadable"
    busy = [(n, w) for n, w in _busy(nodes, now) if n in own or w != ["cordoned"]]  # a fallback's cordon holds no group
    listed = ", ".join(f"{name_of(n)} ({', '.join(w)})" for n, w in busy)
    why = f"nodes busy: {listed}" if busy else _upgrade_hold(upgrading) or _groups_hold(pods, gate, scale_downs_held)
    if not why:
        return Decision("start", "ERROR" if pages else "INFO", f"starting pool {pool} ({when})", pool, chosen, pages)
    return _hold(pool, chosen, (opens, now, _due(gate, busy, pods, now)), (when, why), pages)


def _upgrade_hold(upgrading: str) -> str:
    """Why a starting gate holds for a node upgrade session, or ``""`` (none set)."""
    if not upgrading:
        return ""
    return (
        f"a node upgrade session holds the gate's starts (its state's upgrading: {upgrading[:80]}); the upgrade "
        "runbook's last step gives them back; a session cut short left it: remove data.upgrading of the gate's state "
        "ConfigMap (SRE review 36, m2)"
    )


def _due(gate: Gate, busy: Sequence[tuple[Obj, list[str]]], pods: Sequence[Obj], now: float) -> int:
    """How close to a window a hold pages: :data:`IN_MAINTENANCE_DUE_SECONDS` when the hold passes by itself (a pool
    in maintenance, or, with no node busy, groups that reload or roll: a serving pod not Ready, fewer leaders than the
    standing groups); ``due_seconds`` when it waits on someone (a cordon, a NotReady node, an HPA's scale-down to hold).
    A group that stays unready is paged by the stack's own alerts, not by a day of hold pages (SRE round 12, m5)."""
    if busy:
        passes = all(in_maintenance(n, now) for n, _ in busy)
    else:
        leaders = [p for p in pods if labels_of(p).get(WORKER_INDEX_LABEL) == "0"]
        passes = bool(leaders) and (any(not pod_ready(p) for p in pods) or len(leaders) < gate.fewest_groups)
    return min(gate.due_seconds, IN_MAINTENANCE_DUE_SECONDS) if passes else gate.due_seconds


def _hold(
    pool: str,
    chosen: tuple[str, ...],
    clock: tuple[float | None, float, int],
    said: tuple[str, str],
    pages: tuple[str, ...],
) -> Decision:
    """Hold ``pool``; page when its window opens within ``due`` seconds (``clock``: opens, now, due; ``said``: when
    its window opens and why it holds, as the log line says them)."""
    (opens, now, due), (when, why) = clock, said
    if opens is not None and opens - now <= due:
        pages += (f"held within {due} s of pool {pool}'s window ({when})",)
    severity = "ERROR" if pages else "WARNING"
    return Decision("hold", severity, f"holding pool {pool} ({when}): {why}", pool, chosen, pages)
