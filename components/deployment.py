"""``TpuServingDeployment``: one whole serving deployment from one validated settings object.

It composes the project's APIs, the buckets, the regional cluster, the TPU slices, the
workload identity, the namespace's tenancy, the controller installs and the chosen serving
backend (:mod:`tpu_serving.backends`), and exposes the deployment's outputs. The stack
program is then: load the settings, build one deployment, export its outputs.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi

from . import capacity, cost
from .allocation import Allocation, allocation
from .backends import BACKENDS, Built, Platform, ServingSlices
from .buckets import Buckets, BucketsArgs, BucketSpec, Purpose
from .cluster import TpuCluster, TpuClusterArgs
from .config.loading import validate_stack
from .config.models import StackConfig
from .controllers import (
    Controller,
    ControllerInstall,
    ControllerInstallArgs,
    installs_by_group,
)
from .gateway import HEALTH_CHECK_RANGES, LISTENER_PORT, GatewaySettings, ServingGateway, ServingGatewayArgs
from .identity import WorkloadIdentity, WorkloadIdentityArgs
from .naming import (
    NameLimit,
    bucket_name,
    dns_name,
    node_service_account_id,
    pool_name,
    workload_service_account_id,
)
from .node_identity import Access, BucketGrant
from .nodepool import TpuNodePool, TpuNodePoolArgs
from .observability import Observability, ObservabilityArgs, ObservabilitySettings, ServingMetrics
from .prices import PriceOverrides
from .services import ProjectServices, ProjectServicesArgs, required_apis
from .settings import to_settings
from .tenancy import SERVING_PRIORITY, Tenancy, TenancyArgs
from .validation import check_arguments

PART_OF = "tpu-serving"

MOVED_FROM_THE_STACK = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
"""Aliases of the deployment's direct children: before this component existed, the program
created them at the top of the stack. With the alias (which Pulumi extends to their
children), an existing stack keeps its resources instead of replacing them."""


@dataclass(frozen=True)
class TpuServingDeploymentArgs:
    """Arguments of :class:`TpuServingDeployment`."""

    settings: Any
    """The deployment's settings: a validated :class:`~tpu_serving.config.StackConfig`
    (``load_from_pulumi``, ``load_stack_config``, ``validate_stack``), or the same settings as a
    mapping with the stack file's keys (``cluster``, ``tpuSlices``, ..., ``project`` and
    ``region`` for ``gcp:project``/``gcp:region``), validated here; every problem is
    reported before anything is created."""


class TpuServingDeployment(pulumi.ComponentResource):
    """A complete multi-host TPU serving deployment on GKE, from one settings object.

    Its parts are attributes: ``apis`` (:class:`ProjectServices`), ``buckets``, ``cluster``
    (:class:`TpuCluster`), ``slices`` (:class:`TpuNodePool` by slice kind), ``identity``,
    ``tenancy``, ``installs`` (the controller releases), ``observability`` (:class:`Observability`,
    None without serving or with ``observability.enabled`` false) and ``outputs`` (the stack outputs).
    """

    outputs: dict[str, Any]
    """The deployment's stack outputs (the program exports them as they are)."""

    def __init__(self, name: str, args: TpuServingDeploymentArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("TpuServingDeployment", args, TpuServingDeploymentArgs)
        super().__init__("tpu-serving:index:TpuServingDeployment", name, None, opts)
        self._prefix = name
        cfg = args.settings if isinstance(args.settings, StackConfig) else validate_stack(args.settings)
        cluster_name = cfg.cluster.name
        labels = {"app": PART_OF, "deployment": cluster_name, "managed-by": "pulumi", **cfg.labels}
        k8s_labels = {"app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/instance": cluster_name}
        backend = BACKENDS[cfg.serving.backend] if cfg.serving is not None else None

        self.apis = ProjectServices(
            f"{name}-apis",
            ProjectServicesArgs(
                project=cfg.project,
                apis=required_apis(
                    cfg.cluster.image_streaming, inference_pool=cfg.gateway is not None and cfg.gateway.inference_pool
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self, aliases=MOVED_FROM_THE_STACK),
        )
        gcp = pulumi.ResourceOptions(parent=self, depends_on=[self.apis], aliases=MOVED_FROM_THE_STACK)
        self.buckets = Buckets(name, self._buckets_args(cfg, labels), opts=gcp)
        self.cluster = TpuCluster(name, self._cluster_args(cfg, labels), opts=gcp)
        host_network = backend.host_network_buckets(cfg.serving) if backend else {}
        from_zero = self._scale_from_zero(cfg)
        self.slices = {
            s.name: TpuNodePool(
                f"{name}-{s.name}",
                TpuNodePoolArgs(
                    project=cfg.project,
                    region=cfg.region,
                    zone=cfg.zone_of(s),
                    cluster=self.cluster.cluster.id,
                    service_account_id=node_service_account_id(cluster_name, s.name),
                    shape=s.shape,
                    pool_names=tuple(pool_name(cluster_name, p) for p in s.pool_names),
                    capacity=s.capacity,
                    spot=s.spot,
                    reservation=s.reservation,
                    max_run_duration_hours=s.max_run_duration_hours,
                    disk_size_gb=s.disk_size_gb,
                    image_cache_disk=s.image_cache_disk,
                    image_streaming=cfg.cluster.image_streaming,
                    labels=labels,
                    node_grants=self._grants(host_network if cfg.serving and s.name in cfg.serving.slices else {}),
                    scale_from_zero=tuple(pool_name(cluster_name, p) for p in s.pool_names if p in from_zero),
                ),
                opts=gcp,
            )
            for s in cfg.tpu_slices
        }
        kubernetes = {"kubernetes": self.cluster.provider}
        self.identity = WorkloadIdentity(
            f"{name}-wi",
            WorkloadIdentityArgs(
                project=cfg.project,
                namespace=cfg.workload_identity.namespace,
                kubernetes_service_account=cfg.workload_identity.kubernetes_service_account,
                gcp_service_account_id=workload_service_account_id(
                    cluster_name, cfg.workload_identity.gcp_service_account
                ),
                bucket_grants=self._grants(
                    {b.purpose: Access(b.workload_access) for b in cfg.buckets if b.workload_access != "none"}
                ),
                labels=k8s_labels,
            ),
            opts=pulumi.ResourceOptions(
                parent=self, providers=kubernetes, depends_on=[self.apis], aliases=MOVED_FROM_THE_STACK
            ),
        )
        serving_pods, serving_ports = backend.ingress(cfg.serving) if backend else ({}, [])
        watched = cfg.observability.enabled and backend is not None
        metrics = backend.metrics(cfg.serving) if backend is not None and watched else ServingMetrics(serves=False)
        serving_chips = sum(
            s.count * s.shape.chips for s in cfg.tpu_slices if cfg.serving and s.name in cfg.serving.slices
        )
        self.tenancy = Tenancy(
            f"{name}-tenancy",
            TenancyArgs(
                namespace=self.identity.namespace_name,
                tpu_chips=sum(shape.chips for _, shape, _ in cfg.slices),
                tpu_headroom_chips=backend.restart_unit_chips(cfg.serving, serving_chips) if backend else 0,
                cpu=cfg.tenancy.quota.cpu,
                memory=cfg.tenancy.quota.memory,
                serving_pods=serving_pods,
                serving_ports=serving_ports,
                allowed_namespaces=cfg.tenancy.allowed_namespaces,
                allowed_cidrs=cfg.tenancy.allowed_cidrs,
                scrape_targets=metrics.scrape,
                load_balancer_cidrs=(cfg.gateway.proxy_only_cidr, *HEALTH_CHECK_RANGES) if cfg.gateway else (),
                operator_groups=cfg.tenancy.operators.groups,
                operator_users=cfg.tenancy.operators.users,
                labels=k8s_labels,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                providers=kubernetes,
                depends_on=[self.identity.namespace or self.identity.service_account],
                aliases=MOVED_FROM_THE_STACK,
            ),
        )
        built = Built()
        self.gateway: ServingGateway | None = None
        if backend is not None and cfg.serving is not None:
            chosen = [self.slices[n] for n in cfg.serving.slices]
            platform = Platform(
                name=name,
                settings=cfg,
                parent=self,
                cluster=self.cluster,
                apis=self.apis,
                buckets=self.buckets,
                identity=self.identity,
                tenancy=self.tenancy,
                slices=ServingSlices(chosen[0].shape, [p for c in chosen for p in c.node_pools]),
                k8s_labels=k8s_labels,
                labels=labels,
                install=self._install,
                node_grants=self._grants,
            )
            built = backend.build(platform, cfg.serving)
            self.gateway = self._gateway(cfg, built, platform)
        self.installs = built.installs
        self.observability = (
            Observability(
                f"{name}-observability",
                ObservabilityArgs(
                    project=cfg.project,
                    cluster=cluster_name,
                    namespace=cfg.workload_identity.namespace,
                    metrics=metrics,
                    settings=to_settings(cfg.observability, ObservabilitySettings),
                    labels=k8s_labels,
                ),
                # The dashboard and the alerts wait for the project's APIs (monitoring.googleapis.com);
                # the PodMonitorings are applied once the serving namespace's policies exist.
                opts=pulumi.ResourceOptions(parent=self, providers=kubernetes, depends_on=[self.apis, self.tenancy]),
            )
            if watched
            else None
        )
        self.allocation = self._allocation(cfg)
        self.cost = self._cost(cfg, self.allocation, from_zero)
        self.outputs = {
            **built.outputs,
            **self._infrastructure_outputs(cfg),
            "capacity": allocation_output(self.allocation),
            "cost": cost_output(self.cost),
        }
        self.register_outputs({k: v for k, v in self.outputs.items() if k != "kubeconfig"})

    def _gateway(self, cfg: StackConfig, built: Built, platform: Platform) -> ServingGateway | None:
        """The internal Gateway in front of the backend's Service (GKE serves the Gateway API and, from
        1.34.0-gke.1626000, the InferencePool CRD itself: :data:`tpu_serving.gateway.INFERENCE_POOL_MIN_GKE`)."""
        if cfg.gateway is None or built.endpoint is None:
            return None
        after: list[pulumi.Resource] = [self.apis]
        endpoint = built.endpoint
        gateway = ServingGateway(
            f"{self._prefix}-gateway",
            ServingGatewayArgs(
                project=cfg.project,
                region=cfg.region,
                network=cfg.cluster.network,
                namespace=self.identity.namespace_name,
                name=f"{endpoint.service}-gateway",
                service=endpoint.service,
                port=endpoint.port,
                health_path=endpoint.health_path,
                settings=to_settings(cfg.gateway, GatewaySettings),
                pool_selector=endpoint.pods,
                subnet_name=dns_name(f"{cfg.cluster.name}-proxy-only", limit=NameLimit.K8S_LABEL),
                priority_class_name=SERVING_PRIORITY,
                labels=platform.k8s_labels,
            ),
            opts=platform.options(*after, self.tenancy),
        )
        built.outputs["gateway"] = {"addressCommand": gateway.address_command, "port": LISTENER_PORT}
        return gateway

    @staticmethod
    def _scale_from_zero(cfg: StackConfig) -> set[str]:
        """Serving slices (by pool) beyond those the backend keeps on: they start empty and scale from zero."""
        if cfg.serving is None:
            return set()
        serving = [p for p, _, s in cfg.slices if s.name in cfg.serving.slices]
        keep = BACKENDS[cfg.serving.backend].always_on_slices(cfg.serving, len(serving))
        return set(serving[keep:])

    @staticmethod
    def _allocation(cfg: StackConfig) -> Allocation:
        """Chips, VMs and HBM of the slices, against what the served model needs."""
        serving = [s for s in cfg.tpu_slices if cfg.serving is not None and s.name in cfg.serving.slices]
        backend = BACKENDS[cfg.serving.backend] if cfg.serving is not None else None
        return allocation(
            [(s.shape, s.count) for s in cfg.tpu_slices],
            serving[0].shape if serving else None,
            sum(s.count for s in serving),
            backend.model_size(cfg.serving) if backend is not None else None,
        )

    @staticmethod
    def _cost(cfg: StackConfig, sized: Allocation, autoscaled_from_zero: set[str]) -> cost.CostEstimate:
        """The estimate: the slices that keep their VMs (not ``autoscaled_from_zero``, not flex-start), the CPU
        pool at its minimum, boot disks and the buckets' expected sizes."""
        pool = cfg.cluster.cpu_pool
        from_zero = autoscaled_from_zero | {
            p for s in cfg.tpu_slices if capacity.scales_from_zero(s.effective_capacity) for p in s.pool_names
        }
        weights_gb = sized.model.gib * 2**30 / 1e9 if sized.model is not None else 0.0
        return cost.estimate(
            slices=[
                cost.SliceUsage(
                    s.name,
                    s.shape,
                    s.count,
                    s.effective_capacity,
                    s.disk_size_gb,
                    running=sum(p not in from_zero for p in s.pool_names),
                )
                for s in cfg.tpu_slices
            ],
            nodes=[
                cost.NodeUsage("cpu pool (minimum)", pool.machine_type, pool.min_nodes, pool.disk_size_gb),
                *(BACKENDS[cfg.serving.backend].cpu_nodes(cfg.serving) if cfg.serving is not None else ()),
            ],
            buckets=[
                cost.BucketUsage(
                    b.purpose,
                    str(b.storage_class),
                    b.expected_size_gb
                    if b.expected_size_gb is not None
                    else (weights_gb if b.purpose == "checkpoints" else 0.0),
                )
                for b in cfg.buckets
            ],
            overrides=to_settings(cfg.prices, PriceOverrides),
        )

    def _grants(self, needs: Mapping[str, Access | Literal["none"]]) -> list[BucketGrant]:
        """Bucket roles by purpose -> access (``read``, ``readWrite``; ``none`` grants nothing)."""
        return [
            BucketGrant(key=purpose, bucket=self.buckets.buckets[purpose].name, access=access)
            for purpose, access in needs.items()
            if purpose in self.buckets.buckets and access != "none"
        ]

    def _install(self, controller: Controller, version: str, after: Sequence[pulumi.Resource]) -> ControllerInstall:
        """A controller release, applied once the CPU pool that runs it (and ``after``) exist."""
        return ControllerInstall(
            f"{self._prefix}-{controller.name}",
            ControllerInstallArgs(controller, version),
            opts=pulumi.ResourceOptions(
                parent=self,
                aliases=MOVED_FROM_THE_STACK,
                providers={"kubernetes": self.cluster.provider},
                depends_on=[self.cluster.cpu_pool, *after],
            ),
        )

    @staticmethod
    def _buckets_args(cfg: StackConfig, labels: Mapping[str, str]) -> BucketsArgs:
        return BucketsArgs(
            project=cfg.project,
            labels=labels,
            buckets=[
                BucketSpec(
                    purpose=Purpose(b.purpose),
                    name=bucket_name(cfg.project, cfg.cluster.name, b.purpose, b.name),
                    location=b.location or cfg.region,
                    storage_class=b.storage_class,
                    versioning=b.versioning,
                    ttl_days=b.scratch_ttl_days,
                )
                for b in cfg.buckets
            ],
        )

    @staticmethod
    def _cluster_args(cfg: StackConfig, labels: Mapping[str, str]) -> TpuClusterArgs:
        return to_settings(
            cfg.cluster,
            TpuClusterArgs,
            project=cfg.project,
            region=cfg.region,
            zone=cfg.zone,
            labels=labels,
            cpu_node_grants=(),
            gateway_api=cfg.gateway is not None,
        )

    def _infrastructure_outputs(self, cfg: StackConfig) -> dict[str, Any]:
        name = cfg.cluster.name
        return {
            "project": cfg.project,
            "region": cfg.region,
            "zone": cfg.zone,
            "clusterName": self.cluster.cluster.name,
            "getCredentials": f"gcloud container clusters get-credentials {name} --region {cfg.region} "
            f"--project {cfg.project}",
            "kubeconfig": self.cluster.kubeconfig,
            "slices": [
                {
                    "nodePool": pool,
                    "machineType": s.shape.machine_type.name,
                    "topology": s.shape.topology,
                    "vms": s.shape.vms,
                    "chips": s.shape.chips,
                    "hbmGib": s.shape.hbm_gib,
                }
                for s in self.slices.values()
                for pool in s.pool_names
            ],
            "buckets": self.buckets.names,
            "namespace": self.identity.namespace_name,
            "kubernetesServiceAccount": self.identity.service_account_name,
            "gcpServiceAccount": self.identity.email,
            "controllers": installs_by_group(self.installs),
            **(
                {"dashboard": self.observability.dashboard_name, "alertPolicies": self.observability.alert_policies}
                if self.observability is not None
                else {}
            ),
        }


def cost_output(estimate: cost.CostEstimate) -> dict[str, object]:
    """The ``cost`` stack output: USD per hour and per month by part, and how each item was priced."""
    per_hour: dict[str, float] = {p: round(estimate.per_hour(p), 2) for p in cost.PARTS}
    per_month: dict[str, float] = {p: round(estimate.per_month(p), 2) for p in cost.PARTS}
    return {
        "currency": "USD",
        "perHour": {**per_hour, "total": round(estimate.per_hour(), 2)},
        "perMonth": {**per_month, "total": round(estimate.per_month(), 2)},
        "peakPerHour": round(estimate.per_hour(peak=True), 2),
        "items": [
            {
                "part": x.part,
                "what": x.what,
                "perHour": None if x.usd_per_hour is None else round(x.usd_per_hour, 4),
                **({"peakPerHour": round(x.peak_usd_per_hour, 4)} if x.peak_usd_per_hour is not None else {}),
                "basis": x.basis,
            }
            for x in estimate.lines
        ],
        "unpriced": [x.what for x in estimate.unpriced],
    }


def allocation_output(sized: Allocation) -> dict[str, object]:
    """The ``capacity`` stack output: chips, VMs, HBM and the allocation against the model's need."""
    fit = sized.smallest_fit
    return {
        "chips": sized.chips,
        "vms": sized.vms,
        "hbmGib": sized.hbm_gib,
        "modelGib": None if sized.model is None else round(sized.model.gib, 1),
        "smallestFittingSlice": None if fit is None else f"{fit.machine_type.name} {fit.topology} ({fit.chips} chips)",
        "servingSlices": sized.serving_slices,
        "chipsNeeded": sized.chips_needed,
        "allocatedToNeeded": None if sized.ratio is None else round(sized.ratio, 2),
    }
