"""The stack outputs of a :class:`~tpu_serving.deployment.TpuServingDeployment`: the infrastructure's (the cluster, the
slices, the buckets, the identity, the controllers, the observability) and, on an existing cluster, which cloud
resources the stack created and which it names existing (:mod:`tpu_serving.platform.inventory`)."""

from typing import Any

from .common.naming import ZONE
from .config.models import StackConfig
from .derived import existing_cluster_args
from .phases import Context, IdentityParts, OperationsParts, PlatformParts, PoolParts, ServingParts
from .platform.cluster import TpuCluster
from .platform.controllers import installs_by_group
from .platform.existing import ExistingCluster
from .platform.platform_cluster import PlatformCluster


def infrastructure_outputs(
    ctx: Context,
    platform: PlatformParts,
    pools: PoolParts,
    identity: IdentityParts,
    serving: ServingParts,
    operations: OperationsParts,
) -> dict[str, Any]:
    """The stack outputs of the infrastructure: the cluster, the slices, the buckets, the identity, the
    controllers and the observability."""
    cfg, workloads, observability, cluster = ctx.cfg, identity.identity, operations.observability, platform.cluster
    return {
        "project": cfg.project,
        "region": cfg.region,
        "zone": cfg.zone,
        **cluster_outputs(cfg, cluster),
        "slices": [
            {
                "nodePool": pool,
                "machineType": s.shape.machine_type.name,
                "topology": s.shape.topology,
                "vms": s.shape.vms,
                "chips": s.shape.chips,
                "hbmGib": s.shape.hbm_gib,
            }
            for s in pools.slices.values()
            for pool in s.pool_names
        ],
        "buckets": platform.buckets.names,
        "namespace": workloads.namespace_name,
        "kubernetesServiceAccount": workloads.service_account_name,
        "gcpServiceAccount": workloads.email,
        "controllers": installs_by_group(serving.built.installs),
        **(
            {"dashboard": observability.dashboard_name, "alertPolicies": observability.alert_policies}
            if observability is not None and observability.dashboard_name is not None
            else {}
        ),
    }


def cluster_outputs(cfg: StackConfig, cluster: TpuCluster | ExistingCluster | PlatformCluster) -> dict[str, Any]:
    """The cluster's stack outputs: its name, how to reach it (``getCredentials``, except with a kubeconfig file of
    the user's own) and, for a created cluster or an existing one read by name, a kubeconfig."""
    if isinstance(cluster, TpuCluster):
        return {
            "clusterName": cluster.cluster.name,
            # gcloud's --dns-endpoint writes the DNS-based endpoint into the kubeconfig (GKE "Customize your network
            # isolation", https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation)
            "getCredentials": f"gcloud container clusters get-credentials {cfg.cluster.name} --region {cfg.region} "
            f"--project {cfg.project}" + (" --dns-endpoint" if cfg.cluster.control_plane_endpoint == "dns" else ""),
            "kubeconfig": cluster.kubeconfig,
        }
    if isinstance(cluster, PlatformCluster):  # a model stack: the platform stack's cluster, read by name
        return {
            "clusterName": cluster.name,
            "platformStack": cluster.reference.name,
            "getCredentials": cluster.platform.apply(
                lambda p: (
                    f"gcloud container clusters get-credentials {p.cluster_name} --region {p.cluster_location} "
                    f"--project {p.project}" + (" --dns-endpoint" if p.control_plane.endpoint == "dns" else "")
                )
            ),
            "kubeconfig": cluster.kubeconfig,
        }
    existing = existing_cluster_args(cfg)
    if cluster.kubeconfig is None:
        return {
            "clusterName": cluster.name,
            "kubeconfigFile": existing.kubeconfig,
            "kubeconfigContext": existing.context,
        }
    where = f"--zone {existing.location}" if ZONE.match(existing.location) else f"--region {existing.location}"
    return {
        "clusterName": cluster.name,
        "getCredentials": f"gcloud container clusters get-credentials {cluster.name} {where} --project {cfg.project}",
        "kubeconfig": cluster.kubeconfig,
    }
