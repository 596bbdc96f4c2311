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


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for the cluster that authenticates with ``gke-gcloud-auth-plugin``.

    It holds no credential: the plugin asks gcloud for a short-lived token at each call.
    """
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": name,
                    "cluster": {
                        "server": f"https://{endpoint}",
                        "certificate-authority-data": ca_certificate,
                    },
                }
            ],
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
