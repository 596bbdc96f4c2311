"""Node pool inputs that the provider updates in place but GKE applies by recreating the pool's nodes (its VMs): the
resource stays, every node of the pool is drained and recreated, one pool after another only if something orders
them. The provider's schema does not mark these (none is ForceNew in ``rules.json``), so each carries its source.

The provider's update path, hashicorp/terraform-provider-google v7.45.0 (commit 6f75622, the release
``rules.json`` comes from): ``google/services/container/node_config.go`` ``nodePoolNodeConfigUpdate`` sends each
of these to GKE's ``nodePools.update`` or ``clusters.update`` in place: ``disk_size_gb``, ``disk_type``,
``machine_type``, ``boot_disk`` l.3932-3936, ``containerd_config`` l.3860, ``image_type`` l.4234, ``gcfs_config``
l.4300, ``kubelet_config`` l.4366, ``linux_node_config`` l.4400."""

from __future__ import annotations

from collections.abc import Mapping

from tpu_serving_tools.gcp_types import NODE_POOL

_MIGRATES = (
    'GKE\'s UpdateNodePoolRequest: "Initiates an upgrade operation that migrates the nodes in the node pool" '
    "(googleapis/googleapis google/container/v1/cluster_service.proto, fields machine_type 36, disk_type 37, "
    "disk_size_gb 38, boot_disk 47; commit 0054cdc)"
)
_CONTAINERD = (
    "GKE's UpdateNodePoolRequest.containerd_config (40): \"Initiates an upgrade operation that recreates the nodes "
    'with the new config" (googleapis/googleapis google/container/v1/cluster_service.proto, commit 0054cdc)'
)
_IMAGE_TYPE = (
    '"changing the image type will delete and recreate all nodes in the node pool" (hashicorp/terraform-provider-'
    "google v7.45.0 website/docs/r/container_cluster.html.markdown l.1190-1191, node_config.image_type)"
)
_NODE_SYSTEM = (
    "GKE recreates the nodes to apply it (https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters, "
    "node pool changes that recreate nodes; the stored copy reachable here showed only the page's opening, so this "
    "entry follows the GKE review's list and was not read in GKE's own words)"
)

RECREATES_NODES: Mapping[str, str] = {
    "nodeConfig.machineType": _MIGRATES,
    "nodeConfig.diskSizeGb": _MIGRATES,
    "nodeConfig.diskType": _MIGRATES,
    "nodeConfig.bootDisk": _MIGRATES,
    "nodeConfig.containerdConfig": _CONTAINERD,
    "nodeConfig.imageType": _IMAGE_TYPE,
    "nodeConfig.gcfsConfig": _NODE_SYSTEM,
    "nodeConfig.kubeletConfig": _NODE_SYSTEM,
    "nodeConfig.linuxNodeConfig": _NODE_SYSTEM,
}
"""A node pool's input (or block) whose change, updated in place, recreates every node of the pool: its source."""


def recreates_nodes(type_: str, path: str) -> str | None:
    """The input of a ``type_`` (a node pool) whose change of ``path`` (flattened, as ``make diff`` lists it)
    recreates the pool's nodes in place, or None."""
    if type_ != NODE_POOL:
        return None
    return next((f for f in RECREATES_NODES if path == f or path.startswith((f + ".", f + "["))), None)
