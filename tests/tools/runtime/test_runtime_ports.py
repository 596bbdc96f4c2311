"""The runtime model's ``ports`` category: probes, Service target ports, policy ports and ``--*_port`` arguments
land on ports a container declares."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import ports
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v5e16"


def _view() -> PlanView:
    return PlanView(copy.deepcopy(plan_of(STACK).as_json()))


def _object(view: PlanView, kind: str, name: str) -> dict:
    return next(
        r["inputs"]
        for r in view.resources
        if r["inputs"].get("kind") == kind and r["inputs"]["metadata"]["name"] == name
    )


def _failed(view: PlanView) -> dict[str, str]:
    return {f.subject: f.reason for f in ports.check(view).failures()}


def test_ports_every_stack_points_only_at_declared_ports():
    for stack in (STACK, "llama31-405b-v6e16", "saxml-175b-v5e32x2", "pathwaysjob-interactive-v5e16"):
        result = ports.check(PlanView(plan_of(stack).as_json()))
        assert result.total > 0 and result.failures() == [], stack


def test_ports_a_service_target_port_no_backend_declares_fails():
    view = _view()
    _object(view, "Service", "vllm-api")["spec"]["ports"][0]["targetPort"] = 8001
    assert "no container of leader declares it" in _failed(view)["ports service vllm-llama70b/vllm-api:8000 -> 8001"]


def test_ports_a_named_target_port_resolves_against_the_container():
    view = _view()
    _object(view, "Service", "vllm-api")["spec"]["ports"][0]["targetPort"] = "no-such-name"
    assert "ports service vllm-llama70b/vllm-api:8000 -> no-such-name" in _failed(view)


def test_ports_a_probe_on_an_undeclared_port_fails():
    view = _view()
    lws = _object(view, "LeaderWorkerSet", "vllm")
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    leader["startupProbe"]["httpGet"]["port"] = 8080
    assert any(s.startswith("ports probe vllm-llama70b/vllm leader") and s.endswith(":8080") for s in _failed(view))


def test_ports_policy_ports_match_numbers_names_and_ranges():
    view = _view()
    policy = _object(view, "NetworkPolicy", "serving-ingress")
    rule = policy["spec"]["ingress"][0]
    rule["ports"] = [{"protocol": "TCP", "port": 7990, "endPort": 8010}]
    assert not [s for s in _failed(view) if "serving-ingress" in s]  # 8000 lies in the range
    rule["ports"] = [{"protocol": "TCP", "port": 7000}]
    assert "ports policy vllm-llama70b/serving-ingress ingress 7000" in _failed(view)


def test_ports_the_pools_picker_serves_that_pool_on_the_ports_the_pool_and_gke_use():
    view = _view()
    (c,) = _object(view, "Deployment", "vllm-api-gateway-epp")["spec"]["template"]["spec"]["containers"]
    at = c["args"].index("--pool-name")
    c["args"][at + 1] = "another-pool"
    assert _failed(view) == {
        "ports picker vllm-llama70b/vllm-api-gateway serves": "epp picks for vllm-llama70b/another-pool"
    }
    del c["args"][at : at + 2]
    assert _failed(view) == {
        "ports picker vllm-llama70b/vllm-api-gateway": "no container behind its endpointPickerRef Service is a "
        "picker (none is given --pool-name)"
    }
    # the picker told to listen elsewhere than the pool calls it
    view = _view()
    (c,) = _object(view, "Deployment", "vllm-api-gateway-epp")["spec"]["template"]["spec"]["containers"]
    c["args"].append("--grpc-port=9102")
    assert _failed(view) == {
        "ports picker vllm-llama70b/vllm-api-gateway ext-proc 9002": "epp listens for ext-proc on 9102 (--grpc-port); "
        "the pool's calls land on 9002"
    }


def test_ports_a_same_named_workload_in_a_second_namespace_is_checked_as_its_own():
    """Library review 2, M1: two default-named serving components in two namespaces. The second namespace's
    Service selected "no pod of the plan" and its pods' probes and arguments went unchecked, because pods were
    told apart by owner and role alone."""
    from tests.fixtures.twin import twin_namespace

    one = ports.check(_view())
    both = ports.check(PlanView(twin_namespace(plan_of(STACK).as_json(), "vllm-llama70b", "second")))
    assert both.failures() == []
    second = [f.subject for f in both.findings if " second/" in f.subject]
    first = [f.subject for f in one.findings if " vllm-llama70b/" in f.subject]
    assert first and sorted(s.replace(" second/", " vllm-llama70b/") for s in second) == sorted(first)
