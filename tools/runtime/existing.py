"""A plan on an existing cluster: the cluster and node pools it records as existing, read as the model reads created ones.

A deployment on an existing cluster (``cluster.existing``) creates no cluster and no node pool; it records what it
assumes of them as the inputs of three components: ``tpu-serving:index:ExistingCluster`` (its workload identity pool,
its CPU nodes, its Google Groups security group), ``tpu-serving:index:ExistingTpuNodePool`` (each slice kind's pools:
machine type, topology, VMs, zone, which scale from zero, the roles their node account holds) and
``tpu-serving:index:ExistingCpuNodePool`` (a pool pods are pinned to by name). The model places pods on these as GKE
would on pools of that shape, and takes the declared roles of their node accounts as given: the account is outside
the plan, so what it holds is the stack's declaration (the preview lists it), not something the model can verify.
The same holds of an existing GCP service account of the workloads (``tpu-serving:index:WorkloadIdentity`` with
``existingGcpServiceAccount``): its Workload Identity binding and bucket roles are the declared ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime import machine_facts as M
from tpu_serving_tools.runtime.node_pool import NodePool, allocatable
from tpu_serving_tools.runtime.planview import PlanView

EXISTING_CLUSTER = "tpu-serving:index:ExistingCluster"
EXISTING_TPU_POOLS = "tpu-serving:index:ExistingTpuNodePool"
EXISTING_CPU_POOL = "tpu-serving:index:ExistingCpuNodePool"
PLATFORM_CLUSTER = "tpu-serving:index:PlatformCluster"
WORKLOAD_IDENTITY = "tpu-serving:index:WorkloadIdentity"
CLUSTER_CPU_NODES = "<the existing cluster's CPU nodes>"
"""The name the model gives an existing cluster's CPU node pools (their names are not the stack's to know)."""


def existing_cluster(view: PlanView) -> Mapping[str, Any] | None:
    """The inputs of the plan's existing cluster, or None (a created cluster, or none): a model stack's platform
    cluster (``tpu-serving:index:PlatformCluster``) records the same inputs, and is read alike."""
    found = view.of_type(EXISTING_CLUSTER) or view.of_type(PLATFORM_CLUSTER)
    return {**found[0]["inputs"], **(found[0].get("registeredOutputs") or {})} if found else None


def existing_accounts(view: PlanView) -> dict[str, tuple[str, dict[str, tuple[str, ...]]]]:
    """Email -> (the Workload Identity member it admits, bucket -> accesses) of each existing GCP service account the
    plan's workloads act as, as the plan declares them."""
    return {
        str(r["inputs"]["existingGcpServiceAccount"]): (
            str(r["inputs"].get("member")),
            _grants(r["inputs"], "bucketRoles"),
        )
        for r in view.of_type(WORKLOAD_IDENTITY)
        if (r.get("inputs") or {}).get("existingGcpServiceAccount")
    }


def _grants(inputs: Mapping[str, Any], key: str = "nodeGrants") -> dict[str, tuple[str, ...]]:
    """Bucket -> the storage accesses that declared grants (a pool's node grants, an account's roles) give."""
    out: dict[str, list[str]] = {}
    for g in inputs.get(key) or ():
        access = F.STORAGE_ROLE_ACCESS.get(str(g.get("role")))
        if access is not None:
            out.setdefault(str(g.get("bucket")), []).append(access)
    return {bucket: tuple(accesses) for bucket, accesses in out.items()}


def _tpu_pools(r: Mapping[str, Any]) -> list[NodePool]:
    inputs = r["inputs"]
    machine_type, topology = str(inputs.get("machineType")), str(inputs.get("topology"))
    vms = int(inputs.get("vms") or 1)
    tpu_vm = M.TPU_MACHINES.get(machine_type)
    empty = set(inputs.get("scaleFromZero") or ())
    labels = {F.TPU_ACCELERATOR_LABEL: tpu_vm.accelerator, F.TPU_TOPOLOGY_LABEL: topology} if tpu_vm else {}
    # the class's label and taint, which the pools' owner adds (ExistingTpuNodePoolArgs.compute_class)
    classed = str(inputs["computeClass"]) if inputs.get("computeClass") else None
    labels.update({F.COMPUTE_CLASS_LABEL: classed} if classed else {})
    return [
        NodePool(
            name=str(name),
            urn=str(r["urn"]),
            machine_type=machine_type,
            nodes=vms,
            labels={**labels, F.NODEPOOL_LABEL: str(name)},
            taints=(F.TPU_TAINT, *([(F.COMPUTE_CLASS_LABEL, classed, "NoSchedule")] if classed else [])),
            allocatable=allocatable(machine_type),
            service_account_urn=f"existing node account of {name}",
            min_nodes=0 if name in empty else None,
            slice_vms=vms if vms > 1 else None,
            zones=(str(inputs["zone"]),) if inputs.get("zone") else (),  # ExistingTpuNodePoolArgs.zone
            declared_grants=_grants(inputs),
            disk_size_gb=int(inputs["diskSizeGb"]) if inputs.get("diskSizeGb") else None,
        )
        for name in inputs.get("poolNames") or ()
    ]


def _cpu_pool(name: str, urn: str, inputs: Mapping[str, Any]) -> NodePool:
    machine_type = str(inputs.get("machineType"))
    return NodePool(
        name=name,
        urn=urn,
        machine_type=machine_type,
        nodes=int(inputs.get("maxNodes") or 1),
        labels={F.NODEPOOL_LABEL: name},
        taints=(),
        allocatable=allocatable(machine_type),
        service_account_urn=f"existing node account of {name}",
        min_nodes=int(inputs.get("minNodes") or 0),
        declared_grants=_grants(inputs),
    )


def existing_node_pools(view: PlanView) -> list[NodePool]:
    """The node pools a plan on an existing cluster records: its TPU pools, its CPU nodes, a pinned CPU pool."""
    pools = [p for r in view.of_type(EXISTING_TPU_POOLS) for p in _tpu_pools(r)]
    for r in [*view.of_type(EXISTING_CLUSTER), *view.of_type(PLATFORM_CLUSTER)]:
        cpu = {**r["inputs"], **(r.get("registeredOutputs") or {})}.get("cpuPool")
        if isinstance(cpu, Mapping):
            pools.append(_cpu_pool(CLUSTER_CPU_NODES, str(r["urn"]), cpu))
    for r in view.of_type(EXISTING_CPU_POOL):
        pools.append(_cpu_pool(str(r["inputs"].get("poolName")), str(r["urn"]), r["inputs"]))
    return pools


def declared_existing(view: PlanView, kind: str) -> list[Mapping[str, Any]]:
    """The cloud resources of ``kind`` the plan names existing (its ``cloudResources`` output: each must exist
    already, as the preview lists it)."""
    entries = (view.plan.get("outputs") or {}).get("cloudResources") or ()
    return [e for e in entries if isinstance(e, Mapping) and e.get("kind") == kind and e.get("status") == "existing"]


def manifest_addresses(view: PlanView) -> list[str]:
    """Where the plan's release manifests come from: each file a ``yaml/v2`` group reads and, for one read from a mirror
    or a local file, the upstream address its ``ControllerInstall`` records (``upstream``)."""
    parents = {str(r["urn"]): r for r in view.resources if not r.get("custom")}
    out = []
    for r in view.resources:
        if str(r["type"]).startswith("kubernetes:yaml"):
            out += [str(f) for f in r["inputs"].get("files") or ()]
            upstream = ((parents.get(str(r.get("parent"))) or {}).get("registeredOutputs") or {}).get("upstream")
            out += [str(upstream)] if upstream else []
    return out
