"""The kubeconfig of a GKE cluster the program reaches: its endpoint and CA certificate, no credential."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def ca_certificate(master_auth: Any) -> str:
    """The cluster CA certificate of a cluster's ``masterAuth`` block, ``""`` when the block or the field is absent.

    The provider may return the block without it: "Some values in this block are only returned by the API if your
    service account has permission to get credentials for your GKE cluster" (pulumi-gcp 10.2.0,
    pulumi_gcp/container/cluster.py l.5669-5678, ``Cluster.master_auth``), and an output the engine does not return is
    None outside a preview (pulumi 3.272.0, pulumi/runtime/rpc.py l.1614-1621), as under Pulumi's mocks with
    ``preview=False`` and a mock that returns no block. A kubeconfig without it fails at the Kubernetes provider's TLS handshake, naming the certificate,
    instead of the program failing with an AttributeError while it is built.
    """
    if isinstance(master_auth, Mapping):  # how Output.all hands it over: snake_case keys
        return str(master_auth.get("cluster_ca_certificate") or "")
    return str(getattr(master_auth, "cluster_ca_certificate", None) or "")  # the output type, or None


def cluster_identifier(project: str, location: str, name: str) -> str:
    """The GKE cluster's resource name, as the Kubernetes provider's ``clusterIdentifier``: the provider is then
    replaced only when the identifier changes, and a changed kubeconfig (the server moved to the DNS-based endpoint,
    the CA dropped, or any update of the cluster that leaves its outputs unknown in a preview) updates it. Without it,
    pulumi-kubernetes replaces the provider, and so every object on it, when the kubeconfig is computed or its active
    cluster differs (provider/pkg/provider/provider.go ``DiffConfig``, pulumi-kubernetes at 9497796). Adding the
    identifier does not suppress a replacement planned in the same update ("We don't do this when adding or removing
    the identifier"): a deployed stack takes it in an update that leaves the kubeconfig as it was (CHANGELOG.md)."""
    return f"projects/{project}/locations/{location}/clusters/{name}"


def dns_endpoint(endpoints_config: Any) -> str:
    """The DNS-based endpoint of a cluster's ``controlPlaneEndpointsConfig``, ``""`` when the block or the field is
    absent (read like :func:`ca_certificate`: a mapping from ``Output.all``, the output type, or None)."""

    def field(block: Any, name: str) -> Any:
        return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)

    return str(field(field(endpoints_config, "dns_endpoint_config"), "endpoint") or "")


def kubeconfig(name: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig for the cluster that authenticates with ``gke-gcloud-auth-plugin``.

    It holds no credential: the plugin asks gcloud for a short-lived token at each call. ``ca_certificate`` None
    names no CA, for the DNS-based endpoint: its certificate is "signed by a public, generally recognized Google CA",
    the IP endpoints' by the cluster's root CA ("About network isolation in GKE",
    https://cloud.google.com/kubernetes-engine/docs/concepts/network-isolation), and a client that pins the cluster
    CA fails there with "x509: certificate signed by unknown authority" (GoogleCloudPlatform/gcpdiag issue 115,
    fluxcd/flux2 issue 5896).
    """
    server: dict[str, str] = {"server": f"https://{endpoint}"}
    if ca_certificate is not None:
        server["certificate-authority-data"] = ca_certificate
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": server}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {
                    "name": name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "gke-gcloud-auth-plugin",
                            "installHint": "Install gke-gcloud-auth-plugin: "
                            "gcloud components install gke-gcloud-auth-plugin",
                            "provideClusterInfo": True,
                        }
                    },
                }
            ],
        }
    )


def _first(blocks: Any) -> Any:
    return blocks[0] if blocks else None


def existing_server(found: Any) -> tuple[str, str | None]:
    """Where the program reaches a cluster it found (``gcp.container.get_cluster``) and the CA to pin there: its
    DNS-based endpoint when that admits external callers and no external IP endpoint is open (IP endpoints off,
    ``ip_endpoints_configs[].enabled``, or the private endpoint in their place, ``private_cluster_configs[]
    .enable_private_endpoint``; pulumi-gcp 10.2.0 container/get_cluster.py), else its IP endpoint and cluster CA."""
    endpoints = _first(getattr(found, "control_plane_endpoints_configs", None))
    dns = _first(getattr(endpoints, "dns_endpoint_configs", None))
    ip = _first(getattr(endpoints, "ip_endpoints_configs", None))
    private = _first(getattr(found, "private_cluster_configs", None))
    ip_closed = (ip is not None and not ip.enabled) or bool(getattr(private, "enable_private_endpoint", False))
    if dns is not None and dns.allow_external_traffic and dns.endpoint and ip_closed:
        return str(dns.endpoint), None
    auth = _first(getattr(found, "master_auths", None))
    return str(found.endpoint or ""), str(getattr(auth, "cluster_ca_certificate", None) or "")
