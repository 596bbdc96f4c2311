"""serving_alerts: the stalled-engine, metrics-missing and below-minimum alerts on the leaders, as builders and as
the stacks render them (their firing on upstream series is tests/e2e/test_e2e_alerts.py's)."""

from __future__ import annotations

import dataclasses

from tests.conftest import plan_of
from tpu_serving.operations.alerts.serving_alerts import (
    below_minimum_alert,
    capacity_reduced_alert,
    capacity_wait_alert,
    leader_alerts,
    metrics_missing_alert,
    serving_leaders,
    slow_first_token_alert,
    stalled_alert,
)
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving.operations.serving_metrics import Scope, ServingMetrics, ServingSignals

SCOPE = Scope("c", "ns")
LEADERS = "vllm-[0-9]+"
SIGNALS = ServingSignals(requests_running="r", requests_waiting="w", generation_tokens="t_total")
SETTINGS = ObservabilitySettings(stalled_minutes=12, metrics_missing_minutes=9, not_ready_minutes=70)
SCRAPED = '{cluster="c", namespace="ns"}'
READY = (
    '(min by (namespace, pod) (kube_pod_container_status_ready{cluster="c", namespace="ns", pod=~"vllm-[0-9]+"}) == 1)'
)


def _conditions(stack: str) -> dict[str, dict]:
    policies = plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    return {
        r.name.split("-observability-")[-1]: r.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]
        for r in policies
        if "conditionPrometheusQueryLanguage" in r.inputs["conditions"][0]
    }


def test_stalled_alert_fires_per_pod_with_requests_in_flight_and_no_token_generated():
    key, title, query, minutes, runbook, severity = stalled_alert(SCOPE, ServingMetrics(signals=SIGNALS), SETTINGS)
    assert (key, title, minutes, severity) == ("stalled", "Serving engine stalled", 1, "ERROR")
    assert query == (
        f"((sum by (pod) (r{SCRAPED}) + sum by (pod) (w{SCRAPED})) > 0) "
        f"unless on(pod) (sum by (pod) (increase(t_total{SCRAPED}[12m])) > 0)"
    )
    assert "delete the leader pod" in runbook
    no_counter = dataclasses.replace(SIGNALS, generation_tokens=None)
    assert stalled_alert(SCOPE, ServingMetrics(signals=no_counter), SETTINGS) is None
    assert stalled_alert(SCOPE, ServingMetrics(), SETTINGS) is None


def test_metrics_missing_alert_counts_ready_leaders_with_no_scraped_gauge():
    key, _, query, minutes, _, severity = metrics_missing_alert(
        SCOPE, LEADERS, ServingMetrics(signals=SIGNALS), SETTINGS
    )
    assert (key, minutes, severity) == ("metrics-missing", 9, "WARNING")
    assert query == f"count({READY} unless on(pod) count by (pod) (r{SCRAPED})) > 0"
    waiting_only = ServingMetrics(signals=ServingSignals(requests_waiting="w"))
    assert "count by (pod) (w{" in metrics_missing_alert(SCOPE, LEADERS, waiting_only, SETTINGS)[2]
    assert metrics_missing_alert(SCOPE, LEADERS, ServingMetrics(), SETTINGS) is None


def test_below_minimum_alert_fires_under_the_planned_groups_only_when_more_than_one_is_planned():
    key, _, query, minutes, runbook, severity = below_minimum_alert(
        SCOPE, LEADERS, ServingMetrics(fewest_groups=3), SETTINGS
    )
    assert (key, minutes, severity) == ("below-minimum", 70, "ERROR")
    assert query == f"(count({READY}) or vector(0)) < 3"
    assert "Fewer than 3 groups" in runbook
    assert below_minimum_alert(SCOPE, LEADERS, ServingMetrics(fewest_groups=1), SETTINGS) is None


def test_leader_alerts_keep_only_those_the_signals_allow():
    keys = [a[0] for a in leader_alerts(SCOPE, LEADERS, ServingMetrics(signals=SIGNALS, fewest_groups=2), SETTINGS)]
    assert keys == ["stalled", "metrics-missing", "capacity-reduced", "below-minimum"]
    assert leader_alerts(SCOPE, LEADERS, ServingMetrics(), SETTINGS) == []


def test_leader_alerts_render_on_each_stack_from_its_plan():
    """The flagship keeps two groups (autoscaling minReplicas 2); the single-group vLLM 405B stack gets no
    below-minimum alert; JetStream's leaders have no token counter, so no stalled alert."""
    flagship = _conditions("vllm-llama33-70b-v5e16")
    assert flagship["below-minimum"]["query"].endswith(" < 2")
    assert 'pod=~"vllm-[0-9]+"' in flagship["below-minimum"]["query"]
    assert "vllm:generation_tokens_total" in flagship["stalled"]["query"]
    assert "vllm:num_requests_running" in flagship["metrics-missing"]["query"]
    single = _conditions("vllm-llama31-405b-v6e16")
    assert "stalled" in single and "metrics-missing" in single and "below-minimum" not in single
    jetstream = _conditions("llama31-405b-v6e16")
    assert "jetstream_prefill_backlog_size" in jetstream["metrics-missing"]["query"] and "stalled" not in jetstream


def test_capacity_reduced_alert_tickets_a_lost_group_within_minutes():
    """SRE review round 43, M1: LWS records no RecreateGroup event when the leader pod itself went (an eviction, a
    lost node), so losing one of two single-host groups waited for the below-minimum page's 75 minutes."""
    key, title, query, minutes, runbook, severity = capacity_reduced_alert(
        SCOPE, LEADERS, ServingMetrics(fewest_groups=2), SETTINGS
    )
    assert (key, minutes, severity) == ("capacity-reduced", 10, "WARNING")
    below = below_minimum_alert(SCOPE, LEADERS, ServingMetrics(fewest_groups=2), SETTINGS)
    assert below is not None and query == below[2]  # the same count, sooner and as a ticket
    assert capacity_reduced_alert(SCOPE, LEADERS, ServingMetrics(fewest_groups=1), SETTINGS) is None


def test_serving_leaders_count_a_ready_leader_only_while_its_engine_is_scraped():
    """SRE review round 44, M1: a VM gone silent keeps its pod's containers ready in kube-state-metrics (the node
    controller sets only the pod's Ready condition), so the capacity alerts also ask for the engine's gauge."""
    metrics = ServingMetrics(signals=SIGNALS, fewest_groups=2)
    served = f"({READY} and on(pod) max by (pod) (present_over_time(r{SCRAPED}[180s])))"
    assert serving_leaders(SCOPE, LEADERS, metrics, SETTINGS) == served
    for alert in (capacity_reduced_alert, below_minimum_alert):
        found = alert(SCOPE, LEADERS, metrics, SETTINGS)
        assert found is not None and found[2] == f"(count({served}) or vector(0)) < 2"
        assert "silent" in found[4] and "repair" in found[4]
    slow = ObservabilitySettings(scrape_interval_seconds=300)
    assert "[600s]" in serving_leaders(SCOPE, LEADERS, metrics, slow)  # two scrape intervals when longer
    assert serving_leaders(SCOPE, LEADERS, ServingMetrics(fewest_groups=2), SETTINGS) == READY  # no engine gauge


def test_slow_first_token_alert_pages_on_the_95th_percentile_above_the_setting():
    """SRE review round 44, M3: no alert read the time to first token; the queue and slow-probe alerts are tickets."""
    metrics = ServingMetrics(signals=dataclasses.replace(SIGNALS, time_to_first_token="ttft"))
    settings = ObservabilitySettings(first_token_seconds=7.5, first_token_minutes=4)
    key, title, query, minutes, runbook, severity = slow_first_token_alert(SCOPE, metrics, settings)
    assert (key, minutes, severity) == ("slow-first-token", 4, "ERROR")
    assert query == f"histogram_quantile(0.95, sum by (le) (rate(ttft_bucket{SCRAPED}[5m]))) > 7.5"
    assert "7.5 s" in runbook
    assert slow_first_token_alert(SCOPE, ServingMetrics(signals=SIGNALS), settings) is None  # no histogram


def test_capacity_wait_alert_counts_the_groups_unschedulable_pods_for_its_minutes():
    metrics = ServingMetrics(leader_worker_sets=("vllm",), compute_class="c-serving")
    key, _, query, minutes, runbook, severity = capacity_wait_alert(
        SCOPE, metrics, ObservabilitySettings(capacity_wait_minutes=45)
    ) or ("", "", "", 0, "", "")
    assert (key, minutes, severity) == ("capacity-wait", 45, "WARNING")
    # leaders <lws>-<group> and workers <lws>-<group>-<worker>; not the prober or the picker of the same namespace
    assert query == (
        'sum(kube_pod_status_unschedulable{cluster="c", namespace="ns", pod=~"(vllm)-[0-9]+(-[0-9]+)?"}) > 0'
    )
    assert "c-serving" in runbook


def test_capacity_wait_alert_says_what_serves_while_a_group_waits():
    """SRE review of the capacity fallback, M3: on a stack of one group nothing serves while it waits."""

    def runbook(stack: str) -> str:
        policies = plan_of(stack).of_type("gcp:monitoring/alertPolicy:AlertPolicy")
        (found,) = [r for r in policies if r.name.endswith("-observability-capacity-wait")]
        return str(found.inputs["documentation"]["content"])

    one, several = runbook("vllm-llama31-405b-v6e16"), runbook("vllm-llama33-70b-v6e8")
    assert "the stack keeps one group, so while it waits nothing serves and the no-ready alert fires" in one
    assert "the groups already placed serve" in several and "nothing serves" not in several
    assert "the groups already placed serve" not in one
    assert "flex-start: single-host slices only" in one
    assert "Why: `kubectl -n vllm-llama405b describe pod <pod>`" in one


def test_capacity_wait_alert_none_without_a_compute_class():
    assert capacity_wait_alert(SCOPE, ServingMetrics(leader_worker_sets=("vllm",)), SETTINGS) is None


def test_capacity_wait_alert_in_the_fallback_stacks_only():
    # the two example stacks with serving.fallback, and no other
    with_alert = {
        stack
        for stack in (
            "vllm-llama31-405b-v6e16",
            "vllm-llama33-70b-v6e8",
            "vllm-llama33-70b-v5e16",
            "llama31-405b-v6e16",
        )
        if "capacity-wait" in _conditions(stack)
    }
    assert with_alert == {"vllm-llama31-405b-v6e16", "vllm-llama33-70b-v6e8"}
    # the pods of the stack's LeaderWorkerSet, as the plan names it
    lws = plan_of("vllm-llama31-405b-v6e16").of_type("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
    names = [r.inputs["metadata"]["name"] for r in lws]
    query = _conditions("vllm-llama31-405b-v6e16")["capacity-wait"]
    assert names and query["query"].endswith(f'pod=~"({names[0]})-[0-9]+(-[0-9]+)?"}}) > 0')
    assert query["duration"] == "1800s"
