"""tpu_serving.platform.shared_vpc: a cluster in a host project's network, its secondary ranges, and the host's grants."""

from __future__ import annotations

import pytest

from tests.components.platform.test_cluster import cluster_args_for_test
from tests.fixtures.configs import plan_edited_once
from tpu_serving.common.validation import ArgumentsError, check_arguments
from tpu_serving.platform.cluster import TpuClusterArgs, cluster_args
from tpu_serving.platform.shared_vpc import HOST_GRANTS, grant_lines, shared_vpc_problems

HOST = "net-host-1"
SHARED = {
    "host_project": HOST,
    "network": "shared-net",
    "subnetwork": "tpu-east5",
    "pods_secondary_range": "tpu-pods",
    "services_secondary_range": "tpu-services",
    "cloud_nat": "existing",
    "existing_nat_router": "shared-net-router",
    "existing_nat": "shared-net-nat",
}


def test_shared_vpc_cluster_names_the_host_network_subnet_and_ranges():
    args = cluster_args(cluster_args_for_test(**SHARED), "n@x")
    assert args.network == f"projects/{HOST}/global/networks/shared-net"
    assert args.subnetwork == f"projects/{HOST}/regions/us-east5/subnetworks/tpu-east5"
    assert args.ip_allocation_policy == {
        "cluster_secondary_range_name": "tpu-pods",
        "services_secondary_range_name": "tpu-services",
    }


def test_shared_vpc_own_network_keeps_gke_managed_ranges():
    args = cluster_args(cluster_args_for_test(), "n@x")
    assert args.network == "default" and args.subnetwork is None and args.ip_allocation_policy == {}


@pytest.mark.parametrize(
    "missing, said",
    [
        ("pods_secondary_range", "pods_secondary_range and services_secondary_range are required beside host_project"),
        ("services_secondary_range", "are required beside host_project = 'net-host-1'"),
        ("subnetwork", "subnetwork is unset beside host_project = 'net-host-1'"),
    ],
)
def test_shared_vpc_problems_refuse_a_host_network_without_its_subnet_or_ranges(missing, said):
    with pytest.raises(ArgumentsError, match=said):
        check_arguments("TpuCluster", cluster_args_for_test(**{**SHARED, missing: None}), TpuClusterArgs)


def test_shared_vpc_problems_pair_the_ranges_without_a_host():
    assert shared_vpc_problems(None, None, "pods", None) == [
        "pods_secondary_range and services_secondary_range go together: name both, or neither"
    ]
    assert shared_vpc_problems(None, None, None, None) == []
    assert shared_vpc_problems(HOST, "s", "p", "v") == []


def test_shared_vpc_grant_lines_name_each_role_and_agent():
    assert grant_lines("svc-1", HOST) == [
        f"{HOST}: roles/container.hostServiceAgentUser to service-<number of svc-1>@container-engine-robot.iam.gserviceaccount.com",
        f"{HOST}: roles/compute.networkUser to service-<number of svc-1>@container-engine-robot.iam.gserviceaccount.com",
        f"{HOST}: roles/compute.networkUser to <number of svc-1>@cloudservices.gserviceaccount.com",
    ]


def _shared(cluster: dict) -> None:
    cluster.update(
        hostProject=HOST,
        network="shared-net",
        subnetwork="tpu-west4",
        podsSecondaryRange="tpu-pods",
        servicesSecondaryRange="tpu-services",
    )


def _shared_and_granted(cluster: dict) -> None:
    _shared(cluster)
    cluster["sharedVpcGrants"] = "create"


def test_shared_vpc_stack_previews_in_the_host_network():
    plan = plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared)
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["network"] == f"projects/{HOST}/global/networks/shared-net"
    assert cluster.inputs["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "tpu-pods",
        "servicesSecondaryRangeName": "tpu-services",
    }
    assert not [r for r in plan.of_type("gcp:projects/iAMMember:IAMMember") if r.inputs["project"] == HOST]
    (address,) = plan.of_type("gcp:compute/address:Address")
    assert address.inputs["subnetwork"] == f"projects/{HOST}/regions/us-west4/subnetworks/tpu-west4"


def test_shared_vpc_stack_creates_the_host_grants_when_asked():
    plan = plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared_and_granted)
    grants = [r for r in plan.of_type("gcp:projects/iAMMember:IAMMember") if r.inputs["project"] == HOST]
    assert sorted((g.inputs["role"], g.inputs["member"].split("@")[1]) for g in grants) == sorted(
        (g.role, g.agent.split("@")[1]) for g in HOST_GRANTS
    )
    assert len(grants) == len(HOST_GRANTS) == 3
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert {g.urn for g in grants} <= set(cluster.dependencies)
    assert all(g.retain_on_delete for g in grants)


def test_shared_vpc_stack_makes_the_proxy_subnet_in_the_host_project():
    (subnet,) = plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared).of_type("gcp:compute/subnetwork:Subnetwork")
    assert subnet.inputs["project"] == HOST and subnet.inputs["purpose"] == "REGIONAL_MANAGED_PROXY"


def test_shared_vpc_preview_lists_the_grants_the_host_admin_makes():
    from tpu_serving_tools.preview.security_notes import cluster_notes

    notes = cluster_notes(plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared).resources)
    (listed,) = [n for n in notes if "Shared VPC" in n]
    assert all(line in listed for line in grant_lines("tpu-serving-demo", HOST))
    granted = cluster_notes(plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared_and_granted).resources)
    assert not [n for n in granted if "Shared VPC" in n]


def test_shared_vpc_problems_refuse_a_nat_of_the_whole_host_network():
    from tests.components.platform.test_existing import EXISTING, problems

    with pytest.raises(ArgumentsError, match="cloud_nat = 'create' beside host_project = 'net-host-1'"):
        check_arguments("TpuCluster", cluster_args_for_test(**{**SHARED, "cloud_nat": "create"}), TpuClusterArgs)
    existing = {**EXISTING, "tpu-serving:cluster": {**EXISTING["tpu-serving:cluster"], "hostProject": HOST}}
    said = problems({**existing, "tpu-serving:cluster": {**existing["tpu-serving:cluster"], "cloudNat": "create"}})
    assert said == [
        'tpu-serving:cluster.cloudNat = "create" beside tpu-serving:cluster.hostProject: a NAT the stack made would '
        "serve every subnet of the host's network in the region, other projects' too; name the host network's NAT "
        "(tpu-serving:cluster.cloudNat: existing, existingNatRouter, existingNat)"
    ]


def test_shared_vpc_ranges_and_grants_shape_a_created_cluster_only():
    from tests.components.platform.test_existing import EXISTING, problems

    for key in ("podsSecondaryRange", "servicesSecondaryRange", "sharedVpcGrants"):
        value = "create" if key == "sharedVpcGrants" else "tpu-pods"
        said = problems({**EXISTING, "tpu-serving:cluster": {**EXISTING["tpu-serving:cluster"], key: value}})
        assert any(
            p.startswith(f"tpu-serving:cluster.{key}") and "shapes a cluster the stack creates" in p for p in said
        )


def test_shared_vpc_policy_admits_the_host_grants_to_the_agents_only():
    from tpu_serving_policy.rules import evaluate, from_plan

    plan = plan_edited_once("vllm-llama33-70b-v5e16", cluster=_shared_and_granted)
    doc = plan.as_json()

    def roles_violations(doc: dict) -> list[str]:
        return [v.message for v in evaluate(from_plan(doc)) if v.rule == "gke-node-roles-only"]

    assert roles_violations(doc) == []
    iam = [r for r in doc["resources"] if r["type"] == "gcp:projects/iAMMember:IAMMember"]
    host = [r for r in iam if r["inputs"].get("project") == HOST]
    assert len(host) == 3
    host[0]["inputs"]["member"] = "user:someone@example.com"
    (refused,) = roles_violations(doc)
    assert host[0]["name"] in refused and "outside the node roles" in refused
