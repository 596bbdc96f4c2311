"""error_rate: the alert on the share of server errors (5xx) in the serving responses (SRE review: no alert on 5xx,
so clients could get errors for hours while every pod was Ready)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.backends.vllm.facts import HTTP_RESPONSES
from tpu_serving.operations.alerts.error_rate import HttpResponses, error_rate_alert, error_rate_query
from tpu_serving.operations.observability_settings import ObservabilitySettings

POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
PODMONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
VLLM_STACKS = (
    "vllm-llama33-70b-v5e16",
    "vllm-llama31-405b-v6e16",
    "vllm-llama33-70b-existing",
    "vllm-llama33-70b-disagg-v6e8x2",
)


def test_error_rate_query_is_the_share_of_server_errors_above_the_threshold_with_a_traffic_guard():
    responses = HttpResponses("a server", "http_requests_total", "status", "5xx", ("s-leaders", "s.v2-leaders"))
    settings = ObservabilitySettings(error_rate_percent=2.5, error_rate_min_requests_per_minute=6)
    where = 'cluster="c", namespace="n", job=~"s-leaders|s\\\\.v2-leaders"'
    total = f"sum(rate(http_requests_total{{{where}}}[5m]))"
    errors = f'sum(rate(http_requests_total{{{where}, status=~"5xx"}}[5m]))'
    assert error_rate_query("c", "n", responses, settings) == (
        f"(({errors} / {total}) > 0.025) and on() (({total} * 60) >= 6)"
    )


def test_error_rate_alert_defaults_page_at_5_percent_held_5_minutes_with_a_runbook():
    responses = dataclasses.replace(HTTP_RESPONSES, jobs=("vllm-leaders",))
    key, title, query, minutes, runbook, severity = error_rate_alert("c", "n", responses, ObservabilitySettings())
    assert (key, title, minutes, severity) == ("error-rate", "Serving error rate high", 5, "ERROR")
    assert ") > 0.05) and on() ((" in query and query.endswith(" * 60) >= 1)")
    assert "More than 5% of the responses of vLLM's OpenAI-compatible server in namespace n" in runbook
    assert "kubectl -n n logs <pod>" in runbook and 'status=~"5xx"' in runbook


def test_error_rate_alert_reads_vllms_grouped_status_classes():
    """prometheus-fastapi-instrumentator groups codes by class by default: ``5xx``, never ``500``."""
    assert (HTTP_RESPONSES.metric, HTTP_RESPONSES.status_label, HTTP_RESPONSES.server_errors) == (
        "http_requests_total",
        "status",
        "5xx",
    )


def _policies(plan) -> dict[str, dict]:
    return {r.name.split("-observability-", 1)[-1]: r.inputs for r in plan.of_type(POLICY)}


@pytest.mark.parametrize("stack", VLLM_STACKS)
def test_error_rate_alert_on_every_vllm_stack_scoped_to_its_vllm_servers(stack):
    plan = plan_of(stack)
    policy = _policies(plan)["error-rate"]
    (condition,) = policy["conditions"]
    promql = condition["conditionPrometheusQueryLanguage"]
    monitorings = [r.inputs["metadata"] for r in plan.of_type(PODMONITORING)]
    vllm_jobs = {m["name"] for m in monitorings if not m["name"].endswith(("-epp", "-prober", "-prober-gateway"))}
    (namespace,) = {m["namespace"] for m in monitorings}
    scopes = set(re.findall(r'namespace="([^"]+)", job=~"([^"]+)"', promql["query"]))
    assert len(scopes) == 1 and len(re.findall(r"http_requests_total\{cluster=", promql["query"])) == 3
    ((scoped_namespace, jobs),) = scopes
    assert (scoped_namespace, set(jobs.split("|"))) == (namespace, vllm_jobs)
    assert (promql["duration"], promql["alertRule"]) == ("300s", "error_rate")
    assert policy["displayName"].endswith(": Serving error rate high") and policy["severity"] == "ERROR"
    assert policy["documentation"]["content"].startswith("More than 5% of the responses")


def test_error_rate_alert_settings_reach_the_condition():
    def edit(o: dict) -> None:
        o.update(errorRatePercent=1, errorRateMinutes=15, errorRateMinRequestsPerMinute=12)

    promql = _policies(plan_edited("vllm-llama33-70b-v5e16", observability=edit))["error-rate"]["conditions"][0][
        "conditionPrometheusQueryLanguage"
    ]
    assert ") > 0.01) and on() ((" in promql["query"] and promql["query"].endswith(" * 60) >= 12)")
    assert promql["duration"] == "900s"
