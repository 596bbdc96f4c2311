"""``TpuPlatform``: a platform stack, the cluster that model stacks build on, and the ``platform`` output they read.

It creates what a region's model stacks share and what a region and network have only one of: the project's APIs,
the regional cluster with its CPU pool, node service account and (with private nodes) Cloud NAT
(:class:`~tpu_serving.platform.cluster.TpuCluster`, the managed Prometheus and logging of the observability base with it), the
cluster-wide controllers (LeaderWorkerSet, JobSet), and the internal Gateway with the region's proxy-only subnet
(:class:`~tpu_serving.traffic.shared_gateway.SharedGateway`). With ``cluster.existing`` the cluster is one made elsewhere
(:class:`~tpu_serving.platform.existing.ExistingCluster`: no cluster, CPU pool nor NAT is created), and the platform installs
its controllers and Gateway on it. No TPU node pool and no model: each model stack
(``platform.stack``) creates its own on this cluster (:class:`~tpu_serving.platform.platform_cluster.PlatformCluster`).

A model stack's node pool on this cluster is a ``gcp.container.NodePool`` whose ``cluster`` is the cluster's resource
name: the provider takes "The cluster to create the node pool for. Cluster must be present in `location` provided for
clusters. May be specified in the format `projects/{{project}}/locations/{{location}}/clusters/{{cluster}}` or as just
the name of the cluster" (pulumi-gcp 10.2.0, pulumi_gcp/container/node_pool.py, ``NodePoolArgs.cluster``), so a pool
belongs to another stack's cluster without that stack knowing of it.
"""

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_gcp import serviceaccount

from ..backends.rollout import NODE_UPGRADE_HOLDING_SCOPES
from ..common.gcp_zones import per_zone_minimum
from ..common.naming import (
    LIBRARY_LABEL_KEYS,
    NameLimit,
    cpu_service_account_id,
    deployer_grant_name,
    dns_name,
    gateway_address_name,
    proxy_only_subnet_name,
    service_account_email,
)
from ..common.settings import CreateOrExisting, to_settings
from ..common.validation import check_arguments
from ..config.platform_stack import PlatformStackConfig
from ..cost.estimate import CostEstimate
from ..cost.platform_cost import platform_cost, platform_estimate
from ..derived import cost_output
from ..operations.alerts.platform_alerts import PlatformAlerts, PlatformAlertsArgs
from ..operations.autoscaling import METRICS_ADAPTER, adapter_viewer
from ..operations.observability_settings import ObservabilitySettings
from ..traffic.gateway_settings import LISTENER_PORT, GatewaySettings, ServingGatewayArgs
from ..traffic.shared_gateway import SharedGateway as SharedGatewayComponent
from ..traffic.shared_gateway import SharedGatewayArgs
from .cluster import CloudNat, TpuCluster, TpuClusterArgs
from .controllers import JOBSET, LWS, Controller, ControllerInstall, ControllerInstallArgs, ControllerManifests
from .cpu_pool import CpuPoolArgs
from .existing import ExistingCluster, ExistingClusterArgs
from .kubeconfig import cluster_identifier
from .platform_outputs import ControllerRelease, ControlPlane, CpuNodes, PlatformOutputs, RegionalOwners, SharedGateway
from .services import ProjectServices, ProjectServicesArgs, required_apis
from .shared_vpc import network_path, subnetwork_path

PART_OF = "tpu-serving"

SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
"""The role a model stack's deployer needs on the node service account: a node pool's VMs run as the account (GKE,
"Configure GKE node service accounts", https://docs.cloud.google.com/kubernetes-engine/security/
configure-node-service-accounts, read 2026-12-03), and creating a resource that runs as a service account takes
``iam.serviceAccounts.actAs`` on it, which the Service Account User role holds: "a user that has been granted the
Service Account User role (roles/iam.serviceAccountUser) on that service account can act as the service account to
start a Compute Engine instance" (IAM, https://cloud.google.com/iam/docs/service-accounts#user-role)."""


@dataclass(frozen=True)
class TpuPlatformArgs:
    """Arguments of :class:`TpuPlatform`."""

    settings: PlatformStackConfig
    """The platform stack's validated settings (:func:`tpu_serving.config.platform_stack.load_platform_stack`)."""
    stack: str
    """The platform stack's name (the ``platform`` output records it)."""


DEPLOYMENT_TYPE = "tpu-serving:index:TpuServingDeployment"
"""The type of a self-contained stack's top component (:class:`~tpu_serving.deployment.TpuServingDeployment`)."""


def moved_aliases(moved_from: str | None) -> list[pulumi.Input[str | pulumi.Alias]]:
    """The aliases of the platform's components of a self-contained stack's names (the cluster, the project's APIs,
    the controller installs) when ``pulumi state move`` brought them from that stack, whose deployment is
    ``moved_from`` (``sharedPlatform.movedFrom``); none otherwise.

    ``pulumi state move`` rewrites only the stack and project of a moved resource's URN, and a moved resource whose
    parent stays behind gets the destination's root stack as parent (pulumi/pulumi pkg/cmd/pulumi/state/state_move.go,
    ``renameStackAndProject`` and ``r.Parent = rootStack.URN``; the command was announced 2024-07-25, far below the
    e2e toolchain's CLI v3.274.1, components/catalog/versions.py ``go-pulumi``).
    The moved ``TpuCluster`` keeps the URN ``...::tpu-serving:index:TpuServingDeployment$tpu-serving:index:TpuCluster::
    <name>``, which the platform's ``TpuPlatform$TpuCluster`` is not: the alias names that old parent by its URN in
    this stack (a parent alias may be a URN string: pulumi 3.272.0 ``pulumi/resource.py`` l.146, ``Alias.parent``), and the engine
    (pkg/resource/deploy/step_generator.go, ``inheritedChildAlias``) derives the
    cluster's children's aliases from their parent's, so the cluster, its CPU pool, node account and NAT follow."""
    if moved_from is None:
        return []
    parent = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{DEPLOYMENT_TYPE}::{moved_from}"
    return [pulumi.Alias(parent=parent)]


SUBNET_MOVED_FROM = "tpu-serving:index:ServingGateway$gcp:compute/subnetwork:Subnetwork"
"""The type chain, below the deployment, of a self-contained stack's proxy-only subnet: its ServingGateway's
(:class:`~tpu_serving.traffic.gateway.ServingGateway`, named ``<deployment>-gateway`` by :mod:`tpu_serving.phases`) child
``<gateway>-proxy-only``."""


def moved_subnet_aliases(moved_from: str | None) -> list[str]:
    """The alias of the platform's proxy-only subnet when ``pulumi state move`` brought the self-contained stack's
    (deployment ``moved_from``) here, by that subnet's own URN, before its ServingGateway went to the model stack;
    none otherwise.

    The two are one GCP object, the same name (``<cluster.name>-proxy-only``), region, network and range: were the
    platform to create its own, GCP would refuse a second subnetwork of that name, and a second ACTIVE proxy-only
    subnet of the region and network ("only a single proxy-only subnet with purpose REGIONAL_MANAGED_PROXY can be
    active at any point in time", https://cloud.google.com/load-balancing/docs/proxy-only-subnets), while the model
    stack held the old one until its own ``up`` deleted it. The moved subnet keeps its URN, with this stack's name
    (``renameStackAndProject``), under the root stack, whose child the SharedGateway's is not: a full URN alias (a URN
    string in ``aliases``, pulumi 3.272.0 ``pulumi/runtime/resource.py`` l.143-144, ``alias_pb2.Alias(urn=...)``)
    names it, and the engine updates it in place."""
    if moved_from is None:
        return []
    chain = f"{DEPLOYMENT_TYPE}${SUBNET_MOVED_FROM}"
    return [f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{chain}::{moved_from}-gateway-proxy-only"]


def platform_controllers(cfg: PlatformStackConfig) -> list[tuple[Controller, str]]:
    """The cluster-wide controllers the platform installs and owns, with their releases: LeaderWorkerSet, JobSet and
    the Custom Metrics Stackdriver Adapter (one per cluster: a model stack's HPA reads through it, and the model stacks
    install none, ``adapterInstall`` defaulting to ``existing`` on a shared cluster)."""
    shared = cfg.shared_platform
    return [
        (LWS, shared.lws_version),
        (JOBSET, shared.jobset_version),
        (METRICS_ADAPTER, shared.metrics_adapter_version),
    ]


def owns(cfg: PlatformStackConfig, controller: Controller) -> bool:
    """Whether the platform installs and owns ``controller``: every one but a metrics adapter the cluster runs
    already (``sharedPlatform.metricsAdapterInstall: existing``)."""
    return controller is not METRICS_ADAPTER or cfg.shared_platform.metrics_adapter_install == CreateOrExisting.CREATE


def platform_cluster_args(cfg: PlatformStackConfig, labels: dict[str, str]) -> TpuClusterArgs:
    """The platform's cluster: the stack file's ``cluster``, with the Gateway API on."""
    return to_settings(
        cfg.cluster,
        TpuClusterArgs,
        project=cfg.project,
        region=cfg.region,
        zone=cfg.zone,
        labels=labels,
        cpu_node_grants=(),
        gateway_api=True,
    )


def platform_existing_args(cfg: PlatformStackConfig) -> ExistingClusterArgs:
    """The platform's cluster when it exists (``cluster.existing``): how it is reached, and what the platform's CPU
    pods and the model stacks assume of it (``cluster.cpuPool``, ``cluster.securityGroup``)."""
    assert cfg.cluster.existing is not None
    return to_settings(
        cfg.cluster.existing,
        ExistingClusterArgs,
        project=cfg.project,
        name=cfg.cluster.name,
        region=cfg.region,
        cpu_pool=to_settings(cfg.cluster.cpu_pool, CpuPoolArgs),
        security_group=cfg.cluster.security_group,
    )


def network_and_subnet(cfg: PlatformStackConfig) -> tuple[str, str]:
    """The cluster's network and its nodes' subnet as a resource of another project names them (the host project's
    paths in a Shared VPC); an auto-mode network's subnet is named after it."""
    host, c = cfg.cluster.host_project, cfg.cluster
    subnet = c.subnetwork or c.network
    if host:
        return network_path(host, c.network), subnetwork_path(host, cfg.region, subnet)
    return c.network, subnet


def gateway_args(cfg: PlatformStackConfig, labels: dict[str, str]) -> ServingGatewayArgs:
    """The shared Gateway: its namespace and name (``sharedPlatform``), its address and the proxy-only subnet."""
    shared, settings = cfg.shared_platform, to_settings(cfg.gateway, GatewaySettings)
    network, subnet = network_and_subnet(cfg)
    address = settings.existing_address or dns_name(
        gateway_address_name(cfg.cluster.name, shared.gateway_name), limit=NameLimit.K8S_LABEL
    )
    return ServingGatewayArgs(
        project=cfg.project,
        region=cfg.region,
        network=network,
        namespace=shared.gateway_namespace,
        name=shared.gateway_name,
        service=shared.gateway_name,  # the routes' Services are the model stacks': unused by the Gateway
        port=LISTENER_PORT,
        health_path="/",
        settings=settings,
        subnet_name=dns_name(proxy_only_subnet_name(cfg.cluster.name), limit=NameLimit.K8S_LABEL),
        labels=labels,
        address_name=address,
        subnetwork=settings.address_subnetwork or subnet,
    )


def platform_cost_estimate(cfg: PlatformStackConfig) -> CostEstimate:
    """The platform's own cost (:mod:`.platform_cost`): its CPU pool at its minimum in each zone, and the fee."""
    pool, zones = cfg.cluster.cpu_pool, platform_cluster_args(cfg, {}).cpu_zones
    return platform_estimate(pool.machine_type, per_zone_minimum(pool.min_nodes, len(zones)), pool.disk_size_gb, zones)


def node_service_account(cfg: PlatformStackConfig) -> str:
    """The email of the account the model stacks' TPU pools run as: the one the platform creates with its cluster
    (``<cluster>-nodes``), or on an existing cluster the one its stack file names (``cluster.existing
    .nodeServiceAccount``, required there), never one the platform did not make nor was told of."""
    existing = cfg.cluster.existing
    if existing is not None:
        assert existing.node_service_account is not None  # required by PlatformClusterConfig
        return existing.node_service_account
    account = dns_name(cpu_service_account_id(cfg.cluster.name), limit=NameLimit.GCP_SERVICE_ACCOUNT_ID)
    # GCP names a service account <account-id>@<project>.iam.gserviceaccount.com (platform_outputs' source)
    return service_account_email(account, cfg.project)


def node_account_path(cfg: PlatformStackConfig) -> str:
    """The existing node account's resource name, ``projects/<project>/serviceAccounts/<email>``: the project in a
    user-managed account's email, else (the Compute Engine default account) the platform's."""
    email = node_service_account(cfg)
    domain = email.split("@", 1)[1]
    project = domain.removesuffix(".iam.gserviceaccount.com") if domain.endswith(".iam.gserviceaccount.com") else ""
    return f"projects/{project or cfg.project}/serviceAccounts/{email}"


def model_deployers_output(cfg: PlatformStackConfig) -> dict[str, object]:
    """The ``modelDeployers`` output: who may create node pools running as the node account; a note when nobody."""
    members, email = cfg.shared_platform.model_deployers, node_service_account(cfg)
    note = (
        {}
        if members
        else {
            "note": f"nobody: a model stack's deployer needs {SERVICE_ACCOUNT_USER} on {email} to create its TPU "
            "pools; name them in sharedPlatform.modelDeployers"
        }
    )
    return {"serviceAccount": email, "role": SERVICE_ACCOUNT_USER, "members": list(members), **note}


def deployer_grants(
    name: str, cfg: PlatformStackConfig, cluster: TpuCluster | ExistingCluster, opts: pulumi.ResourceOptions
) -> list[serviceaccount.IAMMember]:
    """One ``roles/iam.serviceAccountUser`` grant on the node account per model deployer
    (``sharedPlatform.modelDeployers``): on the account the cluster created, or the existing one named."""
    account = cluster.node_service_account.name if isinstance(cluster, TpuCluster) else node_account_path(cfg)
    return [
        serviceaccount.IAMMember(
            deployer_grant_name(name, member),
            service_account_id=account,
            role=SERVICE_ACCOUNT_USER,
            member=member,
            opts=opts,
        )
        for member in cfg.shared_platform.model_deployers
    ]


def platform_upgrades_held(cfg: PlatformStackConfig) -> bool:
    """Whether the platform's cluster holds GKE's node upgrades back, as a self-contained stack's is judged
    (:func:`tpu_serving.phases.upgrades_held`): an existing cluster as its file says (``cluster.existing.
    nodeUpgradesHeld``), a created one by a maintenance exclusion of a holding scope."""
    c = cfg.cluster
    if c.existing is not None:
        return c.existing.node_upgrades_held
    return any(str(e.scope) in NODE_UPGRADE_HOLDING_SCOPES for e in c.maintenance.exclusions)


def platform_outputs(cfg: PlatformStackConfig, stack: str, gateway: ServingGatewayArgs) -> PlatformOutputs:
    """The ``platform`` output: plain values, known when the platform is planned (:mod:`.platform_outputs`)."""
    c = cfg.cluster
    network, subnet = network_and_subnet(cfg)
    zones = platform_cluster_args(cfg, {}).cpu_zones
    return PlatformOutputs(
        stack=stack,
        project=cfg.project,
        region=cfg.region,
        cluster_name=c.name,
        cluster_location=cfg.region,
        control_plane=ControlPlane(
            endpoint=str(c.control_plane_endpoint),
            cluster_identifier=cluster_identifier(cfg.project, cfg.region, c.name),
        ),
        network=network,
        subnetwork=subnet,
        node_service_account=node_service_account(cfg),
        cpu_pool=CpuNodes(
            machine_type=c.cpu_pool.machine_type,
            min_nodes=per_zone_minimum(c.cpu_pool.min_nodes, len(zones)),
            max_nodes=c.cpu_pool.max_nodes,
            zones=list(zones),
        ),
        workload_pool=f"{cfg.project}.svc.id.goog",
        gateway=SharedGateway(
            name=gateway.name,
            namespace=gateway.namespace,
            proxy_only_cidr=gateway.settings.proxy_only_cidr,
            address=gateway.address_name,
        ),
        controllers=[
            ControllerRelease(name=c.name, version=version, api_group=c.api_group)
            for c, version in platform_controllers(cfg)
        ],
        owners=RegionalOwners(
            cloud_nat="platform"
            if c.existing is None and c.private_nodes and c.cloud_nat == CloudNat.CREATE
            else "existing",
            proxy_only_subnet="platform" if gateway.settings.create_proxy_only_subnet else "existing",
        ),
        cost=platform_cost(platform_cost_estimate(cfg), cfg.shared_platform.cost_shares),
        node_upgrades_held=platform_upgrades_held(cfg),
    )


class TpuPlatform(pulumi.ComponentResource):
    """A platform stack: the cluster, its CPU pool and NAT, the controllers and the shared Gateway; no model.

    ``outputs`` holds the stack outputs, ``platform`` (:class:`~tpu_serving.platform.platform_outputs.PlatformOutputs`) among
    them."""

    outputs: dict[str, Any]
    """The stack outputs (the program exports them as they are)."""

    def __init__(self, name: str, args: TpuPlatformArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"TpuPlatform {name!r}", args, TpuPlatformArgs)
        cfg = args.settings
        # Everything the model stacks run on is protected (SRE review: a platform destroy deleted the controllers'
        # CRDs, and with them every model's workloads, then the Gateway), the platform whole: the e2e run saw a
        # refused destroy still delete what no protected resource depends on. Children inherit it (pulumi 3.272.0
        # pulumi/resource.py l.1103-1105, "Infer protection from parent"); the caller's own `protect` wins.
        opts = pulumi.ResourceOptions.merge(pulumi.ResourceOptions(protect=cfg.shared_platform.protect), opts)
        super().__init__("tpu-serving:index:TpuPlatform", name, None, opts)
        labels = {**dict(zip(LIBRARY_LABEL_KEYS, (PART_OF, cfg.cluster.name, "pulumi"), strict=True)), **cfg.labels}
        k8s_labels = {"app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/instance": cfg.cluster.name}
        self.apis = (
            ProjectServices(
                f"{name}-apis",
                ProjectServicesArgs(
                    project=cfg.project,
                    apis=required_apis(cfg.cluster.image_streaming, inference_pool=True),
                ),
                opts=pulumi.ResourceOptions(parent=self, aliases=moved_aliases(cfg.shared_platform.moved_from)),
            )
            if cfg.project_apis == CreateOrExisting.CREATE
            else None
        )
        after_apis: list[pulumi.Resource] = [self.apis] if self.apis is not None else []
        gcp = pulumi.ResourceOptions(parent=self, depends_on=after_apis)
        moved = pulumi.ResourceOptions(aliases=moved_aliases(cfg.shared_platform.moved_from))
        self.cluster = (
            ExistingCluster(name, platform_existing_args(cfg), opts=gcp)
            if cfg.cluster.existing is not None
            else TpuCluster(name, platform_cluster_args(cfg, labels), opts=pulumi.ResourceOptions.merge(gcp, moved))
        )
        self.deployer_grants = deployer_grants(name, cfg, self.cluster, gcp)
        on_cluster = pulumi.ResourceOptions(
            parent=self,
            providers={"kubernetes": self.cluster.provider},
            depends_on=[*after_apis, *([self.cluster.cpu_pool] if isinstance(self.cluster, TpuCluster) else [])],
        )
        manifests = to_settings(cfg.controller_manifests, ControllerManifests)
        self.installs = [
            ControllerInstall(
                f"{name}-{c.name}",
                ControllerInstallArgs(c, version, manifests.of(c), owned=owns(cfg, c)),
                opts=pulumi.ResourceOptions.merge(on_cluster, moved),
            )
            for c, version in platform_controllers(cfg)
        ]
        self.alerts = PlatformAlerts(
            f"{name}-alerts",
            PlatformAlertsArgs(
                project=cfg.project,
                cluster=cfg.cluster.name,
                controllers=[i.watched for i in self.installs if i.watched],
                settings=to_settings(cfg.observability, ObservabilitySettings),
                gateway=(cfg.shared_platform.gateway_namespace, cfg.shared_platform.gateway_name),
                upgrade_notices=platform_upgrades_held(cfg),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after_apis),
        )
        # The adapter's read of Cloud Monitoring is the platform's, as the adapter is (GKE review m2): its model
        # stacks' HPAs read through it, and none of them makes the grant.
        shared = cfg.shared_platform
        if CreateOrExisting.EXISTING not in (shared.metrics_adapter_install, shared.metrics_adapter_iam):
            adapter_viewer(f"{name}-adapter-viewer", cfg.project, self, gcp)
        gateway = gateway_args(cfg, k8s_labels)
        self.gateway = SharedGatewayComponent(
            f"{name}-gateway",
            SharedGatewayArgs(gateway, k8s_labels, tuple(moved_subnet_aliases(cfg.shared_platform.moved_from))),
            opts=on_cluster,
        )
        self.platform = platform_outputs(cfg, args.stack, gateway)
        self.outputs = {
            "platform": self.platform.to_output(),
            "clusterName": self.cluster.cluster.name if isinstance(self.cluster, TpuCluster) else self.cluster.name,
            "kubeconfig": self.cluster.kubeconfig,
            "gatewayAddress": self.gateway.address,
            "alertPolicies": self.alerts.alert_policies,
            "cost": cost_output(platform_cost_estimate(cfg)),
            "modelDeployers": model_deployers_output(cfg),
        }
        self.register_outputs({k: v for k, v in self.outputs.items() if k != "kubeconfig"})
