"""``PathwaysWorkload``: Pathways batch and interactive jobs with the PathwaysJob API.

One ``PathwaysJob`` (``pathways-job.pathways.domain/v1``): the controller builds a JobSet
of the Pathways head (resource manager and IFRT proxy) and one worker per TPU VM. A
**batch** workload carries the user's container as ``controller.template`` and ends with
it; an **interactive** one has no template and waits for a JAX client to connect to the
IFRT proxy (port 29000).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .catalog import SliceShape
from .node_identity import Access
from .options import child_options
from .settings import described
from .validation import Choice, check_arguments

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

DEFAULT_PATHWAYS_VERSION = "jax-0.5.3"
"""Pathways release the stacks pin (``spec.pathwaysVersion``). The v0.1.4 controller uses it
as the tag of the server and proxy images (``makeImageTagUsingPathwaysVersion``:
``<image>:<pathwaysVersion>``, ``latest`` when unset); ``jax-0.5.3`` is the version the
Pathways on GKE guide (seed 003) names. The JAX client must match it: the batch container
gets ``PATHWAYS_JAX_VERSION`` and the interactive client example pins the same JAX."""

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


def head_requests(user_cpu: float = 0.0, user_memory: float = 0.0) -> tuple[float, float]:
    """CPU and memory bytes the head pod requests: the controller's containers plus the user's."""
    return (
        sum(c for c, _ in HEAD_CONTAINER_LIMITS.values()) + user_cpu,
        sum(m for _, m in HEAD_CONTAINER_LIMITS.values()) + user_memory,
    )


def client_jax_version(pathways_version: str) -> str:
    """``jax-0.5.3`` -> ``0.5.3``: the JAX release a client of that Pathways release uses."""
    return pathways_version.removeprefix("jax-")


@dataclass(frozen=True)
class HeadPoolSettings:
    """The CPU node pool of the Pathways head (``deploymentMode: default``).

    The head (resource manager and IFRT proxy) runs on the host network of a CPU node and so
    acts as that node's service account; this pool has its own, holding only the scratch
    bucket's role. Its default machine type is the smallest general-purpose shape whose
    allocatable resources hold the head's 24 CPU and 132 GB (n2-standard-32: 118.6 GiB
    allocatable, too little; n2-highmem-32: 31.85 CPU and 244 GiB).
    """

    machine_type: str = described("GCE machine type of the head's node.", default="n2-highmem-32")
    max_nodes: int = described("Autoscaling maximum (the pool scales from zero).", default=1)
    disk_size_gb: int = described("Boot disk size, in GB.", default=100)


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

    namespace: str
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
    """Pathways version (the server and proxy image tag), e.g. ``jax-0.5.3``."""
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


def _env(env: Mapping[str, str]) -> list[k8s.core.v1.EnvVarArgs] | None:
    return [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()] or None


def worker_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """The one ``workers`` entry: machine type, topology and slices from the node pools."""
    spec: dict[str, object] = {
        "type": args.shape.machine_type.name,
        "topology": args.shape.topology,
        "numSlices": args.num_slices,
        "maxSliceRestarts": args.max_slice_restarts,
    }
    if args.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = args.termination_grace_period_seconds
    if args.priority_class_name is not None:
        spec["priorityClassName"] = args.priority_class_name
    return spec


def controller_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """``controller``: deployment mode, elasticity and, for batch, the user's pod."""
    spec: dict[str, object] = {"deploymentMode": args.deployment_mode}
    if args.elastic_slices is not None:
        spec["elasticSlices"] = args.elastic_slices
    if args.container is not None:
        c = args.container
        env = {**c.env, "PATHWAYS_JAX_VERSION": client_jax_version(args.pathways_version)}
        spec["template"] = k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(args.labels)) if args.labels else None,
            spec=k8s.core.v1.PodSpecArgs(
                service_account_name=args.service_account,
                node_selector={HEAD_POOL_LABEL: args.head_pool} if args.head_pool else None,
                containers=[
                    k8s.core.v1.ContainerArgs(
                        name=MAIN_CONTAINER,
                        image=c.image,
                        command=list(c.command) or None,
                        args=list(c.args) or None,
                        env=_env(env),
                    )
                ],
            ),
        )
    return spec


def pathways_job_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """``spec`` of the PathwaysJob."""
    spec: dict[str, object] = {
        "maxRestarts": args.max_restarts,
        "pathwaysDir": args.pathways_dir,
        "pathwaysVersion": args.pathways_version,
        "workers": [worker_spec(args)],
        "controller": controller_spec(args),
    }
    if args.custom_components:
        spec["customComponents"] = [
            {
                "componentType": c.component_type,
                **({"image": c.image} if c.image else {}),
                **({"customFlags": list(c.flags)} if c.flags else {}),
                **({"customEnv": [{"name": k, "value": v} for k, v in c.env.items()]} if c.env else {}),
            }
            for c in args.custom_components
        ]
    return spec


def head_pod_command(args: PathwaysWorkloadArgs) -> str:
    """Shell expression naming the head pod (its name has a random suffix)."""
    return (
        f"kubectl -n {args.namespace} get pods -o name -l "
        f"jobset.sigs.k8s.io/jobset-name={args.name},jobset.sigs.k8s.io/replicatedjob-name={HEAD_JOB}"
    )


class PathwaysWorkload(pulumi.ComponentResource):
    """A Pathways batch or interactive workload: one PathwaysJob.

    Pass the cluster's Kubernetes provider in ``opts.providers``; the PathwaysJob waits for
    its ``opts.depends_on`` (the PathwaysJob and JobSet installs, the slices, the bucket).
    """

    port_forward: str | None
    """Interactive only: the command that forwards the IFRT proxy to localhost:29000."""
    client_env: dict[str, str] | None
    """Interactive only: environment of a local JAX client using the proxy."""
    client_pip: str
    """The client install that matches the Pathways release."""

    def __init__(self, name: str, args: PathwaysWorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("PathwaysWorkload", args, PathwaysWorkloadArgs)
        super().__init__("tpu-serving:index:PathwaysWorkload", name, None, opts)
        self.pathways_job = k8s.apiextensions.CustomResource(
            f"{name}-job",
            api_version="pathways-job.pathways.domain/v1",
            kind="PathwaysJob",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.name, namespace=args.namespace, labels=dict(args.labels)),
            spec=pathways_job_spec(args),
            # The CRD makes the spec immutable (x-kubernetes-validations `self == oldSelf` on
            # maxRestarts, pathwaysDir, pathwaysVersion, workers, customComponents and the
            # controller's fields): any change must replace the PathwaysJob.
            opts=pulumi.ResourceOptions.merge(
                child_options(self, opts),
                pulumi.ResourceOptions(replace_on_changes=["spec"], delete_before_replace=True),
            ),
        )
        self.port_forward = self.client_env = None
        if args.container is None:
            self.port_forward = (
                f"kubectl -n {args.namespace} port-forward $({head_pod_command(args)}) {PROXY_PORT}:{PROXY_PORT}"
            )
            self.client_env = {"JAX_PLATFORMS": "proxy", "JAX_BACKEND_TARGET": f"grpc://127.0.0.1:{PROXY_PORT}"}
        self.client_pip = f"pip install pathwaysutils jax=={client_jax_version(args.pathways_version)}"
        self.register_outputs({"portForward": self.port_forward, "clientEnv": self.client_env})
