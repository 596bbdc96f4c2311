"""platform_alerts.PlatformAlerts: the platform stack pages when a controller it installs is unavailable."""

from tests.conftest import plan_of


def test_platform_alerts_watch_the_platform_controllers_and_page_its_channel():
    plan = plan_of("platform-us-east5")
    policies = plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    (policy,) = [p for p in policies if p.inputs["displayName"] == "tpu-platform: Serving controller unavailable"]
    assert policy.inputs["notificationChannels"] == ["projects/tpu-serving-demo/notificationChannels/1234567892"]
    query = policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    for deployment in ("lws-controller-manager", "jobset-controller-manager"):
        assert deployment in query
    assert plan.outputs["alertPolicies"][0] == "tpu-platform: Serving controller unavailable"


def test_platform_alerts_ticket_the_clusters_notices_where_node_upgrades_are_held():
    """GKE review M1: the platform holds node upgrades (nodeUpgradesHeld), so GKE's notices of its cluster open a
    ticket on its ticket queue, the platform's alone."""
    plan = plan_of("platform-us-east5")
    (notices,) = [
        p for p in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy") if p.name.endswith("cluster-notices")
    ]
    assert notices.inputs["severity"] == "WARNING"
    assert notices.inputs["notificationChannels"] == ["projects/tpu-serving-demo/notificationChannels/1234567893"]
    assert notices.inputs["displayName"] in plan.outputs["alertPolicies"]


def test_platform_alerts_page_the_platforms_channel_on_its_gateways_server_errors():
    """SRE review: a Gateway outage paged nobody who owns the Gateway; the model stacks' own alerts on it page
    their on-call, this one the platform's."""
    from tpu_serving.operations.alerts.gateway_alerts import url_map_pattern

    plan = plan_of("platform-us-east5")
    (errors,) = [p for p in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy") if p.name.endswith("gateway-errors")]
    assert errors.inputs["displayName"] == "tpu-platform: Gateway error rate high"
    assert errors.inputs["severity"] == "ERROR"
    assert errors.inputs["notificationChannels"] == ["projects/tpu-serving-demo/notificationChannels/1234567892"]
    query = errors.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert url_map_pattern("tpu-serving-gateway", "internal") in query  # sharedPlatform.gatewayNamespace, gatewayName
    assert "tpu-platform: Gateway error rate high" in plan.outputs["alertPolicies"]
