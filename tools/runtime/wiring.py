"""Values a program copies by hand from one component to another, held against each other in its plan: the
host-maintenance gate's LeaderWorkerSets, HPAs and their bounds, standing groups and surge against the serving's and its HPA's, and an
HPA's minimum against the standing groups the serving spreads over zones (library review 5, M2). A stack file's
deployment derives them once; a program can let them drift, and every other line of ``check`` still passes."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving.operations.maintenance.host_maintenance import manual_start_listed
from tpu_serving.operations.maintenance.host_maintenance_job import MAINTENANCE_SECONDS
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.maintenance import gate_environments, gate_starts, reachable_pools, standing_pools
from tpu_serving_tools.runtime.maintenance_pages import tpu_pools
from tpu_serving_tools.runtime.planview import PlanView, entries
from tpu_serving_tools.runtime.pods import hpa_bounds, scaled_by
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling_surge import surge_groups

LWS = "LeaderWorkerSet"


def _bounds_wrong(env: Mapping[str, str], hpas: set[str], lo_hi: tuple[int, int] | None) -> list[str]:
    """The stack's bounds of each HPA the gate covers (``AUTOSCALER_BOUNDS``), which its cover gives back, against the
    HPA's in the plan (SRE review round 29, M3): one left out or drifted gives back the bounds the gate finds."""
    if lo_hi is None:
        return []
    carried = dict(x.strip().partition("=")[::2] for x in env.get("AUTOSCALER_BOUNDS", "").split(",") if x.strip())
    covered = {x for x in env.get("AUTOSCALERS", "").split(",") if x} & hpas
    declared = f"{lo_hi[0]}..{lo_hi[1]}"
    return [
        f"AUTOSCALER_BOUNDS leaves out HPA {h}: its cover gives back the bounds it finds, a hand cover's too"
        if h not in carried
        else f"AUTOSCALER_BOUNDS {h}={carried[h]}, but the HPA declares {declared}: its cover gives those back"
        for h in sorted(covered)
        if carried.get(h) != declared
    ]


def _unstartable(view: PlanView, pools: set[str]) -> list[str]:
    """Those of ``pools`` the plan creates whose shape Cloud TPU lists no manual start of host maintenance for
    (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`): a gate that starts them labels nodes for a start that
    does not come, and believes it keeps their maintenance apart (library review 6, m5)."""
    startable = {name for _, name, _, shape in tpu_pools(view) if manual_start_listed(shape)}
    made = {str(r["inputs"].get("name") or r["name"]) for r in view.of_type(NODE_POOL)}
    return sorted((made & pools) - startable)


def _pools_wrong(view: PlanView, env: Mapping[str, str], standing: list[str], reach: list[str]) -> list[str]:
    """The gate's POOLS against the pools of the serving's groups, standing and those its pods may land on (library
    reviews 6, m6, and 12, M1: a gate that leaves one out neither starts nor watches its maintenance), and its STARTS
    against what Cloud TPU lists for them."""
    pools = {x for x in env.get("POOLS", "").split(",") if x}
    left_out = sorted({*standing, *reach} - pools)
    unstartable = _unstartable(view, pools) if gate_starts(env) else []
    return [
        *(
            [
                f"POOLS leaves out pool(s) {', '.join(left_out)} its groups may run on: their maintenance goes "
                "ungated, and a lost node there pages nobody"
            ]
            if left_out
            else []
        ),
        *(
            [
                f"STARTS true, but Cloud TPU lists no manual start of host maintenance for pool(s) "
                f"{', '.join(unstartable)}: the gate would label their nodes for a start that does not come "
                "(starts=tpu_serving.operations.maintenance.host_maintenance.manual_start_listed(<the pools' shape>))"
            ]
            if unstartable
            else []
        ),
    ]


def _reload_wrong(view: PlanView, ns: str, env: Mapping[str, str]) -> list[str]:
    """The gate's reload window (``CLOSE_SECONDS`` less the maintenance's own) against the startup window of its
    namespace's pods (library review 7, m4): a shorter one misses two pools' windows that overlap a reload."""
    close = env.get("CLOSE_SECONDS", "")
    reload, startup = (int(close) - MAINTENANCE_SECONDS if close.isdigit() else None), _startup_seconds(view, ns)
    if reload is None or reload >= startup:
        return []
    return [f"CLOSE_SECONDS gives a reload window of {reload} s, but the pods' startup probes allow {startup} s"]


def _gate_findings(view: PlanView, lws: Mapping[tuple[str, str], Mapping[str, Any]]) -> Iterator[Finding]:
    bounds, scaling, standing = hpa_bounds(view), scaled_by(view), standing_pools(view)
    reach = reachable_pools(view)
    for ns, cron, _, env in gate_environments(view):
        autoscalers = {x for x in env.get("AUTOSCALERS", "").split(",") if x}
        for name in (x for x in env["LEADER_WORKER_SETS"].split(",") if x):
            obj = lws.get((ns, name))
            if obj is None:
                continue  # the references category names it
            subject = f"ref CronJob {ns}/{cron} copies LeaderWorkerSet {ns}/{name}"
            hpas = set(scaling.get((ns, LWS, name), ()))
            lo_hi = bounds.get((ns, LWS, name))
            fewest = lo_hi[0] if lo_hi else int((obj.get("spec") or {}).get("replicas", 1))
            replicas = lo_hi[1] if lo_hi else fewest
            surge = surge_groups(obj, replicas)
            wrong = [
                *(
                    [
                        f"AUTOSCALERS leaves out HPA {', '.join(sorted(hpas - autoscalers))}: its cover of a lost group "
                        "cannot raise that minimum"
                    ]
                    if hpas - autoscalers
                    else []
                ),
                *_bounds_wrong(env, hpas, lo_hi),
                *_pools_wrong(view, env, standing.get((ns, name), []), reach.get((ns, name), [])),
                *_reload_wrong(view, ns, env),
                *(
                    [f"FEWEST_GROUPS {env.get('FEWEST_GROUPS')}, but the standing groups are {fewest}"]
                    if env.get("FEWEST_GROUPS") != str(fewest)
                    else []
                ),
                *(
                    [f"SURGE {env.get('SURGE')}, but the LeaderWorkerSet's rollout adds {surge} group(s)"]
                    if env.get("SURGE") != str(surge)
                    else []
                ),
            ]
            said = (
                "; ".join(wrong)
                + " (HostMaintenanceGateArgs: autoscalers, autoscaler_bounds, fewest_groups, surge_groups, pools, starts, "
                "reload_seconds)"
            )
            yield Finding(
                subject, not wrong, said if wrong else "its HPAs, standing groups and surge as the plan has them"
            )


def _partition(obj: Mapping[str, Any] | None) -> int | None:
    """The LeaderWorkerSet's rolling-update ``partition`` (a canary's held groups), or None when it sets none."""
    config = (((obj or {}).get("spec") or {}).get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    held = config.get("partition")
    return None if held is None else int(held)


def _standing_wrong(lo: int, held: int, zones: int, partition: int | None) -> str:
    """Why the standing groups the LeaderWorkerSet's template assumes (``held`` in its required zone spread over
    ``zones`` zones: :func:`tpu_serving.common.spread.standing_groups` of ``VllmServingArgs.replicas``, the HPA's minimum,
    and a minimum below the zones already fails) and its
    canary ``partition`` disagree with the HPA's ``minReplicas`` ``lo`` (library review 9, M2), or ``""``."""
    if held == lo:
        return ""
    fix = "(VllmServingArgs.replicas, which the template counts from, against the autoscaling settings' min_replicas)"
    if held > lo:
        return (
            f"minReplicas {lo}, but the serving holds {held} standing groups apart over zones: at low load the HPA "
            f"takes it below them {fix}"
        )
    canary = (
        ""
        if partition is None
        else f"; its partition {partition} is a canary of {held - partition} counted from {held}, so on the next "
        f"template change {lo - partition} of the {lo} standing groups roll (partition {lo - (held - partition)} "
        "for that canary)"
    )
    return (
        f"minReplicas {lo}, but the LeaderWorkerSet's required zone spread holds only {held} standing groups apart "
        f"over {zones} zones: groups {held} up may share a zone{canary} {fix}"
    )


def _required_standing(obj: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Per required zone spread on the LeaderWorkerSet's leaders that selects groups by index: how many it holds
    apart, and over how many zones (``minDomains``)."""
    template = (obj.get("spec") or {}).get("leaderWorkerTemplate") or {}
    spec = ((template.get("leaderTemplate") or template.get("workerTemplate") or {}).get("spec")) or {}
    out = []
    for c in spec.get("topologySpreadConstraints") or ():
        exprs = ((c.get("labelSelector") or {}).get("matchExpressions")) or ()
        standing = [e for e in exprs if e.get("key") == F.LWS_GROUP_INDEX_LABEL and e.get("operator") == "In"]
        if c.get("whenUnsatisfiable") == "DoNotSchedule" and standing:
            out.append((len(standing[0].get("values") or ()), int(c.get("minDomains", 1))))
    return out


def _canary_finding(subject: str, lo: int, part: int) -> Finding:
    """A canary's ``partition`` must roll one standing group at least (:func:`tpu_serving.platform.lws.canary_problem`)."""
    return Finding(
        f"{subject} under its canary",
        part < lo,
        f"partition {part} rolls groups {part} up, {lo - part} of the {lo} standing"
        if part < lo
        else f"partition {part}, but minReplicas {lo}: the canary rolls none of the standing groups, only those the "
        "HPA adds (VllmServingArgs.replicas, which canary_groups counts from, against the autoscaling settings' "
        "min_replicas)",
    )


def _standing_findings(view: PlanView, lws: Mapping[tuple[str, str], Mapping[str, Any]]) -> Iterator[Finding]:
    """An HPA's minimum against the standing groups the serving's template assumes: those it holds apart over zones
    (their group indexes, :func:`tpu_serving.common.spread.group_zone_spread`) and the canary's ``partition`` counted from
    them (:func:`tpu_serving.platform.lws.canary_partition`; LWS v0.10.0 api/leaderworkerset/v1/leaderworkerset_types.go
    l.270-282, ``RollingUpdateConfiguration.Partition``: "all the groups from ordinal Partition to Replicas-1 will be
    updated"). A ``VllmServingArgs.replicas`` left below the autoscaling settings' ``min_replicas`` spreads fewer
    groups than stand and rolls more than the canary asks (library review 9, M2)."""
    scaling = scaled_by(view)
    for (ns, kind, name), (lo, _) in hpa_bounds(view).items():
        obj = lws.get((ns, name)) if kind == LWS else None
        if obj is None:
            continue
        subject = (
            f"ref HorizontalPodAutoscaler {ns}/{','.join(scaling.get((ns, kind, name), ()))} keeps the standing "
            f"groups of LeaderWorkerSet {ns}/{name}"
        )
        part = _partition(obj)
        for held, zones in _required_standing(obj):
            wrong = _standing_wrong(lo, held, zones, part)
            yield Finding(
                subject,
                not wrong,
                wrong or f"minReplicas {lo} keeps the {held} standing groups the serving holds apart over zones",
            )
        if part:
            yield _canary_finding(subject, lo, part)


NOT_READY_RULE = "not_ready"
"""The ``alertRule`` of the serving's not-ready alert (:mod:`tpu_serving.operations.alerts.serving_alerts`)."""


def _startup_seconds(view: PlanView, namespace: str) -> int:
    """The longest startup window of a container in ``namespace``'s pod templates: ``initialDelaySeconds`` plus
    ``failureThreshold`` x ``periodSeconds`` of its startup probe, the time the kubelet gives it before it restarts
    the container (Kubernetes API v1.36, ``Probe``: periodSeconds defaults to 10, failureThreshold to 3)."""
    windows = [0]
    for obj in view.kubernetes_objects():
        if str((obj.get("metadata") or {}).get("namespace", "default")) != namespace:
            continue
        for key, probe in entries(obj.get("spec")):
            if key == "startupProbe" and isinstance(probe, Mapping):
                delay, period = int(probe.get("initialDelaySeconds", 0)), int(probe.get("periodSeconds", 10))
                windows.append(delay + int(probe.get("failureThreshold", 3)) * period)
    return max(windows)


def _not_ready_findings(view: PlanView) -> Iterator[Finding]:
    """The not-ready alert's wait against the startup window of its namespace's pods (library review 6, m8): an alert
    held for less pages on every cold start and scale-up, as the stack file's ``observability.notReadyMinutes``
    refuses."""
    for r in view.of_type(ALERT_POLICY):
        for c in r["inputs"].get("conditions") or ():
            promql = c.get("conditionPrometheusQueryLanguage") or {}
            where = re.search(r'namespace="([^"]+)"', str(promql.get("query", "")))
            if promql.get("alertRule") != NOT_READY_RULE or where is None:
                continue
            waits, window = int(str(promql.get("duration", "0s")).removesuffix("s")), _startup_seconds(view, where[1])
            yield Finding(
                f"ref AlertPolicy {r['name']} waits out the startup of namespace {where[1]}",
                waits > window,
                f"it fires after {waits // 60} minutes; "
                + (f"the pods' startup probes allow {window // 60}" if window else "its pods have no startup probe")
                + (
                    ""
                    if waits > window
                    else ": it would page on every cold start and scale-up (ObservabilitySettings.not_ready_minutes "
                    f"above {window // 60})"
                ),
            )


def findings(view: PlanView) -> list[Finding]:
    lws = {
        (str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"])): o
        for o in view.kubernetes_objects(LWS)
    }
    return [*_gate_findings(view, lws), *_standing_findings(view, lws), *_not_ready_findings(view)]
