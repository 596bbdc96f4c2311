"""``CpuNodePool``: an extra CPU node pool with its own node service account.

For CPU pods that run on the host network and so act as their node's service account (the
Pathways head): a pool of their own keeps bucket roles off the cluster's general CPU pool.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_gcp import container, serviceaccount

from ..common.naming import labels_problem, project_problems, zone_problems
from ..common.options import child_options
from ..common.validation import check_arguments
from .cluster import CPU_POOL_IGNORE_CHANGES, CpuPoolArgs, cpu_node_pool_args
from .node_identity import BucketGrant, node_service_account


@dataclass(frozen=True)
class CpuNodePoolArgs:
    """Arguments of :class:`CpuNodePool`."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the (regional) cluster."""
    zone: str
    """Zone of the pool's nodes."""
    cluster: pulumi.Input[str]
    """The cluster's ID (wiring)."""
    pool_name: str
    """GKE node pool name."""
    service_account_id: str
    """``account_id`` of the pool's node service account."""
    pool: CpuPoolArgs
    """Machine type, autoscaling bounds and disk."""
    node_grants: Sequence[BucketGrant] = ()
    """Bucket roles of the node service account."""
    image_streaming: bool = True
    """GKE image streaming on the pool."""
    labels: Mapping[str, str] = field(default_factory=dict, metadata={"check": labels_problem})
    """GCP labels of the VMs (lower-case keys and values: :func:`~tpu_serving.common.naming.labels_problem`)."""

    def problems(self) -> list[str]:
        """Rules across these arguments (see :mod:`tpu_serving.common.validation`): the pool's zone is one of the region."""
        return project_problems(self.project) + zone_problems(self.zone, self.region)


class CpuNodePool(pulumi.ComponentResource):
    """An autoscaled CPU node pool whose nodes run as their own service account."""

    node_pool: container.NodePool
    """The GKE node pool."""
    node_service_account: serviceaccount.Account
    """Its node service account."""
    pool_name: str
    """The GKE node pool name (the ``cloud.google.com/gke-nodepool`` label value)."""

    def __init__(self, name: str, args: CpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"CpuNodePool {name!r}", args, CpuNodePoolArgs)
        super().__init__("tpu-serving:index:CpuNodePool", name, None, opts)
        child = child_options(self, opts)
        self.pool_name = args.pool_name
        self.node_service_account, roles = node_service_account(
            f"{name}-nodes",
            project=args.project,
            account_id=args.service_account_id,
            display_name=f"GKE nodes of {args.pool_name}",
            grants=args.node_grants,
            opts=child,
        )
        self.node_pool = container.NodePool(
            f"{name}-pool",
            cpu_node_pool_args(
                name=args.pool_name,
                project=args.project,
                region=args.region,
                zones=[args.zone],
                cluster=args.cluster,
                service_account=self.node_service_account.email,
                pool=args.pool,
                image_streaming=args.image_streaming,
                labels=args.labels,
            ),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=roles, ignore_changes=list(CPU_POOL_IGNORE_CHANGES))
            ),
        )
        self.register_outputs({"poolName": args.pool_name})
