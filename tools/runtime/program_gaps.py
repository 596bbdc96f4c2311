"""What a stack file's ``production: true`` refuses, found in the plan of a program built from the components (library
review 9, M3).

A stack file's deployment refuses its production gaps (:func:`tpu_serving.config.production.production_gaps`); a
program of its own has no such switch, and its preview said "it declares what a stack file's deployment adds" of a
plan with one on-demand group whose tickets page. These are the same rules, read off what the plan declares:

- two or more standing groups of each LeaderWorkerSet (the groups the model places on the pools as they start:
  :func:`.maintenance.standing_pools`);
- TPU pools in two or more zones (their ``nodeLocations``);
- TPU pools a reservation holds (``nodeConfig.reservationAffinity``; :data:`tpu_serving.catalog.capacity.STOCKOUT` says what
  a stockout does to the others);
- ticket (WARNING) alert policies on channels no page (CRITICAL, ERROR) notifies
  (:func:`tpu_serving.config.production.ticket_gap`);
- no serving that registers a ``caution`` (vLLM groups over several VMs) or an unverified ``engine``
  (``images.unverified_vllm``).

- node upgrades held on a cluster the plan creates (a maintenance exclusion);
- a ``Tenancy`` (a ResourceQuota) in each serving namespace, and alert policies (library review 10, M2: the
  ``Program:`` line named both, and ``check --production`` passed them);
- a PriorityClass on each serving workload when the plan declares classes (library review 14, M1).

The host-maintenance gate is the ``maintenance`` category's. A stack file's plan (a ``TpuServingDeployment``) says its own
gaps in its ``production`` output and is not read here. The category is advisory: ``tpu-serving check`` prints its
findings as warnings, and fails on them with ``--production``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from tpu_serving.backends.rollout import NODE_UPGRADE_HOLDING_SCOPES
from tpu_serving.catalog.capacity import Capacity
from tpu_serving.config.production import HELD_BY_RESERVATION
from tpu_serving_tools.gcp_types import CLUSTER
from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.k8s_prereqs import (
    BUILT_IN_PRIORITY_CLASSES,
    declared_priority_classes,
    priority_class_names,
)
from tpu_serving_tools.runtime.maintenance import DEPLOYMENT, standing_pools
from tpu_serving_tools.runtime.maintenance_pages import tpu_pool_resources
from tpu_serving_tools.runtime.node_pool import capacity_wait_minutes, classes_of, pool_capacity, stockout_said
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult, Finding

CATEGORY = "production"
PAGES = ("CRITICAL", "ERROR")
TICKETS = "WARNING"
SERVING_KINDS = ("LeaderWorkerSet", "DisaggregatedSet", "JobSet", "PathwaysJob")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _tpu_pools(view: PlanView) -> list[Mapping[str, Any]]:
    """The plan's created TPU node pools (:func:`.maintenance_pages.tpu_pool_resources`)."""
    return [r for r, _ in tpu_pool_resources(view)]


def _pool_name(r: Mapping[str, Any]) -> str:
    return str(r["inputs"].get("name") or r["name"])


ZONE_KEY = "topology.kubernetes.io/zone"


def _zone_spread(view: PlanView, ns: str, name: str) -> bool:
    """Whether the LeaderWorkerSet's leaders are required apart by zone (a ``DoNotSchedule`` spread on the zone key,
    as ``VllmServingArgs.zones`` >= 2 renders it: :mod:`tpu_serving.common.spread`)."""
    for o in view.kubernetes_objects("LeaderWorkerSet"):
        meta = _mapping(o.get("metadata"))
        if (meta.get("namespace"), meta.get("name")) != (ns, name):
            continue
        template = _mapping(_mapping(o.get("spec")).get("leaderWorkerTemplate"))
        # no leaderTemplate: "Defaults to the worker template" (LWS v0.10.0 api/leaderworkerset/v1/leaderworkerset_types.go l.146)
        leader = _mapping(template.get("leaderTemplate") or template.get("workerTemplate"))
        spreads = _mapping(leader.get("spec")).get("topologySpreadConstraints") or ()
        return any(
            _mapping(c).get("topologyKey") == ZONE_KEY and _mapping(c).get("whenUnsatisfiable") == "DoNotSchedule"
            for c in spreads
        )
    return False


def group_gaps(view: PlanView) -> Iterator[Finding]:
    zones = {str(z) for r in _tpu_pools(view) for z in r["inputs"].get("nodeLocations") or ()}
    for (ns, name), pools in sorted(standing_pools(view).items()):
        subject = f"standing groups LeaderWorkerSet {ns}/{name}"
        if len(pools) >= 2 and len(zones) >= 2 and not _zone_spread(view, ns, name):
            yield Finding(
                subject,
                False,
                f"{len(pools)} standing groups over pools in {len(zones)} zones, but not required apart by zone: a "
                "group recreated after a repair may join the other in one zone, which an outage then takes whole; "
                "set VllmServingArgs.zones=2 (library review 10, m6)",
            )
        elif len(pools) >= 2:
            yield Finding(subject, True, f"{len(pools)} standing groups")
        else:
            yield Finding(
                subject,
                False,
                f"{len(pools)} standing group(s) on the pools as they start: a group's reload, repair or host "
                "maintenance is a full outage; keep two or more (VllmServingArgs.replicas, or the ServingAutoscaler's "
                "minimum)",
            )


def zone_gaps(view: PlanView) -> Iterator[Finding]:
    pools = _tpu_pools(view)
    zones = sorted({str(z) for r in pools for z in r["inputs"].get("nodeLocations") or ()})
    if not pools:
        return
    subject = "zones of the TPU pools"
    if len(zones) != 1:
        yield Finding(subject, True, ", ".join(zones) or "not known offline")
        return
    yield Finding(
        subject,
        False,
        f"every TPU pool is in {zones[0]}: a zonal outage or a wave of TPU host maintenance there takes every group at "
        "once; put pools of the same shape in two zones (TpuNodePoolArgs.zone) and spread the groups over them "
        "(VllmServingArgs.zones)",
    )


def capacity_gaps(view: PlanView) -> Iterator[Finding]:
    """One finding per capacity type of the TPU pools, naming its pools."""
    by: dict[tuple[Capacity, str], list[str]] = {}
    classes, wait = classes_of(view.resources), capacity_wait_minutes(view.resources)
    for r in _tpu_pools(view):
        chosen = pool_capacity(_mapping(r["inputs"].get("nodeConfig")))
        by.setdefault((chosen, stockout_said(r["inputs"], classes, wait)), []).append(_pool_name(r))
    for (chosen, said), pools in by.items():
        subject = f"{chosen.value} TPU pools {', '.join(pools)}"
        if chosen in HELD_BY_RESERVATION:
            yield Finding(subject, True, said)
        else:
            yield Finding(subject, False, f"{said} (TpuNodePoolArgs.capacity)")


def ticket_gaps(view: PlanView) -> Iterator[Finding]:
    policies = view.of_type(ALERT_POLICY)
    pages = {
        str(c)
        for r in policies
        if r["inputs"].get("severity") in PAGES
        for c in r["inputs"].get("notificationChannels") or ()
    }
    tickets = {
        str(c)
        for r in policies
        if r["inputs"].get("severity") == TICKETS
        for c in r["inputs"].get("notificationChannels") or ()
    }
    if not pages or not tickets:  # nobody paged: the preview's Alerts line says so, and Observability refuses it
        return
    shared = sorted(pages & tickets)
    subject = "ticket channels"
    if not shared:
        yield Finding(subject, True, f"tickets notify {', '.join(sorted(tickets))}, no page channel")
        return
    yield Finding(
        subject,
        False,
        f"the WARNING alerts (a group reloading, a backlog, a pod not ready, metrics missing) notify the page channel(s) "
        f"{', '.join(shared)}: tickets wake the pager, for what can wait for working hours; name a ticket queue's "
        "channels in ObservabilitySettings.ticket_channels",
    )


def upgrade_gaps(view: PlanView) -> Iterator[Finding]:
    """A created cluster without a maintenance exclusion: GKE upgrades the TPU pools when it chooses, and a slice
    upgrade can take a second group while the first reloads (an existing cluster's hold is its owner's, which the plan
    does not record)."""
    now = datetime.now(UTC)
    for c in view.of_type(CLUSTER):
        policy = _mapping(c["inputs"].get("maintenancePolicy"))
        subject = f"node upgrades of cluster {c['inputs'].get('name') or c['name']}"
        exclusions = [_mapping(e) for e in policy.get("maintenanceExclusions") or ()]
        if holding := [e for e in exclusions if _holds_node_upgrades(e, now)]:
            yield Finding(subject, True, f"held by maintenance exclusion {holding[0].get('exclusionName')}")
        elif exclusions:
            yield Finding(
                subject,
                False,
                "not held: no maintenance exclusion of scope "
                f"{' or '.join(NODE_UPGRADE_HOLDING_SCOPES)} is in force (NO_MINOR_UPGRADES lets node patch "
                "upgrades through; an exclusion whose endTime has passed holds nothing), and a slice upgrade can take "
                "a second group while the first reloads; hold them (TpuClusterArgs.maintenance) and upgrade the pools "
                "one at a time",
            )
        else:
            yield Finding(
                subject,
                False,
                "not held: GKE upgrades the TPU pools when it chooses, and a slice upgrade can take a second group "
                "while the first reloads; hold them (TpuClusterArgs.maintenance) and upgrade the pools one at a time",
            )


def _holds_node_upgrades(exclusion: Mapping[str, Any], now: datetime) -> bool:
    """An exclusion of a scope that holds node upgrades (GKE API ``MaintenanceExclusionOptions.Scope``: NO_UPGRADES,
    NO_MINOR_OR_NODE_UPGRADES; NO_MINOR_UPGRADES lets patches through), in force at ``now``: until the end of
    support, or an ``endTime`` still to come (library review 12, M2: any exclusion counted)."""
    options = _mapping(exclusion.get("exclusionOptions"))
    if options.get("scope") not in NODE_UPGRADE_HOLDING_SCOPES:
        return False
    end = exclusion.get("endTime")
    if options.get("endTimeBehavior") == "UNTIL_END_OF_SUPPORT" or not isinstance(end, str):
        return True
    try:
        return datetime.fromisoformat(end.replace("Z", "+00:00")) > now
    except ValueError:
        return True  # unread: the cluster's own validation refuses a malformed instant


ONLINE_KINDS = ("LeaderWorkerSet", "DisaggregatedSet")
"""The serving workloads a serving probe watches (``neighbours(probe=True)`` of the vLLM components)."""


def serving_namespaces(view: PlanView, kinds: Sequence[str] = SERVING_KINDS) -> list[str]:
    """The namespaces that hold a serving workload of ``kinds``."""
    return sorted(
        {
            str(ns)
            for o in view.kubernetes_objects()
            if o.get("kind") in kinds and isinstance(ns := _mapping(o.get("metadata")).get("namespace"), str)
        }
    )


def namespace_gaps(view: PlanView) -> Iterator[Finding]:
    """Each serving namespace has its ``Tenancy`` (its ResourceQuota shows it), and the plan alert policies."""
    quotas = {_mapping(o.get("metadata")).get("namespace") for o in view.kubernetes_objects("ResourceQuota")}
    for ns in serving_namespaces(view):
        subject = f"tenancy of namespace {ns}"
        if ns in quotas:
            yield Finding(subject, True, "a quota and NetworkPolicies (Tenancy)")
        else:
            yield Finding(subject, False, "no quota and no NetworkPolicies: give the namespace its Tenancy")
    namespaced = any(isinstance(_mapping(o.get("metadata")).get("namespace"), str) for o in view.kubernetes_objects())
    if namespaced and not view.of_type(ALERT_POLICY):
        yield Finding("alert policies", False, "none: nobody is paged of an outage; add an Observability")


OBSERVABILITY = "tpu-serving:index:Observability"
WATCHED: dict[str, str] = {
    "probe_failing": "the serving probe and its alerts (ServingMetrics.probe)",
    "controller_unavailable": "alerts on the controllers the serving relies on (ObservabilityArgs.controllers)",
    "gateway_errors": "alerts on the Gateway (ServingMetrics.gateway: through_gateway(metrics, gateway))",
    "router_not_ready": "alerts on the endpoint picker (ServingMetrics.router: routed(...))",
}
"""Alert rule -> what it says of what a stack file's ``Observability`` watches
beyond the serving's own alerts: a program's Observability built from ``VllmServing.neighbours`` has none of them
unless it passes them (library review 6, M4: 19 alert policies where the stack file had 31, no probe; library review
11, M2: without ``through_gateway`` the Gateway's 10 alert policies were gone, and ``check --production`` passed)."""


def _alert_queries(view: PlanView) -> list[tuple[str, str]]:
    """(alert rule, PromQL query) of every condition of the plan's alert policies."""
    return [
        (str(q.get("alertRule")), str(q.get("query", "")))
        for r in view.of_type(ALERT_POLICY)
        for c in r["inputs"].get("conditions") or ()
        if (q := _mapping(_mapping(c).get("conditionPrometheusQueryLanguage")))
    ]


def _watched_subjects(view: PlanView) -> list[tuple[str, str, str]]:
    """(alert rule, what it watches, the text its query names that with) of each thing a stack file's
    ``Observability`` watches: every serving namespace's probe and every InferencePool's endpoint picker by their
    namespace, every Gateway by the URL map GKE names after it, the controllers once (library review 12, M3: one
    namespace's alerts hid another's missing probe and Gateway alerts)."""
    found: list[tuple[str, str, str]] = [("controller_unavailable", "the cluster", "")]
    for serving in serving_namespaces(view, ONLINE_KINDS):
        found.append(("probe_failing", f"namespace {serving}", f'namespace="{serving}"'))
    for o in view.kubernetes_objects():
        meta = _mapping(o.get("metadata"))
        where, name = meta.get("namespace"), meta.get("name")
        if o.get("kind") == "Gateway":
            found.append(("gateway_errors", f"Gateway {where}/{name}", f"-{where}-{name}-"))
        elif o.get("kind") == "InferencePool":
            found.append(("router_not_ready", f"InferencePool {where}/{name}", f'namespace="{where}"'))
    return found


def unwatched(view: PlanView) -> list[tuple[str, str]]:
    """(alert rule and what it should watch, what) of what the plan's Observability leaves unwatched that a stack
    file's watches, each serving namespace, Gateway and InferencePool on its own; nothing without an Observability
    (its absence is :func:`namespace_gaps`')."""
    if not view.of_type(OBSERVABILITY):
        return []
    queries = _alert_queries(view)
    return [
        (f"{rule} of {subject}", WATCHED[rule])
        for rule, subject, text in _watched_subjects(view)
        if not any(r == rule and text in q for r, q in queries)
    ]


def watch_gaps(view: PlanView) -> Iterator[Finding]:
    for rule, what in unwatched(view):
        yield Finding(f"watched {rule}", False, f"not watched: {what}, which a stack file's deployment adds")


def serving_gaps(view: PlanView) -> Iterator[Finding]:
    """A serving component's registered ``caution``, ``engine`` and ``unpinned`` (tpu_serving.backends.vllm.component)."""
    for r in view.resources:
        outputs = _mapping(r.get("registeredOutputs"))
        for key, setting in (
            ("caution", "single-host slices for vLLM"),
            ("engine", "the engine image the package pins"),
            ("unpinned", "a commit sha in model_revision"),
        ):
            said = outputs.get(key)
            if isinstance(said, str):
                subject = f"{key} of {r['type'].rsplit(':', 1)[-1]} {r['name']}"
                yield Finding(subject, False, f"{said}; production: true requires {setting}")


def priority_gaps(view: PlanView) -> Iterator[Finding]:
    """Each serving workload names a PriorityClass in its pod templates when the plan declares classes (library review
    14, M1: a serving left at priority 0 ran below the batch class its namespace's ``Tenancy`` offered, and nothing
    said so; a stack file's deployment passes the serving ``tpu-serving-online``)."""
    declared = sorted(declared_priority_classes(view) - BUILT_IN_PRIORITY_CLASSES)
    if not declared:
        return
    for o in view.kubernetes_objects():
        if o.get("kind") not in ONLINE_KINDS:
            continue
        meta = _mapping(o.get("metadata"))
        subject = f"priority of {o.get('kind')} {meta.get('namespace', 'default')}/{meta.get('name')}"
        named = sorted(set(priority_class_names(o.get("spec") or {})))
        if named:
            yield Finding(subject, True, ", ".join(named))
            continue
        yield Finding(
            subject,
            False,
            f"its pods run at priority 0, below the classes the plan declares ({', '.join(declared)}): a pod of a "
            "lower class keeps a slice a recreated group needs, and the kubelet evicts serving pods first under node "
            "pressure; pass the online class (VllmServingArgs.priority_class_name, 'tpu-serving-online' beside a "
            "Tenancy), as a stack file's deployment does",
        )


def check(view: PlanView) -> CategoryResult:
    """The production gaps of a program's plan; nothing for a stack file's (its ``production`` output has them)."""
    if any(r["type"] == DEPLOYMENT for r in view.resources):
        return CategoryResult(CATEGORY, [])
    findings = [
        *group_gaps(view),
        *zone_gaps(view),
        *capacity_gaps(view),
        *upgrade_gaps(view),
        *namespace_gaps(view),
        *ticket_gaps(view),
        *watch_gaps(view),
        *serving_gaps(view),
        *priority_gaps(view),
    ]
    return CategoryResult(CATEGORY, findings)


def preview_lines(view: PlanView) -> list[str]:
    """A program's ``Production:`` lines: the gaps a stack file's ``production: true`` refuses, or that there are
    none of the ones the plan shows."""
    result = check(view)
    if not result.findings:
        return []
    gaps = result.failures()
    if not gaps:
        return [f"Production: none of the gaps a stack file's production: true refuses, of {len(result.findings)} read"]
    return [
        f"Production: {len(gaps)} gap(s) a stack file's production: true refuses (tpu-serving check --production "
        "fails on them)",
        *[f"  {f.subject}: {f.reason}" for f in gaps],
    ]
