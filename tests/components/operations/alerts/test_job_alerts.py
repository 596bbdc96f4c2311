"""job_alerts: the alert on a PathwaysJob whose pods are not running (SRE review M8: the PathwaysJob stacks had no
alert, so a job failed for good, or a slice lost to a repair, showed nowhere)."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving.operations.alerts.job_alerts import JobPods, not_running_alert


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
        assert f"delete pathwaysjob {name}`), then pulumi up --refresh" in policy["documentation"]["content"]


def test_saxml_stack_pages_a_jobset_failed_for_good_with_its_way_back():
    """SRE review 31, M2: a Saxml JobSet that spent its maxRestarts is a permanent outage; the no-ready page gave no
    recovery, and the on-call group could not delete the JobSet. Its model servers' pods now have the job page, which
    names the delete and the refresh, and the operators' Role allows the delete."""
    policy = alert_policies("saxml-175b-v5e32x2")["saxml175b-observability-job-not-running"]
    (condition,) = policy["conditions"]
    query = condition["conditionPrometheusQueryLanguage"]["query"]
    assert 'pod=~"sax-model-server-set-sax-model-server-[0-9]+-.+"' in query and 'phase="Running"' in query, query
    text = policy["documentation"]["content"]
    assert "(`kubectl -n saxml delete jobset sax-model-server-set`), then pulumi up --refresh" in text, text
    (role,) = [
        o
        for o in plan_of("saxml-175b-v5e32x2").as_json()["resources"]
        if o["type"] == "kubernetes:rbac.authorization.k8s.io/v1:Role"
        and o["inputs"]["metadata"]["name"] == "tpu-serving-operator"
    ]
    rules = role["inputs"]["rules"]
    assert any("jobsets" in r["resources"] and "delete" in r["verbs"] for r in rules), rules
