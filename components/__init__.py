"""tpu-serving: typed Pulumi components for multi-host TPU LLM serving on GKE.

Import the components into your own Pulumi program::

    from components import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog
"""

from . import catalog
from .buckets import Buckets, BucketsArgs, BucketSpec
from .cluster import CpuPoolArgs, TpuCluster, TpuClusterArgs
from .identity import BucketGrant, WorkloadIdentity, WorkloadIdentityArgs
from .nodepool import TpuNodePool, TpuNodePoolArgs, node_selector

__all__ = [
    "Buckets",
    "BucketsArgs",
    "BucketSpec",
    "BucketGrant",
    "CpuPoolArgs",
    "TpuCluster",
    "TpuClusterArgs",
    "TpuNodePool",
    "TpuNodePoolArgs",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "catalog",
    "node_selector",
]
