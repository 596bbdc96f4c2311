"""Backend ``pathways-job``: Pathways batch and interactive workloads with the PathwaysJob API (seed 003).

Its settings, its checks against the rest of the stack, the resources it builds (the JobSet
and PathwaysJob installs, the head's own CPU pool and
:class:`~tpu_serving.pathways_workload.PathwaysWorkload`) and its stack outputs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field

from .. import machines
from ..catalog import SliceShape
from ..cluster import CpuPoolArgs
from ..controllers import JOBSET, PATHWAYS_JOB, parse_version
from ..cost import NodeUsage
from ..cpu_nodepool import CpuNodePool, CpuNodePoolArgs
from ..images import ImageRef
from ..naming import head_pool_name, head_service_account_id
from ..node_identity import Access
from ..observability import ServingMetrics
from ..pathways_workload import (
    DEFAULT_PATHWAYS_VERSION,
    HOST_NETWORK_BUCKETS,
    PATHWAYS_JOB_MACHINE_TYPES,
    ComponentType,
    CustomComponent,
    DeploymentMode,
    HeadPoolSettings,
    PathwaysWorkload,
    PathwaysWorkloadArgs,
    UserContainer,
    head_requests,
)
from ..settings import (
    PROJECT_NAMESPACE,
    K8sName,
    Model,
    release_validator,
    settings_model,
)
from ..tenancy import BATCH_PRIORITY
from .base import Backend, Built, Platform

if TYPE_CHECKING:
    from ..config.models import StackConfig

NAME = "pathways-job"

# mypy cannot see a model made at runtime: to it, each generated config model is the
# dataclass it mirrors (the same field names and types, which is all the code reads).
if TYPE_CHECKING:
    HeadPoolConfig: TypeAlias = HeadPoolSettings
else:
    HeadPoolConfig = settings_model(HeadPoolSettings, "HeadPoolConfig")


class UserContainerConfig(Model):
    """The user's batch container."""

    image: ImageRef = Field(description="Container image.")
    command: list[str] = Field(default_factory=list, description="Command (entrypoint override).")
    args: list[str] = Field(default_factory=list, description="Arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables.")


class CustomComponentConfig(Model):
    """Override of one Pathways component."""

    component_type: Literal["proxy_server", "pathways_server", "worker", "colocated_python_sidecar"] = Field(
        description="Which component."
    )
    image: ImageRef | None = Field(None, description="Image replacing the default.")
    flags: list[str] = Field(default_factory=list, description="Extra flags, `--name=value`.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")


LIMIT_RANGE_DEFAULT_CPU = 0.25
LIMIT_RANGE_DEFAULT_MEMORY = 512 * 2**20
"""The namespace's default container requests (the Tenancy LimitRange: 250m, 512Mi)."""

JOBSET_FOR_PATHWAYS_JOB = "v0.8.0"
"""Oldest JobSet release the PathwaysJob controller works with."""


class PathwaysJobConfig(Model):
    """A Pathways batch or interactive workload through the PathwaysJob API (seed 003)."""

    backend: Literal["pathways-job"] = Field(description="Selects this backend.")
    workload: Literal["batch", "interactive"] = Field(
        description="`batch`: runs `container` to completion; `interactive`: a JAX client connects to the IFRT proxy."
    )
    name: K8sName = Field("pathways", description="PathwaysJob name.")
    slices: list[str] = Field(min_length=1, description="Names of the `tpuSlices` entries the workers run on.")
    pathways_job_version: Annotated[str, release_validator(PATHWAYS_JOB)] = Field(
        PATHWAYS_JOB.default_version, description="PathwaysJob controller release installed by the stack."
    )
    jobset_version: Annotated[str, release_validator(JOBSET)] = Field(
        JOBSET.default_version, description="JobSet release installed by the stack (v0.8.0 or later here)."
    )
    pathways_version: str = Field(
        DEFAULT_PATHWAYS_VERSION,
        pattern=r"^jax-\d+\.\d+\.\d+$",
        description="Pathways release (the server and proxy image tag), e.g. `jax-0.5.3`; the batch container "
        "gets the matching JAX version in `PATHWAYS_JAX_VERSION`.",
    )
    deployment_mode: Literal["default", "colocate_head_with_workers"] = Field(
        "default",
        description="`default`: head (RM, proxy) on a CPU node; `colocate_head_with_workers`: beside a TPU worker.",
    )
    max_restarts: int = Field(0, ge=0, le=1000, description="JobSet restarts before the job fails.")
    max_slice_restarts: int = Field(1, ge=0, le=1000, description="Restarts of a single slice.")
    elastic_slices: int | None = Field(None, ge=1, description="Slices that may be missing at once; unset disables.")
    termination_grace_period_seconds: int | None = Field(
        None, ge=0, le=86400, description="Grace period of worker pods."
    )
    priority_class_name: K8sName | None = Field(None, description="Priority class of the worker pods.")
    container: UserContainerConfig | None = Field(None, description="The batch job's container (batch only).")
    custom_components: list[CustomComponentConfig] = Field(
        default_factory=list, description="Component overrides (image, flags, env)."
    )
    head_pool: HeadPoolConfig = Field(
        default_factory=HeadPoolConfig,
        description="The CPU node pool of the Pathways head in deploymentMode `default` (24 CPU, 132 GB, host network).",
    )


def problems(cfg: StackConfig, job: PathwaysJobConfig, shape: SliceShape, pools: int) -> list[str]:
    """The CRD accepts the machine type; batch has a container; JobSet is new enough; the head fits."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found: list[str] = []
    if shape.machine_type.name not in PATHWAYS_JOB_MACHINE_TYPES:
        found.append(
            f"{key}.slices: machine type {shape.machine_type.name!r} is not accepted by the PathwaysJob API; "
            f"valid: {', '.join(PATHWAYS_JOB_MACHINE_TYPES)}"
        )
    if job.workload == "batch" and job.container is None:
        found.append(f"{key}.container: required for a batch workload (the user's container)")
    if job.workload == "interactive" and job.container is not None:
        found.append(f"{key}.container: an interactive workload has no container; a JAX client connects instead")
    if parse_version(job.jobset_version) < parse_version(JOBSET_FOR_PATHWAYS_JOB):
        found.append(
            f"{key}.jobsetVersion = {json.dumps(job.jobset_version)}: PathwaysJob needs JobSet {JOBSET_FOR_PATHWAYS_JOB} or later"
        )
    if job.elastic_slices is not None and job.elastic_slices >= pools:
        found.append(f"{key}.elasticSlices = {job.elastic_slices}: must be fewer than the {pools} slice(s)")
    scratch = cfg.bucket("scratch")
    if scratch is None or scratch.workload_access != "readWrite":
        found.append(
            f"{PROJECT_NAMESPACE}:buckets: pathways-job needs a `scratch` bucket with workloadAccess readWrite (pathwaysDir)"
        )
    if job.deployment_mode == "default":
        found += _head_fit_problems(cfg, job)
    elif job.workload == "interactive":
        found.append(
            f'{key}.deploymentMode = "colocate_head_with_workers": an interactive job has no pod template, so the '
            "controller's head pod carries no toleration for the TPU nodes' google.com/tpu taint and cannot be "
            "scheduled there; valid: default"
        )
    return found


def _head_fit_problems(cfg: StackConfig, job: PathwaysJobConfig) -> list[str]:
    """The head must fit its pool, and (interactive: it cannot be pinned) must not fit the CPU pool."""
    key = f"{PROJECT_NAMESPACE}:serving.headPool.machineType"
    user_cpu, user_memory = (LIMIT_RANGE_DEFAULT_CPU, LIMIT_RANGE_DEFAULT_MEMORY) if job.container else (0.0, 0.0)
    cpu, memory = head_requests(user_cpu, user_memory)
    need = f"{cpu:g} CPU and {memory / machines.GIB:.1f} GiB (pathways-rm and pathways-proxy as the PathwaysJob v0.1.4 controller sizes them)"
    head = machines.machine(job.head_pool.machine_type)
    problems = []
    if head is None:
        problems.append(
            f"{key} = {json.dumps(job.head_pool.machine_type)}: unknown machine type; the head needs {need}; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    elif not head.fits(cpu, memory):
        problems.append(
            f"{key} = {json.dumps(head.name)}: the head needs {need}; {head.name} has "
            f"{head.allocatable_cpu:.2f} CPU and {head.allocatable_memory / machines.GIB:.1f} GiB allocatable; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    cpu_pool = machines.machine(cfg.cluster.cpu_pool.machine_type)
    if job.container is None and (cpu_pool is None or cpu_pool.fits(cpu, memory)):
        problems.append(
            f"{PROJECT_NAMESPACE}:cluster.cpuPool.machineType = {json.dumps(cfg.cluster.cpu_pool.machine_type)}: an "
            "interactive Pathways head cannot be pinned to its pool, so the CPU pool must be too small for it "
            "(its nodes hold no scratch bucket role for the head's host-network pods); choose a smaller known machine type"
        )
    return problems


def ingress(job: PathwaysJobConfig) -> tuple[dict[str, str], list[int]]:
    """No pod takes clients from other namespaces (an interactive client port-forwards)."""
    return {}, []


def host_network_buckets(job: PathwaysJobConfig) -> dict[str, Access]:
    """The controller puts the workers on the host network; they write pathwaysDir."""
    return dict(HOST_NETWORK_BUCKETS)


def restart_unit_chips(job: PathwaysJobConfig, chips: int) -> int:
    """A JobSet restart recreates every worker."""
    return chips


def metrics(job: PathwaysJobConfig) -> ServingMetrics:
    """Nothing to scrape and no serving: a batch or interactive JAX program, not a server.

    The Pathways components the controller runs (resource manager, IFRT proxy, workers;
    google/pathways-job@v0.1.4 pathwaysjob_controller.go) are closed-source images with no
    documented Prometheus endpoint; what the user's program exports is its own. The dashboard
    shows the TPU signals only, and no alert applies.
    """
    return ServingMetrics(serves=False)


def head_node_pool(platform: Platform, settings: HeadPoolSettings) -> CpuNodePool:
    """The Pathways head's own CPU pool; its node account may use the scratch bucket (host network)."""
    cfg, name = platform.settings, platform.name
    return CpuNodePool(
        f"{name}-head",
        CpuNodePoolArgs(
            project=cfg.project,
            region=cfg.region,
            zone=cfg.zone,
            cluster=platform.cluster.cluster.id,
            pool_name=head_pool_name(name),
            service_account_id=head_service_account_id(name),
            pool=CpuPoolArgs(
                machine_type=settings.machine_type,
                min_nodes=0,
                max_nodes=settings.max_nodes,
                disk_size_gb=settings.disk_size_gb,
            ),
            node_grants=platform.node_grants(HOST_NETWORK_BUCKETS),
            image_streaming=cfg.cluster.image_streaming,
            labels=platform.labels,
        ),
        opts=platform.gcp_options(),
    )


def build(platform: Platform, job: PathwaysJobConfig) -> Built:
    """The JobSet and PathwaysJob installs, the head pool and the PathwaysJob."""
    name, identity, buckets = platform.name, platform.identity, platform.buckets
    jobset = platform.install(JOBSET, job.jobset_version, ())
    controller = platform.install(PATHWAYS_JOB, job.pathways_job_version, (jobset,))
    pools = list(platform.slices.pools)
    c = job.container
    head_pool = head_node_pool(platform, to_head_settings(job)) if job.deployment_mode == "default" else None
    workload = PathwaysWorkload(
        f"{name}-pathways",
        PathwaysWorkloadArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            name=job.name,
            shape=platform.slices.shape,
            num_slices=len(pools),
            pathways_dir=f"gs://{buckets.names['scratch']}/pathways-job",
            container=UserContainer(c.image, tuple(c.command), tuple(c.args), c.env) if c else None,
            deployment_mode=DeploymentMode(job.deployment_mode),
            pathways_version=job.pathways_version,
            max_restarts=job.max_restarts,
            max_slice_restarts=job.max_slice_restarts,
            elastic_slices=job.elastic_slices,
            termination_grace_period_seconds=job.termination_grace_period_seconds,
            priority_class_name=job.priority_class_name or BATCH_PRIORITY,
            custom_components=[
                CustomComponent(ComponentType(x.component_type), x.image, tuple(x.flags), x.env)
                for x in job.custom_components
            ],
            labels=platform.k8s_labels,
            head_pool=head_pool.pool_name if head_pool and c else None,
        ),
        opts=platform.options(
            jobset,
            controller,
            identity.service_account,
            platform.tenancy,
            buckets.buckets["scratch"],
            *pools,
            *([head_pool.node_pool] if head_pool else []),
        ),
    )
    outputs: dict[str, object] = {"pathwaysJob": job.name, "workload": job.workload}
    if workload.port_forward is not None:
        env = " ".join(f"{k}={v}" for k, v in (workload.client_env or {}).items())
        outputs.update(
            portForward=workload.port_forward,
            clientEnv=workload.client_env,
            clientExample=f"{workload.client_pip} && {env} python3 -c "
            "'import pathwaysutils; import jax; pathwaysutils.initialize(); print(jax.devices())'",
        )
    return Built(installs=[jobset, controller], outputs=outputs)


def cpu_nodes(job: PathwaysJobConfig) -> list[NodeUsage]:
    """In ``default`` mode the head pod (resource manager and IFRT proxy) holds one node of the head pool for
    as long as the PathwaysJob runs; the pool scales from zero to it (min 0), so the estimate bills one
    node. ``colocate_head_with_workers`` puts the head on a TPU VM, which the slices already bill."""
    if job.deployment_mode != "default":
        return []
    h = job.head_pool
    return [NodeUsage("pathways head pool (while the job runs)", h.machine_type, 1, h.disk_size_gb)]


def to_head_settings(job: PathwaysJobConfig) -> HeadPoolSettings:
    """The head pool settings as the component takes them."""
    h = job.head_pool
    return HeadPoolSettings(machine_type=h.machine_type, max_nodes=h.max_nodes, disk_size_gb=h.disk_size_gb)


BACKEND = Backend(
    name=NAME,
    settings=PathwaysJobConfig,
    problems=problems,
    ingress=ingress,
    host_network_buckets=host_network_buckets,
    restart_unit_chips=restart_unit_chips,
    build=build,
    metrics=metrics,
    cpu_nodes=cpu_nodes,
)
