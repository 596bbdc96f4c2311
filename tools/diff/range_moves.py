"""A subnet's range moved: the provider replaces the subnet, which the static ForceNew rules do not show (SRE review
33, M1: a changed ``gateway.proxyOnlyCidr`` was previewed as an in-place update).

The provider forces a new subnet when its ``ip_cidr_range`` changes to a range that does not contain the old one:
``CustomizeDiff: customdiff.ForceNewIfChange("ip_cidr_range", IsShrinkageIpCidr)``, where ``IsShrinkageIpCidr`` is
false only for "a CIDR range expansion" (hashicorp/terraform-provider-google
``google/services/compute/resource_compute_subnetwork.go`` l.38-55 and l.75-78, at the stored commit 0110d02). For a
proxy-only subnet the load balancer's proxies send from that range ("Packets sent from a proxy to a backend VM or
endpoint has a source IP address from the proxy-only subnet", https://cloud.google.com/load-balancing/docs/l7-internal/
proxy-only-subnets), and a network and region has one ACTIVE one, so the new range cannot be made beside the old."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from tpu_serving.traffic.gateway_settings import PROXY_ONLY_PURPOSE as PROXY_ONLY
from tpu_serving_tools.gcp_types import SUBNETWORK


def expands(old: str, new: str) -> bool:
    """Whether ``new`` contains every address of ``old`` (the provider's update in place); an unreadable range is not
    judged (True)."""
    try:
        a, b = ipaddress.ip_network(old, strict=False), ipaddress.ip_network(new, strict=False)
    except ValueError:
        return True
    return a.version == b.version and a.subnet_of(b)  # type: ignore[arg-type]


def warnings(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One warning per subnet, in both plans, whose ``ipCidrRange`` moves to a range that does not contain the old."""
    out = []
    for urn in sorted(set(old) & set(new)):
        if new[urn].get("type") != SUBNETWORK:
            continue
        before, after = (str((r.get("inputs") or {}).get("ipCidrRange", "")) for r in (old[urn], new[urn]))
        if not before or not after or before == after or expands(before, after):
            continue
        text = (
            f"Recreates subnet `{new[urn].get('name')}`: ipCidrRange {before} -> {after} is no expansion of the old "
            "range, which the provider replaces"
        )
        if (new[urn].get("inputs") or {}).get("purpose") == PROXY_ONLY:
            text += (
                "; it is the proxy-only subnet, one ACTIVE per network and region, whose range the Gateway's proxies "
                "send from: the NetworkPolicies would admit the new range while the proxies still send from the old, "
                "and every request through the Gateway fails until the subnet moves. Move it with a BACKUP subnet "
                "promoted to ACTIVE first (docs/operate.md, 'Moving the proxy-only subnet')"
            )
        out.append(text)
    return out
