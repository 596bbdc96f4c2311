"""tpu_serving_tools.runtime.scope's reservation findings: a specific reservation two stacks consume."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import scope
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v6e8"  # four pools on two specific reservations, one per zone


def _views(machine: str | None = None) -> list[tuple[str, PlanView]]:
    ours = plan_of(STACK).as_json()
    theirs = copy.deepcopy(ours)
    for r in theirs["resources"]:
        if r["type"] == scope.NODE_POOL and machine and r["inputs"]["nodeConfig"]["machineType"].startswith("ct"):
            r["inputs"]["nodeConfig"]["machineType"] = machine
    return [(STACK, PlanView(ours)), ("copy", PlanView(theirs))]


def test_reservation_findings_one_stack_sharing_its_own_reservation_says_nothing():
    assert scope.reservation_findings([(STACK, PlanView(plan_of(STACK).as_json()))]) == ([], [])


def test_reservation_findings_warn_of_two_stacks_on_one_reservation_with_the_vms_they_claim():
    """New-user review 11, m2: a copied production stack claimed the same reservations, and make check was silent."""
    failures, warnings = scope.reservation_findings(_views())
    assert failures == []
    assert len(warnings) == 2, warnings  # one per zone's reservation
    assert all("consumed by 2 stacks" in w and "it must hold 4 VMs for all of them at once" in w for w in warnings)
    assert any("/us-east5-a/v6e8-us-east5-a:" in w for w in warnings)


def test_reservation_findings_fail_two_machine_types_on_one_reservation():
    failures, warnings = scope.reservation_findings(_views("ct6e-standard-4t"))
    assert warnings == [] and len(failures) == 2
    assert all(not f.ok and "consumed with different machine types" in f.reason for f in failures)
    assert not scope.check(_views("ct6e-standard-4t")).ok


def test_scope_a_log_based_metric_two_namespaces_declare_under_one_name_fails():
    """Library review 3, B1: two namespaces' Observability on one cluster named their group recreations' metric after
    the cluster alone; the second create is refused (ALREADY_EXISTS). Named per namespace now, and the check names a
    clash."""
    from tests.fixtures.twin import twin_namespace

    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    twin = twin_namespace(plan, "vllm-llama70b", "second")
    metrics = [r for r in twin["resources"] if r["type"] == "gcp:logging/metric:Metric"]
    names = [r["inputs"]["name"] for r in metrics]
    assert "vllm70bv6e-vllm-llama70b-lws-group-recreations" in names and len(set(names)) == len(names)
    failed = [f for f in scope.check([("dev", PlanView(twin))]).findings if "log-based metric" in f.subject]
    assert failed and all(f.ok for f in failed)
    clash = copy.deepcopy(twin)
    clash["resources"].append({**copy.deepcopy(metrics[0]), "urn": metrics[0]["urn"] + "-again", "name": "again"})
    (bad,) = [f for f in scope.check([("dev", PlanView(clash))]).failures() if "log-based metric" in f.subject]
    assert "created 2 times in dev" in bad.reason and "already exists" in bad.reason


def test_reservation_findings_fail_one_plans_pools_of_two_machine_types_on_one_reservation():
    """Library review 7, M6: a program's second serving given the first's reservations, in one stack."""
    plan = copy.deepcopy(plan_of(STACK).as_json())
    pools = [r for r in plan["resources"] if r["type"] == scope.NODE_POOL and "ct" in str(r["inputs"]["nodeConfig"])]
    pools[0]["inputs"]["nodeConfig"]["machineType"] = "ct6e-standard-4t"
    failures, _ = scope.reservation_findings([(STACK, PlanView(plan))])
    (failure,) = failures
    assert not failure.ok and failure.reason.startswith("consumed with different machine types: "), failure


def test_scope_two_addresses_of_one_name_in_a_region_fail():
    """Library review 8, M3: two gateways given one address name passed; Compute Engine refuses the second create."""
    plan = copy.deepcopy(plan_of(STACK).as_json())
    (address,) = [r for r in plan["resources"] if r["type"] == "gcp:compute/address:Address"]
    again = {**copy.deepcopy(address), "urn": address["urn"] + "-2", "name": address["name"] + "-2"}
    plan["resources"].append(again)
    failures = [f for f in scope.check([(STACK, PlanView(plan))]).findings if not f.ok]
    (failure,) = [f for f in failures if f.subject.startswith("scope address name per (project, region)")]
    assert f"created 2 times in {STACK}" in failure.reason and address["inputs"]["name"] in failure.subject, failure
    assert scope.check([(STACK, PlanView(plan_of(STACK).as_json()))]).ok


MODELS = ("vllm-llama33-70b-platform", "vllm-llama31-8b-platform")


def _model_views(strip_headers: bool) -> list[tuple[str, PlanView]]:
    views = []
    for stack in MODELS:
        plan = copy.deepcopy(plan_of(stack).as_json())
        for r in plan["resources"]:
            if strip_headers and r["inputs"].get("kind") == "HTTPRoute":
                for rule in r["inputs"]["spec"]["rules"]:
                    for match in rule["matches"]:
                        match.pop("headers")
        views.append((stack, PlanView(plan)))
    return views


def test_route_findings_two_model_routes_on_the_platform_gateway_take_their_own_models():
    found = scope.route_findings(_model_views(strip_headers=False))
    on_platform = [f for f in found if "tpu-serving-gateway/internal" in f.subject]
    assert len(on_platform) == 2 and all(f.ok for f in on_platform)
    assert any("Llama-3.1-8B-Instruct" in f.subject for f in on_platform)


def test_route_findings_two_routes_matching_every_request_on_one_gateway_fail():
    (tie,) = [f for f in scope.route_findings(_model_views(strip_headers=True)) if not f.ok]
    assert "taken by 2 routes: vllm-llama33-70b-platform/" in tie.reason and "oldest Route" in tie.reason
    assert "clusters/tpu-platform tpu-serving-gateway/internal" in tie.subject


def _proxy_only_in(stack: str, cidr: str | None = None) -> tuple[str, PlanView]:
    plan = copy.deepcopy(plan_of(stack).as_json())
    (subnet,) = [r for r in plan["resources"] if r["type"] == "gcp:compute/subnetwork:Subnetwork"]
    if cidr is not None:
        subnet["inputs"]["ipCidrRange"] = cidr
    return stack, PlanView(plan)


def test_range_findings_two_stacks_in_two_regions_of_one_network_on_one_range_fail():
    """GKE review of issue 39, Blocker: llama31-405b-v6e16 (us-east5) and vllm-llama31-405b-tpu7x16 (us-central1) each
    made a proxy-only subnet on 192.168.2.0/23 of network default; the second create fails, whatever the region."""
    east = _proxy_only_in("llama31-405b-v6e16")
    central = _proxy_only_in("vllm-llama31-405b-tpu7x16", "192.168.3.0/24")  # inside the other's /23
    found = scope.range_findings([east, central])
    assert len(found) == 2 and not any(f.ok for f in found), found
    assert "overlaps vllm-llama31-405b-tpu7x16/vllm405btpu7x-gateway-proxy-only 192.168.3.0/24" in found[0].reason
    assert "must be unique and non-overlapping" in found[0].reason


def test_range_findings_the_shipped_ranges_of_one_network_are_apart():
    plans = [_proxy_only_in(s) for s in ("llama31-405b-v6e16", "vllm-llama31-405b-tpu7x16", "vllm-llama33-70b-v5e16")]
    found = scope.range_findings(plans)
    assert len(found) == 3 and all(f.ok for f in found), found
    assert {f.subject.split(" (")[0] for f in found} == {
        "scope subnet range per network: tpu-serving-demo/default 192.168.2.0/23",
        "scope subnet range per network: tpu-serving-demo/default 192.168.6.0/23",
        "scope subnet range per network: tpu-serving-demo/default 192.168.0.0/23",
    }


def test_scope_names_made_from_cluster_name_say_to_give_each_stack_its_own():
    """New-user review of issue 39, Major: a second stack on the shipped llama8b platform's cluster.name failed make
    check on its service account IDs and bucket names, and the finding quoted only the name rules."""
    failed = {f.subject.split(":")[0]: f.reason for f in scope.check(_views()).failures()}
    named = [s for s, reason in failed.items() if "after its cluster.name" in reason]
    assert {
        "scope GKE cluster name per (project, location)",
        "scope service account ID per project",
        "scope bucket name (global)",
        "scope log-based metric name per project",
    } <= set(named), failed
    assert (
        "scope address name per (project, region)" in failed and "scope address name per (project, region)" not in named
    )
