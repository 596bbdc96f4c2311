"""What the deployment asks of the ``pathways-job`` backend: the JobSet and PathwaysJob installs,
the head's own CPU pool, the workload, its cost and outputs."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from ...catalog import SliceShape
from ...common.naming import head_pool_name, head_service_account_id
from ...common.quota import ContainerRequests, PodSet, PodShape
from ...common.settings import PROJECT_NAMESPACE, CreateOrExisting
from ...cost.estimate import NodeUsage
from ...operations.alerts.job_alerts import JobPods
from ...operations.observability import ServingMetrics
from ...platform.cluster import CpuPoolArgs
from ...platform.controllers import JOBSET, PATHWAYS_JOB
from ...platform.cpu_nodepool import CpuNodePool, CpuNodePoolArgs
from ...platform.existing import CloudResource, ExistingCluster, ExistingCpuNodePool, ExistingCpuNodePoolArgs
from ...platform.node_identity import BUCKET_ROLES, Access
from ...platform.platform_cluster import cluster_id
from ...tenancy.tenant import BATCH_PRIORITY, DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_REQUEST
from ..base import Built, Gap, Platform, ServingBackend, Stack
from ..rollout import HOST_MAINTENANCE, stack_maintenance, stack_upgrade_schedule
from . import checks
from .args import (
    ComponentType,
    CustomComponent,
    DeploymentMode,
    HeadPoolSettings,
    PathwaysWorkloadArgs,
    UserContainer,
)
from .component import PathwaysWorkload
from .facts import HOST_NETWORK_BUCKETS, PROXY_REQUESTS, RESOURCE_MANAGER_REQUESTS
from .settings import NAME, PathwaysJobConfig

KEY = f"{PROJECT_NAMESPACE}:serving"


def head_node_pool(platform: Platform, settings: HeadPoolSettings) -> CpuNodePool | ExistingCpuNodePool:
    """The Pathways head's own CPU pool; its node account may use the scratch bucket (host network). On an existing
    cluster the pool exists (``existing_node_pool``, else ``<cluster>-head``) and its account holds that role."""
    cfg, name = platform.settings, platform.name
    pool = CpuPoolArgs(
        machine_type=settings.machine_type,
        min_nodes=0,
        max_nodes=settings.max_nodes,
        disk_size_gb=settings.disk_size_gb,
    )
    if isinstance(platform.cluster, ExistingCluster):
        return ExistingCpuNodePool(
            f"{name}-head",
            ExistingCpuNodePoolArgs(
                pool_name=settings.existing_node_pool or head_pool_name(name),
                pool=pool,
                zone=cfg.zone,
                node_grants=platform.node_grants(HOST_NETWORK_BUCKETS),
            ),
            opts=pulumi.ResourceOptions(parent=platform.parent),
        )
    return CpuNodePool(
        f"{name}-head",
        CpuNodePoolArgs(
            project=cfg.project,
            region=cfg.region,
            zone=cfg.zone,
            cluster=cluster_id(platform.cluster),
            pool_name=head_pool_name(name),
            service_account_id=head_service_account_id(name),
            pool=pool,
            node_grants=platform.node_grants(HOST_NETWORK_BUCKETS),
            image_streaming=cfg.cluster.image_streaming,
            labels=platform.labels,
        ),
        opts=platform.gcp_options(),
    )


IDLE_SLICE = (
    "interactive mode: the slices' TPU VMs bill at the Cost line's rate whether or not a client is connected; "
    "nothing scales them down while the PathwaysJob exists (its workers hold every VM): pulumi destroy, or remove "
    "the stack's slices, when idle"
)
"""What an idle interactive session costs (SRE review M8): the workers' pods hold the slice for the PathwaysJob's
life, so the node pools never scale down under it."""


def disruption(job: PathwaysJobConfig, cfg: Stack) -> dict[str, str]:
    """What a disruption of one of the job's VMs does (the ``rollout`` output's ``drain`` and ``upgrade``, which the
    preview prints): the JobSet the controller makes restarts whole, spending one of ``maxRestarts``
    (:data:`~.settings.INTERACTIVE_MAX_RESTARTS` cites the controller), and at none left the job fails for good.

    Nothing recreates a failed job (SRE review M9): the controller leaves it failed, and ``pulumi up`` compares the
    program with its state, not with the cluster, so it shows no change; after ``kubectl delete``, ``pulumi up
    --refresh`` reads the cluster first ("pulumi refresh ... compares the current stack's resource state with the
    state known to exist in the actual cloud provider", pulumi.com/docs/iac/cli/commands/pulumi_refresh), finds the
    PathwaysJob gone and creates it again."""
    n = job.restarts()
    gone = (
        "a failed PathwaysJob stays failed: nothing recreates it, and a later pulumi up sees no change (delete it, "
        "then pulumi up --refresh); the job is not under a serving SLO: resubmit it from a scheduler or retry "
        "controller of your own"
    )
    if n == 0:
        drain = (
            f"maxRestarts 0: a drain, node upgrade, host maintenance or repair of any of the job's VMs (its slices' or "
            f"the head's) fails the {job.workload} job for good; {gone}"
        )
    else:
        drain = (
            f"maxRestarts {n}: a drain, node upgrade, host maintenance or repair of any of the job's VMs (its slices' "
            f"or the head's) restarts the whole JobSet (every slice reloads; interactive clients reconnect) and spends "
            f"one restart for the job's life; the {ordinal(n + 1)} fails it for good; {gone}"
        )
    cost = "each upgrade of a slice's or the head pool's nodes is such a disruption"
    return {
        "drain": drain,
        "upgrade": f"{stack_upgrade_schedule(cfg)}; {cost}; {HOST_MAINTENANCE}",
        "scaleDown": "no autoscaling: the job holds its slices (tpuSlices) until it ends or is deleted; a different "
        "slice count replaces the PathwaysJob, restarting the job",
        "maintenance": stack_maintenance(cfg, whole=True),  # a PathwaysJob restarts as a whole
    }


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ... ``11th``, ``12th``, ``13th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def existing_head_pool(pool: ExistingCpuNodePool, job: PathwaysJobConfig, scratch: str | None) -> CloudResource:
    """The existing CPU pool of the Pathways head, with what the head needs of it."""
    h = job.head_pool
    needs = [f"{h.machine_type} nodes, autoscaled 0..{h.max_nodes}"]
    if scratch:
        needs.append(f"its node service account holds {BUCKET_ROLES['readWrite']} on gs://{scratch} (host network)")
    return CloudResource(
        "CPU node pool (Pathways head)",
        pool.pool_name,
        CreateOrExisting.EXISTING,
        f"{KEY}.headPool.existingNodePool",
        needs,
    )


def to_head_settings(job: PathwaysJobConfig) -> HeadPoolSettings:
    """The head pool settings as the component takes them."""
    h = job.head_pool
    return HeadPoolSettings(
        machine_type=h.machine_type,
        max_nodes=h.max_nodes,
        disk_size_gb=h.disk_size_gb,
        existing_node_pool=h.existing_node_pool,
    )


class PathwaysJob(ServingBackend[PathwaysJobConfig]):
    """A Pathways batch or interactive JAX program (a PathwaysJob, run as a JobSet by its controller, which restarts as
    a whole): it takes no clients, and its workers act as the nodes."""

    name = NAME
    settings = PathwaysJobConfig
    problems = staticmethod(checks.problems)

    def host_network_buckets(self, job: PathwaysJobConfig) -> dict[str, Access]:
        """The controller puts the workers on the host network; they write pathwaysDir."""
        return dict(HOST_NETWORK_BUCKETS)

    def quota_pods(self, job: PathwaysJobConfig, shapes: Mapping[str, SliceShape], pools: int) -> list[PodSet]:
        """The JobSet the controller makes (v0.1.4 pathwaysjob_controller.go l.734-738 the workers, one Job per slice
        of a pod per TPU VM; l.923-931 the head): the head's resource manager and proxy (sidecars beside the batch
        container, or its containers without one) and the workers, whose container names only its chips (l.759), so it
        requests the LimitRange's defaults. A restart recreates all of it; nothing surges."""
        shape = shapes[job.slices[0]]
        rm = ContainerRequests("pathways-rm", *RESOURCE_MANAGER_REQUESTS, sidecar=job.container is not None)
        proxy = ContainerRequests("pathways-proxy", *PROXY_REQUESTS, sidecar=job.container is not None)
        if job.container is not None:
            head = PodShape(
                "head", 1, (ContainerRequests("main", job.container.cpu, job.container.memory),), (rm, proxy)
            )
        else:
            head = PodShape("head", 1, (rm, proxy))
        worker = ContainerRequests("pathways-worker", DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_REQUEST, shape.chips_per_vm)
        return [
            PodSet(
                f"PathwaysJob {job.name}",
                (head, PodShape("worker", pools * shape.vms, (worker,))),
                1,
                restart_groups=1,
            )
        ]

    def metrics(self, job: PathwaysJobConfig) -> ServingMetrics:
        """Nothing to scrape and no serving: a batch or interactive JAX program, not a server.

        The Pathways components the controller runs (resource manager, IFRT proxy, workers;
        google/pathways-job@v0.1.4 pathwaysjob_controller.go) are closed-source images with no
        documented Prometheus endpoint; what the user's program exports is its own. The dashboard
        shows the TPU signals only; one alert watches the job's pods (:mod:`tpu_serving.operations.alerts.job_alerts`): the JobSet the
        controller makes is named after the PathwaysJob, with the ReplicatedJobs ``pathways-head`` and ``worker``
        (pathwaysjob_controller.go l.249-264, l.65, l.733), whose Jobs JobSet names ``<jobset>-<replicatedJob>-<index>``
        and whose pods the Job controller names after their Job (kubernetes v1.36.3 pkg/controller/job/
        indexed_job_utils.go l.496-503, as :meth:`tpu_serving.backends.saxml.backend.Saxml.metrics` reads them).
        """
        pattern = f"{job.name}-(pathways-head|worker)-[0-9]+-.+"
        pods = JobPods(
            f"PathwaysJob {job.name}", pattern, job.workload == "interactive", delete=f"pathwaysjob {job.name}"
        )
        return ServingMetrics(serves=False, job_pods=pods)

    def production_gaps(self, job: PathwaysJobConfig, _shape: SliceShape) -> list[Gap]:
        """A PathwaysJob's restarts never come back (:func:`disruption`): over the job's life, one disruption more than
        ``maxRestarts`` fails it for good, and nothing recreates it."""
        n = job.restarts()
        return [
            Gap(
                "serving.maxRestarts",
                str(n),
                f"the {ordinal(n + 1)} drain, node upgrade, host maintenance or repair of any of the job's VMs over "
                "its life fails the PathwaysJob for good, and nothing recreates it",
            )
        ]

    def build(self, platform: Platform, job: PathwaysJobConfig) -> Built:
        """The JobSet and PathwaysJob installs, the head pool and the PathwaysJob."""
        name, identity, buckets = platform.name, platform.identity, platform.buckets
        jobset = platform.install(JOBSET, job.jobset_version, ())
        controller = platform.install(PATHWAYS_JOB, job.pathways_job_version, (jobset,))
        c = job.container
        head_pool = head_node_pool(platform, to_head_settings(job)) if job.deployment_mode == "default" else None
        workload = PathwaysWorkload(
            f"{name}-pathways",
            PathwaysWorkloadArgs(
                namespace=identity.namespace_name,
                service_account=identity.service_account_name,
                name=job.name,
                shape=platform.slices.shape,
                num_slices=len(platform.slices.names),
                pathways_dir=f"gs://{buckets.names['scratch']}/pathways-job",
                container=UserContainer(c.image, tuple(c.command), tuple(c.args), c.env, c.cpu, c.memory)
                if c
                else None,
                deployment_mode=DeploymentMode(job.deployment_mode),
                pathways_version=job.pathways_version,
                max_restarts=job.restarts(),
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
            opts=platform.workload_options(
                jobset,
                controller,
                *buckets.depends_on("scratch"),
                *([head_pool.node_pool] if isinstance(head_pool, CpuNodePool) else []),
            ),
        )
        outputs: dict[str, object] = {
            "pathwaysJob": job.name,
            "workload": job.workload,
            "rollout": disruption(job, platform.settings),
        }
        if job.workload == "interactive":
            outputs["caveats"] = [IDLE_SLICE]
        if workload.port_forward is not None:
            env = " ".join(f"{k}={v}" for k, v in (workload.client_env or {}).items())
            outputs.update(
                portForward=workload.port_forward,
                clientEnv=workload.client_env,
                clientExample=f"{workload.client_pip} && {env} python3 -c "
                "'import pathwaysutils; import jax; pathwaysutils.initialize(); print(jax.devices())'",
            )
        built = Built(installs=[jobset, controller], outputs=outputs)
        if isinstance(head_pool, ExistingCpuNodePool):
            built.cloud.append(existing_head_pool(head_pool, job, platform.buckets.names.get("scratch")))
        return built

    def cpu_nodes(self, job: PathwaysJobConfig) -> list[NodeUsage]:
        """In ``default`` mode the head pod (resource manager and IFRT proxy) holds one node of the head pool for
        as long as the PathwaysJob runs; the pool scales from zero to it (min 0). An interactive job runs until it
        is deleted, so its head node bills all along; a batch job's head node goes with the job, as its slices do
        (:meth:`always_on_slices`), so it counts only in the peak figure. ``colocate_head_with_workers`` puts the
        head on a TPU VM, which the slices already bill."""
        if job.deployment_mode != "default":
            return []
        h = job.head_pool
        running = 0 if job.workload == "batch" else 1
        return [NodeUsage("pathways head pool (while the job runs)", h.machine_type, 1, h.disk_size_gb, running)]

    def always_on_slices(self, job: PathwaysJobConfig, pools: int) -> int:
        """A batch job's slices start empty: the cluster autoscaler adds each whole slice when the job's workers wait
        for it and removes it once they have finished (about 10 minutes unneeded), so the TPUs bill while the job
        runs, not until the stack is destroyed. An interactive job's slices stay on for the clients that attach."""
        return 0 if job.workload == "batch" else pools


BACKEND = PathwaysJob()
