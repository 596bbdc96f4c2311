"""What the PathwaysJob controller (google/pathways-job v0.1.4) does, as the ``pathways-job``
backend relies on it: the proxy port, the head's job and container names and limits, the CRD's
machine types and the host-network pods' bucket access. Each fact names its source."""

from ...platform.node_identity import Access

PROXY_PORT = 29000
"""IFRT proxy server port of the Pathways head."""
HEAD_JOB = "pathways-head"
"""Replicated job of the head in the JobSet the controller creates."""
MAIN_CONTAINER = "main"
"""Default ``controller.mainContainerName``."""

PATHWAYS_JOB_MACHINE_TYPES: tuple[str, ...] = (
    "tpu7x-standard-4t",
    "ct6e-standard-4t",
    "ct6e-standard-8t",
    "ct5p-hightpu-4t",
    "ct5lp-hightpu-4t",
    "ct5lp-hightpu-8t",
    "ct4p-hightpu-4t",
)
"""``workers[].type`` values the PathwaysJob v0.1.4 CRD accepts (its enum)."""

HEAD_CONTAINER_LIMITS: dict[str, tuple[float, float]] = {
    "pathways-rm": (8, 32_000_000_000),
    "pathways-proxy": (16, 100_000_000_000),
}
"""CPU and memory bytes of the head's containers, which the v0.1.4 controller sets as limits
only (so requests equal them): ``MakeResourceManagerContainer`` (8 CPU, 32 GB) and
``MakeProxyContainer`` (16 CPU, 100 GB) in google/pathways-job@v0.1.4
internal/controller/pathwaysjob_controller.go."""

HOST_NETWORK_BUCKETS: dict[str, Access] = {"scratch": Access.READ_WRITE}
"""Bucket access of the head and worker pods by bucket purpose. The controller forces
``hostNetwork: true`` on both (``MakePathwaysHeadPodSpec``, ``MakeWorkerJob``), so they act
as their nodes' service accounts and write Pathways data under ``pathwaysDir``."""

HEAD_POOL_LABEL = "cloud.google.com/gke-nodepool"
"""Node label that pins the batch head to its pool (GKE sets it to the node pool's name)."""


RESOURCE_MANAGER_REQUESTS: tuple[str, str] = ("8", "32000000000")
"""CPU and memory of the controller's ``pathways-rm`` container: limits only (google/pathways-job v0.1.4
internal/controller/pathwaysjob_controller.go l.605), so its requests default to them (Kubernetes
pkg/apis/core/v1/defaults.go ``SetDefaults_Pod``: a container with limits and no requests requests its limits)."""
PROXY_REQUESTS: tuple[str, str] = ("16", "100000000000")
"""CPU and memory of the controller's ``pathways-proxy`` container, limits only (same file l.647), so requested."""
