"""What the preview says about a plan's exposure: the named opt-outs of the hardened defaults, and the
images pinned by tag only. Read off the plan's resources, so any program's plan is described."""

from __future__ import annotations

import re
from typing import Any

from tpu_serving.platform.shared_vpc import grant_lines
from tpu_serving.traffic.gateway_settings import HEALTH_CHECK_RANGES
from tpu_serving_tools.gcp_types import CLUSTER
from tpu_serving_tools.preview.image_notes import plan_images

DIGEST = "@sha256:"
RETAG = (
    "a tag moved upstream does not reach a node that already holds the image (imagePullPolicy IfNotPresent), but a "
    "new or recreated node pulls the moved tag, so groups can run different builds: pin a digest"
)
"""What a tag-only image means once deployed (SRE review M3, GKE review m4): the library's pods pull ``IfNotPresent``,
given (:data:`tpu_serving.backends.jetstream.pods.PULL_POLICY`) or Kubernetes' default for a tagged, non-``latest``
image (kubernetes.io/docs/concepts/containers/images/, "Default image pull policy"); a node pulls only when it does
not hold the image, and every slice recreated by an upgrade, a repair or a scale-up is a new node."""


def tag_only_images(resources: list[Any]) -> list[str]:
    """The container images of the plan's Kubernetes objects that carry no ``@sha256:`` digest, sorted."""
    return [i for i in plan_images(resources) if DIGEST not in i]


def cluster_notes(resources: list[Any]) -> list[str]:
    """One line per opt-out of a cluster's hardened defaults."""
    notes = []
    for r in resources:
        if r.type != CLUSTER:
            continue
        name = r.inputs.get("name", r.name)
        private = r.inputs.get("privateClusterConfig") or {}
        notes.append(f"cluster {name}: {reach(r.inputs)}")
        if not private.get("enablePrivateEndpoint") and not (
            (r.inputs.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks")
        ):
            notes.append(f"cluster {name}: control plane open to any source address (opt-out: publicControlPlane)")
        if not private.get("enablePrivateNodes"):
            notes.append(f"cluster {name}: nodes have external IPs (opt-out: privateNodes false)")
        notes += host_grant_notes(resources, name, r.inputs)
    return notes


def host_grant_notes(resources: list[Any], name: str, cluster: dict[str, Any]) -> list[str]:
    """A cluster in a host project's network whose plan grants the host project nothing: the grants its admin
    makes first (``cluster.sharedVpcGrants: existing``)."""
    host = re.match(r"projects/([^/]+)/global/networks/", str(cluster.get("network", "")))
    if host is None or any(r.inputs.get("project") == host[1] for r in resources if r.type.endswith(":IAMMember")):
        return []
    grants = "; ".join(grant_lines(str(cluster.get("project")), host[1]))
    return [
        f"cluster {name}: Shared VPC: the host project's admin grants, before pulumi up, {grants}; and, unless the GKE "
        f"agent may manage firewall rules in {host[1]}, creates the ingress rules a Gateway's backends need (from "
        f"{' and '.join(HEALTH_CHECK_RANGES)} and the proxy-only subnet): docs/security.md, Shared VPC"
    ]


def reach(cluster: dict[str, Any]) -> str:
    """How ``pulumi up``, the Kubernetes provider and ``kubectl`` reach a planned cluster's control plane."""
    dns = ((cluster.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig") or {}).get(
        "allowExternalTraffic"
    )
    if dns and (cluster.get("privateClusterConfig") or {}).get("enablePrivateEndpoint"):
        return (
            "pulumi up and kubectl reach the control plane at its DNS-based endpoint, each call authorised by IAM "
            "(the caller needs container.clusters.connect, and gke-gcloud-auth-plugin); it has no external IP "
            "endpoint"
        )
    blocks = [b.get("cidrBlock") for b in (cluster.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []]
    sources = ", ".join(str(b) for b in blocks) if blocks else "any source address"
    return (
        f"pulumi up and kubectl reach the control plane at its external IP endpoint, from {sources} "
        "(controlPlaneEndpoint: ip, the opt-out from the DNS-based endpoint)"
    )


def security_summary(resources: list[Any]) -> list[str]:
    """The preview's security lines."""
    lines = cluster_notes(resources)
    tags = tag_only_images(resources)
    if tags:
        lines.append(f"images pinned by tag only, no digest ({len(tags)}): {', '.join(tags)}; {RETAG}")
    return lines
