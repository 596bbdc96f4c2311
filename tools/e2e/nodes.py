"""kwok Nodes for a stack's node pools, labelled, tainted and sized as GKE makes them.

The pools come from the stack's offline plan (``build/<stack>/plan.json``, ``make preview STACK=<stack>``): each
``gcp:container/nodePool:NodePool`` with its machine type, zone, TPU topology, node count and the pool's own labels
and taints. Machine sizes and slice shapes are the library's (:mod:`tpu_serving.catalog.machines`,
:mod:`tpu_serving.catalog`). One Node per VM: a v5e 4x4 pool of ``ct5lp-hightpu-4t`` is 4 Nodes with 4 chips each.

Where each label, taint and figure comes from:

- ``cloud.google.com/gke-nodepool``, ``cloud.google.com/gke-tpu-accelerator``, ``cloud.google.com/gke-tpu-topology``:
  GKE "Plan TPUs in GKE" (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus: the accelerator and
  topology labels a TPU workload selects) and "Deploy TPU workloads in GKE Standard"
  (https://cloud.google.com/kubernetes-engine/docs/how-to/tpus); the library's own constants
  (:mod:`tpu_serving.pools.nodepool`) name them.
- the ``google.com/tpu`` extended resource (chips per VM) and the ``google.com/tpu=present:NoSchedule`` taint of
  TPU slice nodes: GKE "About TPUs in GKE" (https://cloud.google.com/kubernetes-engine/docs/concepts/tpus,
  "How TPUs work"; SkyPilot's GKE provisioner cites that section for the taint ``google.com/tpu=present``), and
  ``../shared/README.md``'s facts for the catalog ("TPU nodes carry the ``google.com/tpu`` NoSchedule taint"; the
  accelerator label of each generation). The stored copies of the GKE pages read here did not reach the label and
  taint text itself.
- ``cloud.google.com/gke-spot``: GKE "Spot VMs" (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms).
- ``topology.kubernetes.io/zone``/``region``, ``node.kubernetes.io/instance-type``, ``kubernetes.io/hostname``,
  ``kubernetes.io/os``, ``kubernetes.io/arch``: Kubernetes "Well-Known Labels, Annotations and Taints"
  (https://kubernetes.io/docs/reference/labels-annotations-taints/), set by the kubelet and the cloud provider.
- ``cloud.google.com/gke-placement-group`` is not set: GKE documents it as a nodeSelector key of Autopilot's
  compact placement (https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement), and xpk puts it in
  a workload's nodeSelector only for non-TPU machines; no source here shows GKE labelling Standard TPU slice nodes
  with it, and no stack selects on it.
- capacity and allocatable CPU and memory: the machine type's vCPUs and memory and GKE's reservations
  (:class:`tpu_serving.catalog.machines.Machine`, which cites https://cloud.google.com/compute/docs/general-purpose-machines,
  the Cloud TPU pages of each generation and
  https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations).
- 110 pods per node: GKE Standard's default maximum
  (https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpu_serving import catalog
from tpu_serving.catalog import ACCELERATOR_LABEL, TOPOLOGY_LABEL, machines
from tpu_serving.common.naming import NODEPOOL_LABEL
from tpu_serving.pools.nodepool import TPU_RESOURCE
from tpu_serving_tools.gcp_types import NODE_POOL

from .controlplane import KWOK_LABEL, ControlPlane
from .kube import Kube, Obj, wait_for

EXISTING_CLUSTER_TYPE = "tpu-serving:index:ExistingCluster"
EXISTING_TYPES = (EXISTING_CLUSTER_TYPE, "tpu-serving:index:ExistingTpuNodePool")
TPU_TAINT = {"key": TPU_RESOURCE, "value": "present", "effect": "NoSchedule"}
SPOT_LABEL = "cloud.google.com/gke-spot"
MAX_PODS = 110
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


class NodePoolError(ValueError):
    """A pool the library's catalog cannot size, or a plan without the pool asked for."""


@dataclass(frozen=True)
class Pool:
    """One GKE node pool as the Nodes need it."""

    name: str
    machine_type: str
    zone: str
    topology: str | None = None
    initial_nodes: int = 1
    max_nodes: int = 1
    min_nodes: int | None = None
    """The cluster autoscaler's minimum of an autoscaled pool (None: a fixed pool, which keeps ``initial_nodes``)."""
    spot: bool = False
    reserved: bool = False
    """A specific reservation holds its VMs (``reservationAffinity`` ``SPECIFIC_RESERVATION``): they bill, used or not."""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Mapping[str, str]] = ()

    @property
    def lowest(self) -> int:
        """The fewest VMs the pool can hold: its autoscaling minimum, else its fixed size."""
        return self.initial_nodes if self.min_nodes is None else self.min_nodes

    @property
    def shape(self) -> catalog.SliceShape | None:
        """The TPU slice of a TPU pool (None for a CPU pool; a single-host pool's: :func:`tpu_serving.catalog.pool_slice`)."""
        return catalog.pool_slice(self.machine_type, self.topology)

    @property
    def machine(self) -> machines.Machine:
        found = machines.machine(self.machine_type)
        if found is None:
            raise NodePoolError(f"pool {self.name}: the library's machine table does not know {self.machine_type}")
        return found


def _count(inputs: Mapping[str, Any]) -> tuple[int, int]:
    """(nodes at creation, most nodes) of a node pool's inputs."""
    scaling = inputs.get("autoscaling") or {}
    initial = inputs.get("nodeCount", inputs.get("initialNodeCount", 1))
    most = scaling.get("totalMaxNodeCount", scaling.get("maxNodeCount", initial))
    return int(initial), int(most)


def pool_from_inputs(inputs: Mapping[str, Any]) -> Pool:
    """A :class:`Pool` from a ``NodePool`` resource's inputs in a plan."""
    config = inputs.get("nodeConfig") or {}
    locations = inputs.get("nodeLocations") or [inputs.get("location", "")]
    initial, most = _count(inputs)
    scaling = inputs.get("autoscaling") or {}
    lowest = scaling.get("totalMinNodeCount", scaling.get("minNodeCount")) if scaling else None
    taints = [
        {"key": t["key"], "value": t.get("value", ""), "effect": _EFFECTS.get(t["effect"], t["effect"])}
        for t in config.get("taints") or ()
    ]
    return Pool(
        name=str(inputs["name"]),
        machine_type=str(config["machineType"]),
        zone=str(locations[0]),
        topology=(inputs.get("placementPolicy") or {}).get("tpuTopology"),
        initial_nodes=initial,
        max_nodes=most,
        min_nodes=None if lowest is None else int(lowest),
        spot=bool(config.get("spot")),
        reserved=(config.get("reservationAffinity") or {}).get("consumeReservationType") == "SPECIFIC_RESERVATION",
        labels=dict(config.get("labels") or {}),
        taints=taints,
    )


def existing_pools(resource: Mapping[str, Any]) -> list[Pool]:
    """The pools an existing cluster has for a plan's ``ExistingCluster`` (its CPU pool, named as GKE names a
    cluster's first pool, ``default-pool``, at its ``minNodes``) or ``ExistingTpuNodePool`` (each of its
    ``poolNames``: a slice's VMs, none while the pool is in ``scaleFromZero``)."""
    inputs = resource["inputs"]
    if resource["type"] == EXISTING_CLUSTER_TYPE:
        cpu = inputs.get("cpuPool") or {}
        zone = f"{inputs['location']}-a" if inputs["location"].count("-") == 1 else inputs["location"]
        return [
            Pool("default-pool", str(cpu["machineType"]), zone, None, int(cpu["minNodes"]), int(cpu["maxNodes"]))
        ] if cpu else []  # fmt: skip
    vms, cold = int(inputs["vms"]), set(inputs.get("scaleFromZero") or ())
    return [
        Pool(
            str(name),
            str(inputs["machineType"]),
            str(inputs["zone"]),
            str(inputs["topology"]),
            0 if name in cold else vms,
            vms,
        )  # fmt: skip
        for name in inputs["poolNames"]
    ]


def created_pools(plan: Mapping[str, Any] | Path) -> list[Pool]:
    """The node pools a plan creates (not an existing cluster's, whose sizes are their owner's)."""
    data = json.loads(plan.read_text()) if isinstance(plan, Path) else plan
    return [pool_from_inputs(r["inputs"]) for r in data["resources"] if r["type"] == NODE_POOL]


def plan_pools(plan: Mapping[str, Any] | Path) -> list[Pool]:
    """Every node pool of a plan (the plan's JSON, or the path of ``plan.json``): those it creates, and those of
    an existing cluster it names."""
    data = json.loads(plan.read_text()) if isinstance(plan, Path) else plan
    created = [pool_from_inputs(r["inputs"]) for r in data["resources"] if r["type"] == NODE_POOL]
    named = [p for r in data["resources"] if r["type"] in EXISTING_TYPES for p in existing_pools(r)]
    return created + named


def stack_plan(stack: str, root: Path = Path(".")) -> Path:
    """``build/<stack>/plan.json`` under ``root``; FileNotFoundError naming the command that writes it."""
    path = root / "build" / stack / "plan.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: run `make preview STACK={stack}` first")
    return path


def _millicores(cores: float) -> str:
    return f"{round(cores * 1000)}m"


def resources(pool: Pool) -> tuple[dict[str, str], dict[str, str]]:
    """(capacity, allocatable) of one Node of ``pool``."""
    m = pool.machine
    capacity = {"cpu": str(m.vcpus), "memory": str(round(m.memory_gib * machines.GIB)), "pods": str(MAX_PODS)}
    allocatable = {
        "cpu": _millicores(m.allocatable_cpu),
        "memory": str(round(m.allocatable_memory)),
        "pods": str(MAX_PODS),
    }
    shape = pool.shape
    if shape is not None:
        capacity[TPU_RESOURCE] = allocatable[TPU_RESOURCE] = str(shape.chips_per_vm)
    return capacity, allocatable


def labels(pool: Pool, node_name: str) -> dict[str, str]:
    """The labels GKE and the kubelet put on a Node of ``pool``."""
    region = pool.zone.rsplit("-", 1)[0]
    found = {
        **pool.labels,
        NODEPOOL_LABEL: pool.name,
        "kubernetes.io/hostname": node_name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": pool.machine_type,
        "topology.kubernetes.io/zone": pool.zone,
        "topology.kubernetes.io/region": region,
    }
    shape = pool.shape
    if shape is not None:
        found[ACCELERATOR_LABEL] = shape.generation.gke_accelerator
        found[TOPOLOGY_LABEL] = shape.topology
    if pool.spot:
        found[SPOT_LABEL] = "true"
    return found


def node_object(pool: Pool, index: int, pod_cidr: str) -> Obj:
    """The Node of VM ``index`` of ``pool`` (kwok plays its kubelet)."""
    name = f"gke-{pool.name}-{index:04d}"
    taints = [dict(t) for t in pool.taints]
    if pool.shape is not None:
        taints.append(dict(TPU_TAINT))
    key, value = KWOK_LABEL
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**labels(pool, name), key: value}},
        "spec": {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr], "taints": taints},
    }


NOT_READY_TAINT = "node.kubernetes.io/not-ready"


def _ready(node: Obj) -> bool:
    """Ready, and the node lifecycle controller has lifted its not-ready taint (the scheduler waits for that)."""
    conditions = (node.get("status") or {}).get("conditions") or []
    taints = (node.get("spec") or {}).get("taints") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return ready and not any(t.get("key") == NOT_READY_TAINT for t in taints)


def create_nodes(cp: ControlPlane, pool: Pool, count: int | None = None, *, timeout: float = 60.0) -> list[Obj]:
    """Create ``count`` Nodes of ``pool`` (default: its node count at creation), set their capacity, allocatable and
    address, and wait until kwok has them Ready and untainted by the node lifecycle controller."""
    wanted = pool.initial_nodes if count is None else count
    start = len(cp.kube.list("v1", "Node", label_selector=f"{NODEPOOL_LABEL}={pool.name}"))
    made = [_create_node(cp, pool, start + i) for i in range(wanted)]
    return [_await_ready(cp, node["metadata"]["name"], timeout) for node in made]


def _create_node(cp: ControlPlane, pool: Pool, index: int) -> Obj:
    """Create the Node without kwok's label, give it its status (capacity, allocatable, addresses), then hand it
    to kwok: kwok's first sight of it has that status, which its Stages keep (a Node handed over at creation could be
    initialised with kwok's own ``--node-ip`` after the status was written, and its pods get that host IP)."""
    internal_ip, pod_cidr = cp.node_addresses()
    body = node_object(pool, index, pod_cidr)
    capacity, allocatable = resources(pool)
    addresses = [
        {"type": "InternalIP", "address": internal_ip},
        {"type": "Hostname", "address": body["metadata"]["name"]},
    ]
    return hand_to_kwok(cp.kube, body, {"capacity": capacity, "allocatable": allocatable, "addresses": addresses})


def hand_to_kwok(kube: Kube, body: Obj, status: Mapping[str, Any]) -> Obj:
    """Create the Node ``body`` without kwok's label, write its ``status`` (capacity, allocatable, addresses), then
    label it for kwok (:func:`_create_node`'s order)."""
    key, value = KWOK_LABEL
    metadata = {**body["metadata"], "labels": {k: v for k, v in body["metadata"]["labels"].items() if k != key}}
    node = kube.create({**body, "metadata": metadata})
    kube.patch(node, {"status": dict(status)}, subresource="status")
    return kube.patch(node, {"metadata": {"labels": {key: value}}})


def _await_ready(cp: ControlPlane, name: str, timeout: float) -> Obj:
    def ready() -> Obj | None:
        node = cp.kube.get("v1", "Node", name)
        return node if _ready(node) else None

    node: Obj = wait_for(f"Node {name} Ready under kwok", ready, timeout=timeout)
    return node


def create_plan_nodes(cp: ControlPlane, plan: Mapping[str, Any] | Path, *, timeout: float = 120.0) -> list[Obj]:
    """The Nodes of every pool of a plan at its autoscaling maximum, as the cluster autoscaler leaves a pool once it
    added every slice (the autoscaler itself is not run: :mod:`.run`); all created, then awaited."""
    made = [_create_node(cp, pool, i) for pool in plan_pools(plan) for i in range(pool.max_nodes)]
    return [_await_ready(cp, node["metadata"]["name"], timeout) for node in made]
