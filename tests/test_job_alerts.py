"""job_alerts: the alert on a PathwaysJob whose pods are not running (SRE review M8: the PathwaysJob stacks had no
alert, so a job failed for good, or a slice lost to a repair, showed nowhere)."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving.job_alerts import JobPods, not_running_alert


def alert_policies(stack: str) -> dict[str, dict]:
    return {
        r["name"]: r["inputs"]
        for r in plan_of(stack).as_json()["resources"]
        if r["type"] == "gcp:monitoring/alertPolicy:AlertPolicy"
    }


def test_not_running_alert_of_a_job_that_runs_until_stopped_also_fires_when_none_runs():
    key, title, query, minutes, runbook, severity = not_running_alert(
        "c", "n", JobPods("PathwaysJob p", "p-.+", True), 75
    )
    where = 'cluster="c",namespace="n",pod=~"p-.+"'
    assert (key, title, minutes, severity) == ("job-not-running", "PathwaysJob p pods not running", 75, "ERROR")
    assert query == (
        f'(sum(kube_pod_status_phase{{{where},phase=~"Pending|Failed|Unknown"}}) > 0) or on() '
        f'((sum(kube_pod_status_phase{{{where},phase="Running"}}) or on() vector(0)) == 0)'
    )
    assert "pulumi up does not recreate it" in runbook


def test_not_running_alert_of_a_batch_job_fires_on_stuck_pods_only():
    _, _, query, _, _, _ = not_running_alert("c", "n", JobPods("PathwaysJob p", "p-.+", False), 75)
    assert (
        query
        == '(sum(kube_pod_status_phase{cluster="c",namespace="n",pod=~"p-.+",phase=~"Pending|Failed|Unknown"}) > 0)'
    )


def test_pathways_job_stacks_get_the_not_running_alert():
    for stack, cluster, name, until_stopped in (
        ("pathwaysjob-interactive-v5e16", "pwinteractive", "pathways-interactive", True),
        ("pathwaysjob-batch-v6e16", "pwbatch", "pathways-device-check", False),
    ):
        policies = alert_policies(stack)
        policy = policies[f"{cluster}-observability-job-not-running"]
        (condition,) = policy["conditions"]
        query = condition["conditionPrometheusQueryLanguage"]["query"]
        assert f'pod=~"{name}-(pathways-head|worker)-[0-9]+-.+"' in query
        assert ('phase="Running"' in query) is until_stopped
