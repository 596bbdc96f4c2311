"""The preview's ``Zones:`` lines: where the CPU pools run, what their other zones cost, and which fronts on them stay
single-replica (what a zone outage does to each). Read off the plan, so any program's plan is described."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tpu_serving.common.spread import ZONE_LABEL
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview.offline import Plan, RecordedResource

CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
OUTAGE = (
    "down from the zone's outage until Kubernetes evicts it from the unreachable node (the default 300 s "
    "toleration of node.kubernetes.io/unreachable) and it starts on a node in another zone the CPU nodes span"
)


def _cpu_pools(plan: Plan) -> list[RecordedResource]:
    from tpu_serving import catalog

    return [
        r
        for r in plan.of_type(NODE_POOL)
        if (r.inputs.get("nodeConfig") or {}).get("machineType") not in catalog.MACHINE_TYPES
    ]


def _pool_line(r: RecordedResource, outputs: dict[str, Any]) -> str:
    from tpu_serving.catalog.prices import HOURS_PER_MONTH

    zones = [str(z) for z in r.inputs.get("nodeLocations") or []]
    least = int((r.inputs.get("autoscaling") or {}).get("minNodeCount", 0))
    name = str(r.inputs.get("name", r.name))
    if len(zones) < 2:
        return f"  CPU pool {name}: one zone ({', '.join(zones)}): an outage of that zone takes every pod on it"
    items = (outputs.get("cost") or {}).get("items") or []
    more = [i for i in items if str(i.get("what", "")).startswith("cpu pool (minimum, ")]
    cost = (
        f"; the other zones' {least * (len(zones) - 1)} nodes cost ${more[0]['perHour']:,.2f}/hour "
        f"(${more[0]['perHour'] * HOURS_PER_MONTH:,.0f}/month; cpuPool.minNodes sets the nodes kept in each zone)"
        if more and isinstance(more[0].get("perHour"), (int, float))
        else ""
    )
    return (
        f"  CPU pool {name}: {len(zones)} zones ({', '.join(zones)}), minNodes {least} in each = {least * len(zones)} "
        f"nodes at least{cost}"
    )


def single_replica_fronts(resources: Sequence[RecordedResource]) -> list[str]:
    """Deployments of one replica, and controller releases installed as shipped (no disruption budget added: the
    PathwaysJob controller runs its release's one replica)."""
    found = [
        f"Deployment {r.inputs['metadata'].get('name', r.name)}"
        for r in resources
        if r.type == "kubernetes:apps/v1:Deployment" and (r.inputs.get("spec") or {}).get("replicas", 1) == 1
    ]
    found += [
        f"the release of {str(r.name).removesuffix('-manifests')} (one replica as shipped)"
        for r in resources
        if r.type == CONFIG_GROUP and not r.inputs.get("objs")
    ]
    return found


def _standing(constraint: dict[str, Any]) -> str:
    """The groups a required zone spread selects by index (:func:`tpu_serving.common.spread.group_zone_spread`), or every
    group's leader."""
    for e in (constraint.get("labelSelector") or {}).get("matchExpressions") or []:
        if e.get("operator") == "In" and str(e.get("key", "")).endswith("/group-index"):
            return f"groups {', '.join(e.get('values') or [])} (the standing ones)"
    return "every group"


def group_spreads(resources: Sequence[RecordedResource]) -> list[str]:
    """One line per LeaderWorkerSet whose leaders are required over several zones (a ``DoNotSchedule`` zone spread
    with ``minDomains``: :func:`tpu_serving.common.spread.group_zone_spread`)."""
    found = []
    for r in resources:
        if not r.type.endswith(":LeaderWorkerSet"):
            continue
        template = (r.inputs.get("spec") or {}).get("leaderWorkerTemplate") or {}
        pod = template.get("leaderTemplate") or template.get("workerTemplate") or {}
        for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
            if c.get("topologyKey") == ZONE_LABEL and c.get("whenUnsatisfiable") == "DoNotSchedule":
                meta = r.inputs.get("metadata") or {}
                name = (
                    f"{meta['namespace']}/{meta.get('name', r.name)}"
                    if meta.get("namespace")
                    else meta.get("name", r.name)
                )
                standing = _standing(c)
                others = (
                    "; the groups above them (the HPA's, a surge rollout's spare) take any zone's free slice, the "
                    "emptier zone first, so in a zone outage a group the HPA adds takes the surviving zone's (at its maximum it "
                    "adds none: docs/operate.md, 'A zone outage')"
                    if standing != "every group"
                    else ", and while a zone is down its groups do not move to the other's"
                )
                found.append(
                    f"  serving groups of LeaderWorkerSet {name}: {standing} required apart over "
                    f"{c.get('minDomains', 1)} zones (one more in a zone than in another at most): such a group pushed "
                    f"off its slice waits Pending for a free slice in its own zone{others}; the rule holds when a "
                    "group is placed, not after: a scale-down removes the highest-numbered group (LeaderWorkerSet), "
                    "which can leave the others in one zone until one is recreated (tpu-serving verify's zones check "
                    "fails then, and says how to move one)"
                )
    return found


def zone_summary(plan: Plan) -> list[str]:
    """The ``Zones:`` lines: the CPU pools the plan creates (on an existing cluster, none: its nodes' zones are its
    owner's) and the single-replica fronts."""
    pools = _cpu_pools(plan)
    single = single_replica_fronts(plan.resources)
    if not pools and not single:
        return []
    head = "Zones: TPU slices sit in one zone each; replicated Deployments on the CPU pool prefer different zones"
    lines = [head if pools else f"{head} (the existing cluster's CPU nodes and their zones are its owner's)"]
    lines += [_pool_line(r, plan.outputs) for r in pools]
    if single:
        lines.append(f"  single-replica on the CPU pool: {', '.join(single)}: each {OUTAGE}")
    return lines + group_spreads(plan.resources)
