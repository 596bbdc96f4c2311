"""The names a runbook needs, read from one stack's offline plan (``Plan.as_json()``): the cluster and its location,
the serving namespace and workload, the HPAs that scale it, and each TPU node pool with its zone, autoscaling and
upgrade settings. Only the plan: its outputs ``clusterName``, ``namespace``, ``slices``, ``rollout`` and
``autoscaling`` (a ``TpuServingDeployment``'s; a program that builds the components itself has none, and the cluster,
namespace and TPU pools are read off its resources), and its resources (the cluster, the node pools, the workload,
the HorizontalPodAutoscalers).
:mod:`tpu_serving_tools.runbook.command` writes the commands from them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving import catalog
from tpu_serving.common.naming import MAINTENANCE_GATE, OPERATOR, operator_nodes_name
from tpu_serving.operations.maintenance.host_maintenance import manual_start_listed
from tpu_serving_tools.diff.pool_disruption import starts_with_nodes
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL
from tpu_serving_tools.runtime.node_pool import classes_of
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import scaled_by
from tpu_serving_tools.verify.expect import resource_pools

WORKLOADS: dict[str, str] = {
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet": "leaderworkerset",
    "kubernetes:disaggregatedset.x-k8s.io/v1:DisaggregatedSet": "disaggregatedset",
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet": "jobset",
    "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob": "pathwaysjob",
}
"""The serving workload's resource type in a plan, and its kubectl resource name."""
LWS = "leaderworkerset"
NO_MANUAL_START = "lists no manual start"
"""The ``rollout.maintenance`` output's words for pools whose host maintenance cannot be started by hand."""
GATE_STARTS = "host-maintenance gate starts it"
"""The ``rollout.maintenance`` output's words for a stack whose gate starts the maintenance itself."""
POOL_LABEL = "cloud.google.com/gke-nodepool"


class RunbookError(Exception):
    """The plan holds nothing a runbook can be written for."""


@dataclass(frozen=True)
class Pool:
    name: str
    standing: bool
    """Whether a standing group (or the workload) holds it; False for a spare or a pool that scales from zero."""
    spare: bool
    no_surge: bool
    """Upgraded with ``maxSurge: 0`` (a specific reservation's pool): its node goes before the new one comes."""
    zone: str | None = None
    """The pool's one zone (``nodeLocations``); None when the plan does not create the pool (an existing cluster)."""
    autoscaling: tuple[tuple[str, Any], ...] = ()
    """The pool's ``autoscaling`` block as the plan declares it (empty: a fixed size, or not the stack's pool)."""


@dataclass(frozen=True)
class Names:
    stack: str
    cluster: str
    location: str
    existing: bool
    namespace: str
    kind: str
    workload: str
    hpas: tuple[str, ...]
    """The HPAs that scale the LeaderWorkerSet (the runbooks' hold and zone patch apply to them only)."""
    other_hpas: tuple[str, ...]
    tpu_pools: tuple[Pool, ...]
    cpu_pools: tuple[str, ...]
    manual_start: bool
    gate_starts: bool
    gate: bool
    """The stack runs the host-maintenance gate, which covers a lost group by raising the HPA's minimum."""
    empty_dir: bool
    operator_role: bool
    """The plan grants the namespace's operators the runbooks' rights (the Role ``tpu-serving-operator``)."""
    min_replicas: int | None
    max_replicas: int | None
    others: tuple[str, ...] = ()
    """The plan's other serving workloads, which this runbook does not cover."""
    operator_nodes: bool = False
    """The plan grants them the node steps too (the ClusterRole ``<ns>-tpu-serving-operator``, made only for named
    operators on a cluster the plan owns)."""
    roles: tuple[str, ...] = ()
    """A DisaggregatedSet's roles (``spec.roles[].name``), each with LeaderWorkerSets of its own."""
    pods: int = 0
    """The pods a JobSet or a PathwaysJob runs (its JobSet's, head included), as the runtime model makes them."""
    compute_class: str | None = None
    """The ComputeClass of a capacity fallback (:func:`compute_class`): GKE makes pools of its own for it, which the
    runbooks list by its label beside the stack's pools; None without one."""


def compute_class(plan: Mapping[str, Any]) -> str | None:
    """The ComputeClass the plan creates (:func:`~tpu_serving_tools.runtime.node_pool.classes_of`; a stack file's
    deployment creates one at most), None when it creates none."""
    return min(classes_of(plan.get("resources") or []), default=None)


def _resources(plan: Mapping[str, Any], type_: str) -> list[Mapping[str, Any]]:
    return [r.get("inputs") or {} for r in plan.get("resources", []) if r.get("type") == type_]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(inputs.get("metadata"))


def workloads(plan: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """The plan's serving workloads, as kubectl kind, name and inputs, in :data:`WORKLOADS`' order."""
    return [
        (kind, str(_metadata(inputs).get("name")), inputs)
        for type_, kind in WORKLOADS.items()
        for inputs in _resources(plan, type_)
    ]


def workload_key(inputs: Mapping[str, Any]) -> str:
    """``namespace/name`` of a workload, as ``--workload`` names it."""
    meta = _metadata(inputs)
    return f"{meta.get('namespace', 'default')}/{meta.get('name')}"


def _workload(plan: Mapping[str, Any], chosen: str | None = None) -> tuple[str, str, Mapping[str, Any]]:
    """The serving workload's kubectl kind, name and inputs: ``chosen`` (``namespace/name``), else the first of
    :data:`WORKLOADS` the plan declares."""
    found = workloads(plan)
    if not found:
        raise RunbookError(
            "its plan declares no serving workload (LeaderWorkerSet, DisaggregatedSet, JobSet, PathwaysJob)"
        )
    if chosen is None:
        return found[0]
    for kind, name, inputs in found:
        if workload_key(inputs) == chosen:
            return kind, name, inputs
    valid = ", ".join(workload_key(inputs) for _, _, inputs in found)
    raise RunbookError(f"--workload {chosen!r}: its plan serves no such workload; valid: {valid}")


def landing_pools(plan: Mapping[str, Any], kind: str, workload: Mapping[str, Any]) -> set[str]:
    """The node pools the TPU pods of ``workload`` (its kubectl kind and inputs) may land on, by the runtime model's
    pods and pool matching: its own pods, a DisaggregatedSet's children's, a PathwaysJob's JobSet's (its owner)."""
    from tpu_serving_tools.runtime.pods import pods_of
    from tpu_serving_tools.runtime.pods_ds import children
    from tpu_serving_tools.runtime.scheduling import landing_pools as matching
    from tpu_serving_tools.runtime.scheduling import node_pools

    meta = _metadata(workload)
    namespace, name = str(meta.get("namespace", "default")), str(meta.get("name"))
    owners = {c.name for c in children(workload)} if kind == "disaggregatedset" else {name}
    view = PlanView(plan)
    pools = node_pools(view)
    mine = [p for p in pods_of(view) if p.namespace == namespace and p.owner.split("/", 1)[1] in owners]
    return {pool.name for pod in mine if pod.requests_tpu for pool in matching(pod, pools)}


def workload_pods(plan: Mapping[str, Any], kind: str, workload: Mapping[str, Any]) -> int:
    """How many pods the runtime model's ``workload`` (its kubectl kind and inputs) runs: all its JobSet's, a
    PathwaysJob's head and workers too."""
    from tpu_serving_tools.runtime.pods import pods_of

    meta = _metadata(workload)
    namespace, name = str(meta.get("namespace", "default")), str(meta.get("name"))
    owners = {(namespace, f"{k}/{name}") for k in ("JobSet", "PathwaysJob") if k.lower() == kind}
    return sum(1 for p in pods_of(PlanView(plan)) if (p.namespace, p.owner) in owners)


def other_workloads(plan: Mapping[str, Any], kind: str, name: str, namespace: str) -> tuple[str, ...]:
    """The serving workloads of the plan beside the one the runbook is written for (``namespace/name``), by
    ``namespace/kind/name``: a program that serves several models (library review 1, M3)."""
    found = []
    for type_, other in WORKLOADS.items():
        for inputs in _resources(plan, type_):
            meta = _metadata(inputs)
            ns, n = str(meta.get("namespace", "default")), str(meta.get("name"))
            if (other, n, ns) != (kind, name, namespace):
                found.append(f"{ns}/{other}/{n}")
    return tuple(found)


def _hpas(plan: Mapping[str, Any], kind: str, workload: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The HPAs that scale the LeaderWorkerSet ``workload`` (its inputs), and the others (a DisaggregatedSet's
    roles'), by :func:`~tpu_serving_tools.runtime.pods.scaled_by`."""
    scaling = scaled_by(PlanView(plan))
    meta = _metadata(workload)
    key = (meta.get("namespace", "default"), "LeaderWorkerSet", str(meta.get("name")))
    mine = scaling.get(key, ()) if kind == LWS else ()
    # a DisaggregatedSet's roles' HPAs, in its namespace; another workload's are its own runbook's (library review 3, m1)
    others = tuple(sorted(h for k, names in scaling.items() if kind != LWS and k[0] == key[0] for h in names))
    return mine, others


def _tpu_pools(
    plan: Mapping[str, Any], outputs: Mapping[str, Any], workload: tuple[str, Mapping[str, Any]]
) -> tuple[Pool, ...]:
    """The serving slices' node pools (``slices[].nodePool``), in the plan's order, each marked standing or not. A
    program that builds the components itself has no such output: the TPU pools its plan creates, and, when it serves
    several workloads, those ``workload``'s (kind, inputs) TPU pods may land on (library review 2, M4)."""
    slices = outputs.get("slices")
    names = [s["nodePool"] for s in slices or () if isinstance(s, Mapping) and isinstance(s.get("nodePool"), str)]
    if not names:
        names = list(resource_pools(plan.get("resources") or ()))
        if len(workloads(plan)) > 1:
            theirs = landing_pools(plan, *workload)
            names = [n for n in names if n in theirs]
    if not names:
        raise RunbookError(
            "its plan creates no TPU node pool its serving workload may land on and names none (a "
            "TpuServingDeployment's outputs.slices): nothing to upgrade or maintain"
        )
    rollout = _mapping(outputs.get("rollout"))
    spares = set(rollout.get("sparePools") or ())
    inputs = {p.get("name"): p for p in _resources(plan, NODE_POOL)}
    with_vms = {n for n in names if n in inputs and starts_with_nodes(inputs[n])}
    held = frozenset(with_vms or names) - spares  # where the standing groups run at first
    settings = {n: p.get("upgradeSettings") or {} for n, p in inputs.items()}
    return tuple(
        Pool(
            n,
            n in held,
            n in spares,
            settings.get(n, {}).get("maxSurge") == 0,
            _one_zone(inputs.get(n, {})),
            tuple(sorted(_mapping(inputs.get(n, {}).get("autoscaling")).items())),
        )
        for n in dict.fromkeys(names)
    )


def _one_zone(inputs: Mapping[str, Any]) -> str | None:
    zones: list[Any] = list(inputs.get("nodeLocations") or [])
    return str(zones[0]) if len(zones) == 1 else None


def _start_listed(plan: Mapping[str, Any], pools: set[str]) -> bool:
    """Without the ``rollout.maintenance`` output (a program that builds the components itself): whether Cloud TPU
    lists a manual start for every one of ``pools`` the plan creates, by its shape
    (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`)."""
    shapes = []
    for inputs in _resources(plan, NODE_POOL):
        if inputs.get("name") in pools:
            machine = _mapping(inputs.get("nodeConfig")).get("machineType")
            topology = _mapping(inputs.get("placementPolicy")).get("tpuTopology")
            shapes.append(catalog.pool_slice(str(machine), topology if isinstance(topology, str) else None))
    return bool(shapes) and all(s is not None and manual_start_listed(s) for s in shapes)


def _location(plan: Mapping[str, Any], outputs: Mapping[str, Any]) -> tuple[str, bool]:
    """The cluster's location and whether the cluster is an existing one (no cluster in the plan: its region)."""
    for inputs in _resources(plan, CLUSTER):
        return str(inputs.get("location")), False
    return str(outputs.get("region")), True


def _scaling(outputs: Mapping[str, Any], key: str) -> int | None:
    autoscaling = outputs.get("autoscaling")
    value = autoscaling.get(key) if isinstance(autoscaling, Mapping) else None
    return value if isinstance(value, int) else None


def _cluster_name(plan: Mapping[str, Any], outputs: Mapping[str, Any]) -> str:
    """The ``clusterName`` output (a ``TpuServingDeployment``'s), else the name of the cluster the plan creates."""
    if isinstance(outputs.get("clusterName"), str):
        return str(outputs["clusterName"])
    for inputs in _resources(plan, CLUSTER):
        if isinstance(inputs.get("name"), str):
            return str(inputs["name"])
    raise RunbookError("its plan creates no cluster and has no clusterName output (export the cluster's name)")


def _namespace(outputs: Mapping[str, Any], workload: Mapping[str, Any]) -> str:
    """The ``namespace`` output, else the serving workload's own namespace."""
    namespace = outputs.get("namespace") or _metadata(workload).get("namespace")
    if not isinstance(namespace, str):
        raise RunbookError("its plan has no namespace output and its serving workload names no namespace")
    return namespace


def names(plan: Mapping[str, Any], chosen: str | None = None) -> Names:
    """The names the runbooks need, from ``plan`` (``Plan.as_json()``), for its workload ``chosen``
    (``namespace/name``; None: the first); :class:`RunbookError` when it lacks them. A ``TpuServingDeployment``'s
    outputs name them; a program that builds the components itself is read from its resources (the cluster, the TPU
    node pools, the workload)."""
    outputs = plan.get("outputs") or {}
    kind, workload, inputs = _workload(plan, chosen)
    pools = _tpu_pools(plan, outputs, (kind, inputs))
    cluster, namespace = _cluster_name(plan, outputs), _namespace(outputs, inputs)
    hpas, other_hpas = _hpas(plan, kind, inputs)
    location, existing = _location(plan, outputs)
    tpu = {p.name for p in pools}
    any_tpu = tpu | set(resource_pools(plan.get("resources") or ()))  # another workload's are its runbook's
    cpu = tuple(sorted(str(p.get("name")) for p in _resources(plan, NODE_POOL) if p.get("name") not in any_tpu))
    rollout = _mapping(outputs.get("rollout"))
    maintenance = str(rollout.get("maintenance") or "")
    manual_start = NO_MANUAL_START not in maintenance if "maintenance" in rollout else _start_listed(plan, tpu)
    return Names(
        stack=str(plan.get("stack")),
        cluster=cluster,
        location=location,
        existing=existing,
        namespace=namespace,
        kind=kind,
        workload=workload,
        hpas=hpas,
        other_hpas=other_hpas,
        tpu_pools=pools,
        cpu_pools=cpu,
        manual_start=manual_start,
        gate_starts=GATE_STARTS in maintenance,
        gate=any(
            _mapping(r.get("metadata")).get("name") == MAINTENANCE_GATE
            for r in _resources(plan, "kubernetes:batch/v1:CronJob")
        ),
        empty_dir='"emptyDir"' in json.dumps(inputs, default=str),
        # the Role binds someone only with a RoleBinding, which Tenancy makes for named operators (review 4, m7)
        operator_role=all(
            any(_metadata(r).get("name") == OPERATOR and _metadata(r).get("namespace") == namespace for r in found)
            for found in (
                _resources(plan, "kubernetes:rbac.authorization.k8s.io/v1:Role"),
                _resources(plan, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"),
            )
        ),
        operator_nodes=any(
            _metadata(r).get("name") == operator_nodes_name(namespace)
            for r in _resources(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        ),
        min_replicas=_scaling(outputs, "minReplicas"),
        max_replicas=_scaling(outputs, "maxReplicas"),
        others=other_workloads(plan, kind, workload, namespace),
        roles=tuple(str(_mapping(r).get("name")) for r in _mapping(inputs.get("spec")).get("roles") or ())
        if kind == "disaggregatedset"
        else (),
        pods=workload_pods(plan, kind, inputs) if kind in ("jobset", "pathwaysjob") else 0,
        compute_class=compute_class(plan),
    )
