"""Who may reach a cluster's control plane: the rules of ``master_authorized_networks`` and its named opt-out."""

import ipaddress
from collections.abc import Sequence

from .settings import cidr_problem

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


def control_plane_problems(networks: object, public: object) -> list[str]:
    """Control-plane access is chosen explicitly: authorized networks, or the named opt-out, not both."""
    if networks is None and public is False:
        return [
            "master_authorized_networks is unset: name the CIDR blocks that may reach the control plane "
            "(the machine running `pulumi up` among them), or opt out with public_control_plane = True"
        ]
    if networks is not None and public is True:
        return [f"public_control_plane = True beside master_authorized_networks = {networks!r}: choose one"]
    return []
