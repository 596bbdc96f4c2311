"""The typed arguments of :class:`~tpu_serving.backends.pathways_job.component.PathwaysWorkload`."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...catalog import SliceShape
from ...catalog.machines import machine_type_problem
from ...catalog.pathways import DEFAULT_PATHWAYS_VERSION
from ...common.naming import NameLimit, check_dns_name, namespace_problem
from ...common.settings import described
from ...common.validation import Choice
from .facts import HEAD_CONTAINER_LIMITS


def head_requests(user_cpu: float = 0.0, user_memory: float = 0.0) -> tuple[float, float]:
    """CPU and memory bytes the head pod requests: the controller's containers plus the user's."""
    return (
        sum(c for c, _ in HEAD_CONTAINER_LIMITS.values()) + user_cpu,
        sum(m for _, m in HEAD_CONTAINER_LIMITS.values()) + user_memory,
    )


def client_jax_version(pathways_version: str) -> str:
    """``jax-0.9.0`` -> ``0.9.0``: the JAX release a client of that Pathways release uses."""
    return pathways_version.removeprefix("jax-")


def existing_pool_problem(name: str | None) -> str:
    """Why ``name`` is not a GKE node pool name, or ``""`` (also when none is given)."""
    return "" if name is None else check_dns_name(name, limit=NameLimit.GKE_NODE_POOL)


@dataclass(frozen=True)
class HeadPoolSettings:
    """The CPU node pool of the Pathways head (``deploymentMode: default``).

    The head (resource manager and IFRT proxy) runs on the host network of a CPU node and so
    acts as that node's service account; this pool has its own, holding only the scratch
    bucket's role. Its default machine type is the smallest general-purpose shape whose
    allocatable resources hold the head's 24 CPU and 132 GB (n2-standard-32: 118.6 GiB
    allocatable, too little; n2-highmem-32: 31.85 CPU and 244 GiB).
    """

    machine_type: str = described(
        "GCE machine type of the head's node.", default="n2-highmem-32", check=machine_type_problem
    )
    max_nodes: int = described("Autoscaling maximum (the pool scales from zero).", default=1)
    disk_size_gb: int = described("Boot disk size, in GB.", default=100)
    existing_node_pool: str | None = described(
        "With an existing cluster (`cluster.existing`): the existing CPU node pool the head runs on (its node "
        "account must hold the scratch bucket's role); unset: `<cluster.name>-head`, which must then exist. The "
        "settings above describe it for the checks and the estimate.",
        default=None,
        check=existing_pool_problem,
    )


class DeploymentMode(Choice):
    """Where the Pathways head runs."""

    DEFAULT = "default"
    COLOCATE_HEAD_WITH_WORKERS = "colocate_head_with_workers"


class ComponentType(Choice):
    """A Pathways component a custom image, flags or environment applies to."""

    PROXY_SERVER = "proxy_server"
    PATHWAYS_SERVER = "pathways_server"
    WORKER = "worker"
    COLOCATED_PYTHON_SIDECAR = "colocated_python_sidecar"


@dataclass(frozen=True)
class UserContainer:
    """The user's batch container (``controller.template``)."""

    image: str
    """Container image."""
    command: Sequence[str] = ()
    """Command (entrypoint override)."""
    args: Sequence[str] = ()
    """Arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables."""
    cpu: str = "1"
    """CPU request."""
    memory: str = "4Gi"
    """Memory request and limit."""


@dataclass(frozen=True)
class CustomComponent:
    """A Pathways component with its own image, flags or environment."""

    component_type: ComponentType
    """``proxy_server``, ``pathways_server``, ``worker`` or ``colocated_python_sidecar``."""
    image: str | None = None
    """Image replacing the default."""
    flags: Sequence[str] = ()
    """Extra flags (``--name=value``)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment."""


@dataclass(frozen=True)
class PathwaysWorkloadArgs:
    """Arguments of :class:`PathwaysWorkload`."""

    namespace: str = field(metadata={"check": namespace_problem})
    """Namespace of the PathwaysJob."""
    service_account: str
    """Kubernetes service account of the user's container (workload identity)."""
    name: str
    """PathwaysJob name (also the JobSet's)."""
    shape: SliceShape
    """Shape of every worker slice."""
    num_slices: int
    """Number of slices."""
    pathways_dir: str
    """``gs://`` location for Pathways artifacts; the bucket must exist first."""
    container: UserContainer | None = None
    """The batch job's container; None for an interactive workload."""
    deployment_mode: DeploymentMode = DeploymentMode.DEFAULT
    """``default`` (head on a CPU node) or ``colocate_head_with_workers``."""
    pathways_version: str = DEFAULT_PATHWAYS_VERSION
    """Pathways version (the server and proxy image tag), e.g. ``jax-0.9.0``."""
    max_restarts: int = 0
    """JobSet restarts before the job fails."""
    max_slice_restarts: int = 1
    """Restarts of a single slice."""
    elastic_slices: int | None = None
    """Slices that may be missing at once (elastic training); unset disables."""
    termination_grace_period_seconds: int | None = None
    """Grace period of worker pods."""
    priority_class_name: str | None = None
    """Priority class of the worker pods."""
    custom_components: Sequence[CustomComponent] = ()
    """Component overrides."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the PathwaysJob and the user's pod."""
    head_pool: str | None = None
    """Node pool the batch head is pinned to (``deploymentMode: default``); None: not pinned."""
