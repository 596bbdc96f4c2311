"""Which cloud resources a deployment on an existing cluster creates, and which it names existing.

On an existing cluster (``cluster.existing``) every cloud resource the in-cluster half needs is either named existing
(the stack creates nothing for it and never changes it) or created, each decided by one key of the stack file. This
module lists them, with what an existing one must be or hold: the ``cloudResources`` stack output, which the preview
prints. It reads the settings and the built parts; it creates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..common.gcp_zones import per_zone_minimum
from ..common.naming import (
    NameLimit,
    dns_name,
    group_recreations_metric,
    nat_name,
    nat_router_name,
    proxy_only_subnet_name,
    service_account_email,
    workload_service_account_id,
)
from ..common.settings import PROJECT_NAMESPACE, CreateOrExisting
from ..config.mirror import mirror_paths
from ..config.mirror import mode as mirror_mode
from ..config.models import StackConfig
from ..config.serving_facts import maintenance_gate_runs
from ..derived import existing_cluster_args, gateway_address_and_subnet, stack_apis
from ..phases import Context, IdentityParts, PlatformParts, PoolParts, ServingParts
from ..traffic.gateway import ADDRESS_PURPOSE, INFERENCE_POOL_MIN_GKE
from .cluster import LOGGING_COMPONENTS, MONITORING_COMPONENTS, CloudNat
from .existing import NETWORK_POLICY_ENFORCEMENT, CloudResource
from .image_mirror import MirrorMode
from .node_identity import BUCKET_ROLES, Access

CREATE, EXISTING = CreateOrExisting.CREATE, CreateOrExisting.EXISTING
NS = PROJECT_NAMESPACE


def cloud_resources(
    ctx: Context, platform: PlatformParts, pools: PoolParts, identity: IdentityParts, serving: ServingParts
) -> list[CloudResource]:
    """Every cloud resource of the deployment on an existing cluster, created or existing, in the order of the phases."""
    cfg = ctx.cfg
    return [
        cluster(cfg),
        CloudResource(
            "CPU nodes",
            "the cluster's CPU node pools",
            EXISTING,
            f"{NS}:cluster.cpuPool",
            (
                f"room for the stack's CPU pods (controllers, endpoint picker); described as {cfg.cluster.cpu_pool.machine_type}, "
                f"{per_zone_minimum(cfg.cluster.cpu_pool.min_nodes, 1)}..{cfg.cluster.cpu_pool.max_nodes} nodes",
            ),
        ),
        cloud_nat(cfg),
        CloudResource(
            "project APIs",
            ", ".join(stack_apis(cfg)),
            cfg.project_apis,
            f"{NS}:projectApis",
            () if cfg.project_apis == CREATE else (f"enabled in project {cfg.project}",),
        ),
        *image_mirror(cfg),
        *node_pools(cfg, platform, pools, ctx),
        *buckets(cfg, platform),
        workload_account(cfg, identity),
        *serving.built.cloud,
        *gateway_subnet(cfg),
        *gateway_address(cfg, serving),
        *observability(ctx),
    ]


def cluster(cfg: StackConfig) -> CloudResource:
    """The existing cluster, how it is reached and the features the stack relies on."""
    args = existing_cluster_args(cfg)
    how = (
        f"reached through the kubeconfig file {args.kubeconfig}" + (f", context {args.context}" if args.context else "")
        if args.kubeconfig is not None
        else f"read with container.getCluster in {args.location}, reached with gke-gcloud-auth-plugin"
    )
    needs = [how, f"Workload Identity, pool {args.workload_pool}, with the GKE metadata server on the CPU pools too"]
    needs.append(NETWORK_POLICY_ENFORCEMENT)  # the tenancy's NetworkPolicies (GKE review 67, M1)
    if cfg.serving is not None and cfg.observability.enabled:
        needs.append("Managed Service for Prometheus (managed collection), for the PodMonitorings")
        # GKE review 65, M1: without the kube state metrics packages the not-ready, no-ready-leader, controller and
        # autoscaler alerts read no series and fire for ever (a cluster the stack creates gets them explicitly); GKE
        # turns the packages on by default only for Standard clusters from 1.29.2-gke.2000 (cloud.google.com/
        # kubernetes-engine/docs/how-to/kube-state-metrics, "Requirements", read in its es copy)
        needs.append(
            f"the {', '.join(MONITORING_COMPONENTS)} monitoring components (monitoringConfig.enableComponents: the kube "
            "state metrics the not-ready, no-ready-leader, controller and autoscaler alerts read; without them those "
            "alerts fire while serving is fine)"
        )
        if maintenance_gate_runs(cfg):  # SRE review 31, M4: the gate's run metric and pages read its container logs
            needs.append(
                f"the {', '.join(LOGGING_COMPONENTS)} logging components (loggingConfig.enableComponents: the "
                "host-maintenance gate's run metric and pages read its container's log lines; without WORKLOADS its "
                "silence page fires for good and a lost serving node never pages)"
            )
    if cfg.cluster.gcs_fuse_csi_driver:
        needs.append("the Cloud Storage FUSE CSI driver add-on, through which the serving pods mount their buckets")
    if cfg.gateway is not None:
        needs.append("the Gateway API (GKE Gateway controller, standard channel) and the HttpLoadBalancing add-on")
        if cfg.gateway.inference_pool:
            needs.append(
                "GKE {}.{}.{}-gke.{} or later, which serves the InferencePool CRD".format(*INFERENCE_POOL_MIN_GKE)
            )
    if cfg.tenancy.operators.groups:
        needs.append(f"Google Groups for RBAC ({cfg.cluster.security_group})")
    return CloudResource("cluster", args.gke_name, EXISTING, f"{NS}:cluster.existing", needs)


def cloud_nat(cfg: StackConfig) -> CloudResource:
    """The network's Cloud NAT: the cluster owner's (not looked up), a named one (looked up), or created."""
    c, key = cfg.cluster, f"{NS}:cluster.cloudNat"
    if "cloud_nat" not in c.model_fields_set:
        owners = "the cluster owner's, not looked up (private nodes pull images from outside Google through it)"
        return CloudResource("Cloud NAT", f"network {c.network}'s in {cfg.region}", EXISTING, key, (owners,))
    if c.cloud_nat == CloudNat.CREATE:
        router = dns_name(nat_router_name(c.name), limit=NameLimit.K8S_LABEL)
        return CloudResource("Cloud NAT", f"{dns_name(nat_name(c.name))} on router {router}", CREATE, key)
    named = f"{c.existing_nat} on router {c.existing_nat_router}" if c.existing_nat else f"network {c.network}'s"
    looked_up = "looked up when the stack deploys" if c.existing_nat else "not looked up"
    return CloudResource("Cloud NAT", named, EXISTING, key, (looked_up,))


def image_mirror(cfg: StackConfig) -> list[CloudResource]:
    """The repositories the Docker Hub and ghcr.io images are pulled through, created or named (none: no entry; the
    preview's image lines say where those images come from)."""
    paths = mirror_paths(cfg)
    if not paths:
        return []
    key, names = f"{NS}:imageMirror.mode", ", ".join(paths.values())
    if mirror_mode(cfg) == MirrorMode.CREATE:
        return [CloudResource("image mirror", names, CREATE, key, (f"remote repositories in {cfg.region}",))]
    reader = "the nodes' service account holds roles/artifactregistry.reader on each (in its project)"
    return [CloudResource("image mirror", names, EXISTING, key, (reader,))]


METADATA_SERVER = (
    "the GKE metadata server on each pool (workloadMetadataConfig.mode GKE_METADATA): a pool made before the cluster "
    "had Workload Identity keeps the node's identity, and the workload account's bucket and monitoring grants do not "
    "reach its pods"
)
"""What each existing pool the workloads run on must run (GKE review 67, m1): enabling Workload Identity on a cluster
leaves its existing node pools as they are, each updated on its own with ``--workload-metadata=GKE_METADATA`` (GKE,
"Authenticate to Google Cloud APIs from GKE workloads", https://cloud.google.com/kubernetes-engine/docs/how-to/
workload-identity); the pools the stack creates set it (:mod:`.nodepool`)."""


def node_pools(cfg: StackConfig, platform: PlatformParts, pools: PoolParts, ctx: Context) -> list[CloudResource]:
    """Each slice kind's existing TPU node pools, with the shape, size and roles the workloads expect of them."""
    host = ctx.backend.host_network_buckets(cfg.serving) if ctx.backend is not None else {}
    out = []
    for i, s in enumerate(cfg.tpu_slices):
        names = cfg.node_pool_names(s)
        shape = s.shape
        needs = [f"{shape.machine_type.name} {shape.topology}: {shape.vms} VM(s) per pool, in {cfg.zone_of(s)}"]
        needs.append(METADATA_SERVER)
        if s.existing_node_pools is None:
            needs.append(
                "named as the stack would name them (<cluster.name>-<name>): they must exist under these names"
            )
        empty = [n for p, n in zip(s.pool_names, names, strict=True) if p in pools.scale_from_zero]
        if empty:
            needs.append(f"autoscaled from 0 to {shape.vms} nodes (a whole slice at once): {', '.join(empty)}")
        if cfg.serving is not None and s.name in cfg.serving.slices:
            needs += node_roles(host, platform)
        out.append(
            CloudResource("TPU node pools", ", ".join(names), EXISTING, f"{NS}:tpuSlices[{i}].existingNodePools", needs)
        )
    return out


def node_roles(host: Mapping[str, Access], platform: PlatformParts) -> list[str]:
    """The bucket roles the serving pools' node service account must hold for the backend's host-network pods."""
    if not host:
        return []
    names = platform.buckets.names
    roles = [
        f"their node service account holds {BUCKET_ROLES[access]} on gs://{names[purpose]} (host-network pods)"
        for purpose, access in host.items()
        if purpose in names
    ]
    shared = platform.shared.names.values() if platform.shared else ()
    return roles + [f"their node service account holds {BUCKET_ROLES['read']} on gs://{b} (shared)" for b in shared]


def buckets(cfg: StackConfig, platform: PlatformParts) -> list[CloudResource]:
    """The stack's buckets (created, or existing), then the shared buckets it reads (always existing)."""
    names = platform.buckets.names
    out = [
        CloudResource("bucket", names[b.purpose], EXISTING if b.existing else CREATE, f"{NS}:buckets[{i}].existing")
        for i, b in enumerate(cfg.buckets)
    ]
    return out + [
        CloudResource("bucket (shared)", b.name, EXISTING, f"{NS}:sharedBuckets[{i}]")
        for i, b in enumerate(cfg.shared_buckets)
    ]


def workload_account(cfg: StackConfig, identity: IdentityParts) -> CloudResource:
    """The workloads' GCP service account: created with its binding and roles, or existing with what it must hold."""
    wi, key = cfg.workload_identity, f"{NS}:workloadIdentity.existingGcpServiceAccount"
    if wi.existing_gcp_service_account is not None:
        return CloudResource(
            "GCP service account", wi.existing_gcp_service_account, EXISTING, key, identity.identity.required_grants
        )
    account = workload_service_account_id(cfg.cluster.name, wi.gcp_service_account)
    comes_with = ["its Workload Identity binding and bucket roles (created with it)"]
    return CloudResource("GCP service account", service_account_email(account, cfg.project), CREATE, key, comes_with)


def gateway_subnet(cfg: StackConfig) -> list[CloudResource]:
    """The region's proxy-only subnet of the gateway, created or existing."""
    g = cfg.gateway
    if g is None:
        return []
    key = f"{NS}:gateway.createProxyOnlySubnet"
    if g.create_proxy_only_subnet:
        name = dns_name(proxy_only_subnet_name(cfg.cluster.name), limit=NameLimit.K8S_LABEL)
        return [CloudResource("proxy-only subnet", f"{name} ({g.proxy_only_cidr})", CREATE, key)]
    needs = (
        f"the active proxy-only subnet of network {cfg.cluster.network} in {cfg.region}, range {g.proxy_only_cidr}",
    )
    return [CloudResource("proxy-only subnet", g.proxy_only_cidr, EXISTING, key, needs)]


def gateway_address(cfg: StackConfig, serving: ServingParts) -> list[CloudResource]:
    """The Gateway's regional internal address, reserved or existing."""
    g, endpoint = cfg.gateway, serving.built.endpoint
    if g is None or endpoint is None:
        return []
    name, subnet = gateway_address_and_subnet(cfg, endpoint.service)
    if g.existing_address is None:
        return [CloudResource("gateway address", f"{name} (subnet {subnet})", CREATE, f"{NS}:gateway.existingAddress")]
    needs = (f"a regional internal address in {cfg.region}, purpose {ADDRESS_PURPOSE}, IP {g.existing_address_ip}",)
    return [CloudResource("gateway address", name, EXISTING, f"{NS}:gateway.existingAddress", needs)]


def observability(ctx: Context) -> list[CloudResource]:
    """The Cloud Monitoring dashboard, alert policies and log-based metric of a watched deployment."""
    if not ctx.watched:
        return []
    o = ctx.cfg.observability
    what = "dashboard, alert policies"
    if ctx.metrics.leader_worker_sets:
        what += (
            f", log-based metric {group_recreations_metric(ctx.cfg.cluster.name, ctx.cfg.workload_identity.namespace)}"
        )
    return [CloudResource("Cloud Monitoring", what, o.cloud_resources, f"{NS}:observability.cloudResources")]
