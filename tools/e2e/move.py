"""Moving a group before its host-maintenance window (docs/operate.md, "Moving a group before its window"), on the
real scheduler and LWS controller, with the selectors ``tpu-serving runbook`` prints for the stack.

The stack is scaled to its two standing groups, one in each zone (the required zone spread over the standing
groups: :func:`tpu_serving.common.spread.group_zone_spread`). Group 0's pool is the first window's. Two moves follow.

1. Without the runbook's zone hold, the tie broken the wrong way. The added group (index 2) is bound by no required
   rule, so the scheduler may put it in group 0's zone: it breaks the leaders' zone tie at random, and on GKE the
   cluster autoscaler may grow either zone's from-zero pool. Here the other zone's free slices are cordoned while the
   group is added, to make that choice. Group 0 is then drained: it is required in its own zone, whose one free
   slice the added group now holds, so it must wait Pending. This shows the hazard on the real scheduler (GKE review
   round 52, M1). Group 0's own slice then comes back (its maintenance over) and group 2 is removed.
2. The runbook's procedure. Group 0's zone is held with the runbook's ``kubectl cordon -l`` selector; that selector
   must select group 0's node. The group is added, and must serve in another zone. The zone is given back, and group
   0's pool is drained with the runbook's ``kubectl drain -l`` selector. Groups 1 and 2 must serve throughout, and
   group 0 must serve again in its zone, on another pool.

What this does not show: the cluster autoscaler and ``gcloud ... --no-enable-autoscaling``. ``make e2e`` creates
every pool's Nodes at its maximum (:func:`.nodes.create_plan_nodes`), so the cordon holds the from-zero pools too.
The HPA's patch is not run either: the run scales through the scale subresource, as the HPA does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving.common.spread import ZONE_LABEL
from tpu_serving_tools.verify.checks import Finding

from .drain import NODE_POOL_LABEL, cordon, evict_group, pods_by_group, tpu_nodes
from .node_loss import Lifecycle, autoscaled_lifecycle, group_pods, scale, set_replicas, wait, where
from .rollout import live_lws, serving_groups
from .zone_outage import unscheduled

CHECK = "move"
STANDING = 2
"""The standing groups of the run's stack (its ``autoscaling.minReplicas``), one per zone."""
PENDING_SECONDS = 45.0
"""How long group 0 is watched after the drain without the hold: it must not serve in that time."""


@dataclass(frozen=True)
class ZoneHold:
    """The runbook's commands for one zone's block: the hold's selector, and each pool's drain selector."""

    zone: str
    selector: str
    drains: Mapping[str, str]


def zone_holds(runbook: str) -> dict[str, ZoneHold]:
    """Each zone's block of ``tpu-serving runbook``'s move (its "If the first window's pool is in <zone>" block)."""
    holds: dict[str, ZoneHold] = {}
    for block in runbook.split("# If the first window's pool is in ")[1:]:
        zone = block.split(" ", 1)[0]
        held = re.search(r"^kubectl cordon -l '([^']+)'$", block, re.MULTILINE)
        drains = re.findall(r"^kubectl drain -l (\S+) .*# if the first window is (\S+)'s", block, re.MULTILINE)
        if held is not None:
            holds[zone] = ZoneHold(zone, held.group(1), {pool: selector for selector, pool in drains})
    return holds


def _nodes(api_client: Any, selector: str) -> set[str]:
    from kubernetes import client

    found = client.CoreV1Api(api_client).list_node(label_selector=selector).items
    return {str(n.metadata.name) for n in found if n.metadata is not None}


def _node_labels(api_client: Any, node: str) -> Mapping[str, str]:
    from kubernetes import client

    metadata = client.CoreV1Api(api_client).read_node(node).metadata
    return (metadata.labels if metadata is not None else None) or {}


def _placed(api_client: Any, target: tuple[str, str], group: str) -> tuple[str | None, str | None, str | None]:
    """The node, zone and pool of ``group``'s leader, or Nones while it has no node."""
    namespace, name = target
    leaders = [p for p in group_pods(api_client, namespace, name, group) if p["metadata"]["name"] == f"{name}-{group}"]
    node = leaders[0]["spec"].get("nodeName") if leaders else None
    if not node:
        return None, None, None
    labels = _node_labels(api_client, str(node))
    return str(node), labels.get(ZONE_LABEL), labels.get(NODE_POOL_LABEL)


def _serving(api_client: Any, target: tuple[str, str], size: int, groups: tuple[str, ...]) -> int:
    namespace, name = target
    return sum(serving_groups(group_pods(api_client, namespace, name, g), size) for g in groups)


def _add_group(api_client: Any, target: tuple[str, str], size: int, timeout: float) -> float | None:
    set_replicas(api_client, target, STANDING + 1)
    return wait(lambda: _serving(api_client, target, size, ("2",)) == 1, timeout)


def _drain_group0(api_client: Any, target: tuple[str, str], selector: str, subject: str) -> Finding:
    """``kubectl drain -l selector``: its nodes cordoned, then group 0's pods evicted once each."""
    namespace, name = target
    nodes = _nodes(api_client, selector)
    cordon(api_client, nodes, True)
    by_group, _ = pods_by_group(api_client, namespace, name)
    evicted = evict_group(api_client, namespace, sorted(by_group.get("0", {}).items()), subject)
    _gone_now(api_client, target, "0")
    return evicted


def unheld_move(api_client: Any, target: tuple[str, str], size: int, timeout: float) -> list[Finding]:
    """Part 1: the added group in group 0's zone (the other zones' free slices cordoned while it is added), then
    group 0 drained: it waits Pending; then group 0's slice back, and group 2 removed."""
    namespace, name = target
    subject = f"LeaderWorkerSet {namespace}/{name}: without the zone hold"
    node0, zone0, pool0 = _placed(api_client, target, "0")
    busy = {_placed(api_client, target, g)[0] for g in ("0", "1")}
    others = tpu_nodes(api_client) - busy - _nodes(api_client, f"{ZONE_LABEL}={zone0}")
    cordon(api_client, others, True)
    took = _add_group(api_client, target, size, timeout)
    cordon(api_client, others, False)
    _, zone2, pool2 = _placed(api_client, target, "2")
    detail = f"on {pool2} in {zone2}, serving {took:.0f} s after the raise" if took is not None else "not serving"
    out = [Finding(CHECK, f"{subject}: group 2 in group 0's zone", zone2 == zone0, detail)]
    if took is None or zone2 != zone0 or pool0 is None:
        return out
    out.append(_drain_group0(api_client, target, f"{NODE_POOL_LABEL}={pool0}", subject))
    came = wait(lambda: _serving(api_client, target, size, ("0",)) == 1, PENDING_SECONDS)
    pending = (
        came is None and _placed(api_client, target, "0")[0] is None and bool(group_pods(api_client, *target, "0"))
    )
    out.append(
        Finding(
            CHECK,
            f"{subject}: group 0 waits Pending after the drain (the hazard the hold prevents)",
            pending,
            f"not serving within {PENDING_SECONDS:.0f} s: {where(api_client, namespace, name)}"
            f"{unscheduled(api_client, namespace, f'{name}-0')}"
            if came is None
            else f"served after {came:.0f} s on {_placed(api_client, target, '0')[2]}",
        )
    )
    # Its own slice back (the maintenance over), then the HPA's minimum back: LWS keeps the group above the new
    # count while a lower group is unready (lws v0.9.0 leaderworkerset_controller.go l.685-696,
    # calculateRollingUpdateReplicas, maxSurge 1), so group 2 goes only once group 0 serves
    cordon(api_client, _nodes(api_client, f"{NODE_POOL_LABEL}={pool0}"), False)
    back = wait(lambda: _serving(api_client, target, size, ("0", "1")) == STANDING, timeout)
    set_replicas(api_client, target, STANDING)
    _gone_now(api_client, target, "2")
    gone = wait(lambda: not group_pods(api_client, namespace, name, "2"), timeout)
    out.append(
        Finding(
            CHECK,
            f"{subject}: group 0 serves again once its own slice is back, and group 2 leaves",
            back is not None and gone is not None,
            f"group 0 on {_placed(api_client, target, '0')[2]} (was {pool0} on {node0}); group 2 gone: "
            f"{gone is not None}: {where(api_client, namespace, name, ('0', '1', '2'))}",
        )
    )
    return out


def _gone_now(api_client: Any, target: tuple[str, str], group: str) -> None:
    """Delete ``group``'s pods that are being deleted (an eviction, or LWS removing the group) with no grace period.
    kwok keeps a deleted pod for a random time up to its deletionTimestamp, its grace period later (360 s on this
    stack: kwok v0.8.0 ``kustomize/stage/pod/general/pod-delete.yaml`` l.19-23, ``jitterDurationFrom:
    .metadata.deletionTimestamp``), where a real engine exits once drained; the run does not wait for that. Only the
    pods there now, by uid: a pod LWS creates afterwards is left alone."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    namespace, name = target
    uids = {str(p["metadata"]["uid"]) for p in group_pods(api_client, namespace, name, group)}

    def terminating() -> list[Mapping[str, Any]]:
        pods = [p for p in group_pods(api_client, namespace, name, group) if p["metadata"]["uid"] in uids]
        return [p for p in pods if p["metadata"].get("deletionTimestamp")]

    wait(
        lambda: (
            len(terminating())
            == len([p for p in group_pods(api_client, namespace, name, group) if p["metadata"]["uid"] in uids])
        ),
        30,
    )
    for pod in terminating():
        meta = pod["metadata"]
        try:
            body = client.V1DeleteOptions(grace_period_seconds=0, preconditions=client.V1Preconditions(uid=meta["uid"]))
            client.CoreV1Api(api_client).delete_namespaced_pod(meta["name"], namespace, body=body)
        except ApiException as err:
            if err.status not in (404, 409):  # gone already, or another pod of that name now
                raise


def held_move(
    api_client: Any, target: tuple[str, str], size: int, holds: Mapping[str, ZoneHold], timeout: float
) -> list[Finding]:
    """Part 2: the runbook's procedure for group 0's zone."""
    namespace, name = target
    subject = f"LeaderWorkerSet {namespace}/{name}: the runbook's move"
    node0, zone0, pool0 = _placed(api_client, target, "0")
    hold = holds.get(str(zone0))
    if hold is None or pool0 not in hold.drains:
        return [Finding(CHECK, subject, False, f"the runbook has no block for {zone0} or no drain of {pool0}")]
    held = _nodes(api_client, hold.selector)
    out = [Finding(CHECK, f"{subject}: the hold selects group 0's node", node0 in held, f"{sorted(held)}")]
    cordon(api_client, held, True)
    took = _add_group(api_client, target, size, timeout)
    _, zone2, pool2 = _placed(api_client, target, "2")
    out.append(
        Finding(
            CHECK,
            f"{subject}: group 2 serves outside {zone0}",
            took is not None and zone2 not in (None, zone0),
            f"on {pool2} in {zone2}, {took:.0f} s after the raise" if took is not None else "not serving",
        )
    )
    cordon(api_client, held, False)
    if not out[-1].ok:
        return out
    out.append(_drain_group0(api_client, target, hold.drains[str(pool0)], subject))
    fewest = STANDING
    began = time.monotonic()
    while time.monotonic() - began < timeout and _serving(api_client, target, size, ("0",)) == 0:
        fewest = min(fewest, _serving(api_client, target, size, ("1", "2")))
        time.sleep(0.5)
    _, zone0_now, pool0_now = _placed(api_client, target, "0")
    moved = _serving(api_client, target, size, ("0",)) == 1 and zone0_now == zone0 and pool0_now != pool0
    out += [
        Finding(CHECK, f"{subject}: groups 1 and 2 serve throughout", fewest == STANDING, f"fewest serving {fewest}"),
        Finding(
            CHECK,
            f"{subject}: group 0 serves again in {zone0}, off {pool0}",
            moved,
            f"on {pool0_now} in {zone0_now}, {time.monotonic() - began:.0f} s after the drain: "
            f"{where(api_client, namespace, name)}",
        ),
    ]
    return out


def move_before_window(
    api_client: Any, target: tuple[str, str], holds: Mapping[str, ZoneHold], timeout: float = 240.0
) -> list[Finding]:
    """Both parts on the LeaderWorkerSet ``target`` (namespace, name), scaled to its standing groups first."""
    namespace, name = target
    _, size = live_lws(api_client, namespace, name)
    out = [scale(api_client, target, size, timeout, STANDING, CHECK)]
    zones = {_placed(api_client, target, g)[1] for g in ("0", "1")}
    out.append(
        Finding(CHECK, f"LeaderWorkerSet {namespace}/{name}: standing groups apart", len(zones) == 2, f"{zones}")
    )
    if not all(f.ok for f in out):
        return out
    out += unheld_move(api_client, target, size, timeout)
    if not all(f.ok for f in out):
        return out
    return out + held_move(api_client, target, size, holds, timeout)


def move_lifecycle(runbook: str) -> Lifecycle:
    """``run_stack``'s lifecycle for the move, with the zone blocks of the stack's ``tpu-serving runbook``."""
    holds = zone_holds(runbook)
    return autoscaled_lifecycle(CHECK, lambda api_client, target, _lost: move_before_window(api_client, target, holds))
