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
from .backends.pathways_job import (
    CustomComponent,
    PathwaysWorkload,
    PathwaysWorkloadArgs,
    UserContainer,
)
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
from .buckets import Buckets, BucketsArgs, BucketSpec, SharedBucket, SharedBuckets, SharedBucketsArgs
from .catalog import CatalogError
from .cluster import CpuPoolArgs, TpuCluster, TpuClusterArgs
from .controllers import ControllerInstall, ControllerInstallArgs, ControllerManifests
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
from .models import ModelSize, WeightPrecision
from .node_identity import BucketGrant
from .nodepool import TpuNodePool, TpuNodePoolArgs, node_selector
from .observability import (
    Observability,
    ObservabilityArgs,
    ScrapeTarget,
    ServingMetrics,
    ServingSignals,
)
from .observability_settings import ObservabilitySettings
from .podspec import ProbeSettings
from .services import ProjectServices, ProjectServicesArgs
from .settings import CreateOrExisting
from .tenancy import Tenancy, TenancyArgs
from .validation import ArgumentsError

__all__ = [
    "ArgumentsError",
    "CatalogError",
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
    "TpuNodePool",
    "TpuNodePoolArgs",
    "TpuServingDeployment",
    "TpuServingDeploymentArgs",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "catalog",
    "node_selector",
]
