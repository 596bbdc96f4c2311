"""platform_alerts.PlatformAlerts: the platform stack pages when a controller it installs is unavailable."""

from tests.conftest import plan_of


def test_platform_alerts_watch_the_platform_controllers_and_page_its_channel():
    plan = plan_of("platform-us-east5")
    (policy,) = plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    assert policy.inputs["displayName"] == "tpu-platform: Serving controller unavailable"
    assert policy.inputs["notificationChannels"] == ["projects/tpu-serving-demo/notificationChannels/1234567892"]
    query = policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    for deployment in ("lws-controller-manager", "jobset-controller-manager"):
        assert deployment in query
    assert plan.outputs["alertPolicies"] == ["tpu-platform: Serving controller unavailable"]
