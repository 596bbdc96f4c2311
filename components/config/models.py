"""The stack's settings: one frozen model per part of a deployment, assembled in :class:`StackConfig`.

The serving backends declare their own settings (:mod:`tpu_serving.backends`); the rest is here. Every field has its
type, default, bounds and description, which the stack file, the component API and the settings reference share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from .. import catalog
from ..backends import Serving
from ..backends.base import StackSlice
from ..catalog import capacity as capacity_rules
from ..catalog.capacity import Capacity, TpuCapacity
from ..catalog.prices import PriceOverrides
from ..common.naming import (
    ZONE,
    NameLimit,
    check_dns_name,
    labels_problem,
    namespace_problem,
    pool_name,
    project_id_problem,
    region_problem,
    zone_problem,
)
from ..common.settings import (
    CreateOrExisting,
    K8sName,
    Model,
    PoolName,
    ServiceAccountId,
    StackBool,
    StackFloat,
    StackInt,
    declared,
    rules_of,
    settings_model,
)
from ..common.validation import raising
from ..operations.maintenance.host_maintenance_job import HostMaintenanceConfig
from ..operations.observability_settings import ObservabilitySettings
from ..platform.buckets import BucketSpec, SharedBucket, SharedBucketsArgs, StorageClass
from ..platform.cluster import CLUSTER_ARGS_FROM_THE_STACK, CpuPoolArgs, TpuClusterArgs
from ..platform.controllers import ControllerManifests
from ..platform.existing import EXISTING_ARGS_FROM_THE_STACK, PLATFORM_EXISTING_ARGS, ExistingClusterArgs
from ..platform.image_mirror import ImageMirrorConfig
from ..pools.nodepool import TpuNodePoolArgs
from ..tenancy.identity import WorkloadIdentityArgs, service_account_email_problem
from ..traffic.gateway import GatewaySettings
from .controller_installs import ControllerInstallsConfig
from .platform_ref import PlatformRefConfig
from .tenancy_config import TenancyConfig

# --------------------------------------------------------------------------- cluster

_CLUSTER_RULES = rules_of(TpuClusterArgs, CLUSTER_ARGS_FROM_THE_STACK)


# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    ExistingClusterConfig: TypeAlias = ExistingClusterArgs

    class ClusterConfig(TpuClusterArgs):
        """To mypy: the cluster's arguments and ``existing``."""

        existing: ExistingClusterArgs | None
        model_fields_set: set[str]

else:
    ExistingClusterConfig = settings_model(
        ExistingClusterArgs, "ExistingClusterConfig", exclude=EXISTING_ARGS_FROM_THE_STACK + PLATFORM_EXISTING_ARGS
    )

    class ClusterConfig(settings_model(TpuClusterArgs, "ClusterConfig", exclude=CLUSTER_ARGS_FROM_THE_STACK)):
        __doc__ = TpuClusterArgs.__doc__
        existing: ExistingClusterConfig | None = Field(
            None,
            description="The cluster exists (existing-cluster mode): the kubeconfig file that reaches it, or the GKE "
            "cluster by name and location. The stack then creates only the in-cluster half, and every cloud resource "
            "it needs is named existing or created (docs/existing-cluster.md); the keys that shape a created cluster "
            "are refused.",
        )

        @model_validator(mode="after")
        def _rules(self) -> ClusterConfig:
            # The cluster's own rules (a control plane named, the NAT named) are those of a cluster the stack creates.
            return self if self.existing is not None else _CLUSTER_RULES(self)


"""The stack file's ``cluster``: the arguments of :class:`~tpu_serving.platform.cluster.TpuCluster`, declared once
there, less those set elsewhere in the stack file; and ``existing`` (:class:`~tpu_serving.platform.existing.ExistingClusterArgs`,
less those the stack sets elsewhere)."""

if TYPE_CHECKING:
    CpuPoolConfig: TypeAlias = CpuPoolArgs
else:
    CpuPoolConfig = ClusterConfig.model_fields["cpu_pool"].annotation
"""The stack file's ``cluster.cpuPool``: the fields, bounds and rules of :class:`~tpu_serving.platform.cluster.CpuPoolArgs`."""


if TYPE_CHECKING:
    SharedBucketConfig: TypeAlias = SharedBucket
else:
    SharedBucketConfig = settings_model(SharedBucket, "SharedBucketConfig")
"""An entry of the stack file's ``sharedBuckets``: the fields of :class:`~tpu_serving.platform.buckets.SharedBucket`."""


if TYPE_CHECKING:
    GatewayConfig: TypeAlias = GatewaySettings
else:
    GatewayConfig = settings_model(GatewaySettings, "GatewayConfig")
"""The stack file's ``gateway``: :class:`~tpu_serving.traffic.gateway.GatewaySettings`, declared once there."""

if TYPE_CHECKING:
    PricesConfig: TypeAlias = PriceOverrides
else:
    PricesConfig = settings_model(PriceOverrides, "PricesConfig")
"""The stack file's ``prices``: negotiated rates for the cost estimate (:class:`~tpu_serving.catalog.prices.PriceOverrides`)."""


if TYPE_CHECKING:
    ControllerManifestsConfig: TypeAlias = ControllerManifests
else:
    ControllerManifestsConfig = settings_model(ControllerManifests, "ControllerManifestsConfig")
"""The stack file's ``controllerManifests`` (:class:`~tpu_serving.platform.controllers.ControllerManifests`)."""


if TYPE_CHECKING:
    ObservabilityConfig: TypeAlias = ObservabilitySettings
else:
    ObservabilityConfig = settings_model(ObservabilitySettings, "ObservabilityConfig")
"""The stack file's ``observability``: :class:`~tpu_serving.operations.observability_settings.ObservabilitySettings`."""


# --------------------------------------------------------------------------- TPU slices


RESERVED_POOL_NAMES = ("cpu", "head", "nodes", "wl")
"""Slice names that would collide with the ``<cluster>-cpu``/``-head`` pools or ``-nodes``/``-wl`` accounts."""


class TpuSliceConfig(Model):
    """One kind of TPU slice; ``count`` identical slices make ``count`` node pools."""

    name: PoolName = Field(
        description="Short name of the slice kind, e.g. `v6e16` or `prefill`; names its node pools "
        "and its node service account."
    )
    slice: str | None = Field(
        None, description="Cloud TPU slice name (`v6e-16`, `v5litepod-32`, `v5p-16`); or give machineType and topology."
    )
    machine_type: str | None = Field(None, description="GKE TPU machine type, e.g. `ct6e-standard-4t`.")
    topology: str | None = Field(None, description="TPU topology for machineType, e.g. `4x4`.")
    count: StackInt = Field(1, ge=1, le=64, description="Number of identical slices, one node pool each.")
    zone: str | None = Field(
        None,
        description="Zone of the region that holds these slices (each slice stays in one zone); unset: the "
        "stack's `zone`. Slices of one serving workload in different zones keep replicas up when a zone fails. "
        "The preview notes a zone the TPU zone table does not list for the slice's generation.",
    )
    capacity: TpuCapacity = declared(TpuNodePoolArgs, "capacity")
    spot: StackBool = declared(TpuNodePoolArgs, "spot")
    reservation: str | None = declared(TpuNodePoolArgs, "reservation")
    max_run_duration_hours: StackInt | None = declared(TpuNodePoolArgs, "max_run_duration_hours")
    disk_size_gb: StackInt = declared(TpuNodePoolArgs, "disk_size_gb")
    image_cache_disk: str | None = declared(TpuNodePoolArgs, "image_cache_disk")
    existing_node_pools: list[PoolName] | None = Field(
        None,
        description="With an existing cluster (`cluster.existing`): the existing node pools of these slices, one per "
        "slice (`count` of them), which the stack never creates nor changes; unset: the names the stack would give "
        "them, `<cluster.name>-<name>` (or `-<i>`), which must then exist. On a platform stack's cluster "
        "(`platform`): pools its owner made (for a reservation another team holds, say), which the stack uses as "
        "they are; unset: the stack creates its pools. The keys above describe them for the checks and the cost "
        "estimate.",
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, v: str) -> str:
        if v in RESERVED_POOL_NAMES:
            raise ValueError(f"reserved for the stack's own pools and accounts: {', '.join(RESERVED_POOL_NAMES)}")
        return v

    @field_validator("slice")
    @classmethod
    def _known_slice(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                catalog.resolve_slice_name(v)
            except catalog.CatalogError as err:
                raise ValueError(str(err)) from None
        return v

    @field_validator("machine_type")
    @classmethod
    def _known_machine_type(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                catalog.machine_type(v)
            except catalog.CatalogError as err:
                raise ValueError(str(err)) from None
        return v

    @field_validator("topology")
    @classmethod
    def _supported_topology(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        try:
            catalog.parse_topology(v)
            mt = info.data.get("machine_type")
            if mt is not None:
                catalog.slice_shape(mt, v)
        except catalog.CatalogError as err:
            raise ValueError(str(err)) from None
        return v

    @model_validator(mode="after")
    def _one_way_to_name_the_shape(self) -> TpuSliceConfig:
        by_name = self.slice is not None
        by_shape = self.machine_type is not None or self.topology is not None
        if by_name == by_shape or (by_shape and (self.machine_type is None or self.topology is None)):
            raise ValueError("give either `slice` (e.g. v6e-16) or both `machineType` and `topology`")
        return self

    @property
    def effective_capacity(self) -> Capacity:
        """The capacity type, with ``spot`` / ``reservation`` alone honoured as before ``capacity`` existed."""
        return capacity_rules.effective(self.capacity, self.spot, self.reservation)

    @property
    def shape(self) -> catalog.SliceShape:
        """The catalog shape of each slice of this kind."""
        if self.slice is not None:
            return catalog.resolve_slice_name(self.slice)
        assert self.machine_type is not None and self.topology is not None
        return catalog.slice_shape(self.machine_type, self.topology)

    @property
    def pool_names(self) -> tuple[str, ...]:
        """Node pool names: ``name`` for one slice, ``name-0 … name-(count-1)`` otherwise."""
        if self.count == 1:
            return (self.name,)
        return tuple(f"{self.name}-{i}" for i in range(self.count))


# --------------------------------------------------------------------------- buckets & identity


BucketPurpose = Literal["checkpoints", "state", "scratch"]


class BucketConfig(Model):
    """A GCS bucket of the stack, with uniform bucket-level access and public access prevention."""

    purpose: BucketPurpose = Field(
        description="What the bucket holds: `checkpoints` (model weights, protected from deletion), "
        "`state` (serving state such as the Sax root) or `scratch` (Pathways compilation and temp data)."
    )
    name: str | None = Field(None, description="Globally unique bucket name; default `<project>-<cluster>-<purpose>`.")
    location: str | None = Field(None, description="Bucket location; default the stack's region.")
    storage_class: StorageClass = declared(BucketSpec, "storage_class")
    versioning: StackBool = declared(BucketSpec, "versioning")
    existing: StackBool = declared(BucketSpec, "existing")
    workload_access: Literal["read", "readWrite", "none"] = Field(
        "readWrite",
        description="What the serving workloads' service account may do with the objects "
        "(`read`: roles/storage.objectViewer, `readWrite`: roles/storage.objectUser).",
    )
    scratch_ttl_days: StackInt | None = Field(
        None, ge=1, le=3650, description="Delete objects older than this many days (scratch buckets)."
    )
    expected_size_gb: StackFloat | None = Field(
        None,
        ge=0,
        description="Data the bucket is expected to hold, in GB, for the storage cost estimate; unset: the "
        "checkpoints bucket counts the served model's weights (when its size is known), other buckets 0.",
    )

    @field_validator("name")
    @classmethod
    def _bucket_name(cls, v: str | None) -> str | None:
        if v is not None:
            problem = check_dns_name(v, limit=NameLimit.GCS_BUCKET, min_length=3)
            if problem or v.startswith("goog"):
                raise ValueError(problem or "bucket names must not start with 'goog'")
        return v


class WorkloadIdentityConfig(Model):
    """The Kubernetes service account the workloads run as, mapped to a GCP service account."""

    namespace: str = Field(description="Kubernetes namespace of the workloads (created by the stack).")
    kubernetes_service_account: K8sName = Field(
        "tpu-serving", description="Kubernetes service account the workload pods run as."
    )
    gcp_service_account: ServiceAccountId | None = Field(
        None, description="account_id of the GCP service account; default `<cluster>-wl`."
    )
    existing_gcp_service_account: Annotated[str | None, AfterValidator(raising(service_account_email_problem))] = (
        declared(WorkloadIdentityArgs, "existing_gcp_service_account")
    )

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if problem := namespace_problem(v):
            raise ValueError(problem)
        return v


# --------------------------------------------------------------------------- stack


class StackConfig(Model):
    """Everything one stack file declares. Built by :func:`load_stack_config`."""

    project: str = Field(description="GCP project ID (config key `gcp:project`).")
    region: str = Field(description="GCP region of the regional cluster and the buckets (config key `gcp:region`).")
    zone: str = Field(
        description="The TPU slices' and CPU pool's zone, one of the region's (`gcp_zones`; another is refused, naming "
        "them). A zone Google's TPU zone page does not list for a slice's generation (`tpu_zones`) is not refused: "
        "the preview notes it, with the zones listed in the region, or that the copy does not cover the region."
    )
    labels: dict[str, str] = Field(default_factory=dict, description="GCP labels added to every labelled resource.")
    cluster: ClusterConfig = Field(description="The GKE cluster.")
    tpu_slices: list[TpuSliceConfig] = Field(min_length=1, description="The TPU slices, one node pool each.")
    buckets: list[BucketConfig] = Field(min_length=1, description="GCS buckets of the stack; at most one per purpose.")
    shared_buckets: list[SharedBucketConfig] = Field(
        default_factory=list,
        description="Existing buckets the serving workloads read (a shared weights bucket, say): read access "
        "(roles/storage.objectViewer) on each bucket alone; the stack never creates, changes or deletes them.",
    )
    workload_identity: WorkloadIdentityConfig = Field(description="The workloads' Kubernetes and GCP service accounts.")
    tenancy: TenancyConfig = Field(
        default_factory=TenancyConfig, description="Quota, network policy, priorities and RBAC of the namespace."
    )
    serving: Serving | None = Field(None, description="The serving workload; unset deploys the infrastructure only.")
    gateway: GatewayConfig | None = Field(
        None,
        description="An internal GKE Gateway (regional internal Application Load Balancer) with an HTTPRoute to "
        "the serving Service; unset: no gateway.",
    )
    prices: PricesConfig = Field(
        default_factory=PricesConfig, description="Negotiated prices for the cost estimate (USD)."
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Metrics scraping, the dashboard and the alert policies of the serving workload.",
    )
    project_apis: CreateOrExisting = Field(
        CreateOrExisting.CREATE,
        description="`create`: the stack enables the Google Cloud APIs it uses (and keeps them on when it is "
        "destroyed); `existing`: they are enabled already, and the stack makes no call for them (the preview "
        "lists them). Unset: `create`, or `existing` on a model stack (`platform`), whose platform stack enables "
        "them; a model stack that needs one the platform does not (the image mirror's Artifact Registry) sets "
        "`create`.",
    )
    controller_manifests: ControllerManifestsConfig = Field(
        default_factory=ControllerManifestsConfig,
        description="Where each controller's release manifest is read from (mirrors, clusters without internet "
        "access); unset: the upstream release URL.",
    )
    controller_installs: ControllerInstallsConfig = Field(
        default_factory=ControllerInstallsConfig, description="Whether the stack installs and owns each controller."
    )
    image_mirror: ImageMirrorConfig = Field(
        default_factory=ImageMirrorConfig, description="Where the images of Docker Hub and ghcr.io are pulled from."
    )
    host_maintenance: HostMaintenanceConfig = Field(
        default_factory=HostMaintenanceConfig,
        description="TPU host maintenance of the serving pools: started by the stack's gate, one pool at a time, or "
        "left to a ticket. A serving setting, not a cluster one: an existing cluster's stack has it too.",
    )
    platform: PlatformRefConfig | None = Field(
        None,
        description="A model stack: the platform stack whose cluster, controllers and shared Gateway it builds on "
        "(docs/platform.md); unset: the stack has its own cluster (or `cluster.existing`).",
    )
    production: StackBool = Field(
        True,
        description="Whether the stack serves production traffic. `true` refuses what keeps the serving from an SLO, "
        "each at its key: alert policies that notify nobody (`observability.unpaged`) or none, tickets that wake the pager "
        "(`observability.ticketChannels` empty or naming a page channel), one serving group "
        "(`serving.singleGroup: accepted`), and a backend's own gaps (the disaggregated mode's alpha API, a "
        "PathwaysJob's restarts that never come back). `false` runs the stack as an example: the preview's "
        "`Production:` line lists the gaps.",
    )

    @field_validator("shared_buckets")
    @classmethod
    def _shared_once(cls, v: list[SharedBucketConfig]) -> list[SharedBucketConfig]:
        problems = SharedBucketsArgs(tuple(v)).problems() if v else []
        if problems:
            raise ValueError("; ".join(p.removeprefix("buckets: ") for p in problems))
        return v

    @model_validator(mode="before")
    @classmethod
    def _platform_apis(cls, data: Any) -> Any:
        # A model stack's APIs are its platform's, which enables them (sharedPlatform's projectApis): a second
        # gcp.projects.Service per API in every model stack only re-declares them, and an owner per API keeps one
        # stack's change from acting on another's. Opting in (projectApis: create) stays possible: every Service,
        # the platform's or a model stack's, keeps its API on when destroyed (disable_on_destroy=False,
        # tpu_serving.platform.services), so no stack's destroy turns off an API another uses.
        unset = isinstance(data, dict) and not {"projectApis", "project_apis"} & data.keys()
        if unset and data.get("platform") is not None:
            return {**data, "projectApis": CreateOrExisting.EXISTING}
        return data

    @field_validator("project")
    @classmethod
    def _project_id(cls, v: str) -> str:
        if problem := project_id_problem(v):
            raise ValueError(problem)
        return v

    @field_validator("region")
    @classmethod
    def _region(cls, v: str) -> str:
        if problem := region_problem(v):
            raise ValueError(problem)
        return v

    @field_validator("zone")
    @classmethod
    def _zone_in_region(cls, v: str, info: ValidationInfo) -> str:
        if not ZONE.match(v):
            raise ValueError("must be a GCP zone such as us-east5-b")
        region = info.data.get("region")
        if region is not None and (problem := zone_problem(v, region)):
            raise ValueError(problem)
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        if problem := labels_problem(v):
            raise ValueError(problem)
        return v

    @field_validator("tpu_slices")
    @classmethod
    def _unique_pools(cls, v: list[TpuSliceConfig]) -> list[TpuSliceConfig]:
        names = [p for s in v for p in s.pool_names]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"node pool names must be unique; repeated: {', '.join(dupes)}")
        return v

    @field_validator("buckets")
    @classmethod
    def _one_per_purpose(cls, v: list[BucketConfig]) -> list[BucketConfig]:
        purposes = [b.purpose for b in v]
        dupes = sorted({p for p in purposes if purposes.count(p) > 1})
        if dupes:
            raise ValueError(f"at most one bucket per purpose; repeated: {', '.join(dupes)}")
        return v

    # -- derived values used by the components ------------------------------------------

    def zone_of(self, s: TpuSliceConfig) -> str:
        """The zone of a slice kind: its own, else the stack's."""
        return s.zone or self.zone

    @property
    def slices(self) -> tuple[tuple[str, catalog.SliceShape, TpuSliceConfig], ...]:
        """Every slice as ``(node pool name, shape, its config)``, in config order."""
        return tuple((p, s.shape, s) for s in self.tpu_slices for p in s.pool_names)

    def bucket(self, purpose: str) -> BucketConfig | None:
        """The bucket of ``purpose``, if the stack declares one."""
        return next((b for b in self.buckets if b.purpose == purpose), None)

    @property
    def existing(self) -> bool:
        """Whether the cluster exists (``cluster.existing``, or a platform stack's: ``platform``): the stack does not
        create it, and shares it."""
        return self.cluster.existing is not None or self.platform is not None

    def node_pool_names(self, s: StackSlice) -> tuple[str, ...]:
        """The GKE node pools of slice kind ``s``, one per slice: the existing pools it names, else
        ``<cluster.name>-<pool>``."""
        return tuple(s.existing_node_pools or (pool_name(self.cluster.name, p) for p in s.pool_names))
