"""``TpuCluster``: the regional GKE Standard cluster that hosts TPU slices.

The component is thin: every argument map comes from a pure builder below, testable without the Pulumi engine.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import container, serviceaccount

from ..catalog.versions import gke_version_problem
from ..common.gcp_zones import pool_zones
from ..common.naming import (
    NameLimit,
    check_dns_name,
    cpu_pool_name,
    cpu_service_account_id,
    dns_name,
    labels_problem,
    project_id_problem,
    zone_problems,
    zones_problems,
)
from ..common.options import child_options
from ..common.settings import CreateOrExisting, described
from ..common.validation import Choice, check_arguments
from .cloud_nat import cloud_nat, existing_nat_problems, look_up_existing_nat
from .control_plane import (
    ControlPlaneEndpoint,
    cidrs_problem,
    control_plane_problems,
    endpoint_config,
    endpoint_problems,
)
from .cpu_pool import CLOUD_PLATFORM_SCOPE as CLOUD_PLATFORM_SCOPE
from .cpu_pool import CPU_POOL_IGNORE_CHANGES as CPU_POOL_IGNORE_CHANGES
from .cpu_pool import CpuPoolArgs as CpuPoolArgs
from .cpu_pool import cpu_node_pool_args as cpu_node_pool_args
from .cpu_pool import node_config as node_config
from .kubeconfig import ca_certificate, cluster_identifier, dns_endpoint, kubeconfig

# ExclusionScope and MaintenanceExclusion are re-exported: this module was their home.
from .maintenance import ExclusionScope as ExclusionScope
from .maintenance import MaintenanceExclusion as MaintenanceExclusion
from .maintenance import MaintenanceSettings, maintenance_policy
from .node_identity import BucketGrant, node_service_account
from .shared_vpc import host_grants, host_project_problem, network_path, shared_vpc_problems, subnetwork_path

if TYPE_CHECKING:
    # pulumi_gcp.compute is several hundred modules (a second to import): imported where the NAT is made.
    from pulumi_gcp import compute


class CloudNat(Choice):
    """Where private nodes get their way out of Google's network."""

    CREATE = "create"
    EXISTING = "existing"


class ReleaseChannel(Choice):
    """GKE release channel."""

    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


def cluster_name_problem(name: str) -> str:
    """Why ``name`` is not a GKE cluster name (DNS-1123, at most 40 characters), or ``""``."""
    return check_dns_name(name, limit=NameLimit.GKE_CLUSTER) if isinstance(name, str) else ""


CLUSTER_ARGS_FROM_THE_STACK: tuple[str, ...] = ("project", "region", "zone", "labels", "cpu_node_grants", "gateway_api")
"""Arguments a stack file sets outside ``cluster`` (or that the deployment derives)."""


@dataclass(frozen=True)
class TpuClusterArgs:
    """Arguments of :class:`TpuCluster`; declared once, they are also the stack file's ``cluster``
    (all but :data:`CLUSTER_ARGS_FROM_THE_STACK`)."""

    project: str = described("GCP project ID.", check=project_id_problem)
    region: str = described("Region of the regional cluster.")
    zone: str = described("Zone of the region where the TPU slices run (and the CPU pool, first of its zones).")
    name: str = described(
        "GKE cluster name (at most 40 characters); also the prefix of the other cloud resource names.",
        check=cluster_name_problem,
    )
    release_channel: ReleaseChannel = described(
        "GKE release channel that picks the control-plane and node versions.", default=ReleaseChannel.REGULAR
    )
    min_master_version: str | None = described(
        "Minimum GKE version, e.g. 1.31 or `latest`; unset lets the release channel decide.",
        default=None,
        check=gke_version_problem,
    )
    deletion_protection: bool = described(
        "Refuse `pulumi destroy` of the cluster until this is set to false and applied.", default=True
    )
    network: str = described("VPC network of the cluster (of the host project, with a Shared VPC).", default="default")
    subnetwork: str | None = described(
        "Subnetwork of the cluster in its region; unset uses the network's default. Required with a Shared VPC.",
        default=None,
    )
    host_project: str | None = described(
        "Shared VPC: the host project whose network and subnetwork the cluster uses (its Cloud NAT and proxy-only "
        "subnet are made there too). Requires the subnetwork and both secondary ranges.",
        default=None,
        check=host_project_problem,
    )
    pods_secondary_range: str | None = described(
        "The subnetwork's secondary range for pods (unset: GKE creates one, which a Shared VPC forbids).", default=None
    )
    services_secondary_range: str | None = described(
        "The subnetwork's secondary range for Services (set with the pods' range).", default=None
    )
    shared_vpc_grants: CreateOrExisting = described(
        "Shared VPC: `create` grants the project's GKE and Google APIs agents their roles in the host project (kept "
        "on destroy; the stack needs IAM admin there); `existing`: the host project's admin made them, and the "
        "preview lists them.",
        default=CreateOrExisting.EXISTING,
    )
    cpu_pool: CpuPoolArgs = described(
        "The CPU node pool for non-TPU pods (controllers, endpoint picker), in the zones of `cpuPoolZones`.",
        default_factory=CpuPoolArgs,
    )
    cpu_pool_zones: Sequence[str] | None = described(
        "Zones of the region the CPU pool's nodes run in, each keeping `cpuPool.minNodes` nodes; the machine type "
        "must be offered in every one. Unset: every zone of the region (the stack's zone first), so a zone outage "
        "leaves the controllers' and the endpoint picker's other replicas; one zone alone goes down with it.",
        default=None,
        min_length=1,
        max_length=4,
    )
    image_streaming: bool = described("GKE image streaming (GCFS) on every node pool.", default=True)
    gcs_fuse_csi_driver: bool = described("The Cloud Storage FUSE CSI driver add-on.", default=True)
    managed_prometheus: bool = described("Google Cloud Managed Service for Prometheus.", default=True)
    labels: Mapping[str, str] = described(
        "GCP labels on the cluster and its nodes.", default_factory=dict, check=labels_problem
    )
    private_nodes: bool = described(
        "Nodes without external IPs (CKV_GCP_25, CKV_GCP_64); they reach images outside Google through Cloud NAT "
        "(see the Cloud NAT setting). False gives every node an external IP.",
        default=True,
    )
    cloud_nat: CloudNat = described(
        "`create`: a Cloud Router and Cloud NAT for the private nodes, serving every subnet range of the network "
        "in the region; `existing`: the network already has one there (one NAT gateway serves a subnet range, so "
        "clusters that share a region and network share one NAT).",
        default=CloudNat.CREATE,
    )
    existing_nat_router: str | None = described(
        "With the existing Cloud NAT: the Cloud Router that holds it, in the cluster's network and region.",
        default=None,
    )
    existing_nat: str | None = described(
        "With the existing Cloud NAT: its name. The stack looks it up when it deploys, so a missing NAT stops "
        "`pulumi up` before anything is created.",
        default=None,
    )
    control_plane_endpoint: ControlPlaneEndpoint = described(
        "How clients reach the control plane. `dns`: GKE's DNS-based endpoint, from anywhere, each call authorised "
        "by IAM (`container.clusters.connect`), and no external IP endpoint. `ip`: the named opt-out, the external "
        "IP endpoint, with authorized networks or the public control plane setting.",
        default=ControlPlaneEndpoint.DNS,
    )
    master_authorized_networks: Sequence[str] | None = described(
        "With the IP endpoint: CIDR blocks allowed to reach the control plane (CKV_GCP_20), the machine running "
        "`pulumi up` among them. Set it, or opt out with the public control plane setting below.",
        default=None,
        check=cidrs_problem,
    )
    public_control_plane: bool = described(
        "With the IP endpoint, opt out of master authorized networks: the control plane accepts any source address "
        "(clients still authenticate). The preview prints the opt-out.",
        default=False,
    )
    binary_authorization: bool = described(
        "Binary Authorization (CKV_GCP_66): admit only images the project's policy allows "
        "(`PROJECT_SINGLETON_POLICY_ENFORCE`); the stack enables binaryauthorization.googleapis.com. The "
        "project's policy must allow the serving images first.",
        default=False,
    )
    security_group: str | None = described(
        "`gke-security-groups@<domain>` for Google Groups in RBAC; required when `tenancy.operators.groups` "
        "is set (unset: Group subjects in RoleBindings grant nothing).",
        default=None,
        pattern=r"^gke-security-groups@[a-z0-9.-]+\.[a-z]{2,}$",
    )
    maintenance: MaintenanceSettings = described(
        "When GKE may upgrade the cluster and the TPU slices.", default_factory=MaintenanceSettings
    )
    cpu_node_grants: Sequence[BucketGrant] = described(
        "Bucket roles of the CPU pool's nodes, for host-network pods that run there (none by default).", default=()
    )
    gateway_api: bool = described(
        "The GKE Gateway controller with the Gateway API's standard channel (on when the stack has a `gateway`).",
        default=False,
    )

    def problems(self) -> list[str]:
        """Rules across these arguments (see :mod:`tpu_serving.common.validation`): the CPU pool's zone is one of the
        cluster's region. In a stack file ``zone`` and ``region`` sit outside ``cluster``; the stack checks them."""
        return (
            zone_problems(self.zone, self.region)
            + zones_problems("cpu_pool_zones", self.cpu_pool_zones, self.region)
            + control_plane_problems(
                self.master_authorized_networks, self.public_control_plane, self.control_plane_endpoint
            )
            + endpoint_problems(self.control_plane_endpoint, self.private_nodes)
            + shared_vpc_problems(
                self.host_project,
                self.subnetwork,
                self.pods_secondary_range,
                self.services_secondary_range,
                creates_nat=self.private_nodes and self.cloud_nat == CloudNat.CREATE,
            )
            + existing_nat_problems(self.cloud_nat, self.existing_nat_router, self.existing_nat, self.private_nodes)
        )

    @property
    def workload_pool(self) -> str:
        """The cluster's workload identity pool, ``<project>.svc.id.goog``."""
        return f"{self.project}.svc.id.goog"

    @property
    def cpu_zones(self) -> tuple[str, ...]:
        """The CPU pool's zones (:func:`tpu_serving.common.gcp_zones.pool_zones`)."""
        named = tuple(self.cpu_pool_zones) if self.cpu_pool_zones else None
        return pool_zones(self.region, self.zone, named)


CLUSTER_IGNORE_CHANGES: tuple[str, ...] = ("node_config", "initial_node_count")
"""Cluster inputs that only describe the default node pool, which is removed at creation.

Every ``nodeConfig`` field is force-new, and GKE reports it back differently from the
inputs: it rewrote ``oauthScopes`` in pulumi/pulumi-gcp#2247 (the cluster is then replaced
on every ``pulumi up``), and pulumi/pulumi-gcp#1355 reports fresh clusters with
``remove_default_node_pool`` drifting from their state. terraform-google-kubernetes-engine
(v44.2.0 ``cluster.tf``) ignores the default pool and ``initial_node_count`` in
``lifecycle.ignore_changes`` for the same reason."""


LOGGING_COMPONENTS: tuple[str, ...] = ("SYSTEM_COMPONENTS", "WORKLOADS")
"""Logs sent to Cloud Logging: the containers' (``k8s_container``) feed the gate's pages (GKE API Component)."""

MONITORING_COMPONENTS: tuple[str, ...] = ("SYSTEM_COMPONENTS", "POD", "DEPLOYMENT", "HPA")
"""GKE components whose metrics the cluster sends to Cloud Monitoring: the system metrics (among them the TPU
containers' ``kubernetes.io/container/accelerator/*``), the ``POD`` kube state metrics package, whose
``kube_pod_container_status_ready`` the not-ready alerts read, and the ``DEPLOYMENT`` package, whose ``kube_deployment_status_replicas_available`` the controller alert reads
(:mod:`tpu_serving.operations.alerts.controller_alerts`), and the ``HPA`` package, whose
``kube_horizontalpodautoscaler_status_condition`` the autoscaler alert reads (:mod:`tpu_serving.operations.alerts.autoscaler_alerts`;
https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics, "Workloads State: includes the metrics for
Pods, Deployments, StatefulSets, DaemonSets, and HorizontalPodAutoscaler resources"; pulumi-gcp 10.2.0
``monitoringConfig.enableComponents`` takes ``POD``, ``DEPLOYMENT`` and ``HPA``; terraform-google-kubernetes-engine
``monitoring_enabled_components`` lists the first two). Kube state metrics are collected through Managed Prometheus,
so those packages come only with it."""


def monitoring_components(managed_prometheus: bool) -> tuple[str, ...]:
    """``monitoringConfig.enableComponents``: :data:`MONITORING_COMPONENTS` (``POD`` needs Managed Prometheus)."""
    return MONITORING_COMPONENTS if managed_prometheus else MONITORING_COMPONENTS[:1]


def cluster_args(args: TpuClusterArgs, node_service_account: pulumi.Input[str]) -> container.ClusterArgs:
    """Arguments of the ``gcp.container.Cluster`` (the default pool is removed).

    ``node_config`` is set only so that the short-lived default pool runs as the dedicated
    node account, never the Compute Engine default; the cluster ignores later changes to it
    (:data:`CLUSTER_IGNORE_CHANGES`).
    """
    return container.ClusterArgs(
        name=args.name,
        project=args.project,
        location=args.region,
        network=network_path(args.host_project, args.network) if args.host_project else args.network,
        subnetwork=(
            subnetwork_path(args.host_project, args.region, args.subnetwork)
            if args.host_project and args.subnetwork
            else args.subnetwork
        ),
        networking_mode="VPC_NATIVE",
        ip_allocation_policy=(
            {
                "cluster_secondary_range_name": args.pods_secondary_range,
                "services_secondary_range_name": args.services_secondary_range,
            }
            if args.pods_secondary_range
            else {}
        ),
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
            "enable_components": list(monitoring_components(args.managed_prometheus)),
            "managed_prometheus": {"enabled": args.managed_prometheus},
        },
        logging_config={"enable_components": list(LOGGING_COMPONENTS)},
        resource_labels=dict(args.labels),
        # The GKE Gateway controller and the Gateway API CRDs it serves (pulumi-gcp 10.2.0
        # ClusterGatewayApiConfig: channel CHANNEL_STANDARD).
        gateway_api_config={"channel": "CHANNEL_STANDARD"} if args.gateway_api else None,
        binary_authorization=(
            {"evaluation_mode": "PROJECT_SINGLETON_POLICY_ENFORCE"} if args.binary_authorization else None
        ),
        authenticator_groups_config={"security_group": args.security_group} if args.security_group else None,
        maintenance_policy=maintenance_policy(args.maintenance),
        **endpoint_config(
            ControlPlaneEndpoint(args.control_plane_endpoint), args.master_authorized_networks, args.private_nodes
        ),
    )


def cpu_pool_args(
    args: TpuClusterArgs, cluster: pulumi.Input[str], node_service_account: pulumi.Input[str]
) -> container.NodePoolArgs:
    """Arguments of the cluster's CPU ``gcp.container.NodePool`` (autoscaled, in :attr:`TpuClusterArgs.cpu_zones`)."""
    return cpu_node_pool_args(
        name=dns_name(cpu_pool_name(args.name), limit=NameLimit.GKE_NODE_POOL),
        project=args.project,
        region=args.region,
        zones=args.cpu_zones,
        cluster=cluster,
        service_account=node_service_account,
        pool=args.cpu_pool,
        image_streaming=args.image_streaming,
        labels=args.labels,
    )


class TpuCluster(pulumi.ComponentResource):
    """A regional GKE Standard cluster ready for multi-host TPU slices.

    Workload identity (``<project>.svc.id.goog``), Dataplane V2 (network policy
    enforcement), shielded nodes, a dedicated least-privilege node service account, the
    default node pool removed in favour of an autoscaled CPU pool over the region's zones, a
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

    def __init__(self, name: str, args: TpuClusterArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"TpuCluster {name!r}", args, TpuClusterArgs)
        super().__init__("tpu-serving:index:TpuCluster", name, None, opts)
        child = child_options(self, opts)
        if (
            args.private_nodes
            and args.cloud_nat == CloudNat.EXISTING
            and args.existing_nat
            and args.existing_nat_router
        ):
            # Blocks until GCP answers: a missing NAT fails the program here, before any resource is created.
            look_up_existing_nat(
                project=args.host_project or args.project,
                region=args.region,
                router=args.existing_nat_router,
                nat=args.existing_nat,
                parent=self,
            )

        self.node_service_account, node_roles = node_service_account(
            f"{name}-nodes",
            project=args.project,
            account_id=dns_name(cpu_service_account_id(args.name), limit=NameLimit.GCP_SERVICE_ACCOUNT_ID),
            display_name=f"GKE CPU nodes of {args.name}",
            grants=args.cpu_node_grants,
            opts=child,
        )
        # Shared VPC: the host project's grants to this project's agents, before the cluster that needs them.
        self.host_grants = (
            host_grants(f"{name}-host", args.project, args.host_project, child)
            if args.host_project and args.shared_vpc_grants == CreateOrExisting.CREATE
            else []
        )
        self.cluster = container.Cluster(
            f"{name}-cluster",
            cluster_args(args, self.node_service_account.email),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=[*node_roles, *self.host_grants], ignore_changes=list(CLUSTER_IGNORE_CHANGES)
                ),
            ),
        )
        # Cloud NAT of the cluster's network and region (private nodes only; not a schema output,
        # so that pulumi_gcp.compute is imported only when it is needed).
        self.nat: compute.RouterNat | None = (
            cloud_nat(
                name,
                cluster=args.name,
                project=args.host_project or args.project,  # a Cloud Router lives in its network's project
                region=args.region,
                network=args.network,
                child=child,
            )
            if args.private_nodes and args.cloud_nat == CloudNat.CREATE
            else None
        )
        self.cpu_pool = container.NodePool(
            f"{name}-cpu",
            cpu_pool_args(args, self.cluster.id, self.node_service_account.email),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=[self.nat] if self.nat else [], ignore_changes=list(CPU_POOL_IGNORE_CHANGES)
                ),
            ),
        )
        self.endpoint = self.cluster.endpoint
        by_dns = args.control_plane_endpoint == ControlPlaneEndpoint.DNS
        # masterAuth read whole and as optional (kubeconfig.ca_certificate): a lifted `.cluster_ca_certificate` raised
        # AttributeError where the provider returned no block (Pulumi's mocks with preview=False). The DNS endpoint
        # is read the same way, and its kubeconfig names no CA: the endpoint's name is Google's, not the cluster's.
        self.kubeconfig = pulumi.Output.all(
            self.cluster.name,
            self.cluster.endpoint,
            self.cluster.master_auth,
            self.cluster.control_plane_endpoints_config,
        ).apply(
            lambda v: kubeconfig(
                f"gke_{args.project}_{args.region}_{v[0]}",
                dns_endpoint(v[3]) if by_dns else v[1] or "",
                None if by_dns else ca_certificate(v[2]),
            )
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            cluster_identifier=cluster_identifier(args.project, args.region, args.name),
            enable_server_side_apply=True,
            opts=child,
        )
        self.register_outputs(
            {"clusterName": self.cluster.name, "endpoint": self.endpoint, "kubeconfig": self.kubeconfig}
        )
