"""Alert queries built by tpu_serving.operations.observability_roles: per group, per role, and parseable by Prometheus."""

from __future__ import annotations

from tests.components.operations.test_observability import JETSTREAM_STACK, _promql_conditions
from tests.conftest import plan_of
from tpu_serving.operations.observability_roles import leader_pods

DISAGG_STACK = "vllm-llama33-70b-disagg-v6e8x2"


def test_observability_roles_leader_pattern_is_a_valid_promql_string():
    # PromQL's double-quoted strings take no "\-" (prometheus promql/parser/lex.go lexEscape): re.escape's output was
    # an unparsable query.
    assert leader_pods(True, None, ["jetstream-pathways"]) == "jetstream-pathways-[0-9]+"
    assert leader_pods(True, None, ["a-b", "c.d"]) == "(a-b|c\\\\.d)-[0-9]+"
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan_of(JETSTREAM_STACK))}
    assert '"\\-' not in by_rule["no_ready_leader"]["query"] and "\\-" not in by_rule["no_ready_leader"]["query"]


def test_observability_roles_idle_alert_is_per_group():
    # One hung group among busy ones: each group's TPUs (its workers' pod names start with its leader's) against
    # its own leader's queue, not the namespace's average.
    from tpu_serving.operations.observability_roles import idle_query
    from tpu_serving.operations.observability_settings import ObservabilitySettings

    query = idle_query("duty{ns}", "waiting{ns}", "lws-[0-9]+", ObservabilitySettings(idle_duty_cycle_percent=10))
    assert query == (
        '(avg by (group) (label_replace(duty{ns}, "group", "$1", "pod_name", "(lws-[0-9]+)(-[0-9]+)?")) < 10) '
        'and on(group) (sum by (group) (label_replace(waiting{ns}, "group", "$1", "pod", "(lws-[0-9]+)")) > 0)'
    )
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan_of(JETSTREAM_STACK))}
    assert by_rule["tpu_idle"]["query"].startswith("(avg by (group) (label_replace(")
    assert "on(group)" in by_rule["tpu_idle"]["query"]


def test_observability_roles_disaggregated_idle_alert_is_per_group_of_either_role():
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan_of(DISAGG_STACK))}
    leaders = "vllm-[0-9]+-[0-9a-f]+-prefill-[0-9]+|vllm-[0-9]+-[0-9a-f]+-decode-[0-9]+"
    assert f'"pod_name", "({leaders})(-[0-9]+)?"' in by_rule["tpu_idle"]["query"]


def test_observability_roles_disaggregated_roles_page_when_no_leader_is_ready():
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan_of(DISAGG_STACK))}
    for role in ("decode", "prefill"):
        query = by_rule[f"no_ready_leader_{role}"]["query"]
        assert f'pod=~"vllm-[0-9]+-[0-9a-f]+-{role}-[0-9]+"' in query
        assert query.endswith("or vector(0)) < 1") and by_rule[f"no_ready_leader_{role}"]["duration"] == "300s"


def test_observability_roles_no_ready_leader_counts_only_leaders_still_scraped():
    """SRE review 30, m6: a role's only leader on a VM gone silent stays ready in kube-state-metrics (the node
    lifecycle controller sets only the pod's Ready condition), so the page counts leaders whose queue gauge was also
    ingested within the served window; tests/e2e/test_e2e_alerts.py fires it on promtool when the scrape stops."""
    by_rule = {c["alertRule"]: c for c in _promql_conditions(plan_of(DISAGG_STACK))}
    for role in ("decode", "prefill"):
        query = by_rule[f"no_ready_leader_{role}"]["query"]
        assert "and on(pod) max by (pod) (present_over_time(vllm:num_requests_running{" in query, query
        assert f'job="vllm-{role}-leaders"}}[180s])' in query, query
