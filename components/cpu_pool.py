"""The cluster's CPU node pool, as the stack file's ``cluster.cpuPool`` declares it."""

from dataclasses import dataclass

from .machines import machine_type_problem
from .settings import described


@dataclass(frozen=True)
class CpuPoolArgs:
    """The CPU node pool that runs every non-TPU pod (controllers, Sax admin, HTTP front ends).

    Declared once: the stack file's ``cluster.cpuPool`` is generated from these fields. GKE's ``min_node_count`` and
    ``max_node_count`` are per zone ("for one location in the node pool", google.container.v1 NodePoolAutoscaling;
    pulumi-gcp 10.2.0 container/_inputs.py ``NodePoolAutoscalingArgs`` l.23775-23783: "Maximum/Minimum number of
    nodes per zone in the NodePool"; the totals are ``total_min_node_count``/``total_max_node_count``, "Cannot be used
    with per zone limits"; GKE "Autoscaling a cluster", https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler:
    ``--min-nodes`` is "per zone", ``--total-min-nodes`` the whole pool's). The cluster's pool spans the zones of
    :attr:`TpuClusterArgs.cpu_pool_zones`, so it keeps ``min_nodes`` in each: at least two nodes in all, for the
    replicas required on different nodes (:func:`tpu_serving.config.checks.cpu_pool_spread_problem`).
    """

    machine_type: str = described(
        "GCE machine type of the CPU nodes.", default="n2-standard-8", check=machine_type_problem
    )
    min_nodes: int | None = described(
        "Autoscaling minimum, per zone of the pool (at least 2 nodes in all: 1 is enough over two zones or more). "
        "Unset: 1 per zone over two zones or more, 2 in one zone (two nodes in all either way).",
        default=None,
        ge=0,
        le=100,
    )
    max_nodes: int = described("Autoscaling maximum, per zone of the pool.", default=3, ge=1, le=100)
    disk_size_gb: int = described("Boot disk size of each CPU node, in GB.", default=100, ge=30, le=2000)

    def problems(self) -> list[str]:
        """Rules across these arguments (see :mod:`tpu_serving.validation`)."""
        if isinstance(self.min_nodes, int) and isinstance(self.max_nodes, int) and self.min_nodes > self.max_nodes:
            return [f"min_nodes ({self.min_nodes}) must not exceed max_nodes ({self.max_nodes})"]
        return []
