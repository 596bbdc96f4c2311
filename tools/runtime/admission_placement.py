"""Admission rules of a TPU slice pool's placement: COMPACT with the topology on the generations before TPU7x; on
TPU7x a workload policy named in the pool and no type, the policy in the pool's region, of type HIGH_THROUGHPUT, with
the pool's topology (sources: :data:`~tpu_serving_tools.runtime.gcp_facts.TPU7X_WORKLOAD_POLICY` and
:data:`~tpu_serving_tools.runtime.gcp_facts.WORKLOAD_POLICY_PLACES`). The model's own rules, none taken from the
library."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving.config.checks import older_than
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL, RESOURCE_POLICY
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.planview import known_text as _text

Inputs = Mapping[str, Any]


def _tpu7x_machine(inputs: Inputs) -> str | None:
    """A node pool's machine type when it is a TPU7x one (``tpu7x-*``), else None."""
    node_config = inputs.get("nodeConfig")
    machine = _text(node_config.get("machineType")) if isinstance(node_config, Mapping) else None
    return machine if machine is not None and machine.startswith("tpu7x-") else None


def placement(inputs: Inputs) -> Iterator[str]:
    """A pool's placement: a workload policy named on TPU7x machine types (with or without a type: Google's
    cluster-toolkit sends COMPACT beside it, xpk none); COMPACT on the others."""
    policy = inputs.get("placementPolicy")
    if not isinstance(policy, Mapping):
        return
    kind, machine = policy.get("type"), _tpu7x_machine(inputs)
    if machine is not None:
        if policy.get("policyName") in (None, ""):
            yield (
                f"placementPolicy names no workload policy on a {machine} pool (type {kind!r}): the API creates "
                "no TPU7x slice with a compact placement of its own"
            )
    elif _text(kind) is not None and kind != "COMPACT":
        yield f"placementPolicy.type = {kind!r}; the API takes COMPACT"


def workload_policy_placement(view: PlanView, r: Mapping[str, Any]) -> Iterator[str]:
    """A pool's workload policy (the resource its ``placementPolicy`` input comes from) against the pool: in its
    region, of type HIGH_THROUGHPUT, with the pool's topology as its accelerator topology."""
    if r["type"] != NODE_POOL:
        return
    placement = r["inputs"].get("placementPolicy")
    topology = _text(placement.get("tpuTopology")) if isinstance(placement, Mapping) else None
    for policy in view.input_source(r, "placementPolicy"):
        if policy["type"] != RESOURCE_POLICY:
            continue
        inputs, name = policy["inputs"], policy["name"]
        workload = inputs.get("workloadPolicy") if isinstance(inputs.get("workloadPolicy"), Mapping) else {}
        region, location = _text(inputs.get("region")), _text(r["inputs"].get("location"))
        if region and location and not (location == region or location.rsplit("-", 1)[0] == region):
            yield f"workload policy {name} is in region {region!r}, the pool in {location!r}"
        if _text(workload.get("type")) != "HIGH_THROUGHPUT":
            yield f"workload policy {name} has type {workload.get('type')!r}, not HIGH_THROUGHPUT"
        if _text(workload.get("acceleratorTopology")) != topology:
            yield (
                f"workload policy {name} has accelerator topology {workload.get('acceleratorTopology')!r}, "
                f"the pool {topology!r}"
            )


TPU7X_MIN_GKE = "1.34.0-gke.2201000"
""""Ironwood (TPU7x) is available in GKE Standard clusters that run version 1.34.0-gke.2201000 and later" (GKE "About
Ironwood (TPU7x) in GKE")."""


def pool_version(view: PlanView, r: Mapping[str, Any]) -> Iterator[str]:
    """A TPU7x pool on a cluster pinned below TPU7x's first GKE version (the cluster its ``cluster`` input comes from;
    a version naming a minor only, ``1.34``, is any build of it)."""
    machine = _tpu7x_machine(r["inputs"]) if r["type"] == NODE_POOL else None
    if machine is None:
        return
    for cluster in view.input_source(r, "cluster"):
        version = _text(cluster["inputs"].get("minMasterVersion")) if cluster["type"] == CLUSTER else None
        if version and version != "latest" and older_than(version, TPU7X_MIN_GKE):
            yield f"a {machine} pool on cluster {cluster['name']} pinned to GKE {version!r}, below {TPU7X_MIN_GKE}"
