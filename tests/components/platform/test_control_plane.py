"""tpu_serving.platform.control_plane: the DNS-based endpoint by default, the IP endpoint as a named opt-out."""

from __future__ import annotations

import pytest

from tests.components.platform.test_cluster import cluster_args_for_test
from tpu_serving.common.validation import ArgumentsError, check_arguments
from tpu_serving.platform.cluster import TpuClusterArgs, cluster_args
from tpu_serving.platform.control_plane import (
    ControlPlaneEndpoint,
    control_plane_problems,
    endpoint_config,
    endpoint_problems,
)


def test_endpoint_config_dns_is_the_default_and_closes_every_ip_endpoint():
    args = cluster_args(cluster_args_for_test(), "n@x")
    assert args.control_plane_endpoints_config == {"dns_endpoint_config": {"allow_external_traffic": True}}
    assert args.private_cluster_config == {"enable_private_nodes": True, "enable_private_endpoint": True}
    assert args.master_authorized_networks_config == {"gcp_public_cidrs_access_enabled": False}


def test_endpoint_config_ip_keeps_todays_cluster():
    config = endpoint_config(ControlPlaneEndpoint.IP, None, private_nodes=False)
    assert config == {
        "control_plane_endpoints_config": {"dns_endpoint_config": {"allow_external_traffic": False}},
        "private_cluster_config": None,
        "master_authorized_networks_config": None,
    }


@pytest.mark.parametrize(
    "networks, public, named",
    [
        (["203.0.113.0/24"], False, ["master_authorized_networks"]),
        (None, True, ["public_control_plane"]),
        (["203.0.113.0/24"], True, ["master_authorized_networks", "public_control_plane"]),
    ],
)
def test_control_plane_problems_refuse_ip_settings_beside_the_dns_endpoint(networks, public, named):
    problems = control_plane_problems(networks, public, ControlPlaneEndpoint.DNS)
    assert [p.split(" ")[0] for p in problems] == named
    assert all("control_plane_endpoint = 'ip'" in p for p in problems)


def test_control_plane_problems_accept_the_dns_endpoint_alone():
    assert control_plane_problems(None, False, ControlPlaneEndpoint.DNS) == []
    check_arguments("TpuCluster", cluster_args_for_test(), TpuClusterArgs)


def test_endpoint_problems_refuse_public_nodes_beside_the_dns_endpoint():
    assert endpoint_problems(ControlPlaneEndpoint.IP, False) == []
    assert endpoint_problems(ControlPlaneEndpoint.DNS, True) == []
    with pytest.raises(ArgumentsError, match="private_nodes = False beside control_plane_endpoint = 'dns'"):
        check_arguments("TpuCluster", cluster_args_for_test(private_nodes=False), TpuClusterArgs)


def test_endpoint_config_refuses_an_unknown_mode_at_its_key():
    with pytest.raises(ArgumentsError, match="control_plane_endpoint"):
        check_arguments("TpuCluster", cluster_args_for_test(control_plane_endpoint="public"), TpuClusterArgs)
