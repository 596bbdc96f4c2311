"""tpu_serving.platform.kubeconfig: where the program reaches a cluster, and which CA it pins there."""

from __future__ import annotations

import json
from types import SimpleNamespace as Found

import pytest

from tpu_serving.platform.kubeconfig import existing_server


def test_kubeconfig_of_the_dns_endpoint_pins_no_cluster_ca():
    from tpu_serving.platform.kubeconfig import dns_endpoint, kubeconfig

    endpoint = dns_endpoint({"dns_endpoint_config": {"endpoint": "gke-abc.us-east5.gke.goog"}})
    assert endpoint == "gke-abc.us-east5.gke.goog"
    assert dns_endpoint(None) == "" and dns_endpoint({"dns_endpoint_config": None}) == ""
    cluster = json.loads(kubeconfig("c", endpoint, None))["clusters"][0]["cluster"]
    assert cluster == {"server": "https://gke-abc.us-east5.gke.goog"}
    pinned = json.loads(kubeconfig("c", "10.0.0.2", "Q0E="))["clusters"][0]["cluster"]
    assert pinned == {"server": "https://10.0.0.2", "certificate-authority-data": "Q0E="}


def _found(*, dns: bool = True, external: bool = True, ip: bool = True, private_endpoint: bool = False) -> Found:
    endpoints = Found(
        dns_endpoint_configs=[Found(allow_external_traffic=external, endpoint="gke-x.us-east5.gke.goog")]
        if dns
        else [],
        ip_endpoints_configs=[Found(enabled=ip)],
    )
    return Found(
        endpoint="10.0.0.2",
        master_auths=[Found(cluster_ca_certificate="Q0E=")],
        control_plane_endpoints_configs=[endpoints],
        private_cluster_configs=[Found(enable_private_endpoint=private_endpoint)],
    )


@pytest.mark.parametrize(
    "found, server",
    [
        (_found(ip=False), ("gke-x.us-east5.gke.goog", None)),
        (_found(private_endpoint=True), ("gke-x.us-east5.gke.goog", None)),
        (_found(), ("10.0.0.2", "Q0E=")),  # an open IP endpoint: as before, its CA pinned
        (_found(ip=False, external=False), ("10.0.0.2", "Q0E=")),  # DNS for Google's networks only
        (_found(ip=False, dns=False), ("10.0.0.2", "Q0E=")),
    ],
)
def test_existing_server_prefers_the_dns_endpoint_only_where_no_ip_endpoint_is_open(found, server):
    assert existing_server(found) == server


def test_existing_server_of_a_cluster_the_provider_returned_bare():
    assert existing_server(Found(endpoint=None)) == ("", "")


def test_cluster_identifier_keeps_a_created_clusters_provider_through_a_kubeconfig_change():
    from tests.conftest import plan_of

    plan = plan_of("vllm-llama33-70b-v5e16")
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    project, location, name = cluster.inputs["project"], cluster.inputs["location"], cluster.inputs["name"]
    assert provider.inputs["clusterIdentifier"] == f"projects/{project}/locations/{location}/clusters/{name}"


def test_cluster_identifier_is_left_to_a_kubeconfig_file():
    from tests.conftest import plan_of

    (provider,) = plan_of("vllm-llama33-70b-existing").of_type("pulumi:providers:kubernetes")
    assert "clusterIdentifier" not in provider.inputs


def test_kubeconfig_tells_how_to_install_the_auth_plugin():
    """cluster.kubeconfig: the exec entry's ``installHint`` (client.authentication.k8s.io/v1beta1 spells it so)."""
    from tpu_serving.platform.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["installHint"].startswith("Install gke-gcloud-auth-plugin")


def test_cluster_kubeconfig_uses_auth_plugin():
    import json

    from tpu_serving.platform.cluster import kubeconfig

    cfg = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))
    assert cfg["clusters"][0]["cluster"]["server"] == "https://1.2.3.4"
    assert cfg["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert "token" not in json.dumps(cfg)


def test_cluster_kubeconfig_exec_speaks_the_client_authentication_api():
    """cluster.kubeconfig (mutmut_46): kubectl runs the exec plugin only for an apiVersion it knows; GKE's plugin
    speaks client.authentication.k8s.io/v1beta1 (client-go pkg/apis/clientauthentication/v1beta1)."""
    from tpu_serving.platform.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert exec_["command"] == "gke-gcloud-auth-plugin"
