"""The gateway's proxy-only subnet and address, and the metrics adapter's workload pool, held against the plan's
cluster (library review 9, M6 and M7): each is a plain string a program types again, and a wrong one passed every
other line of ``check`` while ``pulumi up`` made a Gateway that never serves or an HPA that never reads its metric."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tests.conftest import plan_of
from tpu_serving_tools.runtime import objects
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v6e8"  # its own VPC network (tpu-serving-prod) and proxy-only subnet, an HPA on the adapter
SUBNET = "cluster wiring proxy-only subnet vllm70bv6e-gateway-proxy-only"
ADDRESS = "cluster wiring Gateway address vllm70bv6e-gateway-address"
GRANT = "cluster wiring metrics adapter grant vllm70bv6e-autoscaler-adapter-viewer"
CLUSTER = "gcp:container/cluster:Cluster"
POOLS = [f"cluster wiring node pool vllm70bv6e-{p}" for p in ("cpu", "v6e8a", "v6e8b", "v6e8c", "v6e8s")]
METRICS = [
    f"cluster wiring log-based metric vllm70bv6e-observability-{m}-metric"
    for m in ("group-recreations", "pods-refused", "maintenance-gate-runs")
]


def _found(plan: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    return {
        f.subject: (f.ok, f.reason)
        for f in objects.check(PlanView(plan)).findings
        if f.subject.startswith("cluster wiring ")
    }


def _edited(name: str, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The shipped stack's plan with ``edit`` applied to the inputs of its resource ``name``."""
    plan = copy.deepcopy(plan_of(STACK).as_json())
    edit(next(r for r in plan["resources"] if r["name"] == name)["inputs"])
    return plan


def test_cluster_wiring_the_shipped_stack_is_wired_to_its_cluster():
    found = _found(plan_of(STACK).as_json())
    assert {SUBNET, ADDRESS, GRANT} | set(POOLS) | set(METRICS) == set(found), found
    assert all(ok for ok, _ in found.values()), found
    assert found[POOLS[0]][1] == "in project tpu-serving-demo, cluster vllm70bv6e's"
    assert found[GRANT][1] == "to a principal of tpu-serving-demo.svc.id.goog, cluster vllm70bv6e's workload pool"


def test_cluster_wiring_a_proxy_only_subnet_on_another_network_fails_naming_both():
    """M6, gw-network-mismatch: the gateway left at network default beside a cluster on its own VPC."""
    ok, why = _found(_edited("vllm70bv6e-gateway-proxy-only", lambda i: i.update(network="default")))[SUBNET]
    assert not ok
    assert why.startswith(
        "network tpu-serving-demo/default, but cluster vllm70bv6e's is tpu-serving-demo/tpu-serving-prod: "
    ), why
    assert why.endswith("set ServingGatewayArgs.network, region to the cluster's"), why


def test_cluster_wiring_an_address_in_another_subnet_fails():
    """M6, gw-subnet-mismatch: the address reserved in a subnet the cluster's network does not have."""
    ok, why = _found(_edited("vllm70bv6e-gateway-address", lambda i: i.update(subnetwork="default")))[ADDRESS]
    assert not ok
    assert why.startswith("subnetwork tpu-serving-demo/default, but cluster vllm70bv6e's is "), why
    assert "ServingGatewayArgs.subnetwork, region" in why


def test_cluster_wiring_a_gateway_in_another_region_fails():
    """M6, gw-region: ServingGatewayArgs.region us-central1 on a us-east5 cluster."""
    ok, why = _found(_edited("vllm70bv6e-gateway-proxy-only", lambda i: i.update(region="us-central1")))[SUBNET]
    assert not ok and why.startswith("region us-central1, but cluster vllm70bv6e's is us-east5"), why


def test_cluster_wiring_networks_compare_by_name_and_project_whatever_the_form():
    path = "projects/tpu-serving-demo/global/networks/tpu-serving-prod"
    link = "https://www.googleapis.com/compute/v1/projects/host-project/global/networks/tpu-serving-prod"
    assert _found(_edited("vllm70bv6e-gateway-proxy-only", lambda i: i.update(network=path)))[SUBNET][0]
    ok, why = _found(_edited("vllm70bv6e-gateway-proxy-only", lambda i: i.update(network=link)))[SUBNET]
    assert not ok and why.startswith("network host-project/tpu-serving-prod, but cluster"), why
    # the cluster's own network given as a self-link
    cluster = _edited("vllm70bv6e-cluster", lambda i: i.update(network=f"https://www.googleapis.com/compute/v1/{path}"))
    assert all(ok for ok, _ in _found(cluster).values()), _found(cluster)


def test_cluster_wiring_two_clusters_pass_on_either_and_fail_naming_both():
    plan = copy.deepcopy(plan_of(STACK).as_json())
    second = copy.deepcopy(next(r for r in plan["resources"] if r["type"] == CLUSTER))
    second.update(name="second-cluster", urn=second["urn"] + "-second")
    second["inputs"].update(name="second", network="other-vpc", location="us-central1")
    plan["resources"].append(second)
    assert all(ok for ok, _ in _found(plan).values()), _found(plan)
    subnet = next(r for r in plan["resources"] if r["name"] == "vllm70bv6e-gateway-proxy-only")
    subnet["inputs"]["network"] = "default"
    ok, why = _found(plan)[SUBNET]
    assert not ok and "cluster vllm70bv6e's is tpu-serving-demo/tpu-serving-prod" in why, why
    assert (
        "region us-east5, but cluster second's is us-central1" in why
        and "second's is tpu-serving-demo/other-vpc" in why
    )


def test_cluster_wiring_an_existing_cluster_has_no_network_to_compare():
    found = _found(plan_of("vllm-llama33-70b-existing").as_json())
    ok, why = found["cluster wiring Gateway address ml-platform-gateway-address"]
    assert ok and why.startswith("the plan makes no GKE cluster (an existing cluster)"), found


def test_cluster_wiring_the_adapter_granted_in_another_pool_fails_but_not_in_another_project():
    """M7, hpa-project: ServingAutoscalerArgs.project of the staging program; the grant's own project (where the
    metrics are read) may differ, as a Cloud Monitoring metrics scope reads other projects."""

    def staging(inputs: dict[str, Any]) -> None:
        inputs["member"] = inputs["member"].replace("tpu-serving-demo.svc.id.goog", "acme-llm-staging.svc.id.goog")

    ok, why = _found(_edited("vllm70bv6e-autoscaler-adapter-viewer", staging))[GRANT]
    assert not ok
    assert why.startswith(
        "to a principal of workload pool acme-llm-staging.svc.id.goog, but cluster vllm70bv6e's is "
        "tpu-serving-demo.svc.id.goog: "
    ), why
    assert "ServingAutoscalerArgs.project" in why
    elsewhere = _edited("vllm70bv6e-autoscaler-adapter-viewer", lambda i: i.update(project="acme-llm-metrics"))
    assert _found(elsewhere)[GRANT][0]


def test_cluster_wiring_a_grant_made_twice_fails():
    """Library review 9, m7: two autoscalers each granting the adapter roles/monitoring.viewer passed; a destroy of
    either removes the grant the other's HPA reads through. Members the preview cannot know are not compared."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    assert not [f for f in objects.check(PlanView(plan)).findings if f.subject.startswith("declared twice IAMMember")]
    grant = next(r for r in plan["resources"] if "custom-metrics-stackdriver-adapter" in str(r["inputs"].get("member")))
    plan["resources"].append({**copy.deepcopy(grant), "urn": grant["urn"] + "-2", "name": "reason-hpa-adapter-viewer"})
    (found,) = [f for f in objects.check(PlanView(plan)).findings if f.subject.startswith("declared twice IAMMember")]
    assert not found.ok and "reason-hpa-adapter-viewer" in found.reason and "roles/monitoring.viewer" in found.reason


def test_cluster_wiring_a_node_pool_in_another_project_fails():
    """Library review 9, M7, pool-project: TpuNodePoolArgs.project copied from the staging program."""
    ok, why = _found(_edited("vllm70bv6e-v6e8a", lambda i: i.update(project="acme-llm-staging")))[POOLS[1]]
    assert not ok
    assert why.startswith("made in project acme-llm-staging, but cluster vllm70bv6e is in tpu-serving-demo: "), why
    assert why.endswith("set TpuNodePoolArgs.project to the cluster's"), why


def test_cluster_wiring_a_log_based_metric_in_another_project_fails():
    """Library review 9, M7, obs-project: ObservabilityArgs.project of the staging program; the metric counts the
    staging project's logs, where the cluster writes none."""
    name = "vllm70bv6e-observability-group-recreations-metric"
    ok, why = _found(_edited(name, lambda i: i.update(project="acme-llm-staging")))[METRICS[0]]
    assert not ok
    assert "it stays at zero and every alert on it is silent" in why
    assert why.endswith("set ObservabilityArgs.project to the cluster's"), why


def test_cluster_wiring_an_existing_cluster_s_project_is_its_workload_pool_s():
    found = _found(plan_of("vllm-llama33-70b-existing").as_json())
    metric = "cluster wiring log-based metric ml-platform-observability-group-recreations-metric"
    assert found[metric] == (True, "in project tpu-serving-demo, cluster ml-platform (existing)'s"), found
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-existing").as_json())
    next(r for r in plan["resources"] if r["name"] == metric.rsplit(" ", 1)[1])["inputs"]["project"] = "other"
    assert not _found(plan)[metric][0]
