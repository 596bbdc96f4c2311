"""What every node pool of the cluster shares (:func:`node_config`), and the CPU node pool, as the stack file's
``cluster.cpuPool`` declares it."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_gcp import container

from ..catalog.machines import machine_type_problem
from ..common.gcp_zones import per_zone_minimum
from ..common.settings import described

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class CpuPoolArgs:
    """The CPU node pool that runs every non-TPU pod (controllers, Sax admin, HTTP front ends).

    Declared once: the stack file's ``cluster.cpuPool`` is generated from these fields. GKE's ``min_node_count`` and
    ``max_node_count`` are per zone ("for one location in the node pool", google.container.v1 NodePoolAutoscaling;
    pulumi-gcp 10.2.0 container/_inputs.py ``NodePoolAutoscalingArgs`` l.23775-23783: "Maximum/Minimum number of
    nodes per zone in the NodePool"; the totals are ``total_min_node_count``/``total_max_node_count``, "Cannot be used
    with per zone limits"; GKE "Autoscaling a cluster", https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler:
    ``--min-nodes`` is "per zone", ``--total-min-nodes`` the whole pool's). The cluster's pool spans the zones of
    :attr:`TpuClusterArgs.cpu_pool_zones`, so it keeps ``min_nodes`` in each: at least two nodes in all, for the
    replicas required on different nodes (:func:`tpu_serving.config.checks.cpu_pool_spread_problem`).
    """

    machine_type: str = described(
        "GCE machine type of the CPU nodes.", default="n2-standard-8", check=machine_type_problem
    )
    min_nodes: int | None = described(
        "Autoscaling minimum, per zone of the pool (at least 2 nodes in all: 1 is enough over two zones or more). "
        "Unset: 1 per zone over two zones or more, 2 in one zone (two nodes in all either way).",
        default=None,
        ge=0,
        le=100,
    )
    max_nodes: int = described("Autoscaling maximum, per zone of the pool.", default=3, ge=1, le=100)
    disk_size_gb: int = described("Boot disk size of each CPU node, in GB.", default=100, ge=30, le=2000)

    def problems(self) -> list[str]:
        """Rules across these arguments (see :mod:`tpu_serving.common.validation`)."""
        if isinstance(self.min_nodes, int) and isinstance(self.max_nodes, int) and self.min_nodes > self.max_nodes:
            return [f"min_nodes ({self.min_nodes}) must not exceed max_nodes ({self.max_nodes})"]
        return []


def node_config(
    service_account: pulumi.Input[str],
    *,
    machine_type: str | None = None,
    disk_size_gb: int | None = None,
    image_streaming: bool = True,
    labels: Mapping[str, str] = {},
) -> container.NodePoolNodeConfigArgsDict:
    """Node settings shared by every pool: dedicated service account, GKE metadata server, shielded VMs."""
    cfg: container.NodePoolNodeConfigArgsDict = {
        "service_account": service_account,
        "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {
            "enable_secure_boot": True,
            "enable_integrity_monitoring": True,
        },
        "gcfs_config": {"enabled": image_streaming},
        "resource_labels": dict(labels),
    }
    if machine_type is not None:
        cfg["machine_type"] = machine_type
    if disk_size_gb is not None:
        cfg["disk_size_gb"] = disk_size_gb
    return cfg


CPU_POOL_IGNORE_CHANGES: tuple[str, ...] = ("initial_node_count",)
"""An autoscaled pool's initial size only matters at creation, and it is force-new: without this,
a changed ``minNodes`` would replace the pool and evict every pod on it. terraform-google-kubernetes-engine
ignores ``initial_node_count`` of its node pools for the same reason (``cluster.tf``, v44.2.0)."""


def cpu_node_pool_args(
    *,
    name: str,
    project: str,
    region: str,
    zones: Sequence[str],
    cluster: pulumi.Input[str],
    service_account: pulumi.Input[str],
    pool: CpuPoolArgs,
    image_streaming: bool,
    labels: Mapping[str, str],
) -> container.NodePoolArgs:
    """Arguments of an autoscaled CPU ``gcp.container.NodePool`` in ``zones`` of the regional cluster's region
    (pulumi-gcp 10.2.0 container/node_pool.py ``node_locations``: "The list of zones in which the node pool's nodes
    should be located. Nodes must be in the region of their regional cluster"). Its initial size and its autoscaling
    bounds count per zone (``initial_node_count``: "In regional or multi-zonal clusters, this is the number of nodes
    per zone", node_pool.py l.64-65; ``min_node_count``: :class:`CpuPoolArgs`)."""
    return container.NodePoolArgs(
        name=name,
        project=project,
        cluster=cluster,
        location=region,
        node_locations=list(zones),
        initial_node_count=per_zone_minimum(pool.min_nodes, len(zones)),
        autoscaling={"min_node_count": per_zone_minimum(pool.min_nodes, len(zones)), "max_node_count": pool.max_nodes},
        management={"auto_repair": True, "auto_upgrade": True},
        node_config=node_config(
            service_account,
            machine_type=pool.machine_type,
            disk_size_gb=pool.disk_size_gb,
            image_streaming=image_streaming,
            labels=labels,
        ),
    )
