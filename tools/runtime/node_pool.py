"""A node pool as the runtime model sees it: as GKE creates it, or as an existing one is declared."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving.catalog.capacity import (
    FROM_ZERO,
    FROM_ZERO_RESERVED,
    STOCKOUT,
    TO_ZERO,
    Capacity,
    fallback,
    fallback_reserved,
)
from tpu_serving.common.naming import label_name
from tpu_serving.operations.alerts.serving_alerts import CAPACITY_WAIT
from tpu_serving.pools.compute_class import LABEL as COMPUTE_CLASS_LABEL
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime import machine_facts as M
from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.pods import Resources


def allocatable(machine_type: str) -> Resources | None:
    """What a node of ``machine_type`` offers pods: GKE's allocatable (see :mod:`.machine_facts`) less the
    allowance for GKE's own DaemonSets, and its TPU chips; None for an unknown type."""
    known = M.allocatable(machine_type)
    if known is None:
        return None
    cpu, memory = known
    tpu = M.TPU_MACHINES[machine_type].chips if machine_type in M.TPU_MACHINES else 0
    return Resources(cpu - M.SYSTEM_CPU, memory - M.SYSTEM_MEMORY_BYTES, float(tpu))


def waits_for_its_groups(inputs: Mapping[str, Any]) -> bool:
    """A pool of a ComputeClass (its node label ``cloud.google.com/compute-class``) created with ``nodeCount`` 0: a
    ``TpuNodePool`` of a capacity fallback, whose standing groups bring its slice (a pool of a slice above the groups'
    minimum starts empty by ``initialNodeCount`` 0 instead, :func:`tpu_serving.pools.nodepool.node_pool_args`)."""
    labels = (inputs.get("nodeConfig") or {}).get("labels") or {}
    return COMPUTE_CLASS_LABEL in labels and inputs.get("nodeCount") == 0


COMPUTE_CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
"""A GKE ComputeClass as a plan holds it (the pulumi-kubernetes type token of its CRD)."""


def classes_of(resources: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The names of the ComputeClasses among a plan's resources (their ``metadata.name``)."""
    return frozenset(
        str((r.get("inputs") or {}).get("metadata", {}).get("name"))
        for r in resources
        if r.get("type") == COMPUTE_CLASS_TYPE
    )


def capacity_wait_minutes(resources: Iterable[Mapping[str, Any]]) -> int | None:
    """The minutes the plan's capacity-wait alert lets a group wait for a slice before its ticket opens (its PromQL
    condition's ``duration``, :data:`tpu_serving.operations.alerts.serving_alerts.CAPACITY_WAIT`): what a stack file's
    ``observability.capacityWaitMinutes`` sets, read off a program's plan; of several, the shortest (the first ticket);
    None when the plan has none (new-user review m7: the Capacity line named the setting, not the minutes)."""
    rule = label_name(CAPACITY_WAIT)
    found = [
        int(m.group(1)) // 60
        for r in resources
        if r.get("type") == ALERT_POLICY
        for c in (r.get("inputs") or {}).get("conditions") or ()
        if (q := c.get("conditionPrometheusQueryLanguage") or {}).get("alertRule") == rule
        and (m := re.fullmatch(r"(\d+)s", str(q.get("duration"))))
    ]
    return min(found, default=None)


def stockout_said(inputs: Mapping[str, Any], classes: Container[str], wait_minutes: int | None) -> str:
    """What a stockout does to a created TPU pool, read off its ``NodePool`` inputs, in the words the ``capacity.obtained``
    output uses for a stack's slice kind (:func:`tpu_serving.config.slice_capacity.stockouts`): a pool of a ComputeClass
    created empty takes the class's next step; one that starts empty waits for capacity; one that may go down to zero
    is created whole; else its creation fails on a stockout, as its capacity says (new-user review of the fallback, M2:
    a pool of ``scale_from_zero`` in a class read as one with no fallback). ``classes``: the ComputeClasses the plan
    creates (:func:`classes_of`); ``wait_minutes``: its capacity-wait alert's (:func:`capacity_wait_minutes`)."""
    config = inputs.get("nodeConfig") or {}
    # a pool labelled for a class the plan does not create has no next step (new-user review of the fallback, M1)
    chosen, classed = pool_capacity(config), (config.get("labels") or {}).get(COMPUTE_CLASS_LABEL) in classes
    from_zero = inputs.get("initialNodeCount") == 0
    if classed and from_zero and chosen is Capacity.RESERVATION:
        return fallback_reserved(wait_minutes)
    if classed and (from_zero or waits_for_its_groups(inputs)):
        return fallback(wait_minutes)
    if from_zero and chosen is Capacity.RESERVATION:
        return FROM_ZERO_RESERVED
    if from_zero and chosen is not Capacity.FLEX_START:
        return FROM_ZERO
    if (inputs.get("autoscaling") or {}).get("totalMinNodeCount") == 0 and inputs.get("nodeCount"):
        return TO_ZERO
    return STOCKOUT[chosen]


def most_and_start(inputs: Mapping[str, Any], zones: int) -> tuple[int, int | None]:
    """A created pool's nodes at most, and at its start when it autoscales (None: a fixed pool), from its
    ``NodePool`` inputs over ``zones`` zones."""
    auto = inputs.get("autoscaling") or {}
    if auto.get("totalMaxNodeCount"):
        nodes = int(auto["totalMaxNodeCount"])
        # A pool created with nodeCount nodes starts with them; the autoscaler may take it to its minimum later.
        # A capacity fallback's pool is created empty for its standing groups to bring its slice: it stands whole.
        if waits_for_its_groups(inputs):
            return nodes, nodes
        return nodes, int(inputs.get("nodeCount", auto.get("totalMinNodeCount", 0)))
    if auto.get("maxNodeCount") is not None:
        return int(auto["maxNodeCount"]) * zones, int(auto.get("minNodeCount", 0)) * zones
    return int(inputs.get("nodeCount", inputs.get("initialNodeCount", 1))) * zones, None


RESERVATION_TYPES = {"SPECIFIC_RESERVATION": Capacity.RESERVATION, "ANY_RESERVATION": Capacity.ANY_RESERVATION}
"""``nodeConfig.reservationAffinity.consumeReservationType`` to the capacity it gives (``NO_RESERVATION``: none)."""


def pool_capacity(node_config: Mapping[str, Any]) -> Capacity:
    """How a pool's VMs are obtained, from its ``nodeConfig``: Spot, flex-start, a reservation, else on demand."""
    if node_config.get("spot") or node_config.get("preemptible"):
        return Capacity.SPOT
    if node_config.get("flexStart"):
        return Capacity.FLEX_START
    affinity = node_config.get("reservationAffinity")
    kind = affinity.get("consumeReservationType") if isinstance(affinity, Mapping) else None
    return RESERVATION_TYPES.get(str(kind), Capacity.ON_DEMAND)


def boot_disk_gb(node_config: Mapping[str, Any]) -> int:
    """GB of each node's boot disk: ``nodeConfig.diskSizeGb``, else GKE's default (:data:`.facts.DEFAULT_DISK_SIZE_GB`)."""
    return int(node_config.get("diskSizeGb") or F.DEFAULT_DISK_SIZE_GB)


@dataclass(frozen=True)
class NodePool:
    """A node pool as GKE creates it."""

    name: str
    urn: str
    machine_type: str
    nodes: int
    """Node count: nodeCount (or autoscaling max) per zone x zones."""
    labels: Mapping[str, str]
    taints: tuple[tuple[str, str, str], ...]
    allocatable: Resources | None
    service_account_urn: str | None
    """The gcp:serviceaccount/account:Account the nodes run as (None: the Compute Engine default SA)."""
    min_nodes: int | None = None
    """Autoscaled pools: the size they start at (0 for a slice that scales from zero); None: fixed size."""
    slice_vms: int | None = None
    """Multi-host TPU slice pools (a COMPACT placement with a topology): VMs of the one slice, which GKE
    creates and removes as one atomic unit."""
    zones: tuple[str, ...] = ()
    """The zones of its nodes (``nodeLocations``); empty for an existing pool the plan does not place."""
    declared_grants: Mapping[str, tuple[str, ...]] | None = None
    """An existing pool's node service account, outside the plan: the roles the plan declares it holds (bucket ->
    storage roles), which the model takes as given; None: a created pool, whose account's roles the plan holds."""
    disk_size_gb: int | None = None
    """Each node's boot disk (``nodeConfig.diskSizeGb``, GKE's default when unset); None: an existing pool that
    declares none."""


@dataclass(frozen=True)
class PoolSize:
    """A node pool's nodes: those it keeps without demand and those it may grow to, over all its zones."""

    running: int
    most: int


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) else default


def pool_size(inputs: Mapping[str, Any]) -> PoolSize:
    """Nodes of a pool: ``nodeCount`` (else ``initialNodeCount``) per zone times its zones (``nodeLocations``); an
    autoscaled pool grows to its maximum (``total*`` over the pool, else per zone); a capacity fallback's pool
    (:func:`waits_for_its_groups`) runs whole."""
    zones = max(1, len(inputs.get("nodeLocations") or ()))
    given = inputs.get("nodeCount", inputs.get("initialNodeCount"))
    auto = inputs.get("autoscaling") or {}
    if not auto:
        return PoolSize(_int(given) * zones, _int(given) * zones)
    if "totalMinNodeCount" in auto or "totalMaxNodeCount" in auto:
        low, high = _int(auto.get("totalMinNodeCount")), _int(auto.get("totalMaxNodeCount"))
    else:
        low, high = _int(auto.get("minNodeCount")) * zones, _int(auto.get("maxNodeCount")) * zones
    # an autoscaled pool is created at its count (a slice made whole, that the autoscaler may later remove), else
    # at its minimum; a capacity fallback's pool, created empty, at the slice its standing groups bring
    start = _int(given) * zones if isinstance(given, int) else low
    return PoolSize(high, high) if waits_for_its_groups(inputs) else PoolSize(start, max(start, high))
