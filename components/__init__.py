"""tpu-serving: typed Pulumi components for multi-host TPU LLM serving on GKE.

Import the components into your own Pulumi program::

    from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog
"""

from . import catalog
from .backends.base import ServingNeighbours
from .backends.jetstream import (
    MaxTextSettings,
    PathwaysImages,
    PathwaysServing,
    PathwaysServingArgs,
)
from .backends.jetstream.args import PathwaysRequests
from .backends.pathways_job import (
    CustomComponent,
    PathwaysWorkload,
    PathwaysWorkloadArgs,
    UserContainer,
)
from .backends.pathways_job.args import ComponentType
from .backends.saxml import SaxmlImages, SaxmlServing, SaxmlServingArgs, SaxModel
from .backends.vllm import (
    SecretKey,
    VllmEngineSettings,
    VllmImages,
    VllmRequests,
    VllmServing,
    VllmServingArgs,
    WeightsLoader,
)
from .backends.vllm.file_cache import FileCache
from .backends.vllm.kv import KvTransfer
from .backends.vllm.progress import VllmProbeSettings
from .catalog import CatalogError, SliceShape, node_selector
from .catalog.capacity import Capacity
from .catalog.models import Attention, ModelSize, WeightPrecision
from .common.podspec import ProbeSettings, Shutdown
from .common.quota import PodSet
from .common.settings import CreateOrExisting
from .common.spread import ZoneSpread
from .common.validation import ArgumentsError
from .deployment import TpuServingDeployment, TpuServingDeploymentArgs
from .operations.autoscaling import AutoscalingSettings, ServingAutoscaler, ServingAutoscalerArgs
from .operations.maintenance import host_maintenance
from .operations.maintenance.host_maintenance_job import HostMaintenanceGate, HostMaintenanceGateArgs
from .operations.observability import (
    Observability,
    ObservabilityArgs,
    ScrapeTarget,
    ServingMetrics,
    ServingSignals,
)
from .operations.observability_settings import ObservabilitySettings
from .platform import controllers
from .platform.buckets import (
    Buckets,
    BucketsArgs,
    BucketSpec,
    Purpose,
    SharedBucket,
    SharedBuckets,
    SharedBucketsArgs,
    StorageClass,
)
from .platform.cluster import CloudNat, CpuPoolArgs, ReleaseChannel, TpuCluster, TpuClusterArgs
from .platform.controllers import (
    Controller,
    ControllerInstall,
    ControllerInstallArgs,
    ControllerManifests,
    WatchedDeployment,
)
from .platform.cpu_nodepool import CpuNodePool, CpuNodePoolArgs
from .platform.existing import (
    ExistingCluster,
    ExistingClusterArgs,
    ExistingCpuNodePool,
    ExistingCpuNodePoolArgs,
    ExistingTpuNodePool,
    ExistingTpuNodePoolArgs,
    GkeCluster,
)
from .platform.image_mirror import ImageMirror, ImageMirrorArgs
from .platform.lws import Rollout
from .platform.maintenance import ExclusionScope, MaintenanceExclusion, MaintenanceSettings
from .platform.node_identity import Access, BucketGrant
from .platform.services import ProjectServices, ProjectServicesArgs
from .pools.compute_class import Fallback, TpuComputeClass, TpuComputeClassArgs
from .pools.nodepool import TpuNodePool, TpuNodePoolArgs
from .tenancy.identity import WorkloadIdentity, WorkloadIdentityArgs
from .tenancy.tenant import IsolatedPods, Tenancy, TenancyArgs
from .traffic.gateway import GatewaySettings, ServingGateway, ServingGatewayArgs

__all__ = [
    # argument and settings types a program passes (library review 8, m1: docs/library-api.md says every one imports
    # from tpu_serving)
    "Access",
    "Capacity",
    "CloudNat",
    "ComponentType",
    "Controller",
    "ExclusionScope",
    "FileCache",
    "IsolatedPods",
    "KvTransfer",
    "MaintenanceExclusion",
    "MaintenanceSettings",
    "PathwaysRequests",
    "PodSet",
    "Purpose",
    "ReleaseChannel",
    "Shutdown",
    "SliceShape",
    "StorageClass",
    "VllmProbeSettings",
    "WatchedDeployment",
    "ZoneSpread",
    "ArgumentsError",
    "CatalogError",
    "Attention",
    "ModelSize",
    "WeightPrecision",
    "AutoscalingSettings",
    "ServingAutoscaler",
    "ServingAutoscalerArgs",
    "GatewaySettings",
    "ServingGateway",
    "ServingGatewayArgs",
    "VllmEngineSettings",
    "VllmImages",
    "VllmServing",
    "VllmServingArgs",
    "ServingNeighbours",
    "VllmRequests",
    "SecretKey",
    "Rollout",
    "WeightsLoader",
    "Buckets",
    "BucketsArgs",
    "SharedBucket",
    "SharedBuckets",
    "SharedBucketsArgs",
    "BucketSpec",
    "BucketGrant",
    "ControllerInstall",
    "ControllerInstallArgs",
    "ControllerManifests",
    "CreateOrExisting",
    "ExistingCluster",
    "ExistingClusterArgs",
    "ExistingCpuNodePool",
    "ExistingCpuNodePoolArgs",
    "ExistingTpuNodePool",
    "ExistingTpuNodePoolArgs",
    "Fallback",
    "GkeCluster",
    "HostMaintenanceGate",
    "HostMaintenanceGateArgs",
    "ImageMirror",
    "ImageMirrorArgs",
    "CpuNodePool",
    "CpuNodePoolArgs",
    "CpuPoolArgs",
    "ProjectServices",
    "ProjectServicesArgs",
    "MaxTextSettings",
    "Observability",
    "ObservabilityArgs",
    "ObservabilitySettings",
    "ScrapeTarget",
    "ServingMetrics",
    "ServingSignals",
    "PathwaysImages",
    "PathwaysServing",
    "PathwaysServingArgs",
    "PathwaysWorkload",
    "PathwaysWorkloadArgs",
    "CustomComponent",
    "UserContainer",
    "ProbeSettings",
    "SaxModel",
    "SaxmlImages",
    "SaxmlServing",
    "SaxmlServingArgs",
    "Tenancy",
    "TenancyArgs",
    "TpuCluster",
    "TpuClusterArgs",
    "TpuComputeClass",
    "TpuComputeClassArgs",
    "TpuNodePool",
    "TpuNodePoolArgs",
    "TpuServingDeployment",
    "TpuServingDeploymentArgs",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    # modules a program reads (docs/library-api.md): the catalog, the controllers' pinned releases
    # (controllers.LWS, controllers.JOBSET) and host maintenance's settings; each was imported from the package
    # before the library's modules went into folders, and still is
    "catalog",
    "controllers",
    "host_maintenance",
    "node_selector",
]
