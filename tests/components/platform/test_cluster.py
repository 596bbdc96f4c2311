"""tpu_serving.platform.cluster: TpuCluster and its arguments; the cluster's hardened defaults (explicit control-plane
access, opt-in Binary Authorization), its CPU pool's zones."""

from __future__ import annotations

import pytest

from tests.fixtures.configs import ZONES_STACK as STACK
from tests.fixtures.configs import plan_edited
from tests.test_components import cluster_args_for_test
from tpu_serving.platform.cluster import cluster_args


def test_cluster_control_plane_access_is_chosen_explicitly():
    from tpu_serving.common.validation import ArgumentsError, check_arguments
    from tpu_serving.platform.cluster import TpuClusterArgs

    ip = {"control_plane_endpoint": "ip"}
    with pytest.raises(ArgumentsError, match="master_authorized_networks is unset"):
        check_arguments("TpuCluster", cluster_args_for_test(**ip), TpuClusterArgs)
    with pytest.raises(ArgumentsError, match="choose one"):
        check_arguments(
            "TpuCluster",
            cluster_args_for_test(**ip, public_control_plane=True, master_authorized_networks=["203.0.113.0/24"]),
            TpuClusterArgs,
        )
    closed = cluster_args(cluster_args_for_test(**ip, master_authorized_networks=["203.0.113.0/24"]), "n@x")
    assert closed.master_authorized_networks_config == {
        "cidr_blocks": [{"cidr_block": "203.0.113.0/24", "display_name": "203.0.113.0/24"}]
    }
    assert closed.control_plane_endpoints_config == {"dns_endpoint_config": {"allow_external_traffic": False}}
    assert closed.private_cluster_config == {"enable_private_nodes": True}
    opened = cluster_args(cluster_args_for_test(**ip, public_control_plane=True), "n@x")
    assert opened.master_authorized_networks_config is None


def test_cluster_binary_authorization_is_opt_in_and_enables_its_api():
    from tpu_serving.platform.services import BINARY_AUTHORIZATION_API, required_apis

    on = cluster_args(cluster_args_for_test(binary_authorization=True), "n@x")
    assert on.binary_authorization == {"evaluation_mode": "PROJECT_SINGLETON_POLICY_ENFORCE"}
    assert cluster_args(cluster_args_for_test(), "n@x").binary_authorization is None
    assert BINARY_AUTHORIZATION_API in required_apis(True, binary_authorization=True)
    assert BINARY_AUTHORIZATION_API not in required_apis(True)


def test_cluster_authorized_networks_refuse_none_and_internal_ranges():
    from tpu_serving.common.validation import ArgumentsError, check_arguments
    from tpu_serving.platform.cluster import TpuClusterArgs

    def problems(networks):
        args = cluster_args_for_test(control_plane_endpoint="ip", master_authorized_networks=networks)
        with pytest.raises(ArgumentsError) as err:
            check_arguments("TpuCluster", args, TpuClusterArgs)
        return str(err.value)

    assert "is empty, which would shut every client out" in problems([])
    assert "'10.0.0.0/8' is an internal range" in problems(["203.0.113.0/24", "10.0.0.0/8"])
    assert "'office' is not a CIDR block" in problems(["office"])
    # library review 7, m5: every address was called "an internal range"
    everything = problems(["0.0.0.0/0"])
    assert "'0.0.0.0/0' is every address: the control plane would be open" in everything
    assert "internal range" not in everything


def test_zones_cpu_pool_zones_named_are_the_pools():
    plan = plan_edited(STACK, cluster=lambda c: c.__setitem__("cpuPoolZones", ["us-west4-b", "us-west4-c"]))
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    assert cpu.inputs["nodeLocations"] == ["us-west4-b", "us-west4-c"]


def test_zones_tpu_cluster_args_refuse_a_cpu_pool_zone_outside_the_region():
    from tpu_serving.platform.cluster import TpuClusterArgs

    args = TpuClusterArgs(
        project="my-project",
        region="us-west4",
        zone="us-west4-a",
        name="c",
        cpu_pool_zones=["us-west4-a", "us-east1-b", "us-west4-a"],
    )
    found = args.problems()
    assert (
        "cpu_pool_zones[1] = 'us-east1-b': zone is outside the region 'us-west4'; valid: us-west4-a, us-west4-b, us-west4-c"
        in found
    )
    assert "cpu_pool_zones[2] = 'us-west4-a': named twice" in found
    assert TpuClusterArgs(project="my-project", region="us-west4", zone="us-west4-a", name="c").cpu_zones == (
        "us-west4-a",
        "us-west4-b",
        "us-west4-c",
    )
