"""Who may reach a cluster's control plane, and how ``pulumi up`` reaches it.

By default the control plane has no external IP endpoint: the cluster's private endpoint serves the nodes, and
clients (``pulumi up``, the Kubernetes provider, ``kubectl``) reach it through GKE's DNS-based endpoint, where IAM
authorises every call. GKE's advice: "Use only the DNS-based endpoint to access your control plane for simplified
configuration and a flexible and policy-based layer of security"; its name "resolves to an endpoint that is
accessible from any network reachable by Google Cloud APIs" ("About network isolation in GKE", DNS-based endpoint,
https://cloud.google.com/kubernetes-engine/docs/concepts/network-isolation). The named opt-out keeps the IP
endpoint, with the rules of ``master_authorized_networks`` and its own opt-out, ``public_control_plane``.
"""

import ipaddress
from collections.abc import Sequence
from typing import Any

from ..common.settings import cidr_problem
from ..common.validation import Choice


class ControlPlaneEndpoint(Choice):
    """How clients reach the control plane."""

    DNS = "dns"
    """GKE's DNS-based endpoint, IAM-authorised (``container.clusters.connect``); no external IP endpoint."""
    IP = "ip"
    """The external IP endpoint, with authorized networks (or the named opt-out ``public_control_plane``)."""


DNS_ACCESS_PERMISSION = "container.clusters.connect"
"""The IAM permission a caller of the DNS-based endpoint needs besides its Kubernetes RBAC ("Customize your network
isolation in GKE", https://cloud.google.com/kubernetes-engine/docs/how-to/latest/network-isolation)."""

INTERNAL_RANGES = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
)
"""Internal IPv4 ranges (RFC 1918 and RFC 6598 shared address space), never a client's address on the Internet."""


def cidrs_problem(blocks: Sequence[str] | None) -> str:
    """Why ``blocks`` are not all CIDR blocks, or are none at all (authorized networks with no range lock every
    client out of the control plane), or ``""``."""
    if blocks is not None and not list(blocks):
        return "is empty, which would shut every client out of the control plane; name at least one range"
    bad = next((f"{block!r} is {problem}" for block in blocks or () if (problem := cidr_problem(block))), "")
    if bad:
        return bad
    everything = next((b for b in blocks or () if ipaddress.ip_network(b).prefixlen == 0), None)
    if everything is not None:  # library review 7, m5: it was called "an internal range"
        return (
            f"{everything!r} is every address: the control plane would be open to the Internet; name the public egress "
            "ranges of your admin machines and CI, or say so with public_control_plane = True (and no authorized "
            "networks)"
        )
    private = [b for b in blocks or () if any(ipaddress.ip_network(b).overlaps(n) for n in INTERNAL_RANGES)]
    if private:
        # The stack reaches its cluster on the public endpoint (kubeconfig: cluster.endpoint); an authorized
        # internal range admits clients of the internal endpoint only
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks).
        return (
            f"{private[0]!r} is an internal range, but pulumi up reaches the control plane's external endpoint, "
            "from a public address: name the public egress ranges of your admin machines and CI"
        )
    return ""


def control_plane_problems(networks: object, public: object, endpoint: object = ControlPlaneEndpoint.IP) -> list[str]:
    """Control-plane access is chosen explicitly. The DNS endpoint (the default) takes neither authorized networks nor
    the public opt-out, which are the IP endpoint's; the IP endpoint takes authorized networks, or the named opt-out,
    not both."""
    if endpoint == ControlPlaneEndpoint.DNS:
        ip_only = [
            key
            for key, given in (
                ("master_authorized_networks", networks is not None),
                ("public_control_plane", public is True),
            )
            if given
        ]
        return [
            f"{key} applies to the control plane's IP endpoint, which is off with control_plane_endpoint = 'dns' "
            "(the default: clients reach the DNS-based endpoint, authorised by IAM); keep the IP endpoint with "
            "control_plane_endpoint = 'ip', or remove the setting"
            for key in ip_only
        ]
    if networks is None and public is False:
        return [
            "master_authorized_networks is unset: name the CIDR blocks that may reach the control plane "
            "(the machine running `pulumi up` among them), or opt out with public_control_plane = True"
        ]
    if networks is not None and public is True:
        return [f"public_control_plane = True beside master_authorized_networks = {networks!r}: choose one"]
    return []


def endpoint_problems(endpoint: object, private_nodes: object) -> list[str]:
    """The DNS endpoint mode makes the cluster's private endpoint its IP endpoint, which needs private nodes."""
    if endpoint == ControlPlaneEndpoint.DNS and private_nodes is False:
        # pulumi-gcp 10.2.0 container/_inputs.py ClusterPrivateClusterConfigArgsDict.enable_private_endpoint: "This
        # field only applies to private clusters, when enable_private_nodes is true."
        return [
            "private_nodes = False beside control_plane_endpoint = 'dns': the control plane's private endpoint "
            "needs private nodes; keep private nodes, or keep the external IP endpoint with "
            "control_plane_endpoint = 'ip'"
        ]
    return []


def endpoint_config(
    endpoint: ControlPlaneEndpoint, networks: Sequence[str] | None, private_nodes: bool
) -> dict[str, Any]:
    """The cluster arguments that say who reaches the control plane (``gcp.container.Cluster``, pulumi-gcp 10.2.0):
    ``control_plane_endpoints_config``, ``private_cluster_config`` and ``master_authorized_networks_config``.

    DNS (the default): the DNS-based endpoint admits callers from outside Google's networks
    (``dns_endpoint_config.allow_external_traffic``: "Controls whether user traffic is allowed over this endpoint",
    container/_inputs.py ``ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgsDict``); the private endpoint is the
    cluster's IP endpoint ("When ``true``, the cluster's private endpoint is used as the cluster endpoint and access
    through the public endpoint is disabled", ``ClusterPrivateClusterConfigArgsDict.enable_private_endpoint``); and
    authorized networks are on with no external range and no Compute Engine public address
    (``gcp_public_cidrs_access_enabled``), so that nothing outside the VPC reaches an IP endpoint (CKV_GCP_20).
    """
    if endpoint == ControlPlaneEndpoint.DNS:
        return {
            "control_plane_endpoints_config": {"dns_endpoint_config": {"allow_external_traffic": True}},
            "private_cluster_config": {"enable_private_nodes": True, "enable_private_endpoint": True},
            "master_authorized_networks_config": {"gcp_public_cidrs_access_enabled": False},
        }
    return {
        # Explicit: the block is Optional and Computed (terraform-provider-google resource_container_cluster.go), so
        # leaving it out after `dns` would keep the DNS endpoint open to external traffic.
        "control_plane_endpoints_config": {"dns_endpoint_config": {"allow_external_traffic": False}},
        "private_cluster_config": {"enable_private_nodes": True} if private_nodes else None,
        "master_authorized_networks_config": (
            {"cidr_blocks": [{"cidr_block": c, "display_name": c} for c in networks]} if networks is not None else None
        ),
    }
