"""``TpuCluster``: the regional GKE Standard cluster that hosts TPU slices.

The component is thin: every argument map comes from a pure builder function below, so
the cluster's shape can be unit-tested without the Pulumi engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import container, projects, serviceaccount

from .naming import NameLimit, dns_name

NODE_ROLES: tuple[str, ...] = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)
"""Project roles of the dedicated node service account: logs, metrics, image pulls. Nothing else."""

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class CpuPoolArgs:
    """The CPU node pool that runs every non-TPU pod."""

    machine_type: str = "n2-standard-8"
    """GCE machine type of the CPU nodes."""
    min_nodes: int = 1
    """Autoscaling minimum per zone."""
    max_nodes: int = 3
    """Autoscaling maximum per zone."""
    disk_size_gb: int = 100
    """Boot disk size in GB."""


@dataclass(frozen=True)
class TpuClusterArgs:
    """Arguments of :class:`TpuCluster`."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the regional cluster."""
    zone: str
    """Zone of the region where the CPU pool (and the TPU slices) run."""
    name: str
    """GKE cluster name (at most 40 characters)."""
    release_channel: str = "REGULAR"
    """GKE release channel: RAPID, REGULAR or STABLE."""
    min_master_version: Optional[str] = None
    """Minimum GKE version; unset lets the release channel decide."""
    deletion_protection: bool = True
    """Refuse to delete the cluster until this is turned off and applied."""
    network: str = "default"
    """VPC network."""
    subnetwork: Optional[str] = None
    """Subnetwork; unset uses the network's default for the region."""
    cpu_pool: CpuPoolArgs = field(default_factory=CpuPoolArgs)
    """The CPU node pool."""
    image_streaming: bool = True
    """GKE image streaming (GCFS) on every node pool."""
    gcs_fuse_csi_driver: bool = True
    """The Cloud Storage FUSE CSI driver add-on."""
    managed_prometheus: bool = True
    """Google Cloud Managed Service for Prometheus."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """GCP labels on the cluster and its nodes."""
    private_nodes: bool = False
    """Nodes without external IP addresses."""
    master_authorized_networks: Optional[Sequence[str]] = None
    """CIDR blocks allowed to reach the control plane; None leaves it open to authenticated clients."""

    @property
    def workload_pool(self) -> str:
        """The cluster's workload identity pool, ``<project>.svc.id.goog``."""
        return f"{self.project}.svc.id.goog"


def node_config(
    service_account: pulumi.Input[str],
    *,
    machine_type: Optional[str] = None,
    disk_size_gb: Optional[int] = None,
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


def cluster_args(args: TpuClusterArgs, node_service_account: pulumi.Input[str]) -> container.ClusterArgs:
    """Arguments of the ``gcp.container.Cluster`` (the default pool is removed)."""
    return container.ClusterArgs(
        name=args.name,
        project=args.project,
        location=args.region,
        network=args.network,
        subnetwork=args.subnetwork,
        networking_mode="VPC_NATIVE",
        ip_allocation_policy={},
        datapath_provider="ADVANCED_DATAPATH",
        remove_default_node_pool=True,
        initial_node_count=1,
        node_config=node_config(node_service_account, image_streaming=args.image_streaming),
        deletion_protection=args.deletion_protection,
        release_channel={"channel": args.release_channel},
        min_master_version=args.min_master_version,
        workload_identity_config={"workload_pool": args.workload_pool},
        enable_shielded_nodes=True,
        addons_config={
            "gcs_fuse_csi_driver_config": {"enabled": args.gcs_fuse_csi_driver},
            "http_load_balancing": {"disabled": False},
            "horizontal_pod_autoscaling": {"disabled": False},
        },
        node_pool_defaults={
            "node_config_defaults": {"gcfs_config": {"enabled": args.image_streaming}},
        },
        monitoring_config={
            "enable_components": ["SYSTEM_COMPONENTS"],
            "managed_prometheus": {"enabled": args.managed_prometheus},
        },
        logging_config={"enable_components": ["SYSTEM_COMPONENTS", "WORKLOADS"]},
        resource_labels=dict(args.labels),
        private_cluster_config={"enable_private_nodes": True} if args.private_nodes else None,
        master_authorized_networks_config=(
            {"cidr_blocks": [{"cidr_block": c, "display_name": c} for c in args.master_authorized_networks]}
            if args.master_authorized_networks is not None
            else None
        ),
    )


def cpu_pool_args(
    args: TpuClusterArgs, cluster: pulumi.Input[str], node_service_account: pulumi.Input[str]
) -> container.NodePoolArgs:
    """Arguments of the CPU ``gcp.container.NodePool`` (autoscaled, in the TPU zone)."""
    pool = args.cpu_pool
    return container.NodePoolArgs(
        name=dns_name(args.name, "cpu", limit=NameLimit.GKE_NODE_POOL),
        project=args.project,
        cluster=cluster,
        location=args.region,
        node_locations=[args.zone],
        initial_node_count=pool.min_nodes,
        autoscaling={"min_node_count": pool.min_nodes, "max_node_count": pool.max_nodes},
        management={"auto_repair": True, "auto_upgrade": True},
        node_config=node_config(
            node_service_account,
            machine_type=pool.machine_type,
            disk_size_gb=pool.disk_size_gb,
            image_streaming=args.image_streaming,
            labels=args.labels,
        ),
    )


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for the cluster that authenticates with ``gke-gcloud-auth-plugin``.

    It holds no credential: the plugin asks gcloud for a short-lived token at each call.
    """
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": name,
                    "cluster": {
                        "server": f"https://{endpoint}",
                        "certificate-authority-data": ca_certificate,
                    },
                }
            ],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {
                    "name": name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "gke-gcloud-auth-plugin",
                            "installHint": "Install gke-gcloud-auth-plugin: "
                            "gcloud components install gke-gcloud-auth-plugin",
                            "provideClusterInfo": True,
                        }
                    },
                }
            ],
        }
    )


class TpuCluster(pulumi.ComponentResource):
    """A regional GKE Standard cluster ready for multi-host TPU slices.

    Workload identity (``<project>.svc.id.goog``), Dataplane V2 (network policy
    enforcement), shielded nodes, a dedicated least-privilege node service account, the
    default node pool removed in favour of an autoscaled CPU pool in the TPU zone, a
    release channel, Managed Prometheus, the GCS FUSE CSI driver and image streaming on,
    deletion protection on by default. TPU node pools are added with
    :class:`~components.nodepool.TpuNodePool`.
    """

    cluster: container.Cluster
    """The GKE cluster."""
    node_service_account: serviceaccount.Account
    """The dedicated service account of every node (never the Compute Engine default)."""
    cpu_pool: container.NodePool
    """The CPU node pool for non-TPU pods."""
    provider: k8s.Provider
    """A Kubernetes provider for this cluster; pass it to the workloads."""
    kubeconfig: pulumi.Output[str]
    """Kubeconfig using ``gke-gcloud-auth-plugin`` (holds no credential)."""
    endpoint: pulumi.Output[str]
    """The control plane's endpoint (known after creation)."""

    def __init__(self, name: str, args: TpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("tpu-serving:index:TpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        self.node_service_account = serviceaccount.Account(
            f"{name}-nodes",
            project=args.project,
            account_id=dns_name(args.name, "nodes", limit=NameLimit.GCP_SERVICE_ACCOUNT_ID),
            display_name=f"GKE nodes of {args.name}",
            opts=child,
        )
        node_roles = [
            projects.IAMMember(
                f"{name}-nodes-{role.split('/')[1].replace('.', '-').lower()}",
                project=args.project,
                role=role,
                member=self.node_service_account.member,
                opts=child,
            )
            for role in NODE_ROLES
        ]
        self.cluster = container.Cluster(
            f"{name}-cluster",
            cluster_args(args, self.node_service_account.email),
            opts=pulumi.ResourceOptions(parent=self, depends_on=node_roles),
        )
        self.cpu_pool = container.NodePool(
            f"{name}-cpu",
            cpu_pool_args(args, self.cluster.id, self.node_service_account.email),
            opts=child,
        )
        self.endpoint = self.cluster.endpoint
        self.kubeconfig = pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate
        ).apply(lambda v: kubeconfig(f"gke_{args.project}_{args.region}_{v[0]}", v[1], v[2]))
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=child,
        )
        self.register_outputs(
            {"clusterName": self.cluster.name, "endpoint": self.endpoint, "kubeconfig": self.kubeconfig}
        )
