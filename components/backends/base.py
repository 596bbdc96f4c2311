"""What a serving backend is, and the platform it builds on.

A backend is one package holding its settings (a config model selected by ``backend:``), its
checks against the rest of the stack, the resources it builds, its stack outputs and the
ports its serving pods take clients on; its ``backend.py`` answers :class:`ServingBackend`, what
the deployment asks of every backend, which holds what a backend answers unless it says
otherwise. :mod:`tpu_serving.backends` registers them. A backend reads the stack through
:class:`Stack`, so it never imports the config edge above it.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar

import pulumi

from ..catalog import SliceShape
from ..catalog.models import ModelSize
from ..common.quota import PodSet
from ..cost.estimate import NodeUsage
from ..cost.serve_time import EngineProfile
from ..operations.maintenance.host_maintenance_job import HostMaintenanceSettings
from ..operations.observability import ScrapeTarget, ServingMetrics
from ..operations.observability_settings import ObservabilitySettings
from ..operations.prober import (
    PROBE_PATH,
    PROBER_PORT,
    ProbeTarget,
    prober_labels,
    scrape_endpoint,
)
from ..platform.controllers import Controller, ControllerInstall
from ..platform.existing import CloudResource
from ..pools.compute_class import Fallback
from ..traffic.gateway_settings import GatewaySettings

if TYPE_CHECKING:
    from ..platform.buckets import Buckets
    from ..platform.cluster import TpuCluster, TpuClusterArgs
    from ..platform.existing import ExistingCluster
    from ..platform.node_identity import Access, BucketGrant
    from ..platform.platform_cluster import PlatformCluster
    from ..platform.services import ProjectServices
    from ..tenancy.identity import WorkloadIdentity
    from ..tenancy.tenant import IsolatedPods, Tenancy

S = TypeVar("S")
"""A backend's settings: its config model (:attr:`ServingBackend.settings`)."""


class StackBucket(Protocol):
    """What a backend reads of one of the stack's buckets."""

    @property
    def name(self) -> str | None: ...
    @property
    def workload_access(self) -> str: ...
    @property
    def scratch_ttl_days(self) -> int | None: ...


class StackSlice(Protocol):
    """What a backend reads of one of the stack's TPU slices."""

    @property
    def name(self) -> str: ...
    @property
    def disk_size_gb(self) -> int: ...
    @property
    def shape(self) -> SliceShape: ...
    @property
    def pool_names(self) -> tuple[str, ...]: ...
    @property
    def existing_node_pools(self) -> Sequence[str] | None: ...
    @property
    def zone(self) -> str | None:
        """The slices' own zone; None: the stack's."""
        ...


class Stack(Protocol):
    """What a backend reads of the validated stack (``tpu_serving.config.StackConfig`` is one).

    Backends see the stack through this view, so ``backends`` never imports ``config`` (which
    imports ``backends`` for the ``serving`` union): the layers stay one-way.
    """

    @property
    def project(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def zone(self) -> str: ...
    @property
    def cluster(self) -> TpuClusterArgs: ...
    @property
    def existing(self) -> bool:
        """Whether the cluster exists (``cluster.existing``): its owner sets its channel and maintenance."""
        ...

    @property
    def observability(self) -> ObservabilitySettings: ...
    @property
    def host_maintenance(self) -> HostMaintenanceSettings: ...
    @property
    def tpu_slices(self) -> Sequence[StackSlice]: ...
    @property
    def gateway(self) -> GatewaySettings | None: ...
    def bucket(self, purpose: str) -> StackBucket | None: ...
    def node_pool_names(self, s: StackSlice) -> tuple[str, ...]:
        """The GKE node pools of slice kind ``s``: ``<cluster>-<pool>``, or the existing pools it names."""
        ...


@dataclass(frozen=True)
class ServingSlices:
    """The serving slices of a stack: their one shape and their node pools."""

    shape: SliceShape
    pools: Sequence[pulumi.Resource]
    """The node pools the workloads wait for: those the deployment creates (none on an existing cluster)."""
    by_kind: Mapping[str, Sequence[pulumi.Resource]] = field(default_factory=dict)
    """The node pools of each serving slice kind (``tpuSlices[].name``), for a backend whose parts take different
    kinds (the disaggregated vLLM roles)."""
    names: Sequence[str] = ()
    """The GKE node pools of the serving slices, one per slice, created or existing: how many slices there are."""
    zones: Sequence[str] = ()
    """The zones of the serving slices (``tpuSlices[].zone``, else the stack's zone), each once."""
    compute_class: pulumi.Resource | None = None
    """Their ComputeClass (``serving.fallback``), which the serving's pods select: they wait for it. None: none."""


@dataclass(frozen=True)
class Platform:
    """What a backend builds on: the cluster, the identity, the buckets and the tenancy of the deployment."""

    name: str
    """The deployment's name (the cluster name): children are named ``<name>-<role>``."""
    settings: Stack
    """The validated settings of the deployment."""
    parent: pulumi.Resource
    """The deployment component: the backend's resources are its children."""
    cluster: TpuCluster | ExistingCluster | PlatformCluster
    """The cluster: created by the deployment, or an existing one (``cluster.existing``), on which the backend creates
    no cloud resource of the cluster's (its node pools exist too)."""
    apis: ProjectServices | None
    """The project's APIs, when the deployment enables them (None: they are enabled already)."""
    buckets: Buckets
    identity: WorkloadIdentity
    tenancy: Tenancy
    slices: ServingSlices
    k8s_labels: Mapping[str, str]
    labels: Mapping[str, str]
    install: Callable[[Controller, str, Sequence[pulumi.Resource]], ControllerInstall]
    """Installs a controller release on the cluster (after the CPU pool and ``after``)."""
    node_grants: Callable[[Mapping[str, Access]], list[BucketGrant]]
    """Bucket roles, by purpose -> access, on the stack's buckets (for node service accounts)."""

    @property
    def on_platform(self) -> bool:
        """Whether the deployment is a model stack, on its platform stack's cluster (which owns the cluster-wide
        controllers, the metrics adapter and its grant)."""
        from ..platform.platform_cluster import PlatformCluster

        return isinstance(self.cluster, PlatformCluster)

    @property
    def platform_upgrades_held(self) -> pulumi.Output[bool] | None:
        """A model stack's platform's ``nodeUpgradesHeld`` (known from its output only); None on the stack's own
        cluster, whose settings say it."""
        from ..platform.platform_cluster import PlatformCluster

        return self.cluster.node_upgrades_held if isinstance(self.cluster, PlatformCluster) else None

    def options(self, *depends_on: pulumi.Resource | None) -> pulumi.ResourceOptions:
        """Options of a backend component: a child of the deployment on the cluster's Kubernetes provider, after
        ``depends_on`` (a None among them, such as :attr:`apis` when they exist already, is left out)."""
        return pulumi.ResourceOptions(
            parent=self.parent,
            providers={"kubernetes": self.cluster.provider},
            depends_on=[d for d in depends_on if d is not None],
            aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)],
        )

    def workload_options(self, *after: pulumi.Resource) -> pulumi.ResourceOptions:
        """Options of the backend's serving workload (:meth:`options`): after ``after`` (its controllers' installs,
        what else it waits for), the namespace's Kubernetes service account and its bucket access, the tenancy, and
        the serving slices' node pools and their ComputeClass."""
        identity, slices = self.identity, self.slices
        return self.options(
            *after, identity.service_account, *identity.access, self.tenancy, *slices.pools, slices.compute_class
        )

    def gcp_options(self) -> pulumi.ResourceOptions:
        """Options of a backend's GCP component: a child of the deployment that waits for the APIs."""
        return pulumi.ResourceOptions(
            parent=self.parent,
            depends_on=[self.apis] if self.apis is not None else [],
            aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)],
        )


@dataclass(frozen=True)
class ServingEndpoint:
    """The HTTP entry of a backend's serving pods, for a gateway in front of them."""

    service: str
    """The ClusterIP Service."""
    port: int
    """Its port, equal to the pods' target port."""
    health_path: str
    """A path that answers 200 when a backend is ready (the load balancer's health check)."""
    pods: Mapping[str, str]
    """Labels of the serving pods (what an InferencePool selects)."""
    disaggregated: bool = False
    """The pods are prefill and decode servers: the endpoint picker routes between them."""
    models: tuple[str, ...] = ()
    """The model names clients ask the server for (the OpenAI API's ``model``): on a platform's shared Gateway, the
    route takes the requests that name one of them (:func:`tpu_serving.traffic.gateway_route.attached_route`); none: the
    server has no such name (its route takes every request no other route's header match takes)."""


@dataclass
class Built:
    """What a backend built: its controller installs and its stack outputs."""

    installs: list[ControllerInstall] = field(default_factory=list)
    outputs: dict[str, object] = field(default_factory=dict)
    """Its stack outputs, by name (the deployment exports them beside its own)."""
    endpoint: ServingEndpoint | None = None
    """Its HTTP entry, when a gateway may front it."""
    cloud: list[CloudResource] = field(default_factory=list)
    """Cloud resources of its own it creates or names existing (the metrics adapter's grant, the Pathways head's
    pool), for the deployment's list of them (the ``cloudResources`` output on an existing cluster)."""


@dataclass(frozen=True)
class ServingNeighbours:
    """What the components beside one serving component need of it, read off that component's own arguments: a
    program of its own passes them on instead of writing labels, ports, metrics and pod sets by hand (library review
    2, M7). A stack file's deployment derives the same from its settings (a test holds the two equal)."""

    serving_pods: Mapping[str, str]
    """Labels of the pods that take clients: ``TenancyArgs.serving_pods``, ``ServingGatewayArgs.pool_selector``."""
    serving_ports: tuple[int, ...]
    """Their serving ports: ``TenancyArgs.serving_ports``."""
    metrics: ServingMetrics
    """What ``ObservabilityArgs.metrics`` takes; its ``scrape`` is ``TenancyArgs.scrape_targets``."""
    pod_sets: tuple[PodSet, ...]
    """Its pods at their most, a rollout's surge group with them: ``TenancyArgs.pods``."""
    restart_unit_chips: int
    """The TPU chips of what restarts at once (one group): ``TenancyArgs.tpu_headroom_chips``."""
    autoscaling_metric: str
    """The gauge an HPA on its groups reads: ``ServingAutoscalerArgs.metric``."""
    service: str
    """The Service in front of the pods that take clients: ``ServingGatewayArgs.service``."""
    port: int
    """Its port: ``ServingGatewayArgs.port``."""
    health_path: str
    """The path the server answers 200 on once it serves: ``ServingGatewayArgs.health_path`` (library review 7, M3)."""


@dataclass(frozen=True)
class Gap:
    """What keeps a stack's serving from a production SLO (``production: true`` refuses it; with ``production: false``
    the preview's ``Production:`` line lists it): the setting, relative to the stack's config namespace, its value as
    the stack file writes it, and what it does in operation."""

    key: str
    value: str
    why: str


def probed(metrics: ServingMetrics, probe: ProbeTarget | None) -> ServingMetrics:
    """``metrics`` with the serving probe ``probe`` (:mod:`tpu_serving.operations.prober`): its request, for its Deployment and
    alerts, and the exporter's ``/probe`` among the scrape targets, once a minute with the module and the target, so
    the stack's PodMonitorings scrape it and the tenancy lets the collectors reach it. None: ``metrics`` unchanged."""
    if probe is None:
        return metrics
    endpoint = scrape_endpoint(probe, probe.url)
    target = ScrapeTarget(prober_labels(probe)["app"], prober_labels(probe), PROBER_PORT, PROBE_PATH, endpoint)
    return dataclasses.replace(metrics, scrape=[*metrics.scrape, target], probe=probe)


def longest_request_seconds(cfg: Stack) -> int:
    """The longest request a serving pod drains for before it stops: the gateway's ``requestTimeoutSeconds`` (its
    GCPBackendPolicy ``timeoutSec``, :func:`tpu_serving.traffic.gateway.backend_policy`), or, without a gateway, the same
    setting's default, the longest a stack's gateway would allow."""
    return (cfg.gateway or GatewaySettings()).request_timeout_seconds


class ServingSettings(Protocol):
    """What the stack reads of any backend's settings (its ``serving`` block): which backend, on which slices; the rest
    it asks the backend (:class:`ServingBackend`)."""

    @property
    def backend(self) -> str: ...
    @property
    def slices(self) -> Sequence[str]: ...


class ServingBackend(ABC, Generic[S]):
    """A serving backend: ``backend: <name>`` in the stack's ``serving``, whose settings are an ``S``.

    A backend is a subclass in its own package (its ``backend.py``), registered by one line in
    :data:`tpu_serving.backends.BACKENDS`. It implements what only it knows (the abstract methods); every other method
    here holds what a backend does unless it says otherwise, and a backend overrides only those where it differs:
    it takes no clients from outside the namespace, runs no pod on the host network, restarts as a whole, starts at
    once, keeps every slice's VMs, has no spare slice, CPU pool, isolated pods, probe, gap of its own, known model
    size, capacity fallback or published engine figure. What the LeaderWorkerSet backends share instead is
    :class:`~.groups.GroupBackend`'s."""

    name: str
    """The value of ``serving.backend``."""
    settings: type[S]
    """Its config model (with ``backend: Literal[name]``)."""
    restarts_as_a_whole: bool = True
    """A disruption of any of its slices restarts every one (a JobSet, a PathwaysJob): its pools' host maintenance is
    started together, in one window, not one pool at a time (SRE review 30, M2)."""

    @abstractmethod
    def problems(self, cfg: Stack, serving: S, shape: SliceShape, pools: int) -> list[str]:
        """Checks of its settings against the rest of the stack, given the serving slices' shape and how many there
        are."""

    @abstractmethod
    def build(self, platform: Platform, serving: S) -> Built:
        """Its resources, as children of the deployment."""

    @abstractmethod
    def metrics(self, serving: S) -> ServingMetrics:
        """What its pods export for Managed Prometheus to scrape, and the serving signals among them (the stack's
        PodMonitorings, dashboard panels and alerts follow from it)."""

    @abstractmethod
    def quota_pods(self, serving: S, shapes: Mapping[str, SliceShape], pools: int) -> Sequence[PodSet]:
        """The pods it puts in the serving namespace, by workload (:mod:`tpu_serving.common.quota`), given the shape of each
        slice kind (``tpuSlices[].name``) and how many serving slices there are: the namespace quota's derived
        figure."""

    def ingress(self, serving: S) -> tuple[dict[str, str], list[int]]:
        """Labels and ports of the pods that take clients from outside the namespace: none."""
        return {}, []

    def host_network_buckets(self, serving: S) -> Mapping[str, Access]:
        """Bucket purpose -> access of its host-network pods on the serving slices (they act as the nodes): none."""
        return {}

    def restart_unit_chips(self, serving: S, chips: int) -> int:
        """TPU chips of what restarts at once, given the serving slices' chips: all of them
        (:attr:`restarts_as_a_whole`)."""
        return chips

    def startup_seconds(self, serving: S) -> int:
        """How long its serving pods may take to become ready (their startup probes' window), in seconds."""
        return 0

    def always_on_slices(self, serving: S, pools: int) -> int:
        """How many of its serving slices keep their VMs, given how many there are; the others start empty and scale
        from zero, a whole slice at a time, when an autoscaled replica needs one. All of them."""
        return pools

    def spare_slices(self, serving: S, pools: int) -> int:
        """How many of its serving slices are spares that no group holds between rollouts (a surge rollout's), given how
        many there are: the capacity report does not count them as needed. None."""
        return 0

    def cpu_nodes(self, serving: S) -> Sequence[NodeUsage]:
        """CPU nodes of its own pools (beyond the cluster's CPU pool) that run while it serves: the cost estimate bills
        them. None."""
        return ()

    def isolation(self, serving: S) -> IsolatedPods | None:
        """Its pods that stay out of the namespace's blanket ``same-namespace`` policy, with each flow they accept
        (None: its pods accept any traffic from the namespace)."""
        return None

    def from_zero_pools(self, serving: S, by_kind: Mapping[str, Sequence[str]]) -> set[str] | None:
        """Which of its serving node pools (given by slice kind) start empty and scale from zero, when its settings
        decide that per slice kind; None: the pools after :meth:`always_on_slices` of them, in the order of
        ``tpuSlices``."""
        return None

    def probe(self, serving: S) -> ProbeTarget | None:
        """The request the serving probe sends its serving Service (:mod:`tpu_serving.operations.prober`), or None: it serves no
        clients (a PathwaysJob), or nothing the stack publishes (a Saxml cell with no model). Saxml's sax-http v1.0.0
        takes no option that limits its decode steps, so its probe decodes up to the model's own limit, with a longer
        timeout (:meth:`.saxml.backend.Saxml.probe`; docs/operate.md, "Saxml's probe")."""
        return None

    def production_gaps(self, serving: S, shape: SliceShape) -> Sequence[Gap]:
        """What of its own keeps its serving from a production SLO, given the serving slices' shape (a serving mode its
        engine does not stand behind on that shape, an alpha API in the serving path, a job that no disruption may
        touch); the gaps every backend shares (one group, nobody paged, one zone, capacity) are the config edge's
        (:mod:`tpu_serving.config.production`)."""
        return ()

    def model_size(self, serving: S) -> ModelSize | None:
        """The size of the largest model it serves (one copy per serving slice), or None when unknown; the capacity
        report compares the slices with it."""
        return None

    def fallback(self, serving: S) -> Sequence[Fallback]:
        """How GKE may make a slice of its shape when its own pools cannot add one, in order (a
        :class:`~tpu_serving.pools.compute_class.TpuComputeClass` over its pools, which its groups select); (): none."""
        return ()

    def engine_profile(self, serving: S) -> EngineProfile | None:
        """Its groups' engine, served model, weight loader and compilation cache, which the published start and
        throughput figures are matched against (:mod:`tpu_serving.cost.serve_time`); None: no figure is published for its
        engine."""
        return None


Backend: TypeAlias = ServingBackend[Any]
"""Any registered backend, as the deployment holds it: :data:`tpu_serving.backends.BACKENDS` maps each
``serving.backend`` to one, whose methods take that backend's settings."""
