"""The runtime model's health-check findings (tools/runtime/health_checks.py): a HealthCheckPolicy asks a path the
pods behind it serve (library review 7, M3)."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import health_checks
from tpu_serving_tools.runtime.planview import PlanView


def _objects(plan: dict) -> dict[str, tuple[bool, str]]:
    return {f.subject: (f.ok, f.reason) for f in health_checks.findings(PlanView(plan))}


def test_health_checks_a_path_the_server_is_not_probed_at_fails():
    """Library review 7, M3: ServingGatewayArgs.health_path '/healthz' for a vLLM server probed at /health."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    subject = "ref HealthCheckPolicy vllm-llama70b/vllm-api-gateway -> port 8000 path {}"
    assert _objects(plan)[subject.format("/health")][0]
    for r in plan["resources"]:
        if r["inputs"].get("kind") == "HealthCheckPolicy":
            r["inputs"]["spec"]["default"]["config"]["httpHealthCheck"]["requestPath"] = "/healthz"
    ok, why = _objects(plan)[subject.format("/healthz")]
    assert not ok and why.startswith(
        "the pods behind InferencePool vllm-llama70b/vllm-api-gateway are probed on that port at: /health "
    ), why


def test_health_checks_a_path_through_a_handler_the_probed_path_shares_passes():
    """The disaggregated stacks' load balancer asks /ping, which vLLM answers with its /health handler."""
    found = _objects(copy.deepcopy(plan_of("vllm-llama33-70b-disagg-v6e8x2").as_json()))
    assert found["ref HealthCheckPolicy vllm-pd70b/vllm-api-gateway -> port 8000 path /ping"][0]
