"""tpu-serving: typed Pulumi components for multi-host TPU LLM serving on GKE.

Import the components into your own Pulumi program::

    from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog
"""

from . import catalog
from .autoscaling import AutoscalingSettings, ServingAutoscaler, ServingAutoscalerArgs
from .buckets import Buckets, BucketsArgs, BucketSpec
from .cluster import CpuPoolArgs, TpuCluster, TpuClusterArgs
from .controllers import ControllerInstall, ControllerInstallArgs
from .cpu_nodepool import CpuNodePool, CpuNodePoolArgs
from .deployment import TpuServingDeployment, TpuServingDeploymentArgs
from .gateway import GatewaySettings, ServingGateway, ServingGatewayArgs
from .identity import WorkloadIdentity, WorkloadIdentityArgs
from .node_identity import BucketGrant
from .nodepool import TpuNodePool, TpuNodePoolArgs, node_selector
from .observability import (
    Observability,
    ObservabilityArgs,
    ObservabilitySettings,
    ScrapeTarget,
    ServingMetrics,
    ServingSignals,
)
from .pathways_serving import (
    MaxTextSettings,
    PathwaysImages,
    PathwaysServing,
    PathwaysServingArgs,
)
from .pathways_workload import (
    CustomComponent,
    PathwaysWorkload,
    PathwaysWorkloadArgs,
    UserContainer,
)
from .podspec import ProbeSettings
from .saxml_serving import SaxmlImages, SaxmlServing, SaxmlServingArgs, SaxModel
from .services import ProjectServices, ProjectServicesArgs
from .tenancy import Tenancy, TenancyArgs
from .vllm_serving import VllmEngineSettings, VllmImages, VllmServing, VllmServingArgs, WeightsLoader

__all__ = [
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
    "WeightsLoader",
    "Buckets",
    "BucketsArgs",
    "BucketSpec",
    "BucketGrant",
    "ControllerInstall",
    "ControllerInstallArgs",
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
