"""autoscaler_alerts: the alert on a serving HPA that cannot scale, in every stack's plan, against the plan's own
HorizontalPodAutoscalers and the kube state metrics package it reads."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving.operations.alerts.autoscaler_alerts import autoscaler_alert, autoscaler_query
from tpu_serving.operations.observability_settings import ObservabilitySettings

POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
CLUSTER = "gcp:container/cluster:Cluster"


def test_autoscaler_query_reads_each_hpa_conditions_and_their_absence():
    assert autoscaler_query("c", "ns", ["vllm", "ds.a-prefill"]) == (
        "max by (horizontalpodautoscaler) (kube_horizontalpodautoscaler_status_condition{"
        'cluster="c", namespace="ns", horizontalpodautoscaler=~"vllm|ds\\\\.a-prefill", '
        'condition=~"ScalingActive|AbleToScale", status="false"}) > 0 or '
        'absent(kube_horizontalpodautoscaler_status_condition{cluster="c", namespace="ns", '
        'horizontalpodautoscaler="vllm", condition="ScalingActive"}) or '
        'absent(kube_horizontalpodautoscaler_status_condition{cluster="c", namespace="ns", '
        'horizontalpodautoscaler="ds\\\\.a-prefill", condition="ScalingActive"})'
    )


def test_autoscaler_alert_none_without_an_autoscaler_and_held_for_the_setting():
    assert autoscaler_alert("c", "ns", (), ObservabilitySettings()) is None
    found = autoscaler_alert("c", "ns", ("vllm",), ObservabilitySettings(autoscaler_stuck_minutes=9))
    assert found is not None
    key, title, _, minutes, runbook, severity = found
    assert (key, title, minutes, severity) == ("autoscaler-stuck", "Serving autoscaler cannot scale", 9, "WARNING")
    assert "kubectl -n ns describe hpa" in runbook


@pytest.mark.parametrize("stack", STACKS)
def test_autoscaler_alert_names_every_hpa_of_the_plan(stack):
    """The alert is there exactly when the plan declares an HPA, and names each one the plan declares (read off the
    HorizontalPodAutoscaler resources, not the code that builds the alert); its cluster sends the HPA package."""
    plan = plan_of(stack)
    hpas = sorted(h.inputs["metadata"]["name"] for h in plan.of_type(HPA))
    policies = [p for p in plan.of_type(POLICY) if p.name.endswith("-observability-autoscaler-stuck")]
    if not hpas:
        assert policies == []
        return
    (policy,) = policies
    query = policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    named = sorted(q.split('horizontalpodautoscaler="', 1)[1].split('"', 1)[0] for q in query.split("absent(")[1:])
    assert named == hpas
    namespaces = {h.inputs["metadata"]["namespace"] for h in plan.of_type(HPA)}
    assert all(f'namespace="{n}"' in query for n in namespaces)
    for cluster in plan.of_type(CLUSTER):
        assert "HPA" in cluster.inputs["monitoringConfig"]["enableComponents"]


def test_autoscaler_alert_found_in_some_stack():
    """The per-stack test above passes vacuously on a stack without an HPA: at least the autoscaled stacks have one."""
    with_hpa = [s for s in STACKS if plan_of(s).of_type(HPA)]
    assert len(with_hpa) >= 3, with_hpa
