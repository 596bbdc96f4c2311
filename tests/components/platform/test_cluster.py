"""tpu_serving.platform.cluster: TpuCluster and its arguments; the cluster's hardened defaults (explicit control-plane
access, opt-in Binary Authorization), its CPU pool's zones."""

from __future__ import annotations

import pulumi
import pytest

from tests.fixtures.components import _run_ps, run
from tests.fixtures.configs import ZONES_STACK as STACK
from tests.fixtures.configs import plan_edited
from tpu_serving import TpuCluster, TpuClusterArgs
from tpu_serving.platform.cluster import cluster_args
from tpu_serving.platform.node_identity import NODE_ROLES
from tpu_serving_tools.preview.offline import PreviewMocks


def cluster_args_for_test(**overrides) -> TpuClusterArgs:
    return TpuClusterArgs(
        **{
            "project": "p-123456",
            "region": "us-east5",
            "zone": "us-east5-b",
            "name": "c",
            **overrides,
        }
    )


def test_cluster_builder_defaults():
    args = cluster_args(cluster_args_for_test(), "nodes@x")
    assert args.remove_default_node_pool is True
    assert args.deletion_protection is True
    assert args.workload_identity_config == {"workload_pool": "p-123456.svc.id.goog"}
    assert args.datapath_provider == "ADVANCED_DATAPATH"
    assert args.node_config["service_account"] == "nodes@x"


def test_cluster_component_children_and_dependencies():
    plan = run(lambda: TpuCluster("c", cluster_args_for_test(deletion_protection=False)))
    (component,) = plan.of_type("tpu-serving:index:TpuCluster")
    children = [r for r in plan.resources if r.parent == component.urn]
    assert {r.type for r in children} == {
        "gcp:serviceaccount/account:Account",
        "gcp:projects/iAMMember:IAMMember",
        "gcp:container/cluster:Cluster",
        "gcp:container/nodePool:NodePool",
        "pulumi:providers:kubernetes",
        "gcp:compute/router:Router",  # private nodes by default, with their Cloud NAT
        "gcp:compute/routerNat:RouterNat",
    }
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is False
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    assert "masterAuth" not in cluster.inputs  # force-new: declaring GKE's default could replace a cluster
    assert "binaryAuthorization" not in cluster.inputs
    roles = plan.of_type("gcp:projects/iAMMember:IAMMember")
    assert sorted(r.inputs["role"] for r in roles) == sorted(NODE_ROLES)
    # The cluster's nodes start only once their service account may write logs and metrics.
    assert {r.urn for r in roles} <= set(cluster.dependencies)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert cluster.urn in provider.dependencies
    assert provider.inputs["enableServerSideApply"] == "true"


def test_cluster_private_nodes_get_cloud_nat():
    plan = run(lambda: TpuCluster("c", cluster_args_for_test(private_nodes=True)))
    (router,) = plan.of_type("gcp:compute/router:Router")
    (nat,) = plan.of_type("gcp:compute/routerNat:RouterNat")
    assert router.inputs["network"] == "default" and router.inputs["region"] == "us-east5"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert router.urn in nat.dependencies
    (cpu,) = plan.of_type("gcp:container/nodePool:NodePool")
    assert nat.urn in cpu.dependencies
    public = run(
        lambda: TpuCluster(
            "c", cluster_args_for_test(private_nodes=False, control_plane_endpoint="ip", public_control_plane=True)
        )
    )
    assert not public.of_type("gcp:compute/routerNat:RouterNat")
    existing = {"cloud_nat": "existing", "existing_nat_router": "net-router", "existing_nat": "net-nat"}
    shared = run(lambda: TpuCluster("c", cluster_args_for_test(**existing)))
    assert not shared.of_type("gcp:compute/routerNat:RouterNat") and not shared.of_type("gcp:compute/router:Router")
    (private,) = shared.of_type("gcp:container/cluster:Cluster")
    assert private.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}


def test_cluster_pass_their_depends_on_to_children():
    from pulumi_gcp import projects

    def program():
        api = projects.Service("api", service="container.googleapis.com", project="p-123456")
        TpuCluster("c", cluster_args_for_test(), opts=pulumi.ResourceOptions(depends_on=[api]))

    plan = run(program)
    (api,) = plan.of_type("gcp:projects/service:Service")
    for r in plan.resources:
        if r.custom and r.parent and r.type.startswith("gcp:") and r.type != "gcp:projects/service:Service":
            assert api.urn in r.dependencies, r.name


def test_cluster_subnetwork_reaches_the_cluster():
    """cluster.cluster_args (mutmut_5): TpuClusterArgs.subnetwork is the GKE cluster's subnetwork."""
    plan = _run_ps(lambda: TpuCluster("c", cluster_args_for_test(network="vpc-a", subnetwork="sub-a")))
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert (cluster.inputs["network"], cluster.inputs["subnetwork"]) == ("vpc-a", "sub-a")


def test_cluster_an_existing_nat_is_read_through_the_clusters_provider(monkeypatch):
    """cloud_nat.look_up_existing_nat (mutmut_10): the lookup of an existing Cloud NAT is the component's child, so
    it uses the provider the component was given (another project's credentials), not the default one."""
    from pulumi_gcp import Provider

    calls: list[tuple[str, str]] = []
    answer = PreviewMocks.call

    def call(self, args):
        calls.append((args.token, args.provider))
        return answer(self, args)

    monkeypatch.setattr(PreviewMocks, "call", call)
    existing = {"cloud_nat": "existing", "existing_nat_router": "net-router", "existing_nat": "net-nat"}

    def program():
        gcp = Provider("other-project", project="p-654321")
        TpuCluster("c", cluster_args_for_test(**existing), opts=pulumi.ResourceOptions(providers=[gcp]))

    _run_ps(program)
    (provider,) = [p for token, p in calls if token == "gcp:compute/getRouterNat:getRouterNat"]
    assert "pulumi:providers:gcp::other-project" in provider, provider


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


def test_cluster_zones_cpu_pool_zones_named_are_the_pools():
    plan = plan_edited(STACK, cluster=lambda c: c.__setitem__("cpuPoolZones", ["us-west4-b", "us-west4-c"]))
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    assert cpu.inputs["nodeLocations"] == ["us-west4-b", "us-west4-c"]


def test_cluster_zones_tpu_cluster_args_refuse_a_cpu_pool_zone_outside_the_region():
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
