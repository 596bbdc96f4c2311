"""The Cloud Router and Cloud NAT of a cluster's private nodes (imported by :mod:`.cluster` only)."""

from typing import TYPE_CHECKING

import pulumi

from ..common.naming import NameLimit, dns_name, nat_name, nat_router_name

if TYPE_CHECKING:
    # pulumi_gcp.compute is several hundred modules (about a second to import); only private
    # clusters need it, so it is imported where the NAT is made.
    from pulumi_gcp import compute


def cloud_nat(
    name: str, *, cluster: str, project: str, region: str, network: str, child: pulumi.ResourceOptions
) -> "compute.RouterNat":
    """Cloud NAT for the nodes without external IPs of cluster ``cluster``, so they can pull images from outside Google.

    Private nodes reach Google APIs and Artifact Registry through Private Google Access,
    but not Docker Hub or registry.k8s.io (https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#docker_hub).
    """
    from pulumi_gcp import compute

    router = compute.Router(
        f"{name}-router",
        name=dns_name(nat_router_name(cluster), limit=NameLimit.K8S_LABEL),
        project=project,
        region=region,
        network=network,
        opts=child,
    )
    return compute.RouterNat(
        f"{name}-nat",
        name=dns_name(nat_name(cluster), limit=NameLimit.K8S_LABEL),
        project=project,
        region=region,
        router=router.name,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
        log_config={"enable": True, "filter": "ERRORS_ONLY"},
        opts=child,
    )


def existing_nat_problems(mode: object, router: object, nat: object, private_nodes: object) -> list[str]:
    """The existing NAT is named (router and NAT) exactly when the stack uses one."""
    existing = str(mode) == "existing" and private_nodes is True
    if existing and not (router and nat):
        return [
            "cloud_nat = existing: name the NAT's Cloud Router and the NAT (existing_nat_router, existing_nat), "
            "which the stack looks up when it deploys"
        ]
    if not existing and (router or nat):
        return ["existing_nat_router and existing_nat name an existing NAT: they need cloud_nat = existing"]
    return []


def look_up_existing_nat(*, project: str, region: str, router: str, nat: str, parent: pulumi.Resource) -> None:
    """Read the existing Cloud NAT (``gcp.compute.getRouterNat``, the provider's ``google_compute_router_nat``
    data source); GCP answers not found for a missing one, and the program fails there."""
    from pulumi_gcp import compute

    compute.get_router_nat(
        project=project, region=region, router=router, name=nat, opts=pulumi.InvokeOptions(parent=parent)
    )
