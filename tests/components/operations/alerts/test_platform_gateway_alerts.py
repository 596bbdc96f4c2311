"""platform_gateway_alerts: a model stack watches its platform's Gateway (SRE review: a Gateway outage paged nobody)."""

import pytest

from tests.conftest import plan_of
from tpu_serving.operations.alerts.gateway_alerts import url_map_pattern

ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
MODEL_STACKS = {"vllm-llama31-8b-platform": "vllm-llama8b", "vllm-llama33-70b-platform": "vllm-llama70b"}


def _gateway_policies(stack: str) -> dict[str, dict]:
    plan = plan_of(stack)
    return {
        r.name.rsplit("-observability-", 1)[1]: r.inputs
        for r in plan.of_type(ALERT_POLICY)
        if "-observability-platform-gateway-" in r.name
    }


@pytest.mark.parametrize("stack", sorted(MODEL_STACKS))
def test_platform_gateway_alerts_watch_the_platform_gateway_with_the_model_stacks_titles_and_channels(stack):
    policies = _gateway_policies(stack)
    assert sorted(policies) == ["platform-gateway-errors", "platform-gateway-near-timeout"]
    namespace = MODEL_STACKS[stack]
    pattern = url_map_pattern("tpu-serving-gateway", "internal")  # the platform's sharedPlatform.gateway*
    errors, near = policies["platform-gateway-errors"], policies["platform-gateway-near-timeout"]
    assert errors["displayName"] == f"tpu-platform/{namespace}: Gateway error rate high"
    assert near["displayName"] == f"tpu-platform/{namespace}: Requests near the Gateway timeout"
    for policy in (errors, near):
        assert pattern in policy["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
        assert "tpu-serving-gateway/internal, shared by every model stack" in policy["documentation"]["content"]
    assert (errors["severity"], near["severity"]) == ("ERROR", "WARNING")
    plan = plan_of(stack)
    assert f"tpu-platform/{namespace}: Gateway error rate high" in plan.outputs["alertPolicies"]


def test_platform_gateway_alerts_page_the_model_stacks_own_channels():
    policies = _gateway_policies("vllm-llama33-70b-platform")  # its stack file's notificationChannels, ticketChannels
    assert policies["platform-gateway-errors"]["notificationChannels"] == [
        "projects/tpu-serving-demo/notificationChannels/1234567890"
    ]
    assert policies["platform-gateway-near-timeout"]["notificationChannels"] == [
        "projects/tpu-serving-demo/notificationChannels/1234567891"
    ]
