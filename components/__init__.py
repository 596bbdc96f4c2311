"""tpu-serving: typed Pulumi components for multi-host TPU LLM serving on GKE.

Import the components into your own Pulumi program::

    from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog
"""

from . import catalog
from .autoscaling import AutoscalingSettings, ServingAutoscaler, ServingAutoscalerArgs
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
from .buckets import (
    Buckets,
    BucketsArgs,
    BucketSpec,
    Purpose,
    SharedBucket,
    SharedBuckets,
    SharedBucketsArgs,
    StorageClass,
)
from .capacity import Capacity
from .catalog import CatalogError, SliceShape, node_selector
from .cluster import CloudNat, CpuPoolArgs, ReleaseChannel, TpuCluster, TpuClusterArgs
from .compute_class import Fallback, TpuComputeClass, TpuComputeClassArgs
from .controllers import Controller, ControllerInstall, ControllerInstallArgs, ControllerManifests, WatchedDeployment
from .cpu_nodepool import CpuNodePool, CpuNodePoolArgs
from .deployment import TpuServingDeployment, TpuServingDeploymentArgs
from .existing import (
    ExistingCluster,
    ExistingClusterArgs,
    ExistingCpuNodePool,
    ExistingCpuNodePoolArgs,
    ExistingTpuNodePool,
    ExistingTpuNodePoolArgs,
    GkeCluster,
)
from .gateway import GatewaySettings, ServingGateway, ServingGatewayArgs
from .host_maintenance_job import HostMaintenanceGate, HostMaintenanceGateArgs
from .identity import WorkloadIdentity, WorkloadIdentityArgs
from .image_mirror import ImageMirror, ImageMirrorArgs
from .lws import Rollout
from .maintenance import ExclusionScope, MaintenanceExclusion, MaintenanceSettings
from .models import Attention, ModelSize, WeightPrecision
from .node_identity import Access, BucketGrant
from .nodepool import TpuNodePool, TpuNodePoolArgs
from .observability import (
    Observability,
    ObservabilityArgs,
    ScrapeTarget,
    ServingMetrics,
    ServingSignals,
)
from .observability_settings import ObservabilitySettings
from .podspec import ProbeSettings, Shutdown
from .quota import PodSet
from .services import ProjectServices, ProjectServicesArgs
from .settings import CreateOrExisting
from .spread import ZoneSpread
from .tenancy import IsolatedPods, Tenancy, TenancyArgs
from .validation import ArgumentsError

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
    "catalog",
    "node_selector",
]
