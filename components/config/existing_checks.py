"""Checks of existing-cluster mode (``cluster.existing``), reported at the key to change.

On an existing cluster the keys that shape a cluster the stack would create are refused (the cluster is its owner's,
and a key the stack would ignore must not look as if it applied); the keys that name existing node pools need an
existing cluster; an existing bucket keeps its own settings.
"""

from __future__ import annotations

import json

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ..backends.pathways_job import PathwaysJobConfig
from ..common.settings import PROJECT_NAMESPACE
from .models import ClusterConfig, StackConfig

NS = PROJECT_NAMESPACE

CREATE_ONLY_CLUSTER_KEYS: tuple[str, ...] = (
    "release_channel",
    "min_master_version",
    "deletion_protection",
    "subnetwork",
    "private_nodes",
    "control_plane_endpoint",
    "master_authorized_networks",
    "public_control_plane",
    "binary_authorization",
    "maintenance",
    "cpu_pool_zones",
    "pods_secondary_range",
    "services_secondary_range",
    "shared_vpc_grants",
)
"""``cluster`` keys that shape a cluster the stack creates: refused with ``cluster.existing``. The others describe
the existing cluster to the stack (``name``, ``network``, ``hostProject``, ``cpuPool``, ``managedPrometheus``, ``gcsFuseCsiDriver``,
``imageStreaming``, ``securityGroup``) or decide a cloud resource of its own (``cloudNat``)."""

CREATE_ONLY_BUCKET_KEYS: tuple[str, ...] = ("location", "storage_class", "versioning", "scratch_ttl_days")
"""``buckets[]`` keys that shape a bucket the stack creates: refused with ``existing: true``."""


def _shown(value: object) -> str:
    """`` = <value>`` as the stack file writes it, when short; ``""`` for a long one (a whole block)."""
    plain = value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value
    text = json.dumps(plain, default=str)
    return f" = {text}" if len(text) <= 80 else ""


def existing_problems(cfg: StackConfig) -> list[str]:
    """Every problem of the existing-cluster keys, at their keys."""
    return _cluster(cfg) + _node_pools(cfg) + _buckets(cfg) + _identity(cfg) + _head_pool(cfg)


def _cluster(cfg: StackConfig) -> list[str]:
    return existing_cluster_problems(cfg.cluster)


def existing_cluster_problems(c: ClusterConfig) -> list[str]:
    """The problems of a ``cluster`` with ``existing`` (a model stack's or a platform stack's), at their keys."""
    key = f"{NS}:cluster"
    if c.existing is None:
        return []
    found = [
        f"{key}.{to_camel(name)}{_shown(getattr(c, name))}: shapes a cluster the stack creates; with {key}.existing the "
        "cluster is its owner's and the stack never changes it: remove this key"
        for name in CREATE_ONLY_CLUSTER_KEYS
        if name in c.model_fields_set
    ]
    router, nat = c.existing_nat_router, c.existing_nat
    if (router or nat) and not (router and nat and c.cloud_nat == "existing" and "cloud_nat" in c.model_fields_set):
        found.append(
            f"{key}.existingNatRouter, {key}.existingNat: name the network's Cloud NAT to look it up; give both, with "
            f"{key}.cloudNat: existing (or leave all three out: the cluster's NAT is then its owner's, not looked up)"
        )
    if c.host_project is not None and c.cloud_nat == "create" and "cloud_nat" in c.model_fields_set:
        found.append(  # tpu_serving.platform.shared_vpc.shared_vpc_problems, with its source
            f'{key}.cloudNat = "create" beside {key}.hostProject: a NAT the stack made would serve every subnet of '
            f"the host's network in the region, other projects' too; name the host network's NAT ({key}.cloudNat: "
            "existing, existingNatRouter, existingNat)"
        )
    return found


def _node_pools(cfg: StackConfig) -> list[str]:
    found: list[str] = []
    seen: dict[str, int] = {}
    for i, s in enumerate(cfg.tpu_slices):
        at, given = f"{NS}:tpuSlices[{i}].existingNodePools", s.existing_node_pools
        if given is None:
            continue
        if not cfg.existing and cfg.platform is None:
            found.append(
                f"{at} = {json.dumps(given)}: names node pools of an existing cluster or of a platform stack's; set "
                f"{NS}:cluster.existing or {NS}:platform, or remove it (the stack creates the pools of the cluster it "
                "creates)"
            )
        elif len(given) != s.count:
            found.append(
                f"{at} = {json.dumps(given)}: {len(given)} pool(s) for count = {s.count} slice(s); name one pool per "
                "slice"
            )
        for name in given:
            if name in seen:
                found.append(
                    f"{at}: node pool {name!r} is also a pool of tpuSlices[{seen[name]}]; a pool holds one slice"
                )
            seen.setdefault(name, i)
    return found


def _buckets(cfg: StackConfig) -> list[str]:
    return [
        f"{NS}:buckets[{i}].{to_camel(name)}{_shown(getattr(b, name))}: shapes a bucket the stack creates; an existing "
        "bucket (existing: true) keeps its own settings: remove this key"
        for i, b in enumerate(cfg.buckets)
        if b.existing
        for name in CREATE_ONLY_BUCKET_KEYS
        if name in b.model_fields_set
    ]


def _identity(cfg: StackConfig) -> list[str]:
    wi = cfg.workload_identity
    if wi.existing_gcp_service_account is None or wi.gcp_service_account is None:
        return []
    return [
        f"{NS}:workloadIdentity.gcpServiceAccount = {json.dumps(wi.gcp_service_account)}: names the account the stack "
        "would create; with workloadIdentity.existingGcpServiceAccount it creates none: remove one of the two"
    ]


def _head_pool(cfg: StackConfig) -> list[str]:
    serving = cfg.serving
    if cfg.existing or not isinstance(serving, PathwaysJobConfig) or serving.head_pool.existing_node_pool is None:
        return []
    return [
        f"{NS}:serving.headPool.existingNodePool = {json.dumps(serving.head_pool.existing_node_pool)}: names a node "
        f"pool of an existing cluster; set {NS}:cluster.existing, or remove it (the stack creates the head's pool)"
    ]
