"""Standing serving groups that one ``pulumi up`` takes down together: a diff that recreates the VMs of several node
pools (in place, or by replacing or deleting the pools) recreates them all in the same run, whichever groups they
hold.

Nothing orders the node pools of a stack between them, and both engines run their work at once:

- Pulumi runs the steps of resources that do not depend on each other in parallel: ``pulumi up --parallel``
  "Defaults to unbounded" (https://www.pulumi.com/docs/iac/cli/commands/pulumi_up/).
- The provider updates different node pools of a cluster concurrently: hashicorp/terraform-provider-google v7.45.0
  ``google/services/container/resource_container_node_pool.go`` ``nodePoolUpdate`` l.1750-1756 takes the cluster's
  lock as a read lock and a write lock per node pool; ``resourceContainerNodePoolCreate`` (l.836-841) and
  ``resourceContainerNodePoolDelete`` (l.1084-1089) do the same.
- A pool the stack names (every pool here) is deleted before its replacement is created: pulumi-terraform-bridge
  ``pkg/tfbridge/schema.go`` ``nameRequiresDeleteBeforeReplace`` ("an autonameable property with a value that was
  not populated by the autonamer"), so its VMs are gone until the new pool's come up.

The groups and the pools that can hold them come from the plans' outputs (``rollout``, ``autoscaling``, ``slices``),
not from the library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Standing:
    """A plan's standing serving groups: those that serve at all times (the autoscaler's minimum, or the fixed
    count), and the node pools of the serving slices that hold them."""

    groups: int
    pools: frozenset[str]
    slices_per_group: int
    startup_minutes: int | None


def starts_with_nodes(inputs: Mapping[str, Any]) -> bool:
    """Whether a node pool has VMs without a group asking for them: a node count, or an autoscaler minimum, above 0
    (a pool that scales from zero holds a group at first only when the HPA adds one or a rollout surges; later, any
    serving pool can hold one: :func:`standing`)."""
    autoscaling = inputs.get("autoscaling")
    scaling: Mapping[str, Any] = autoscaling if isinstance(autoscaling, Mapping) else {}
    counts = (
        inputs.get("nodeCount"),
        inputs.get("initialNodeCount"),
        *(scaling.get(k) for k in ("minNodeCount", "totalMinNodeCount")),
    )
    return any(isinstance(n, int) and n > 0 for n in counts)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _serving_pools(outputs: Mapping[str, Any]) -> set[str]:
    """The node pools of the serving slices (``slices[].nodePool``), the rollout's spares and the pools that scale
    from zero included: a repair, a host maintenance, the HPA or an earlier one-pool run moves a standing group onto
    any of them (GKE review round 50, M2: the pools that start with VMs alone missed the groups that the first
    targeted runs had moved onto the spares)."""
    slices = [s for s in outputs["slices"] if isinstance(s, Mapping)]
    return {s["nodePool"] for s in slices if isinstance(s.get("nodePool"), str)}


def standing(plan: Mapping[str, Any] | None) -> Standing | None:
    """The standing groups of ``plan`` and the pools that can hold them (:func:`_serving_pools`), or None when its
    outputs name no serving groups and slices (a JobSet or PathwaysJob stack, a DisaggregatedSet's roles, a plan
    from before the outputs existed)."""
    outputs = (plan or {}).get("outputs") or {}
    rollout, autoscaling = outputs.get("rollout"), outputs.get("autoscaling")
    if not isinstance(rollout, Mapping) or _int(rollout.get("groups")) is None:
        return None
    if not isinstance(outputs.get("slices"), list):
        return None
    minimum = _int(autoscaling.get("minReplicas")) if isinstance(autoscaling, Mapping) else None
    return Standing(
        groups=minimum if minimum is not None else rollout["groups"],
        pools=frozenset(_serving_pools(outputs)),
        slices_per_group=_int(rollout.get("slicesPerGroup")) or 1,
        startup_minutes=_int(rollout.get("startupMinutes")),
    )


@dataclass(frozen=True)
class AtOnce:
    """Pools of standing groups whose VMs one ``pulumi up`` recreates together."""

    pools: tuple[tuple[str, str], ...]
    """(pool name, URN), by name."""
    groups: int
    """How many standing groups they can hold (at most)."""
    standing: int
    exact: bool
    """Whether ``groups`` is exact: one slice per group, and as many serving pools as standing groups."""
    startup_minutes: int | None


def at_once(
    touched: Mapping[str, str], base: Mapping[str, Any] | None, head: Mapping[str, Any] | None
) -> AtOnce | None:
    """The standing groups that ``touched`` ({pool name: URN}: the pools whose VMs a diff recreates, replaces or
    deletes) take down together, when they can be two or more; None otherwise. The pools that hold standing groups
    are those of either plan (the base's run now; the head's once applied)."""
    plans = [s for s in (standing(base), standing(head)) if s is not None]
    if not plans:
        return None
    pools = frozenset().union(*(s.pools for s in plans))
    hit = tuple(sorted((name, urn) for name, urn in touched.items() if name in pools))
    groups = max(s.groups for s in plans)
    per_group = max(s.slices_per_group for s in plans)
    taken = min(groups, len(hit))
    if taken < 2:
        return None
    minutes = [s.startup_minutes for s in plans if s.startup_minutes is not None]
    exact = per_group == 1 and len(pools) == groups
    return AtOnce(hit, taken, groups, exact, max(minutes) if minutes else None)


def warning(hit: AtOnce) -> str:
    """The bold warning line of :func:`at_once`'s finding, with what to do instead."""
    pools = ", ".join(f"`{name}`" for name, _ in hit.pools)
    count = f"{'' if hit.exact else 'up to '}{hit.groups} of the {hit.standing} standing serving groups"
    reload = f" (up to about {hit.startup_minutes} minutes each)" if hit.startup_minutes else ""
    left = "none may serve meanwhile" if hit.groups >= hit.standing else "capacity drops meanwhile"
    targets = " ".join(f"`pulumi up --target '{urn}'`" for _, urn in hit.pools)
    return (
        f"**One `pulumi up` takes {count} down at once:** it recreates the VMs of node pools {pools}, which hold "
        f"them, together (Pulumi and the provider apply different node pools concurrently), and their groups can "
        f"reload together{reload}: a disruption budget holds a second drain only as long as GKE waits on it, an hour "
        f"at most, so {left}. Apply it one pool per run instead, first the pools that hold no group now (`kubectl "
        f"get pods -o wide` shows where the groups run), then each pool that holds one, waiting between runs until "
        f"the LeaderWorkerSet's groups all serve again (READY back to its replicas): {targets}; then `pulumi up` "
        'for the rest (docs/review-changes.md, "One pool at a time")'
    )


KEEP_SERVING = re.compile(r"\d+ of \d+ groups at least keep serving")
"""The ``rollout.drain`` output's claim that a drain leaves groups serving (``1 of 2 groups at least keep
serving``)."""


def drain(line: str, hit: AtOnce) -> str:
    """The head plan's ``Drain:`` line for a diff that takes several standing groups at once: its claim that groups
    keep serving replaced by what this change does."""
    note = (
        f"not with this change: one `pulumi up` recreates the VMs of {len(hit.pools)} pools of standing groups at once, "
        f"{'' if hit.exact else 'up to '}{hit.groups} of {hit.standing} groups can reload together (the warning above)"
    )
    replaced = KEEP_SERVING.sub(note, line, count=1)
    return replaced if replaced != line else f"{line}; {note}"
