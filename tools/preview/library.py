"""The preview's capacity and cost lines for a program that builds the components itself.

A ``TpuServingDeployment`` exports ``capacity`` and ``cost`` from its stack settings; a program of its own exports
neither, so these are read off the node pools and the cluster its plan creates, and priced by the same
:mod:`tpu_serving.cost.estimate` (new-user review 11, m3: a program's idle v6e-16 went unpriced). What the plan does not
say, the model's size and the buckets' expected sizes, is left out and said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving import catalog
from tpu_serving.catalog import SliceShape
from tpu_serving.catalog.capacity import Capacity
from tpu_serving.cost import estimate as cost
from tpu_serving.derived import cost_output
from tpu_serving.operations.prober import PROBE_ANNOTATION
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL
from tpu_serving_tools.preview.offline import Plan
from tpu_serving_tools.runtime import program_gaps
from tpu_serving_tools.runtime.node_pool import (
    COMPUTE_CLASS_TYPE,
    PoolSize,
    capacity_wait_minutes,
    classes_of,
    pool_capacity,
    pool_size,
    stockout_said,
)
from tpu_serving_tools.runtime.planview import PlanView

DEFAULT_DISK_GB = 100
"""GKE's boot disk size when ``nodeConfig.diskSizeGb`` is unset (pulumi-gcp ``NodePoolNodeConfig.disk_size_gb``:
"Size of the disk attached to each node, specified in GB ... defaults to 100GB")."""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) else default


@dataclass(frozen=True)
class TpuPool:
    name: str
    shape: SliceShape
    capacity: Capacity
    size: PoolSize
    disk_gb: int
    stockout: str = ""
    """What a stockout does to it (:func:`~tpu_serving_tools.runtime.node_pool.stockout_said`)."""

    @property
    def slices(self) -> int:
        return max(1, self.size.most // self.shape.vms)

    @property
    def running_slices(self) -> int:
        return self.size.running // self.shape.vms


def tpu_pools(plan: Plan) -> list[TpuPool]:
    """The plan's TPU node pools, in its order."""
    out = []
    read = [{"type": r.type, "inputs": r.inputs} for r in plan.resources]
    classes, wait = classes_of(read), capacity_wait_minutes(read)
    for r in plan.resources:
        if r.type != NODE_POOL:
            continue
        config = _mapping(r.inputs.get("nodeConfig"))
        topology = _mapping(r.inputs.get("placementPolicy")).get("tpuTopology")
        shape = catalog.pool_slice(str(config.get("machineType")), topology if isinstance(topology, str) else None)
        if shape is not None:
            name = str(r.inputs.get("name") or r.name)
            disk = _int(config.get("diskSizeGb"), DEFAULT_DISK_GB)
            said = stockout_said(r.inputs, classes, wait)
            out.append(TpuPool(name, shape, pool_capacity(config), pool_size(r.inputs), disk, said))
    return out


def _cpu_nodes(plan: Plan, tpu: set[str]) -> list[cost.NodeUsage]:
    out = []
    for r in plan.resources:
        name = str(r.inputs.get("name") or r.name)
        if r.type != NODE_POOL or name in tpu:
            continue
        config, size = _mapping(r.inputs.get("nodeConfig")), pool_size(r.inputs)
        machine = str(config.get("machineType") or "e2-medium")  # GKE's default machine type
        disk = _int(config.get("diskSizeGb"), DEFAULT_DISK_GB)
        if size.running:  # at its minimum, as a stack's CPU pool is counted
            out.append(cost.NodeUsage(f"{name} (minimum)", machine, size.running, disk))
        else:  # empty until a pod needs it: in the peak figure only
            out.append(cost.NodeUsage(name, machine, size.most, disk, 0))
    return out


def estimate(plan: Plan) -> cost.CostEstimate | None:
    """The program's cost at list prices: its TPU pools' slices (those that start empty cost nothing until they
    scale up, but for a reservation's), its CPU pools at their minimum, their boot disks, and the cluster fee when
    it creates the cluster. None when it creates no node pool."""
    pools = tpu_pools(plan)
    names = {p.name for p in pools}
    nodes = _cpu_nodes(plan, names)
    if not pools and not nodes:
        return None
    slices = [
        cost.SliceUsage(p.name, p.shape, p.slices, p.capacity, p.disk_gb, min(p.running_slices, p.slices))
        for p in pools
    ]
    return cost.estimate(slices, nodes, [], cluster_fee=any(r.type == CLUSTER for r in plan.resources))


def cost_lines(plan: Plan) -> dict[str, object] | None:
    """The ``cost`` output a ``TpuServingDeployment`` would export, for a program without one."""
    found = estimate(plan)
    return None if found is None else cost_output(found)


def capacity_lines(plan: Plan) -> list[str]:
    """One line per TPU pool: how it gets its VMs and what a stockout does (:data:`tpu_serving.catalog.capacity.STOCKOUT`,
    :data:`~tpu_serving.catalog.capacity.FROM_ZERO`); the model's size is the program's, so no fit is said."""
    pools = tpu_pools(plan)
    if not pools:
        return []
    said: dict[str, list[str]] = {}
    for p in pools:
        said.setdefault(f"{p.capacity}: {p.stockout}", []).append(p.name)
    head = "Capacity (read off the node pools; each serving component refuses a model its slices cannot hold)"
    return [head, *(f"  slices {', '.join(names)}: {how}" for how, names in said.items()), *fallback_lines(plan)]


def _step(priority: Mapping[str, Any]) -> str:
    """One ``priorities[]`` entry of a ComputeClass, as the preview says it: pools by name, or the slice GKE makes."""
    if "nodepools" in priority:
        return f"the pools {', '.join(str(p) for p in priority['nodepools'])}"
    how = "spot" if priority.get("spot") else "flex-start" if priority.get("flexStart") else "on-demand"
    tpu = _mapping(priority.get("tpu"))
    return f"{how}, a {tpu.get('type')} {tpu.get('topology')} slice GKE creates"


NEW_CLUSTER_NOTE = (
    "  on a cluster made by the same `pulumi up`: GKE installs the ComputeClass CRD some time after the cluster, and "
    'until then the `up` may stop on the class ("apiVersion for this resource does not exist"): wait for `kubectl get '
    "crd computeclasses.cloud.google.com`, then run `pulumi up` again (docs/cost.md, On a new cluster)"
)
"""The last line of a preview's fallback (new-user review of the capacity fallback, M1: the preview did not say that a
first ``pulumi up`` may stop on the class)."""


def fallback_lines(plan: Plan) -> list[str]:
    """Per ComputeClass of the plan, its order as GKE takes it (:func:`tpu_serving.pools.compute_class.compute_class_spec`):
    a program's preview said nothing of the fallback a stack file's says (new-user review of the capacity fallback,
    M3)."""
    lines = []
    for r in plan.resources:
        if r.type != COMPUTE_CLASS_TYPE:
            continue
        spec, name = _mapping(r.inputs.get("spec")), _mapping(r.inputs.get("metadata")).get("name")
        zones = ", ".join(
            str(z) for z in _mapping(_mapping(spec.get("priorityDefaults")).get("location")).get("zones") or ()
        )
        lines.append(
            f"Fallback (ComputeClass {name}, in {zones or 'the cluster zones'}): a group GKE finds no slice for gets the first it can of:"
        )
        lines += [f"  {i}. {_step(_mapping(p))}" for i, p in enumerate(spec.get("priorities") or (), start=1)]
    return [*lines, NEW_CLUSTER_NOTE] if lines else []


def region(plan: Plan) -> str | None:
    """The plan's region: a ``TpuServingDeployment``'s ``region`` output, else the location of the cluster or the
    first node pool it creates (a zone's region)."""
    found = plan.outputs.get("region")
    if isinstance(found, str):
        return found
    for r in plan.resources:
        location = r.inputs.get("location") if r.type in (CLUSTER, NODE_POOL) else None
        if isinstance(location, str) and location:
            return location if location.count("-") == 1 else location.rsplit("-", 1)[0]
    return None


DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
ADDED_BY: tuple[tuple[str, str], ...] = (
    ("tpu-serving:index:Tenancy", "a namespace with its quota, operators and NetworkPolicies (Tenancy)"),
    ("tpu-serving:index:Observability", "alert policies (Observability)"),
    ("tpu-serving:index:HostMaintenanceGate", "the host-maintenance gate (HostMaintenanceGate)"),
)
"""What a stack file's deployment adds, by the component that adds it to a program."""
ABSENT_LINES = ("Upgrades", "Rollout", "Drain", "Quota", "Alerts", "Probe", "Verified")
"""The preview's lines of a stack file's deployment that a program's preview lacks (its Observability's alert policies
give it an Alerts line: library review 3, m3; its Production line is read off its plan:
:mod:`tpu_serving_tools.runtime.program_gaps`)."""
HOLD = "node upgrades held on the TPU pools (TpuClusterArgs.maintenance)"


def _holds_upgrades(plan: Plan) -> bool:
    """Whether a cluster the plan creates has a maintenance exclusion (node upgrades held)."""
    return any(
        r.type == CLUSTER and (_mapping(r.inputs.get("maintenancePolicy")).get("maintenanceExclusions"))
        for r in plan.resources
    )


SERVING_KINDS = ("LeaderWorkerSet", "DisaggregatedSet", "JobSet", "PathwaysJob")
AROUND: tuple[tuple[str, str], ...] = (
    ("ResourceQuota", "its Tenancy (a quota and NetworkPolicies)"),
    ("PodMonitoring", "its Observability (scraping and alerts)"),
)
"""What each serving namespace of a stack file's deployment has, by the object that shows it there."""


def _bare_namespaces(plan: Plan) -> list[str]:
    """Per serving namespace, what a stack file's deployment gives it and the program does not, there: a second
    tenant without its own Tenancy or Observability is not covered by the first one's (library review 5, M1)."""
    where: dict[str, set[str]] = {}
    for r in plan.resources:
        kind, ns = r.inputs.get("kind"), _mapping(r.inputs.get("metadata")).get("namespace")
        if isinstance(kind, str) and isinstance(ns, str):
            where.setdefault(ns, set()).add(kind)
    serving = sorted(ns for ns, kinds in where.items() if kinds & set(SERVING_KINDS))
    if len(serving) < 2:  # one namespace: the component types above say it
        return []
    return [f"namespace {ns}: {what}" for ns in serving for kind, what in AROUND if kind not in where[ns]]


def _unwatched(plan: Plan) -> list[str]:
    """What a program's Observability leaves unwatched that a stack file's watches (nothing without Observability:
    its absence is said by type): :func:`tpu_serving_tools.runtime.program_gaps.unwatched`."""
    return [what for _, what in program_gaps.unwatched(PlanView(plan.as_json()))]


def program_lines(plan: Plan) -> list[str]:
    """For a plan with TPU pools and no ``TpuServingDeployment``: the lines this preview cannot give it, and what a
    stack file's deployment adds that the program does not declare (library review 1, M4; review 2, M6: by what
    it declares, not a fixed list)."""
    if any(r.type == DEPLOYMENT for r in plan.resources) or not tpu_pools(plan):
        return []
    declared = {r.type for r in plan.resources}
    missing = [what for type_, what in ADDED_BY if type_ not in declared] + _unwatched(plan) + _bare_namespaces(plan)
    if any(r.type == CLUSTER for r in plan.resources) and not _holds_upgrades(plan):
        missing.insert(0, HOLD)
    probed = any(  # its probe's Deployment gives it a Probe line (library review 7, m5)
        PROBE_ANNOTATION in ((r.inputs.get("metadata") or {}).get("annotations") or {}) for r in plan.resources
    )
    absent = [
        x
        for x in ABSENT_LINES
        if not (x == "Alerts" and "tpu-serving:index:Observability" in declared) and not (x == "Probe" and probed)
    ]
    head = (
        "Program: built from the components, not a TpuServingDeployment, so this preview has no "
        f"{', '.join(absent[:-1])} or {absent[-1]} line for it"
    )
    if not missing:
        return [
            f"{head}; it declares the components a stack file's deployment adds (docs/library-api.md; the Production line holds the plan to production: true's rules)"
        ]
    return [f"{head}; a stack file's deployment adds, and this program does not declare: {'; '.join(missing)}"]
