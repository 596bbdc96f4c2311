"""The ``network`` runtime check: flows evaluated against NetworkPolicies as GKE Dataplane V2 applies them."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tpu_serving_tools.runtime import network, network_flows
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"
ADMIN_FLOW = "flow demo/sax-model-server -> demo/sax-admin-server:10000/TCP"


def _view(name: str) -> PlanView:
    return PlanView(json.loads((FIXTURES / name).read_text()))


def _finding(view: PlanView, subject: str):
    return next(f for f in network.check(view).findings if f.subject == subject)


def test_network_saxml_before_fix_denies_model_servers_to_admin() -> None:
    result = network.check(_view("net-saxml-before-fix.plan.json"))
    denied = {f.subject for f in result.failures()}
    assert denied == {"flow saxml/sax-model-server -> saxml/sax-admin-server:10000/TCP"}
    assert "same-namespace" in result.failures()[0].reason


def test_network_saxml_before_fix_allows_the_pod_network_flows() -> None:
    result = network.check(_view("net-saxml-before-fix.plan.json"))
    ok = {f.subject for f in result.findings if f.ok}
    assert "flow saxml/sax-http -> saxml/sax-admin-server:10000/TCP" in ok
    assert "flow saxml/sax-publisher-6b08701d -> saxml/sax-http:8888/TCP" in ok
    # client flows come from the stack's settings, which plans recorded since carry (tenancy.allowedCidrs)
    from tests.conftest import plan_of

    current = {f.subject for f in network.check(PlanView(plan_of("saxml-175b-v5e32x2").as_json())).findings if f.ok}
    assert "flow clients 10.128.0.0/9 -> saxml/sax-http:8888/TCP" in current


def test_network_hostnet_source_denied_by_same_namespace_policy() -> None:
    finding = _finding(_view("net-hostnet-denied.plan.json"), ADMIN_FLOW)
    assert not finding.ok
    assert "node address" in finding.reason


def test_network_hostnet_source_allowed_by_rule_without_from() -> None:
    finding = _finding(_view("net-hostnet-allowed.plan.json"), ADMIN_FLOW)
    assert finding.ok
    assert "sax-admin-port" in finding.reason


def test_network_hostnet_source_not_matched_by_node_ipblock_on_dpv2() -> None:
    assert not _finding(_view("net-hostnet-ipblock.plan.json"), ADMIN_FLOW).ok


def test_network_hostnet_destination_not_subject_to_policy() -> None:
    finding = _finding(
        _view("net-hostnet-denied.plan.json"), "flow demo/sax-admin-server -> demo/sax-model-server:10001/TCP"
    )
    assert finding.ok and "host network" in finding.reason


def test_network_selector_match_expressions() -> None:
    sel = {
        "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["a"]},
            {"key": "x", "operator": "DoesNotExist"},
        ]
    }
    assert network.selector_matches(sel, {"app": "a"})
    assert not network.selector_matches(sel, {"app": "a", "x": "1"})
    assert not network.selector_matches(sel, {"app": "b"})


def test_network_kubelet_probe_allowed_on_isolated_pod() -> None:
    view = _view("net-saxml-before-fix.plan.json")
    assert _finding(view, "flow kubelet -> saxml/sax-admin-server:10000/TCP").ok


def test_network_leader_address_argument_becomes_a_flow() -> None:
    arg = "--resource_manager_address=$(LWS_LEADER_ADDRESS):38677"
    worker = network.Workload("w", "ns", "worker", {}, False, (Container("worker", args=(arg,)),), "L/x")
    leader = network.Workload("l", "ns", "leader", {}, False, (), "L/x")
    flows = list(network_flows._arg_flows([leader, worker]))
    assert [(f.src.label, f.dst.label, f.port) for f in flows] == [("ns/w", "ns/l", 38677)]


def test_network_ray_address_without_port_flows_to_the_gcs_port() -> None:
    arg = "S=x; exec bash $S worker --ray_address=$(LWS_LEADER_ADDRESS)"
    worker = network.Workload("w", "ns", "worker", {}, False, (Container("vllm-worker", args=(arg,)),), "L/x")
    leader = network.Workload("l", "ns", "leader", {}, False, (), "L/x")
    flows = list(network_flows._arg_flows([leader, worker]))
    assert [(f.src.label, f.dst.label, f.port) for f in flows] == [("ns/w", "ns/l", 6379)]
    unknown = network.Workload(
        "u", "ns", "worker", {}, False, (Container("c", args=("--foo_address=$(LWS_LEADER_ADDRESS)",)),), "L/x"
    )
    assert list(network_flows._arg_flows([leader, unknown])) == []


def test_network_client_flows_come_from_the_settings_not_the_policy_under_test():
    """The stack's allowed namespaces must reach its serving Service; without the serving-ingress policy the
    namespace's default deny refuses them, and the check fails instead of losing the flows."""
    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.network import check as network_check

    plan = plan_of("vllm-llama33-70b-v5e16").as_json()
    flows = {f.subject: f for f in network_check(PlanView(plan)).findings}
    client = "flow clients in namespace llm-gateway -> vllm-llama70b/vllm-leader:8000/TCP"
    assert flows[client].ok
    plan["resources"] = [
        r for r in plan["resources"] if (r["inputs"].get("metadata") or {}).get("name") != "serving-ingress"
    ]
    after = {f.subject: f for f in network_check(PlanView(plan)).findings}
    assert not after[client].ok


def test_network_a_serving_service_missing_from_the_plan_fails_the_client_flows():
    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.network import check as network_check

    plan = plan_of("vllm-llama33-70b-v5e16").as_json()
    plan["resources"] = [
        r
        for r in plan["resources"]
        if r["type"] != "kubernetes:core/v1:Service" or r["inputs"]["metadata"]["name"] != "vllm-api"
    ]
    failed = [f for f in network_check(PlanView(plan)).failures() if "no such Service" in f.subject]
    assert failed and "the serving Service the settings name is not in the plan" in failed[0].reason


def test_network_a_plan_without_settings_gets_only_the_flows_of_the_backends_its_pods_run() -> None:
    """A library program records no serving settings: JetStream's leader -> worker flow (38679) was required of
    its vLLM pods, which share the role names (new-user review)."""
    import copy

    from tests.conftest import plan_of

    def flows_without_settings(stack: str) -> set[int]:
        plan = copy.deepcopy(plan_of(stack).as_json())
        plan["config"] = {k: v for k, v in plan["config"].items() if not k.endswith(":serving")}
        view = PlanView(plan)
        assert not view.setting("serving")
        return {f.port for f in network_flows.needed_flows(view)}

    assert 38679 not in flows_without_settings("vllm-llama31-405b-v6e16")
    assert 38679 in flows_without_settings("llama31-405b-v6e16")


def test_network_a_same_named_workload_in_a_second_namespace_has_flows_of_its_own() -> None:
    """Library review 2, M1: two default-named serving components in two namespaces. Their pods were one workload
    (told apart by owner and role alone), so the second namespace's flows, KV transfer included, were not checked."""
    from tests.conftest import plan_of
    from tests.fixtures.twin import twin_namespace
    from tpu_serving_tools.runtime.network import check as network_check

    plan = plan_of("vllm-llama33-70b-disagg-v6e8x2").as_json()
    one = network_check(PlanView(plan))
    both = network_check(PlanView(twin_namespace(plan, "vllm-pd70b", "second")))
    inside = [f.subject for f in one.findings if f.subject.count("vllm-pd70b/") == 2]
    assert any("decode" in s and "prefill" in s for s in inside), inside  # the KV transfer among them
    twins = {f.subject for f in both.findings if f.subject.count("second/") == 2}
    assert sorted(twins) == sorted(s.replace("vllm-pd70b/", "second/") for s in inside)
    assert both.failures() == []


def test_network_model_stack_routes_get_the_platform_gateway_flows():
    """A model stack's route names its platform's Gateway, which is not in its plan: the proxies' and the load
    balancer's health checks' flows to its pods are checked all the same, and a policy that drops them fails."""
    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.network import check as network_check

    (gateway,) = plan_of("platform-us-east5").of_type("kubernetes:gateway.networking.k8s.io/v1:Gateway")
    assert gateway.inputs["spec"] == {**gateway.inputs["spec"], **network_flows.PLATFORM_GATEWAY["spec"]}
    plan = plan_of("vllm-llama31-8b-platform").as_json()
    flows = [
        f for f in network_check(PlanView(plan)).findings if "gateway internal proxies 192.168.4.0/23" in f.subject
    ]
    checks = [f for f in network_check(PlanView(plan)).findings if "load balancer health checks" in f.subject]
    assert flows and checks and all(f.ok for f in flows + checks)
    plan["resources"] = [
        r for r in plan["resources"] if (r["inputs"].get("metadata") or {}).get("name") != "serving-ingress"
    ]
    after = [f for f in network_check(PlanView(plan)).findings if "load balancer health checks" in f.subject]
    assert after and not all(f.ok for f in after)
