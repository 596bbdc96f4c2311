"""tpu-serving: one stack file -> a multi-host TPU LLM serving deployment on GKE.

This program only loads the stack's config, composes the components and exports outputs.
"""

import json

import pulumi

from tpu_serving import (
    BucketGrant,
    CpuNodePool,
    CpuNodePoolArgs,
    ProjectServices,
    ProjectServicesArgs,
    ControllerInstall,
    ControllerInstallArgs,
    PathwaysServing,
    PathwaysServingArgs,
    PathwaysWorkload,
    PathwaysWorkloadArgs,
    SaxmlServing,
    SaxmlServingArgs,
    Tenancy,
    TenancyArgs,
    Buckets,
    BucketsArgs,
    BucketSpec,
    CpuPoolArgs,
    TpuCluster,
    TpuClusterArgs,
    TpuNodePool,
    TpuNodePoolArgs,
    WorkloadIdentity,
    WorkloadIdentityArgs,
)
from tpu_serving.catalog import SliceShape
from tpu_serving.cluster import MaintenanceSettings
from tpu_serving.config import (
    PathwaysJobConfig,
    PathwaysServingConfig,
    SaxmlServingConfig,
    bucket_name,
    gcp_service_account_id,
    load_from_pulumi,
    node_service_account_id,
    pool_name,
    to_settings,
)
from tpu_serving.controllers import JOBSET, LWS, PATHWAYS_JOB, installs_by_group
from tpu_serving.naming import NameLimit, dns_name
from tpu_serving.pathways_serving import MaxTextSettings, PathwaysImages, PathwaysRequests, ProbeSettings
from tpu_serving.pathways_workload import HOST_NETWORK_BUCKETS, CustomComponent, HeadPoolSettings, UserContainer
from tpu_serving.saxml_serving import MODEL_SERVER_BUCKETS, SaxmlImages, SaxModel
from tpu_serving.services import required_apis
from tpu_serving.tenancy import BATCH_PRIORITY, SERVING_PRIORITY

cfg = load_from_pulumi()
name = cfg.cluster.name
labels = {"app": "tpu-serving", "deployment": name, "managed-by": "pulumi", **cfg.labels}
k8s_labels = {"app.kubernetes.io/part-of": "tpu-serving", "app.kubernetes.io/instance": name}

apis = ProjectServices(
    f"{name}-apis", ProjectServicesArgs(project=cfg.project, apis=required_apis(cfg.cluster.image_streaming))
)
after_apis = pulumi.ResourceOptions(depends_on=[apis])

buckets = Buckets(
    name,
    BucketsArgs(
        project=cfg.project,
        labels=labels,
        buckets=[
            BucketSpec(
                purpose=b.purpose,
                name=bucket_name(cfg, b),
                location=b.location or cfg.region,
                storage_class=b.storage_class,
                versioning=b.versioning,
                ttl_days=b.scratch_ttl_days,
            )
            for b in cfg.buckets
        ],
    ),
    opts=after_apis,
)


def node_grants(needs: dict[str, str]) -> list[BucketGrant]:
    """Bucket roles for host-network pods, by bucket purpose -> access, for the stack's buckets."""
    return [
        BucketGrant(key=purpose, bucket=buckets.buckets[purpose].name, access=access)  # type: ignore[arg-type]
        for purpose, access in needs.items()
        if purpose in buckets.buckets
    ]


def slice_node_needs(slice_name: str) -> dict[str, str]:
    """What the host-network pods on a slice kind read or write, by bucket purpose."""
    serving = cfg.serving
    if serving is None or slice_name not in serving.slices:
        return {}
    if isinstance(serving, SaxmlServingConfig):
        return dict(MODEL_SERVER_BUCKETS)
    if isinstance(serving, PathwaysJobConfig):
        return dict(HOST_NETWORK_BUCKETS)
    return {}


cluster = TpuCluster(
    name,
    TpuClusterArgs(
        project=cfg.project,
        region=cfg.region,
        zone=cfg.zone,
        name=name,
        release_channel=cfg.cluster.release_channel,
        min_master_version=cfg.cluster.min_master_version,
        deletion_protection=cfg.cluster.deletion_protection,
        network=cfg.cluster.network,
        subnetwork=cfg.cluster.subnetwork,
        cpu_pool=CpuPoolArgs(**cfg.cluster.cpu_pool.model_dump()),
        image_streaming=cfg.cluster.image_streaming,
        gcs_fuse_csi_driver=cfg.cluster.gcs_fuse_csi_driver,
        managed_prometheus=cfg.cluster.managed_prometheus,
        private_nodes=cfg.cluster.private_nodes,
        master_authorized_networks=cfg.cluster.master_authorized_networks,
        security_group=cfg.cluster.security_group,
        maintenance=to_settings(cfg.cluster.maintenance, MaintenanceSettings),
        labels=labels,
    ),
    opts=after_apis,
)

slices = {
    s.name: TpuNodePool(
        f"{name}-{s.name}",
        TpuNodePoolArgs(
            project=cfg.project,
            region=cfg.region,
            zone=cfg.zone,
            cluster=cluster.cluster.id,
            service_account_id=node_service_account_id(cfg, s.name),
            shape=s.shape,
            pool_names=tuple(pool_name(cfg, p) for p in s.pool_names),
            spot=s.spot,
            reservation=s.reservation,
            disk_size_gb=s.disk_size_gb,
            image_streaming=cfg.cluster.image_streaming,
            labels=labels,
            node_grants=node_grants(slice_node_needs(s.name)),
        ),
        opts=after_apis,
    )
    for s in cfg.tpu_slices
}

identity = WorkloadIdentity(
    f"{name}-wi",
    WorkloadIdentityArgs(
        project=cfg.project,
        namespace=cfg.workload_identity.namespace,
        kubernetes_service_account=cfg.workload_identity.kubernetes_service_account,
        gcp_service_account_id=gcp_service_account_id(cfg),
        bucket_grants=[
            BucketGrant(key=b.purpose, bucket=buckets.buckets[b.purpose].name, access=b.workload_access)
            for b in cfg.buckets
            if b.workload_access != "none"
        ],
        labels=k8s_labels,
    ),
    opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}, depends_on=[apis]),
)


def serving_ingress() -> tuple[dict[str, str], list[int]]:
    """Labels and ports of the pods that serve clients outside the namespace."""
    serving = cfg.serving
    if isinstance(serving, PathwaysServingConfig):
        return {"app": serving.name}, [8000]
    if isinstance(serving, SaxmlServingConfig):
        return {"app": "sax-http"}, [8888]
    return {}, []


def restart_unit_chips() -> int:
    """TPU chips of what restarts as one unit: one LWS group; a whole JobSet or PathwaysJob.

    For a moment the old and the new pods of that unit both hold their TPU requests, so the
    quota leaves that much headroom above the stack's slices.
    """
    serving = cfg.serving
    if serving is None:
        return 0
    chosen = [s for s in cfg.tpu_slices if s.name in serving.slices]
    chips = sum(s.count * s.shape.chips for s in chosen)
    return chips // serving.replicas if isinstance(serving, PathwaysServingConfig) else chips


serving_pods, serving_ports = serving_ingress()
tenancy = Tenancy(
    f"{name}-tenancy",
    TenancyArgs(
        namespace=identity.namespace_name,
        tpu_chips=sum(shape.chips for _, shape, _ in cfg.slices),
        tpu_headroom_chips=restart_unit_chips(),
        cpu=cfg.tenancy.quota.cpu,
        memory=cfg.tenancy.quota.memory,
        serving_pods=serving_pods,
        serving_ports=serving_ports,
        allowed_namespaces=cfg.tenancy.allowed_namespaces,
        allowed_cidrs=cfg.tenancy.allowed_cidrs,
        operator_groups=cfg.tenancy.operators.groups,
        operator_users=cfg.tenancy.operators.users,
        labels=k8s_labels,
    ),
    opts=pulumi.ResourceOptions(
        providers={"kubernetes": cluster.provider}, depends_on=[identity.namespace or identity.service_account]
    ),
)


def install(controller, version: str, after: tuple = ()) -> ControllerInstall:
    """A controller release, applied once the CPU pool that runs it (and ``after``) exist."""
    return ControllerInstall(
        f"{name}-{controller.name}",
        ControllerInstallArgs(controller, version),
        opts=pulumi.ResourceOptions(
            providers={"kubernetes": cluster.provider}, depends_on=[cluster.cpu_pool, *after]
        ),
    )


def serving_slices(names: list[str]) -> tuple[SliceShape, list]:
    """The shape shared by the named slice kinds, and all their node pools."""
    chosen = [slices[n] for n in names]
    return chosen[0].shape, [p for c in chosen for p in c.node_pools]


def pathways_serving(serving: PathwaysServingConfig) -> None:
    lws = install(LWS, serving.lws_version)
    installs.append(lws)
    shape, pools = serving_slices(serving.slices)
    workload = PathwaysServing(
        f"{name}-serving",
        PathwaysServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=shape,
            num_slices=len(pools) // serving.replicas,
            replicas=serving.replicas,
            mode=serving.mode,
            maxtext=to_settings(serving.maxtext, MaxTextSettings),
            checkpoint_uri=f"gs://{buckets.names['checkpoints']}/{serving.checkpoint_path}",
            scratch_uri=f"gs://{buckets.names['scratch']}/pathways",
            name=serving.name,
            service_name=serving.service_name,
            images=to_settings(serving.images, PathwaysImages),
            probes=to_settings(serving.probes, ProbeSettings),
            requests=to_settings(serving.requests, PathwaysRequests),
            priority_class_name=SERVING_PRIORITY,
            resource_manager_flags=tuple(serving.resource_manager_flags),
            jax_env=serving.jax_tpu.env,
            jax_capabilities=tuple(serving.jax_tpu.capabilities),
            labels=k8s_labels,
            depends_on=[lws, identity.service_account, tenancy, *pools],
        ),
        opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}),
    )
    pulumi.export("service", workload.service.metadata.name)
    pulumi.export("leaderPod", workload.leader_pod)
    pulumi.export("portForward", workload.port_forward)
    pulumi.export("generateExample", workload.generate_example)


def saxml_serving(serving: SaxmlServingConfig) -> None:
    jobset = install(JOBSET, serving.jobset_version)
    installs.append(jobset)
    shape, pools = serving_slices(serving.slices)
    min_version = cfg.cluster.min_master_version
    privileged = serving.privileged == "always" or (
        serving.privileged == "auto" and min_version is not None and version_tuple(min_version) < (1, 28)
    )
    workload = SaxmlServing(
        f"{name}-saxml",
        SaxmlServingArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            shape=shape,
            num_slices=len(pools),
            state_bucket=buckets.names["state"],
            cell=serving.cell,
            models=[SaxModel(m.model, m.model_path, m.checkpoint, m.replicas) for m in serving.models],
            images=to_settings(serving.images, SaxmlImages),
            max_restarts=serving.max_restarts,
            privileged=privileged,
            exposure=serving.http.exposure,
            source_ranges=tuple(serving.http.source_ranges),
            publish_timeout_seconds=serving.publish_timeout_seconds,
            labels=k8s_labels,
            priority_class_name=SERVING_PRIORITY,
            depends_on=[jobset, identity.service_account, tenancy, *pools],
        ),
        opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}),
    )
    model = serving.models[0].model if serving.models else f"{serving.cell}/<model>"

    def curl(method: str, path: str, body: dict) -> pulumi.Output[str]:
        return workload.address.apply(
            lambda a: f"curl -s -X {method} http://{a}:8888{path} -H 'Content-type: application/json' "
            f"-d '{json.dumps(body)}'"
        )

    pulumi.export("saxHttpAddress", workload.address)
    pulumi.export("saxModels", [m.model for m in serving.models])
    pulumi.export("generateExample", curl("POST", "/generate", {"model": model, "query": "How many days are in a week?"}))
    pulumi.export("listcellExample", curl("GET", "/listcell", {"model": model}))


def pathways_job(job: PathwaysJobConfig) -> None:
    jobset = install(JOBSET, job.jobset_version)
    controller = install(PATHWAYS_JOB, job.pathways_job_version, after=(jobset,))
    installs.extend([jobset, controller])
    shape, pools = serving_slices(job.slices)
    c = job.container
    head_pool = head_node_pool(job.head_pool) if job.deployment_mode == "default" else None
    workload = PathwaysWorkload(
        f"{name}-pathways",
        PathwaysWorkloadArgs(
            namespace=identity.namespace_name,
            service_account=identity.service_account_name,
            name=job.name,
            shape=shape,
            num_slices=len(pools),
            pathways_dir=f"gs://{buckets.names['scratch']}/pathways-job",
            container=UserContainer(c.image, tuple(c.command), tuple(c.args), c.env) if c else None,
            deployment_mode=job.deployment_mode,
            pathways_version=job.pathways_version,
            max_restarts=job.max_restarts,
            max_slice_restarts=job.max_slice_restarts,
            elastic_slices=job.elastic_slices,
            termination_grace_period_seconds=job.termination_grace_period_seconds,
            priority_class_name=job.priority_class_name or BATCH_PRIORITY,
            custom_components=[
                CustomComponent(x.component_type, x.image, tuple(x.flags), x.env) for x in job.custom_components
            ],
            labels=k8s_labels,
            head_pool=head_pool.pool_name if head_pool and c else None,
            depends_on=[
                jobset,
                controller,
                identity.service_account,
                tenancy,
                buckets.buckets["scratch"],
                *pools,
                *([head_pool.node_pool] if head_pool else []),
            ],
        ),
        opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}),
    )
    pulumi.export("pathwaysJob", job.name)
    pulumi.export("workload", job.workload)
    if workload.port_forward is not None:
        env = " ".join(f"{k}={v}" for k, v in (workload.client_env or {}).items())
        pulumi.export("portForward", workload.port_forward)
        pulumi.export("clientEnv", workload.client_env)
        pulumi.export(
            "clientExample",
            f"{workload.client_pip} && {env} python3 -c "
            "'import pathwaysutils; import jax; pathwaysutils.initialize(); print(jax.devices())'",
        )


def head_node_pool(settings: HeadPoolSettings) -> CpuNodePool:
    """The Pathways head's own CPU pool; its node account may use the scratch bucket (host network)."""
    pool_name_ = dns_name(name, "head", limit=NameLimit.GKE_NODE_POOL)
    return CpuNodePool(
        f"{name}-head",
        CpuNodePoolArgs(
            project=cfg.project,
            region=cfg.region,
            zone=cfg.zone,
            cluster=cluster.cluster.id,
            pool_name=pool_name_,
            service_account_id=dns_name(name, "head", limit=NameLimit.GCP_SERVICE_ACCOUNT_ID),
            pool=CpuPoolArgs(
                machine_type=settings.machine_type,
                min_nodes=0,
                max_nodes=settings.max_nodes,
                disk_size_gb=settings.disk_size_gb,
            ),
            node_grants=node_grants(dict(HOST_NETWORK_BUCKETS)),
            image_streaming=cfg.cluster.image_streaming,
            labels=labels,
        ),
        opts=after_apis,
    )


def version_tuple(version: str) -> tuple[int, ...]:
    """``"1.27.2-gke.2100"`` -> ``(1, 27)``; ``latest`` is newer than any version."""
    if version == "latest":
        return (999, 0)
    return tuple(int(p) for p in version.split("-")[0].split(".")[:2])


installs: list[ControllerInstall] = []
if isinstance(cfg.serving, PathwaysServingConfig):
    pathways_serving(cfg.serving)
elif isinstance(cfg.serving, SaxmlServingConfig):
    saxml_serving(cfg.serving)
elif isinstance(cfg.serving, PathwaysJobConfig):
    pathways_job(cfg.serving)

pulumi.export("project", cfg.project)
pulumi.export("region", cfg.region)
pulumi.export("zone", cfg.zone)
pulumi.export("clusterName", cluster.cluster.name)
pulumi.export(
    "getCredentials",
    f"gcloud container clusters get-credentials {name} --region {cfg.region} --project {cfg.project}",
)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export(
    "slices",
    [
        {
            "nodePool": pool,
            "machineType": shape.machine_type.name,
            "topology": shape.topology,
            "vms": shape.vms,
            "chips": shape.chips,
            "hbmGib": shape.hbm_gib,
        }
        for s in slices.values()
        for pool in s.pool_names
        for shape in [s.shape]
    ],
)
pulumi.export("buckets", buckets.names)
pulumi.export("namespace", identity.namespace_name)
pulumi.export("kubernetesServiceAccount", identity.service_account_name)
pulumi.export("gcpServiceAccount", identity.email)
pulumi.export("controllers", installs_by_group(installs))
