"""Stack configuration: frozen pydantic v2 models at the edge of the library.

A stack file (``stacks/Pulumi.<stack>.yaml``) is validated here once, before any resource
is registered. Every problem is collected and reported together in one
:class:`ConfigError`, each naming the config key path as the user wrote it
(``tpu-serving:tpuSlices[0].topology``), the bad value and the valid choices. Past this
module the library works with plain typed values only.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import json
import math
import re
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Optional, Union

import pulumi
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from . import catalog, machines
from .cluster import MaintenanceSettings
from .controllers import JOBSET, LWS, PATHWAYS_JOB, Controller, parse_version
from .images import ImageRef
from .models import MAXTEXT_MODEL_PARAMETERS, Precision, maxtext_precision, weight_gib
from .naming import NameLimit, check_dns_name
from .pathways_serving import MaxTextSettings, PathwaysImages, PathwaysRequests, ProbeSettings
from .pathways_workload import (
    DEFAULT_PATHWAYS_VERSION,
    PATHWAYS_JOB_MACHINE_TYPES,
    HeadPoolSettings,
    head_requests,
)
from .saxml_serving import SaxmlImages

PROJECT_NAMESPACE = "tpu-serving"
"""The Pulumi project name, and so the namespace of this package's stack config keys."""

GCP_KEYS = {"project": "gcp:project", "region": "gcp:region"}
"""Stack config fields read from the ``gcp`` provider namespace (shared with the provider)."""


class Model(BaseModel):
    """Base of every config model: frozen, unknown keys rejected, camelCase keys."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )


def _catalog_message(err: catalog.CatalogError) -> str:
    return f"{err}; valid: {', '.join(err.choices)}" if err.choices else str(err)


def _dns_validator(limit: NameLimit, min_length: int = 1):
    def check(value: Optional[str]) -> Optional[str]:
        problem = value is not None and check_dns_name(value, limit=limit, min_length=min_length)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


ClusterName = Annotated[str, _dns_validator(NameLimit.GKE_CLUSTER)]
"""A GKE cluster name (DNS-1123, at most 40 characters)."""
PoolName = Annotated[str, _dns_validator(NameLimit.GKE_NODE_POOL)]
"""A node pool name (DNS-1123, at most 40 characters)."""
K8sName = Annotated[str, _dns_validator(NameLimit.K8S_LABEL)]
"""A Kubernetes object name that must be a DNS-1123 label (at most 63 characters)."""
ServiceAccountId = Annotated[str, _dns_validator(NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)]
"""A GCP service account id (6 to 30 characters)."""


def settings_model(cls: type, name: str) -> type[Model]:
    """A config model with the fields, types, defaults and descriptions of dataclass ``cls``.

    The components define their settings once, as documented frozen dataclasses; the
    stack files are validated against this generated model; :func:`to_settings` turns a
    validated model back into the dataclass.
    """
    hints = typing.get_type_hints(cls, include_extras=True)
    spec: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = ...
        annotation = hints[f.name]
        item = _tuple_item(annotation)
        if item is not None and dataclasses.is_dataclass(item):
            # A tuple of settings dataclasses is a list of their models in the stack file.
            annotation = list[settings_model(item, item.__name__ + "Config")]  # type: ignore[misc]
            default = list(default) if default is not ... else ...
        spec[f.name] = (annotation, Field(default, description=f.metadata["description"]))
    return create_model(name, __base__=Model, __doc__=cls.__doc__, **spec)


def _tuple_item(annotation: Any) -> Optional[type]:
    """``X`` for ``tuple[X, ...]``, else None."""
    if typing.get_origin(annotation) is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis and isinstance(args[0], type):
            return args[0]
    return None


def to_settings(model: BaseModel, cls: type):
    """The dataclass ``cls`` holding the values of a model made by :func:`settings_model`."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        value = getattr(model, f.name)
        item = _tuple_item(hints[f.name])
        if item is not None and dataclasses.is_dataclass(item):
            value = tuple(to_settings(v, item) for v in value)
        values[f.name] = value
    return cls(**values)


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        raise ValueError(f"not a CIDR block ({err})") from None
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
"""A CIDR block such as 10.0.0.0/8."""


def _release_validator(controller: Controller):
    def check(value: str) -> str:
        if parse_version(value) < parse_version(controller.min_version or "v0.0.0"):
            raise ValueError(f"{controller.name} {value} is older than the oldest supported, {controller.min_version}")
        return value

    return AfterValidator(check)


# --------------------------------------------------------------------------- cluster


class CpuPoolConfig(Model):
    """The small CPU node pool that runs every non-TPU pod (controllers, Sax admin, HTTP front ends)."""

    machine_type: str = Field("n2-standard-8", description="GCE machine type of the CPU nodes.")
    min_nodes: int = Field(1, ge=0, le=100, description="Autoscaling minimum, per zone of the pool.")
    max_nodes: int = Field(3, ge=1, le=100, description="Autoscaling maximum, per zone of the pool.")
    disk_size_gb: int = Field(100, ge=30, le=2000, description="Boot disk size of each CPU node, in GB.")

    @model_validator(mode="after")
    def _min_le_max(self) -> "CpuPoolConfig":
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"minNodes ({self.min_nodes}) must not exceed maxNodes ({self.max_nodes})")
        return self


_GKE_VERSION = re.compile(r"^(latest|\d+\.\d+(\.\d+(-gke\.\d+)?)?)$")
"""Values GKE accepts for ``min_master_version``: ``latest``, a minor, a patch or a full GKE version."""

MaintenanceConfig = settings_model(MaintenanceSettings, "MaintenanceConfig")


class ClusterConfig(Model):
    """The regional GKE Standard cluster."""

    name: ClusterName = Field(description="GKE cluster name; also the prefix of the other cloud resource names.")
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = Field(
        "REGULAR", description="GKE release channel that picks the control-plane and node versions."
    )
    min_master_version: Optional[str] = Field(
        None, description="Minimum GKE version, e.g. 1.31; unset lets the release channel decide."
    )
    deletion_protection: bool = Field(
        True, description="Refuse `pulumi destroy` of the cluster until this is set to false and applied."
    )
    network: str = Field("default", description="VPC network of the cluster.")
    subnetwork: Optional[str] = Field(None, description="Subnetwork of the cluster; unset uses the network's default.")
    cpu_pool: CpuPoolConfig = Field(
        default_factory=CpuPoolConfig, description="The CPU node pool for non-TPU pods, in the TPU zone."
    )
    image_streaming: bool = Field(True, description="GKE image streaming (GCFS) on every node pool.")
    gcs_fuse_csi_driver: bool = Field(True, description="The Cloud Storage FUSE CSI driver add-on.")
    managed_prometheus: bool = Field(True, description="Google Cloud Managed Service for Prometheus.")
    private_nodes: bool = Field(
        False, description="Nodes without external IPs; the stack then adds a Cloud Router and Cloud NAT for image pulls."
    )
    master_authorized_networks: Optional[list[Cidr]] = Field(
        None, description="CIDR blocks allowed to reach the control plane; unset leaves it open to authenticated clients."
    )
    security_group: Optional[str] = Field(
        None,
        pattern=r"^gke-security-groups@[a-z0-9.-]+\.[a-z]{2,}$",
        description="`gke-security-groups@<domain>` for Google Groups in RBAC; required when "
        "`tenancy.operators.groups` is set.",
    )
    maintenance: MaintenanceConfig = Field(  # type: ignore[valid-type]
        default_factory=MaintenanceConfig, description="When GKE may upgrade the cluster and the TPU slices."
    )

    @field_validator("min_master_version")
    @classmethod
    def _gke_version(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not _GKE_VERSION.match(v):
            raise ValueError("must be `latest` or a GKE version such as 1.31, 1.31.1 or 1.31.1-gke.1146000")
        return v


# --------------------------------------------------------------------------- TPU slices


RESERVED_POOL_NAMES = ("cpu", "head", "nodes", "wl")
"""Slice names that would collide with ``<cluster>-cpu`` / ``<cluster>-head`` pools or the
``<cluster>-nodes`` / ``<cluster>-wl`` service accounts."""


class TpuSliceConfig(Model):
    """One kind of TPU slice; ``count`` identical slices make ``count`` node pools."""

    name: PoolName = Field(
        description="Short name of the slice kind, e.g. `v6e16` or `prefill`; names its node pools "
        "and its node service account."
    )
    slice: Optional[str] = Field(
        None, description="Cloud TPU slice name (`v6e-16`, `v5litepod-32`, `v5p-16`); or give machineType and topology."
    )
    machine_type: Optional[str] = Field(None, description="GKE TPU machine type, e.g. `ct6e-standard-4t`.")
    topology: Optional[str] = Field(None, description="TPU topology for machineType, e.g. `4x4`.")
    count: int = Field(1, ge=1, le=64, description="Number of identical slices, one node pool each.")
    spot: bool = Field(False, description="Run the slice on Spot VMs.")
    reservation: Optional[str] = Field(
        None, description="Name of a specific Compute Engine reservation the slice consumes."
    )
    disk_size_gb: int = Field(200, ge=50, le=4000, description="Boot disk size of each TPU VM, in GB.")

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, v: str) -> str:
        if v in RESERVED_POOL_NAMES:
            raise ValueError(f"reserved for the stack's own pools and accounts: {', '.join(RESERVED_POOL_NAMES)}")
        return v

    @field_validator("slice")
    @classmethod
    def _known_slice(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            try:
                catalog.resolve_slice_name(v)
            except catalog.CatalogError as err:
                raise ValueError(_catalog_message(err)) from None
        return v

    @field_validator("machine_type")
    @classmethod
    def _known_machine_type(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            try:
                catalog.machine_type(v)
            except catalog.CatalogError as err:
                raise ValueError(_catalog_message(err)) from None
        return v

    @field_validator("topology")
    @classmethod
    def _supported_topology(cls, v: Optional[str], info: ValidationInfo) -> Optional[str]:
        if v is None:
            return v
        try:
            catalog.parse_topology(v)
            mt = info.data.get("machine_type")
            if mt is not None:
                catalog.slice_shape(mt, v)
        except catalog.CatalogError as err:
            raise ValueError(_catalog_message(err)) from None
        return v

    @model_validator(mode="after")
    def _one_way_to_name_the_shape(self) -> "TpuSliceConfig":
        by_name = self.slice is not None
        by_shape = self.machine_type is not None or self.topology is not None
        if by_name == by_shape or (by_shape and (self.machine_type is None or self.topology is None)):
            raise ValueError(
                "give either `slice` (e.g. v6e-16) or both `machineType` and `topology`"
            )
        if self.spot and self.reservation:
            raise ValueError("`spot` and `reservation` are mutually exclusive")
        return self

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
    name: Optional[str] = Field(
        None, description="Globally unique bucket name; default `<project>-<cluster>-<purpose>`."
    )
    location: Optional[str] = Field(None, description="Bucket location; default the stack's region.")
    storage_class: Literal["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"] = Field(
        "STANDARD", description="Default storage class of new objects."
    )
    versioning: bool = Field(False, description="Keep non-current object versions.")
    workload_access: Literal["read", "readWrite", "none"] = Field(
        "readWrite",
        description="What the serving workloads' service account may do with the objects "
        "(`read`: roles/storage.objectViewer, `readWrite`: roles/storage.objectUser).",
    )
    scratch_ttl_days: Optional[int] = Field(
        None, ge=1, le=3650, description="Delete objects older than this many days (scratch buckets)."
    )

    @field_validator("name")
    @classmethod
    def _bucket_name(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            problem = check_dns_name(v, limit=NameLimit.GCS_BUCKET, min_length=3)
            if problem or v.startswith("goog"):
                raise ValueError(problem or "bucket names must not start with 'goog'")
        return v


class WorkloadIdentityConfig(Model):
    """The Kubernetes service account the workloads run as, mapped to a GCP service account."""

    namespace: K8sName = Field(description="Kubernetes namespace of the workloads (created by the stack).")
    kubernetes_service_account: K8sName = Field(
        "tpu-serving", description="Kubernetes service account the workload pods run as."
    )
    gcp_service_account: Optional[ServiceAccountId] = Field(
        None, description="account_id of the GCP service account; default `<cluster>-wl`."
    )


# --------------------------------------------------------------------------- serving

MaxTextConfig = settings_model(MaxTextSettings, "MaxTextConfig")
PathwaysImagesConfig = settings_model(PathwaysImages, "PathwaysImagesConfig")
ProbesConfig = settings_model(ProbeSettings, "ProbesConfig")
PathwaysRequestsConfig = settings_model(PathwaysRequests, "PathwaysRequestsConfig")

Capability = Literal["SYS_PTRACE", "NET_ADMIN", "SYS_TIME", "SYS_RESOURCE", "IPC_LOCK"]


class JaxTpuConfig(Model):
    """Extra settings of the ``jax-tpu`` container."""

    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    capabilities: list[Capability] = Field(
        default_factory=list, description="Linux capabilities to add (the disaggregated server uses some)."
    )


class ModelSizeConfig(Model):
    """The served model's size, for the HBM fit check."""

    parameters_billions: float = Field(gt=0, description="Parameter count in billions.")
    precision: Precision = Field(description="Precision of the served weights.")


class PathwaysServingConfig(Model):
    """JetStream + MaxText on Pathways, as one LeaderWorkerSet (seeds 000 and 001)."""

    backend: Literal["jetstream-pathways"] = Field(description="Selects this serving backend.")
    mode: Literal["interleaved", "disaggregated"] = Field(
        "interleaved", description="`interleaved` over one or more slices, or `disaggregated` prefill/decode over two."
    )
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the model is served on.")
    replicas: int = Field(1, ge=1, le=16, description="Leader-worker groups; each takes its own share of the slices.")
    name: K8sName = Field("jetstream-pathways", description="LeaderWorkerSet name; the first leader pod is `<name>-0`.")
    service_name: K8sName = Field("jetstream-svc", description="Name of the ClusterIP Service on port 8000.")
    lws_version: Annotated[str, _release_validator(LWS)] = Field(
        LWS.default_version, description="LeaderWorkerSet release installed by the stack (v0.4.0 or later)."
    )
    checkpoint_path: str = Field(
        description="Path of the MaxText checkpoint inside the stack's `checkpoints` bucket."
    )
    maxtext: MaxTextConfig = Field(description="MaxText/JetStream server settings.")  # type: ignore[valid-type]
    images: PathwaysImagesConfig = Field(  # type: ignore[valid-type]
        default_factory=PathwaysImagesConfig, description="Container images."
    )
    probes: ProbesConfig = Field(default_factory=ProbesConfig, description="Health probe timing of `jax-tpu`.")  # type: ignore[valid-type]
    requests: PathwaysRequestsConfig = Field(  # type: ignore[valid-type]
        default_factory=PathwaysRequestsConfig, description="CPU and memory requests of the containers."
    )
    resource_manager_flags: list[str] = Field(
        default_factory=list, description="Extra flags of the Pathways resource manager."
    )
    jax_tpu: JaxTpuConfig = Field(default_factory=JaxTpuConfig, description="Extra settings of `jax-tpu`.")
    model: Optional[ModelSizeConfig] = Field(
        None,
        description="Size of the served model for the HBM fit check; unset derives it from `maxtext.modelName` "
        "(a known MaxText model) and `maxtext.quantization`/`weightDtype`.",
    )

    @model_validator(mode="after")
    def _prefill_within_target(self) -> "PathwaysServingConfig":
        mt = self.maxtext
        if mt.max_prefill_predict_length > mt.max_target_length:
            raise ValueError(
                f"maxtext.maxPrefillPredictLength ({mt.max_prefill_predict_length}) must not exceed "
                f"maxtext.maxTargetLength ({mt.max_target_length}): the target length includes the prompt"
            )
        return self

    @field_validator("checkpoint_path")
    @classmethod
    def _relative_path(cls, v: str) -> str:
        if not v or v.startswith(("gs://", "/")) or ".." in v.split("/"):
            raise ValueError("must be a path inside the stack's checkpoints bucket, e.g. llama3.1-405b/int8/0/items")
        return v


SaxmlImagesConfig = settings_model(SaxmlImages, "SaxmlImagesConfig")

class SaxModelConfig(Model):
    """A model the Saxml cell serves; published by the stack, unpublished when removed."""

    model: str = Field(description="Model path in the cell, e.g. `/sax/test/spmd`.")
    model_path: str = Field(description="Saxml model class, e.g. `saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test`.")
    checkpoint: str = Field("None", description="Checkpoint path, or `None` for random weights.")
    replicas: int = Field(1, ge=1, le=64, description="Model server replicas; each takes one slice.")
    parameters_billions: float = Field(gt=0, description="Parameter count in billions, for the HBM sizing check.")
    weight_precision: Precision = Field(
        "bf16", description="Precision of the served weights, for the HBM sizing check."
    )

    @field_validator("model")
    @classmethod
    def _model_path(cls, v: str) -> str:
        if not re.match(r"^/sax/[a-z0-9_-]+/[A-Za-z0-9_.-]+$", v):
            raise ValueError("must be a Sax model path /sax/<cell>/<model>, e.g. /sax/test/spmd")
        return v


class SaxmlHttpConfig(Model):
    """How sax-http is exposed."""

    exposure: Literal["internal", "public", "cluster"] = Field(
        "internal",
        description="`internal` LoadBalancer (VPC only), `public` LoadBalancer (needs sourceRanges), or `cluster` (ClusterIP).",
    )
    source_ranges: list[Cidr] = Field(
        default_factory=list, description="CIDR blocks allowed to reach the load balancer."
    )

    @model_validator(mode="after")
    def _public_needs_ranges(self) -> "SaxmlHttpConfig":
        if self.exposure == "public" and not self.source_ranges:
            raise ValueError("a public load balancer needs sourceRanges (the CIDR blocks allowed in)")
        return self


class SaxmlServingConfig(Model):
    """Saxml on multi-host TPU slices (seed 002)."""

    backend: Literal["saxml"] = Field(description="Selects this serving backend.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries that run model servers.")
    cell: str = Field("/sax/test", pattern=r"^/sax/[a-z0-9_-]+$", description="The Sax cell, e.g. `/sax/test`.")
    jobset_version: Annotated[str, _release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release installed by the stack (v0.2.3 or later)."
    )
    images: SaxmlImagesConfig = Field(default_factory=SaxmlImagesConfig, description="Container images.")  # type: ignore[valid-type]
    max_restarts: int = Field(4, ge=0, le=100, description="JobSet failurePolicy.maxRestarts.")
    privileged: Literal["auto", "always", "never"] = Field(
        "auto",
        description="Privileged model servers: `auto` only when cluster.minMasterVersion is below 1.28 "
        "(GKE's TPU access needed it there), or `always`/`never`.",
    )
    http: SaxmlHttpConfig = Field(default_factory=SaxmlHttpConfig, description="Exposure of sax-http.")
    models: list[SaxModelConfig] = Field(default_factory=list, description="Models to publish (declarative).")
    publish_timeout_seconds: int = Field(
        1800, ge=60, le=7200, description="How long publication waits for sax-http and the model replicas."
    )


HeadPoolConfig = settings_model(HeadPoolSettings, "HeadPoolConfig")


class UserContainerConfig(Model):
    """The user's batch container."""

    image: ImageRef = Field(description="Container image.")
    command: list[str] = Field(default_factory=list, description="Command (entrypoint override).")
    args: list[str] = Field(default_factory=list, description="Arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables.")


class CustomComponentConfig(Model):
    """Override of one Pathways component."""

    component_type: Literal["proxy_server", "pathways_server", "worker", "colocated_python_sidecar"] = Field(
        description="Which component."
    )
    image: Optional[ImageRef] = Field(None, description="Image replacing the default.")
    flags: list[str] = Field(default_factory=list, description="Extra flags, `--name=value`.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")


LIMIT_RANGE_DEFAULT_CPU = 0.25
LIMIT_RANGE_DEFAULT_MEMORY = 512 * 2**20
"""The namespace's default container requests (the Tenancy LimitRange: 250m, 512Mi)."""

JOBSET_FOR_PATHWAYS_JOB = "v0.8.0"
"""Oldest JobSet release the PathwaysJob controller works with."""


class PathwaysJobConfig(Model):
    """A Pathways batch or interactive workload through the PathwaysJob API (seed 003)."""

    backend: Literal["pathways-job"] = Field(description="Selects this backend.")
    workload: Literal["batch", "interactive"] = Field(
        description="`batch`: runs `container` to completion; `interactive`: a JAX client connects to the IFRT proxy."
    )
    name: K8sName = Field("pathways", description="PathwaysJob name.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the workers run on.")
    pathways_job_version: Annotated[str, _release_validator(PATHWAYS_JOB)] = Field(
        PATHWAYS_JOB.default_version, description="PathwaysJob controller release installed by the stack."
    )
    jobset_version: Annotated[str, _release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release installed by the stack (v0.8.0 or later here)."
    )
    pathways_version: str = Field(
        DEFAULT_PATHWAYS_VERSION,
        pattern=r"^jax-\d+\.\d+\.\d+$",
        description="Pathways release (the server and proxy image tag), e.g. `jax-0.5.3`; the batch container "
        "gets the matching JAX version in `PATHWAYS_JAX_VERSION`.",
    )
    deployment_mode: Literal["default", "colocate_head_with_workers"] = Field(
        "default", description="`default`: head (RM, proxy) on a CPU node; `colocate_head_with_workers`: beside a TPU worker."
    )
    max_restarts: int = Field(0, ge=0, le=1000, description="JobSet restarts before the job fails.")
    max_slice_restarts: int = Field(1, ge=0, le=1000, description="Restarts of a single slice.")
    elastic_slices: Optional[int] = Field(None, ge=1, description="Slices that may be missing at once; unset disables.")
    termination_grace_period_seconds: Optional[int] = Field(None, ge=0, le=86400, description="Grace period of worker pods.")
    priority_class_name: Optional[K8sName] = Field(None, description="Priority class of the worker pods.")
    container: Optional[UserContainerConfig] = Field(None, description="The batch job's container (batch only).")
    custom_components: list[CustomComponentConfig] = Field(
        default_factory=list, description="Component overrides (image, flags, env)."
    )
    head_pool: HeadPoolConfig = Field(  # type: ignore[valid-type]
        default_factory=HeadPoolConfig,
        description="The CPU node pool of the Pathways head in deploymentMode `default` (24 CPU, 132 GB, host network).",
    )


Serving = Annotated[
    Union[PathwaysServingConfig, SaxmlServingConfig, PathwaysJobConfig], Field(discriminator="backend")
]
"""The serving backend, chosen by `backend`."""


# --------------------------------------------------------------------------- tenancy


class QuotaConfig(Model):
    """CPU and memory quota of the namespace (its TPU quota is the chips of its slices)."""

    cpu: str = Field("256", pattern=r"^\d+(\.\d+)?m?$", description="`requests.cpu` quota, e.g. 256.")
    memory: str = Field("2048Gi", pattern=r"^\d+(Ki|Mi|Gi|Ti)?$", description="`requests.memory` quota, e.g. 2048Gi.")


class OperatorsConfig(Model):
    """Who operates the variant: bound to a namespaced Role (observe, port-forward, restart)."""

    groups: list[str] = Field(default_factory=list, description="Groups, e.g. Google Groups for GKE RBAC.")
    users: list[str] = Field(default_factory=list, description="Users (email addresses).")


class TenancyConfig(Model):
    """The stack's namespace as a tenant: quota, network policy, priorities, RBAC (seed 004)."""

    quota: QuotaConfig = Field(default_factory=QuotaConfig, description="CPU and memory quota.")
    allowed_namespaces: list[K8sName] = Field(
        default_factory=list, description="Namespaces whose pods may reach the serving ports."
    )
    allowed_cidrs: list[Cidr] = Field(
        default_factory=list, description="CIDR blocks that may reach the serving ports (load balancer clients)."
    )
    operators: OperatorsConfig = Field(default_factory=OperatorsConfig, description="The team operating the variant.")


# --------------------------------------------------------------------------- stack


_PROJECT_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_ZONE = re.compile(r"^([a-z]+-[a-z]+[0-9]+)-[a-z]$")


class StackConfig(Model):
    """Everything one stack file declares. Built by :func:`load_stack_config`."""

    project: str = Field(description="GCP project ID (config key `gcp:project`).")
    region: str = Field(description="GCP region of the regional cluster and the buckets (config key `gcp:region`).")
    zone: str = Field(description="Zone of the region that holds the TPU slices and the CPU pool.")
    labels: dict[str, str] = Field(
        default_factory=dict, description="GCP labels added to every labelled resource."
    )
    cluster: ClusterConfig = Field(description="The GKE cluster.")
    tpu_slices: list[TpuSliceConfig] = Field(min_length=1, description="The TPU slices, one node pool each.")
    buckets: list[BucketConfig] = Field(
        min_length=1, description="GCS buckets of the stack; at most one per purpose."
    )
    workload_identity: WorkloadIdentityConfig = Field(
        description="The workloads' Kubernetes and GCP service accounts."
    )
    tenancy: TenancyConfig = Field(
        default_factory=TenancyConfig, description="Quota, network policy, priorities and RBAC of the namespace."
    )
    serving: Optional[Serving] = Field(
        None, description="The serving workload; unset deploys the infrastructure only."
    )

    @field_validator("project")
    @classmethod
    def _project_id(cls, v: str) -> str:
        if not _PROJECT_ID.match(v):
            raise ValueError(
                "must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', "
                "starting with a letter"
            )
        return v

    @field_validator("region")
    @classmethod
    def _region(cls, v: str) -> str:
        if not _REGION.match(v):
            raise ValueError("must be a GCP region such as us-east5 or europe-west4")
        return v

    @field_validator("zone")
    @classmethod
    def _zone_in_region(cls, v: str, info: ValidationInfo) -> str:
        m = _ZONE.match(v)
        if not m:
            raise ValueError("must be a GCP zone such as us-east5-b")
        region = info.data.get("region")
        if region is not None and m.group(1) != region:
            raise ValueError(
                f"zone is outside the region {region!r}; valid: zones of the form {region}-<letter>, "
                f"e.g. {region}-a, {region}-b, {region}-c"
            )
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        label = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
        bad = [k for k in v if not label.match(k)] + [
            val for val in v.values() if not re.match(r"^[a-z0-9_-]{0,63}$", val)
        ]
        if bad:
            raise ValueError(
                f"GCP labels must be lower-case letters, digits, '_' or '-' (at most 63); bad: {', '.join(bad)}"
            )
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

    @property
    def slices(self) -> tuple[tuple[str, catalog.SliceShape, TpuSliceConfig], ...]:
        """Every slice as ``(node pool name, shape, its config)``, in config order."""
        return tuple((p, s.shape, s) for s in self.tpu_slices for p in s.pool_names)

    def bucket(self, purpose: str) -> Optional[BucketConfig]:
        """The bucket of ``purpose``, if the stack declares one."""
        return next((b for b in self.buckets if b.purpose == purpose), None)


def pool_name(cfg: StackConfig, pool: str) -> str:
    """The GKE node pool name of slice pool ``pool``: ``<cluster>-<pool>``."""
    return f"{cfg.cluster.name}-{pool}"


def bucket_name(cfg: StackConfig, bucket: BucketConfig) -> str:
    """The bucket's name: its ``name`` or ``<project>-<cluster>-<purpose>``."""
    return bucket.name or f"{cfg.project}-{cfg.cluster.name}-{bucket.purpose}"


def node_service_account_id(cfg: StackConfig, slice_name: str) -> str:
    """The node service account id of a slice kind's pools: ``<cluster>-<slice name>``."""
    return f"{cfg.cluster.name}-{slice_name}"


def gcp_service_account_id(cfg: StackConfig) -> str:
    """The workloads' GCP service account id: configured, or ``<cluster>-wl``."""
    return cfg.workload_identity.gcp_service_account or f"{cfg.cluster.name}-wl"


# --------------------------------------------------------------------------- errors & loading


class ConfigError(pulumi.RunError):
    """Invalid stack configuration: every problem, one per line, with its key path.

    It subclasses :class:`pulumi.RunError`, so ``pulumi up``/``preview`` print the message
    without a Python traceback.
    """

    def __init__(self, problems: list[str], source: str = "stack configuration"):
        self.problems = problems
        n = len(problems)
        super().__init__(
            f"invalid {source}: {n} problem{'s' if n != 1 else ''}\n"
            + "\n".join(f"  - {p}" for p in problems)
        )


_BACKENDS = ("jetstream-pathways", "saxml", "pathways-job")
"""Discriminator values of the serving union (pydantic adds them to error locations)."""


def _key_path(loc: tuple[Any, ...]) -> str:
    if not loc:
        return f"{PROJECT_NAMESPACE}:<stack>"
    head, *rest = loc
    # Fields are reported by their camelCase alias; map the top level to its config key.
    path = GCP_KEYS.get(head, f"{PROJECT_NAMESPACE}:{head}")
    for i, part in enumerate(rest):
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in _BACKENDS and i == 0 and head == "serving":
            continue  # the union member's tag, not a key the user wrote
        elif part in ("function-after", "function-plain") or "[" in str(part):
            continue  # pydantic's internal validator tags
        else:
            path += f".{part}"
    return path


def _models_in(ann: Any) -> list[type[BaseModel]]:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for arg in (getattr(ann, "__args__", ()) or ()) for m in _models_in(arg)]


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel]:
    """The model class that a location path points into (for listing valid keys)."""
    model: type[BaseModel] = StackConfig
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if n == part or f.alias == part), None)
        candidates = _models_in(field.annotation) if field is not None else []
        if not candidates:
            return model
        if len(candidates) > 1 and parts and parts[0] in _BACKENDS:
            tag = parts.pop(0)
            candidates = [m for m in candidates if m.model_fields.get("backend") and tag in str(m.model_fields["backend"].annotation)]
        model = candidates[0]
    return model


def _describe(err: Mapping[str, Any]) -> str:
    loc = tuple(err["loc"])
    path = _key_path(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        names = [f.alias or n for n, f in model.model_fields.items()]
        close = difflib.get_close_matches(str(loc[-1]), names, n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        if model is StackConfig:
            names = [GCP_KEYS.get(n, f"{PROJECT_NAMESPACE}:{f.alias or n}") for n, f in model.model_fields.items()]
        return f"{path}: unknown key; {hint}valid keys: {', '.join(names)}"
    if kind == "missing":
        return f"{path}: required key is missing"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = (err.get("ctx") or {}).get("tag")
        shown = f" = {json.dumps(tag)}" if tag else ""
        return f"{path}.backend{shown}: unknown serving backend; valid: {', '.join(_BACKENDS)}"
    msg = err["msg"].removeprefix("Value error, ")
    value = err.get("input")
    shown = json.dumps(value, default=str) if not isinstance(value, (dict, list)) else None
    if shown is not None and len(shown) <= 80:
        return f"{path} = {shown}: {msg}"
    return f"{path}: {msg}"


def derived_name_problems(cfg: StackConfig) -> list[str]:
    """Names derived from several keys that break a GCP limit, reported at the key to change."""
    ns = PROJECT_NAMESPACE
    problems = []
    for i, s in enumerate(cfg.tpu_slices):
        for pool in s.pool_names:
            name = pool_name(cfg, pool)
            problem = check_dns_name(name, limit=NameLimit.GKE_NODE_POOL)
            if problem:
                problems.append(
                    f"{ns}:tpuSlices[{i}].name = {json.dumps(s.name)}: node pool name {name!r} "
                    f"(<cluster.name>-<name>) {problem}; shorten cluster.name or this name"
                )
    for i, b in enumerate(cfg.buckets):
        name = bucket_name(cfg, b)
        problem = check_dns_name(name, limit=NameLimit.GCS_BUCKET, min_length=3)
        if problem:
            problems.append(
                f"{ns}:buckets[{i}].name: the default bucket name {name!r} "
                f"(<project>-<cluster.name>-<purpose>) {problem}; set buckets[{i}].name"
            )
    for i, s in enumerate(cfg.tpu_slices):
        sa = node_service_account_id(cfg, s.name)
        problem = check_dns_name(sa, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)
        if problem:
            problems.append(
                f"{ns}:tpuSlices[{i}].name = {json.dumps(s.name)}: node service account id {sa!r} "
                f"(<cluster.name>-<name>) {problem}; shorten cluster.name or this name"
            )
    gsa = gcp_service_account_id(cfg)
    problem = check_dns_name(gsa, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)
    if problem:
        problems.append(
            f"{ns}:workloadIdentity.gcpServiceAccount: the default service account id {gsa!r} "
            f"(<cluster.name>-wl) {problem}; set workloadIdentity.gcpServiceAccount"
        )
    return problems


_RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def cluster_problems(cfg: StackConfig) -> list[str]:
    """Checks across the cluster and the rest of the stack, at the keys to change."""
    key = f"{PROJECT_NAMESPACE}:cluster"
    problems = []
    groups = cfg.tenancy.operators.groups
    if groups and cfg.cluster.security_group is None:
        problems.append(
            f"{PROJECT_NAMESPACE}:tenancy.operators.groups = {json.dumps(groups)}: RoleBindings to Google Groups "
            f"grant nothing unless the cluster has Google Groups for RBAC; set {key}.securityGroup to "
            "gke-security-groups@<your domain> (with these groups nested in it)"
        )
    m = cfg.cluster.maintenance
    for field_name, value in (("windowStart", m.window_start), ("windowEnd", m.window_end)):
        if not _RFC3339_UTC.match(value):
            problems.append(f"{key}.maintenance.{field_name} = {json.dumps(value)}: must be RFC 3339 in UTC, e.g. 2026-01-03T02:00:00Z")
    if not m.recurrence.startswith("FREQ="):
        problems.append(f"{key}.maintenance.recurrence = {json.dumps(m.recurrence)}: must be an RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=SA,SU")
    for i, e in enumerate(m.exclusions):
        at = f"{key}.maintenance.exclusions[{i}]"
        for field_name, value in (("startTime", e.start_time), ("endTime", e.end_time)):
            if value is not None and not _RFC3339_UTC.match(value):
                problems.append(f"{at}.{field_name} = {json.dumps(value)}: must be RFC 3339 in UTC, e.g. 2026-12-01T00:00:00Z")
        if e.scope == "NO_UPGRADES" and e.end_time is None:
            problems.append(f"{at}.endTime: required with scope NO_UPGRADES (at most 30 days); the other scopes may last until end of support")
        if e.end_time is not None and e.end_time <= e.start_time:
            problems.append(f"{at}.endTime = {json.dumps(e.end_time)}: must be after startTime {e.start_time}")
    return problems


def serving_problems(cfg: StackConfig) -> list[str]:
    """Checks across the serving config and the rest of the stack, at the keys to change."""
    serving = cfg.serving
    if serving is None:
        return []
    key = f"{PROJECT_NAMESPACE}:serving"
    kinds = {s.name: s for s in cfg.tpu_slices}
    unknown = [n for n in serving.slices if n not in kinds]
    if unknown:
        return [f"{key}.slices = {json.dumps(unknown)}: not in tpuSlices; valid: {', '.join(kinds)}"]
    chosen = [kinds[n] for n in serving.slices]
    shapes = {(k.shape.machine_type.name, k.shape.topology) for k in chosen}
    problems = []
    if len(shapes) > 1:
        problems.append(f"{key}.slices: the serving slices must share one shape; got {sorted(shapes)}")
    pools = sum(k.count for k in chosen)
    if isinstance(serving, SaxmlServingConfig):
        return problems + _saxml_problems(cfg, serving, chosen[0].shape, pools)
    if isinstance(serving, PathwaysJobConfig):
        return problems + _pathways_job_problems(cfg, serving, chosen[0].shape, pools)
    if pools % serving.replicas:
        problems.append(f"{key}.replicas = {serving.replicas}: {pools} slice(s) cannot be shared evenly")
    per_group = pools // serving.replicas
    if serving.mode == "disaggregated" and per_group != 2:
        problems.append(
            f"{key}.mode = \"disaggregated\": needs exactly 2 slices per group (prefill and decode), got {per_group}"
        )
    for purpose in ("checkpoints", "scratch"):
        b = cfg.bucket(purpose)
        if b is None or b.workload_access == "none":
            problems.append(
                f"{PROJECT_NAMESPACE}:buckets: jetstream-pathways needs a `{purpose}` bucket the workloads can access"
            )
    if len(shapes) == 1:
        problems += _parallelism_problems(key, serving.maxtext, chosen[0].shape)
        problems += _jetstream_fit_problems(serving, chosen[0].shape)
    return problems


def hbm_fit_problem(at: str, parameters_billions: float, precision: str, shape: catalog.SliceShape) -> str:
    """Why the weights don't fit one slice of ``shape`` (naming the smallest topology that does), or ``""``."""
    need = weight_gib(parameters_billions, precision)
    if need <= shape.hbm_gib:
        return ""
    fit = catalog.smallest_fitting_topology(shape.machine_type.name, need)
    hint = (
        f"the smallest {shape.machine_type.name} topology that fits is {fit.topology} ({fit.hbm_gib} GiB)"
        if fit
        else f"no {shape.machine_type.name} topology fits"
    )
    return (
        f"{at}: {parameters_billions:g}B parameters in {precision} need about {need:.0f} GiB of HBM, more than "
        f"one {shape.topology} slice has ({shape.hbm_gib} GiB); {hint}"
    )


def _jetstream_fit_problems(serving: "PathwaysServingConfig", shape: catalog.SliceShape) -> list[str]:
    """Every slice of a group holds the whole model (interleaved replicas and both disaggregated halves)."""
    key = f"{PROJECT_NAMESPACE}:serving"
    if serving.model is not None:
        size, precision, at = serving.model.parameters_billions, serving.model.precision, f"{key}.model"
    else:
        mt = serving.maxtext
        known = MAXTEXT_MODEL_PARAMETERS.get(mt.model_name)
        if known is None:
            return [
                f"{key}.model: required for the HBM fit check, since maxtext.modelName {json.dumps(mt.model_name)} "
                f"is not a model the library knows; known: {', '.join(MAXTEXT_MODEL_PARAMETERS)}"
            ]
        size, precision, at = known, maxtext_precision(mt.quantization, mt.weight_dtype), f"{key}.maxtext.modelName"
    problem = hbm_fit_problem(at, size, precision, shape)
    return [problem] if problem else []


def _pathways_job_problems(cfg: StackConfig, job: PathwaysJobConfig, shape: catalog.SliceShape, pools: int) -> list[str]:
    key = f"{PROJECT_NAMESPACE}:serving"
    problems = []
    if shape.machine_type.name not in PATHWAYS_JOB_MACHINE_TYPES:
        problems.append(
            f"{key}.slices: machine type {shape.machine_type.name!r} is not accepted by the PathwaysJob API; "
            f"valid: {', '.join(PATHWAYS_JOB_MACHINE_TYPES)}"
        )
    if job.workload == "batch" and job.container is None:
        problems.append(f"{key}.container: required for a batch workload (the user's container)")
    if job.workload == "interactive" and job.container is not None:
        problems.append(f"{key}.container: an interactive workload has no container; a JAX client connects instead")
    if parse_version(job.jobset_version) < parse_version(JOBSET_FOR_PATHWAYS_JOB):
        problems.append(
            f"{key}.jobsetVersion = {json.dumps(job.jobset_version)}: PathwaysJob needs JobSet {JOBSET_FOR_PATHWAYS_JOB} or later"
        )
    if job.elastic_slices is not None and job.elastic_slices >= pools:
        problems.append(f"{key}.elasticSlices = {job.elastic_slices}: must be fewer than the {pools} slice(s)")
    scratch = cfg.bucket("scratch")
    if scratch is None or scratch.workload_access != "readWrite":
        problems.append(f"{PROJECT_NAMESPACE}:buckets: pathways-job needs a `scratch` bucket with workloadAccess readWrite (pathwaysDir)")
    if job.deployment_mode == "default":
        problems += _head_fit_problems(cfg, job)
    elif job.workload == "interactive":
        problems.append(
            f"{key}.deploymentMode = \"colocate_head_with_workers\": an interactive job has no pod template, so the "
            "controller's head pod carries no toleration for the TPU nodes' google.com/tpu taint and cannot be "
            "scheduled there; valid: default"
        )
    return problems


def _head_fit_problems(cfg: StackConfig, job: "PathwaysJobConfig") -> list[str]:
    """The head must fit its pool, and (interactive: it cannot be pinned) must not fit the CPU pool."""
    key = f"{PROJECT_NAMESPACE}:serving.headPool.machineType"
    user_cpu, user_memory = (LIMIT_RANGE_DEFAULT_CPU, LIMIT_RANGE_DEFAULT_MEMORY) if job.container else (0.0, 0.0)
    cpu, memory = head_requests(user_cpu, user_memory)
    need = f"{cpu:g} CPU and {memory / machines.GIB:.1f} GiB (pathways-rm and pathways-proxy as the PathwaysJob v0.1.4 controller sizes them)"
    head = machines.machine(job.head_pool.machine_type)
    problems = []
    if head is None:
        problems.append(
            f"{key} = {json.dumps(job.head_pool.machine_type)}: unknown machine type; the head needs {need}; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    elif not head.fits(cpu, memory):
        problems.append(
            f"{key} = {json.dumps(head.name)}: the head needs {need}; {head.name} has "
            f"{head.allocatable_cpu:.2f} CPU and {head.allocatable_memory / machines.GIB:.1f} GiB allocatable; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    cpu_pool = machines.machine(cfg.cluster.cpu_pool.machine_type)
    if job.container is None and (cpu_pool is None or cpu_pool.fits(cpu, memory)):
        problems.append(
            f"{PROJECT_NAMESPACE}:cluster.cpuPool.machineType = {json.dumps(cfg.cluster.cpu_pool.machine_type)}: an "
            "interactive Pathways head cannot be pinned to its pool, so the CPU pool must be too small for it "
            "(its nodes hold no scratch bucket role for the head's host-network pods); choose a smaller known machine type"
        )
    return problems


def _saxml_problems(cfg: StackConfig, serving: SaxmlServingConfig, shape: catalog.SliceShape, pools: int) -> list[str]:
    key = f"{PROJECT_NAMESPACE}:serving"
    problems = []
    state = cfg.bucket("state")
    if state is None or state.workload_access != "readWrite":
        problems.append(f"{PROJECT_NAMESPACE}:buckets: saxml needs a `state` bucket with workloadAccess readWrite")
    names = [m.model for m in serving.models]
    for i, m in enumerate(serving.models):
        fit = hbm_fit_problem(f"{key}.models[{i}]", m.parameters_billions, m.weight_precision, shape)
        if fit:
            problems.append(fit)
        at = f"{key}.models[{i}]"
        if not m.model.startswith(serving.cell + "/"):
            problems.append(f"{at}.model = {json.dumps(m.model)}: not in the cell {serving.cell}")
        if names.count(m.model) > 1:
            problems.append(f"{at}.model = {json.dumps(m.model)}: listed more than once")
        if m.replicas > pools:
            problems.append(f"{at}.replicas = {m.replicas}: only {pools} model server slice(s)")
    return problems


def _parallelism_problems(key: str, mt: Any, shape: catalog.SliceShape) -> list[str]:
    dims = {
        "iciFsdpParallelism": mt.ici_fsdp_parallelism,
        "iciAutoregressiveParallelism": mt.ici_autoregressive_parallelism,
        "iciTensorParallelism": mt.ici_tensor_parallelism,
    }
    bad = [k for k, v in dims.items() if v == 0 or v < -1]
    if bad:
        return [f"{key}.maxtext.{k}: must be a positive integer or -1" for k in bad]
    if list(dims.values()).count(-1) > 1:
        return [f"{key}.maxtext: at most one ici parallelism may be -1"]
    known = math.prod(v for v in dims.values() if v != -1)
    if (-1 in dims.values() and shape.chips % known) or (-1 not in dims.values() and known != shape.chips):
        return [
            f"{key}.maxtext: ici parallelism {' x '.join(str(v) for v in dims.values())} does not "
            f"match the {shape.chips} chips of a {shape.topology} slice"
        ]
    return []


def validate_stack(data: Mapping[str, Any], source: str = "stack configuration") -> StackConfig:
    """Validate structured stack data (camelCase keys) into a :class:`StackConfig`.

    Raises :class:`ConfigError` listing every problem.
    """
    try:
        cfg = StackConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError([_describe(e) for e in exc.errors()], source) from None
    problems = derived_name_problems(cfg) + cluster_problems(cfg) + serving_problems(cfg)
    if problems:
        raise ConfigError(problems, source)
    return cfg


def _decode(value: Any) -> Any:
    # The Pulumi engine hands structured config values to the program as JSON text.
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_stack_config(
    values: Mapping[str, Any], source: str = "stack configuration"
) -> StackConfig:
    """Build the stack config from a flat Pulumi config map (``namespace:key`` -> value).

    Keys in this project's namespace become fields; ``gcp:project`` and ``gcp:region`` are
    shared with the Google provider; keys of other namespaces are left to their providers.
    """
    data: dict[str, Any] = {}
    for field, key in GCP_KEYS.items():
        if key in values:
            data[field] = _decode(values[key])
    prefix = f"{PROJECT_NAMESPACE}:"
    for key, value in values.items():
        if key.startswith(prefix):
            data[key[len(prefix):]] = _decode(value)
    return validate_stack(data, source)


def load_from_pulumi() -> StackConfig:
    """Load the current stack's config as the Pulumi engine passed it to this program."""
    from pulumi.runtime import config as runtime_config

    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return load_stack_config(values, f"configuration of stack {pulumi.get_stack()!r}")


