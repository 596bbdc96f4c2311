"""The phases of :class:`~tpu_serving.deployment.TpuServingDeployment`, in the order it calls them.

The platform (:func:`build_platform`: APIs, buckets, cluster), the TPU node pools, the workload identity, the
namespace's tenancy, the serving backend, the traffic in front of it (the gateway), operations (observability) and
the cost estimate. A phase takes the :class:`Context` and the results of the phases it builds on, and returns a typed
result; every resource it creates is a child of the deployment. What the phases derive from the settings alone is
in :mod:`tpu_serving.derived`.
"""

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from .backends import BACKENDS, Backend, Built, Platform, ServingSlices
from .backends.rollout import node_upgrades_held
from .common.naming import (
    LIBRARY_LABEL_KEYS,
    NameLimit,
    dns_name,
    gateway_name,
    proxy_only_subnet_name,
    workload_service_account_id,
)
from .common.settings import CreateOrExisting, to_settings
from .config.checks import full_outage, namespace_pods
from .config.mirror import mirrored_config
from .config.models import StackConfig
from .cost import estimate as cost
from .cost.allocation import Allocation
from .derived import (
    bucket_grants,
    buckets_args,
    cluster_args,
    cluster_network,
    cost_estimate,
    existing_cluster_args,
    gateway_address_and_subnet,
    maintenance_gate_args,
    serving_kinds,
    slice_allocation,
    stack_apis,
)
from .operations.maintenance import host_maintenance
from .operations.maintenance.host_maintenance_job import HostMaintenanceGate
from .operations.observability import Observability, ObservabilityArgs, ServingMetrics
from .operations.observability_settings import ObservabilitySettings
from .operations.serving_metrics import through_gateway
from .operations.watched import watched_metrics
from .platform.buckets import Buckets, SharedBucket, SharedBuckets, SharedBucketsArgs
from .platform.cluster import TpuCluster
from .platform.controllers import Controller, ControllerInstall, ControllerInstallArgs, ControllerManifests
from .platform.egress import existing_cluster_nat, image_mirror
from .platform.existing import ExistingCluster, ExistingTpuNodePool
from .platform.image_mirror import ImageMirror
from .platform.node_identity import Access, BucketGrant
from .platform.platform_cluster import PlatformCluster, PlatformClusterArgs
from .platform.services import ProjectServices, ProjectServicesArgs
from .pools.nodepool import TpuNodePool
from .tenancy.identity import WorkloadIdentity, WorkloadIdentityArgs
from .tenancy.tenant import SERVING_PRIORITY, Tenancy, TenancyArgs
from .traffic.gateway import HEALTH_CHECK_RANGES, LISTENER_PORT, GatewaySettings, ServingGateway, ServingGatewayArgs

PART_OF = "tpu-serving"

MOVED_FROM_THE_STACK = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
"""Aliases of the deployment's direct children: before this component existed, the program
created them at the top of the stack. With the alias (which Pulumi extends to their
children), an existing stack keeps its resources instead of replacing them."""


@dataclass(frozen=True)
class Context:
    """What every phase reads: the deployment (the parent of every child), its name and settings."""

    name: str
    """The deployment's name: children are named ``<name>-<role>``."""
    parent: pulumi.ComponentResource
    """The deployment component."""
    cfg: StackConfig
    backend: Backend | None
    """The serving backend, None without ``serving``."""
    labels: dict[str, str]
    """GCP labels of every labelled resource."""
    k8s_labels: dict[str, str]
    """Labels of the Kubernetes objects."""
    metrics: ServingMetrics
    """What the serving pods export, when they are watched (the tenancy lets the collectors in)."""
    watched: bool
    """Whether the deployment has observability: serving, with ``observability.enabled``."""


def upgrades_held(cfg: StackConfig) -> bool:
    """Whether the stack's cluster holds node upgrades back: its maintenance exclusion, or an existing cluster said to."""
    existing = cfg.cluster.existing
    return existing.node_upgrades_held if existing is not None else node_upgrades_held(cfg)


def notices_on(cfg: StackConfig) -> bool:
    """Whether the stack opens the upgrade notices' ticket: :func:`upgrades_held`; never on a model stack, whose
    platform stack opens it for its cluster when its ``nodeUpgradesHeld`` says so (one ticket per cluster, not one
    per tenant: GKE review M1)."""
    return cfg.platform is None and upgrades_held(cfg)


def context(name: str, parent: pulumi.ComponentResource, cfg: StackConfig) -> Context:
    """The context of the phases of deployment ``parent`` named ``name``: its settings with the images of Docker Hub
    and ghcr.io pulled through the image mirror (:func:`tpu_serving.config.mirror.mirrored_config`)."""
    cfg = mirrored_config(cfg)
    cluster_name = cfg.cluster.name
    backend = BACKENDS[cfg.serving.backend] if cfg.serving is not None else None
    watched = cfg.observability.enabled and backend is not None
    return Context(
        name=name,
        parent=parent,
        cfg=cfg,
        backend=backend,
        labels={**dict(zip(LIBRARY_LABEL_KEYS, (PART_OF, cluster_name, "pulumi"), strict=True)), **cfg.labels},
        k8s_labels={"app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/instance": cluster_name},
        metrics=watched_metrics(cfg) if backend is not None and watched else ServingMetrics(serves=False),
        watched=watched,
    )


@dataclass(frozen=True)
class PlatformParts:
    """The platform: the project's APIs (None when they are enabled already), the buckets, the cluster (created,
    or an existing one) and the image mirror's repositories (None unless the stack creates them)."""

    apis: ProjectServices | None
    buckets: Buckets
    cluster: TpuCluster | ExistingCluster | PlatformCluster
    shared: SharedBuckets | None = None
    mirror: ImageMirror | None = None

    def node_grants(self, needs: Mapping[str, Access]) -> list[BucketGrant]:
        """The bucket roles of a pool whose host-network pods need ``needs`` (purpose -> access): they act as
        the node's account, which then reads the shared buckets too."""
        return bucket_grants(self.buckets, needs) + (self.shared_grants() if needs else [])

    def shared_grants(self) -> list[BucketGrant]:
        """Read access to each declared shared bucket (``shared-<key>``)."""
        names = self.shared.names if self.shared else {}
        return [BucketGrant(key=f"shared-{key}", bucket=bucket, access=Access.READ) for key, bucket in names.items()]

    def gcp_options(self, ctx: Context) -> pulumi.ResourceOptions:
        """Options of a GCP child of the deployment: it waits for the project's APIs."""
        return pulumi.ResourceOptions(parent=ctx.parent, depends_on=self.after_apis(), aliases=MOVED_FROM_THE_STACK)

    def after_apis(self, *others: pulumi.Resource) -> list[pulumi.Resource]:
        """What a child waits for: the project's APIs (when the deployment enables them), then ``others``."""
        return [*([self.apis] if self.apis is not None else []), *others]

    @property
    def kubernetes(self) -> dict[str, pulumi.ProviderResource]:
        """The providers of a Kubernetes child: the cluster's."""
        return {"kubernetes": self.cluster.provider}

    @property
    def cpu_pools(self) -> list[pulumi.Resource]:
        """The CPU node pool the controllers run on, when the deployment creates it (an existing cluster's exist)."""
        return [self.cluster.cpu_pool] if isinstance(self.cluster, TpuCluster) else []


def platform_cluster_args(cfg: StackConfig) -> PlatformClusterArgs:
    """How a model stack reads its platform stack (``platform``), and what it says the platform must agree with."""
    assert cfg.platform is not None
    cidr = cfg.gateway.proxy_only_cidr if cfg.gateway else None
    ref = cfg.platform
    return PlatformClusterArgs(
        ref.stack, cfg.project, cfg.region, ref.cluster, cidr, cfg.cluster.security_group, ref.kubeconfig, ref.context
    )


def monitored_cluster(cfg: StackConfig) -> str:
    """The GKE cluster the stack's log and metric filters name: its own, or its platform's (``platform.cluster``)."""
    return cfg.platform.cluster if cfg.platform is not None else cfg.cluster.name


def build_platform(ctx: Context) -> PlatformParts:
    """The project's APIs, then the buckets and the cluster (which wait for them); on an existing cluster
    (``cluster.existing``) its Kubernetes provider, and the Cloud NAT when the stack creates it."""
    cfg = ctx.cfg
    apis = (
        ProjectServices(
            f"{ctx.name}-apis",
            ProjectServicesArgs(project=cfg.project, apis=stack_apis(cfg)),
            opts=pulumi.ResourceOptions(parent=ctx.parent, aliases=MOVED_FROM_THE_STACK),
        )
        if cfg.project_apis == CreateOrExisting.CREATE
        else None
    )
    gcp = pulumi.ResourceOptions(parent=ctx.parent, depends_on=[apis] if apis else [], aliases=MOVED_FROM_THE_STACK)
    buckets = Buckets(ctx.name, buckets_args(cfg, ctx.labels), opts=gcp)
    # No pod waits for the mirror's repositories (ready in seconds): a first pull retries, backing off <= 300 s (k8s docs).
    mirror = image_mirror(ctx.name, cfg, ctx.labels, gcp)
    cluster: TpuCluster | ExistingCluster | PlatformCluster
    if cfg.platform is not None:
        cluster = PlatformCluster(ctx.name, platform_cluster_args(cfg), opts=pulumi.ResourceOptions(parent=ctx.parent))
    elif cfg.existing:
        cluster = ExistingCluster(ctx.name, existing_cluster_args(cfg), opts=pulumi.ResourceOptions(parent=ctx.parent))
        existing_cluster_nat(cfg, cluster, gcp)
    else:
        cluster = TpuCluster(ctx.name, cluster_args(cfg, ctx.labels), opts=gcp)
    shared = (
        SharedBuckets(
            f"{ctx.name}-shared",
            SharedBucketsArgs(tuple(SharedBucket(b.name, b.key) for b in cfg.shared_buckets)),
            opts=pulumi.ResourceOptions(parent=ctx.parent),
        )
        if cfg.shared_buckets
        else None
    )
    return PlatformParts(apis, buckets, cluster, shared, mirror)


@dataclass(frozen=True)
class PoolParts:
    """The TPU node pools, by slice kind, and the pools that start empty and scale from zero."""

    slices: dict[str, TpuNodePool | ExistingTpuNodePool]
    scale_from_zero: frozenset[str]
    compute_class: pulumi.Resource | None = None
    """The serving slices' ComputeClass (``serving.fallback``), which the serving's pods wait for; None."""


@dataclass(frozen=True)
class IdentityParts:
    """The workloads' identity: their namespace, Kubernetes service account and GCP service account."""

    identity: WorkloadIdentity


def build_identity(ctx: Context, platform: PlatformParts) -> IdentityParts:
    """The workload identity, with the bucket roles the stack's buckets grant the workloads, and read access
    to each declared shared bucket."""
    cfg, wi, cluster = ctx.cfg, ctx.cfg.workload_identity, platform.cluster
    identity = WorkloadIdentity(
        f"{ctx.name}-wi",
        WorkloadIdentityArgs(
            project=cfg.project,
            namespace=wi.namespace,
            kubernetes_service_account=wi.kubernetes_service_account,
            gcp_service_account_id=None
            if wi.existing_gcp_service_account
            else workload_service_account_id(cfg.cluster.name, wi.gcp_service_account),
            bucket_grants=bucket_grants(
                platform.buckets,
                {b.purpose: Access(b.workload_access) for b in cfg.buckets if b.workload_access != "none"},
                by_name=wi.existing_gcp_service_account is not None,  # roles it must hold: nothing grants them
            )
            + platform.shared_grants(),
            labels=ctx.k8s_labels,
            # the binding waits for a created cluster, which creates the project's identity pool
            workload_pool=cluster.cluster.workload_identity_config.workload_pool
            if isinstance(cluster, TpuCluster)
            else None,
            existing_gcp_service_account=wi.existing_gcp_service_account,
        ),
        opts=pulumi.ResourceOptions(
            parent=ctx.parent,
            providers=platform.kubernetes,
            depends_on=platform.after_apis(),
            aliases=MOVED_FROM_THE_STACK,
        ),
    )
    return IdentityParts(identity)


@dataclass(frozen=True)
class TenancyParts:
    """The namespace as a tenant: quota, network policy, priorities and RBAC."""

    tenancy: Tenancy


def build_tenancy(ctx: Context, platform: PlatformParts, identity: IdentityParts) -> TenancyParts:
    """The tenancy of the workloads' namespace: the TPU quota of the slices (with the backend's restart
    headroom), the ports that take clients, the collectors and load balancers let in."""
    cfg, backend = ctx.cfg, ctx.backend
    serving_pods, serving_ports = backend.ingress(cfg.serving) if backend else ({}, [])
    serving_chips = sum(s.count * s.shape.chips for s in serving_kinds(cfg))
    tenancy = Tenancy(
        f"{ctx.name}-tenancy",
        TenancyArgs(
            namespace=identity.identity.namespace_name,
            tpu_chips=sum(shape.chips for _, shape, _ in cfg.slices),
            tpu_headroom_chips=backend.restart_unit_chips(cfg.serving, serving_chips) if backend else 0,
            cpu=cfg.tenancy.quota.cpu,
            memory=cfg.tenancy.quota.memory,
            pods=namespace_pods(cfg),
            serving_pods=serving_pods,
            serving_ports=serving_ports,
            allowed_namespaces=cfg.tenancy.allowed_namespaces,
            allowed_cidrs=cfg.tenancy.allowed_cidrs,
            scrape_targets=ctx.metrics.scrape,
            isolated=backend.isolation(cfg.serving) if backend else None,
            load_balancer_cidrs=(cfg.gateway.proxy_only_cidr, *HEALTH_CHECK_RANGES) if cfg.gateway else (),
            operator_groups=cfg.tenancy.operators.groups,
            operator_users=cfg.tenancy.operators.users,
            serving_preempts=not cfg.existing,  # an existing cluster's other tenants are not ours to evict
            shared_cluster=cfg.existing,  # the PriorityClasses are retained on delete: other tenants name them
            labels=ctx.k8s_labels,
        ),
        opts=pulumi.ResourceOptions(
            parent=ctx.parent,
            providers=platform.kubernetes,
            depends_on=[identity.identity.namespace or identity.identity.service_account],
            aliases=MOVED_FROM_THE_STACK,
        ),
    )
    return TenancyParts(tenancy)


@dataclass(frozen=True)
class ServingParts:
    """What the serving backend built (nothing without ``serving``) on its view of the platform."""

    built: Built
    platform: Platform | None
    """What the backend built on; None without ``serving``."""


def build_serving(
    ctx: Context, platform: PlatformParts, pools: PoolParts, identity: IdentityParts, tenancy: TenancyParts
) -> ServingParts:
    """The backend's resources, on its serving slices (their pools: ``serving.slices``)."""
    cfg, backend = ctx.cfg, ctx.backend
    if backend is None or cfg.serving is None:
        return ServingParts(Built(), None)
    chosen = [pools.slices[n] for n in cfg.serving.slices]
    view = Platform(
        name=ctx.name,
        settings=cfg,
        parent=ctx.parent,
        cluster=platform.cluster,
        apis=platform.apis,
        buckets=platform.buckets,
        identity=identity.identity,
        tenancy=tenancy.tenancy,
        slices=ServingSlices(
            chosen[0].shape,
            [p for c in chosen for p in c.node_pools],
            {n: list(pools.slices[n].node_pools) for n in cfg.serving.slices},
            [name for c in chosen for name in c.pool_names],
            sorted({cfg.zone_of(s) for s in cfg.tpu_slices if s.name in cfg.serving.slices}),
            pools.compute_class,
        ),
        k8s_labels=ctx.k8s_labels,
        labels=ctx.labels,
        install=functools.partial(install_controller, ctx, platform),
        node_grants=platform.node_grants,
    )
    return ServingParts(backend.build(view, cfg.serving), view)


@dataclass(frozen=True)
class TrafficParts:
    """The internal Gateway in front of the serving Service (when the stack has a ``gateway``), and its outputs."""

    gateway: ServingGateway | None
    outputs: dict[str, Any]


def build_traffic(
    ctx: Context, platform: PlatformParts, identity: IdentityParts, tenancy: TenancyParts, serving: ServingParts
) -> TrafficParts:
    """The internal Gateway in front of the backend's Service (GKE serves the Gateway API and, from
    1.34.0-gke.1626000, the InferencePool CRD itself: :data:`tpu_serving.traffic.gateway.INFERENCE_POOL_MIN_GKE`)."""
    cfg, endpoint = ctx.cfg, serving.built.endpoint
    if cfg.gateway is None or endpoint is None or serving.platform is None:
        return TrafficParts(None, {})
    address, subnet = gateway_address_and_subnet(cfg, endpoint.service)
    gateway = ServingGateway(
        f"{ctx.name}-gateway",
        ServingGatewayArgs(
            project=cfg.project,
            region=cfg.region,
            network=cluster_network(cfg),
            namespace=identity.identity.namespace_name,
            name=gateway_name(endpoint.service),
            service=endpoint.service,
            port=endpoint.port,
            health_path=endpoint.health_path,
            settings=to_settings(cfg.gateway, GatewaySettings),
            pool_selector=endpoint.pods,
            disaggregated=endpoint.disaggregated,
            subnet_name=dns_name(proxy_only_subnet_name(cfg.cluster.name), limit=NameLimit.K8S_LABEL),
            priority_class_name=SERVING_PRIORITY,
            labels=serving.platform.k8s_labels,
            address_name=address,
            subnetwork=subnet,
        ),
        opts=serving.platform.options(platform.apis, tenancy.tenancy),
    )
    g = gateway
    outputs = {"addressCommand": g.address_command, "port": LISTENER_PORT, "routerRestart": g.router_restart}
    # its own output: the IP is known once the address is reserved, the rest when the stack is planned
    return TrafficParts(gateway, {"gateway": outputs, "gatewayAddress": gateway.address})


@dataclass(frozen=True)
class OperationsParts:
    """Observability of the serving workload: scraping, the dashboard and the alerts (None when not watched)."""

    observability: Observability | None


def build_operations(
    ctx: Context, platform: PlatformParts, tenancy: TenancyParts, built: Built, traffic: TrafficParts
) -> OperationsParts:
    """The host-maintenance gate of a gated stack; the serving workload's observability, when it is watched
    (:attr:`Context.watched`), and of its controllers; behind a Gateway, the serving probe also goes through it."""
    cfg, k8s_opts = ctx.cfg, pulumi.ResourceOptions(parent=ctx.parent, providers=platform.kubernetes)
    if (gate := maintenance_gate_args(cfg, ctx.k8s_labels)) is not None:  # one serving pool's maintenance at a time
        gated = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[tenancy.tenancy]))
        HostMaintenanceGate(f"{ctx.name}-maintenance-gate", gate, opts=gated)
    if not ctx.watched:
        return OperationsParts(None)
    observability = Observability(
        f"{ctx.name}-observability",
        ObservabilityArgs(
            project=cfg.project,
            cluster=monitored_cluster(cfg),
            namespace=cfg.workload_identity.namespace,
            metrics=ctx.metrics if (g := traffic.gateway) is None else through_gateway(ctx.metrics, g),
            settings=to_settings(cfg.observability, ObservabilitySettings),
            labels=ctx.k8s_labels,
            controllers=[] if cfg.platform else [i.watched for i in built.installs if i.watched],  # platform's page
            maintenance_zones=sorted({cfg.zone_of(s) for s in cfg.tpu_slices}),
            maintenance_startable=all(host_maintenance.manual_start_listed(s.shape) for s in cfg.tpu_slices),
            maintenance_shapes=[s.shape for s in cfg.tpu_slices],
            maintenance_whole=bool(ctx.backend and ctx.backend.restarts_as_a_whole)
            or bool(full_outage(cfg.serving)[0]),
            maintenance_gate=gate is not None,
            maintenance_fallback=gate is not None and bool(gate.compute_class),
            shared_cluster=cfg.existing,
            upgrade_notices=notices_on(cfg),
            **_platform_gateway(cfg, traffic),
        ),
        # Cloud objects wait for the APIs (monitoring, logging); PodMonitorings for the namespace's policies.
        opts=pulumi.ResourceOptions(
            parent=ctx.parent, providers=platform.kubernetes, depends_on=platform.after_apis(tenancy.tenancy)
        ),
    )
    return OperationsParts(observability)


def _platform_gateway(cfg: StackConfig, traffic: TrafficParts) -> dict[str, Any]:
    """A model stack's route on its platform's Gateway (:func:`tpu_serving.traffic.route_phase.build_route`): the
    Gateway its load balancer alerts watch (SRE review: its outage paged nobody), and the route's timeout."""
    routed = traffic.outputs.get("gateway") if traffic.gateway is None and cfg.gateway is not None else None
    if not isinstance(routed, dict) or cfg.gateway is None:
        return {}
    timeout = to_settings(cfg.gateway, GatewaySettings).request_timeout_seconds
    return {"platform_gateway": routed["gateway"], "platform_gateway_timeout_seconds": timeout}


@dataclass(frozen=True)
class CostParts:
    """The slices' allocation against the served model's need, and the cost estimate."""

    allocation: Allocation
    estimate: cost.CostEstimate


def estimate_costs(ctx: Context, pools: PoolParts) -> CostParts:
    """Chips, VMs and HBM of the slices against the model, and what the deployment costs."""
    sized = slice_allocation(ctx.cfg)
    return CostParts(sized, cost_estimate(ctx.cfg, sized, pools.scale_from_zero))


def install_controller(
    ctx: Context, platform: PlatformParts, controller: Controller, version: str, after: Sequence[pulumi.Resource]
) -> ControllerInstall:
    """A controller release, applied once the CPU pool that runs it (and ``after``) exist."""
    manifest = to_settings(ctx.cfg.controller_manifests, ControllerManifests).of(controller)
    owned = ctx.cfg.controller_installs.of(controller.name, ctx.cfg.existing) == CreateOrExisting.CREATE
    on = platform.cluster
    runs = on.expects(controller.name, version) if isinstance(on, PlatformCluster) and not owned else None
    return ControllerInstall(
        f"{ctx.name}-{controller.name}",
        ControllerInstallArgs(controller, version, manifest, owned, runs),
        opts=pulumi.ResourceOptions(
            parent=ctx.parent,
            aliases=MOVED_FROM_THE_STACK,
            providers=platform.kubernetes,
            depends_on=[*platform.cpu_pools, *after],
        ),
    )
