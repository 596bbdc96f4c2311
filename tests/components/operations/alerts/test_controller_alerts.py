"""controller_alerts: the alert on the controllers a serving stack relies on, and the kube state metrics package it
reads, in every stack's plan."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving.operations.alerts.controller_alerts import controller_alerts, controller_query
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving.platform.controllers import JOBSET, LWS, WatchedDeployment

POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CLUSTER = "gcp:container/cluster:Cluster"


def test_controller_query_reads_each_deployment_available_replicas():
    lws = WatchedDeployment("lws-system", "lws-controller-manager", "lws")
    jobset = WatchedDeployment("jobset-system", "jobset-controller-manager", "jobset")
    assert controller_query("c", [lws, jobset]) == (
        "max by (namespace, deployment) ("
        'kube_deployment_status_replicas_available{cluster="c", namespace="lws-system", '
        'deployment="lws-controller-manager"} or '
        'kube_deployment_status_replicas_available{cluster="c", namespace="jobset-system", '
        'deployment="jobset-controller-manager"}) < 1 or '
        # a Deployment deleted or not reported has no series to compare: its absence fires too (SRE round 40, m7)
        'absent(kube_deployment_status_replicas_available{cluster="c", namespace="lws-system", '
        'deployment="lws-controller-manager"}) or '
        'absent(kube_deployment_status_replicas_available{cluster="c", namespace="jobset-system", '
        'deployment="jobset-controller-manager"})'
    )


def test_controller_alerts_none_without_a_controller_and_held_for_the_setting():
    assert controller_alerts("c", [], ObservabilitySettings()) == []
    lws = WatchedDeployment("lws-system", "lws-controller-manager", "lws")
    ((key, title, _, minutes, runbook, severity),) = controller_alerts(
        "c", [lws], ObservabilitySettings(controller_unavailable_minutes=7)
    )
    assert (key, title, minutes, severity) == ("controller-unavailable", "Serving controller unavailable", 7, "ERROR")
    assert "lws (lws-system/lws-controller-manager)" in runbook


def test_controller_watched_deployments_are_the_release_manifests():
    # the Deployments the release manifests name (lws v0.9.0/v0.10.0, jobset v0.12.0 config/default)
    assert (LWS.availability.namespace, LWS.availability.deployment) == ("lws-system", "lws-controller-manager")
    assert (JOBSET.availability.namespace, JOBSET.availability.deployment) == (
        "jobset-system",
        "jobset-controller-manager",
    )


@pytest.mark.parametrize("stack", STACKS)
def test_controller_alert_in_every_stack_with_the_package_it_reads(stack):
    """A model stack has none: its platform stack's policy (the one that watches the controllers the model relies
    on) pages once for the cluster (docs/platform.md)."""
    plan = plan_of(stack)
    groups = set(plan.outputs["controllers"])
    policies = [p for p in plan.of_type(POLICY) if p.name.endswith("-controller-unavailable")]
    if (platform := plan.config.get("tpu-serving:platform")) is not None:
        assert policies == [] and "leaderworkerset.x-k8s.io" in groups
        plan = plan_of(json.loads(platform)["stack"].split("/")[-1])
        policies = [p for p in plan.of_type(POLICY) if p.name.endswith("-controller-unavailable")]
    (policy,) = policies
    query = policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert "kube_deployment_status_replicas_available" in query
    if "leaderworkerset.x-k8s.io" in groups:
        assert 'deployment="lws-controller-manager"' in query
    if "jobset.x-k8s.io" in groups:
        assert 'deployment="jobset-controller-manager"' in query
    # a cluster the stack creates sends the DEPLOYMENT package the condition reads
    for cluster in plan.of_type(CLUSTER):
        assert "DEPLOYMENT" in cluster.inputs["monitoringConfig"]["enableComponents"]


def test_controller_alert_leaves_the_metrics_adapter_to_the_autoscaler_ticket():
    """The adapter's outage holds the HPAs' size and serving goes on: the WARNING autoscaler alert has it, the
    controller alert (ERROR, a page) does not (SRE review round 48, m1). A stack with an HPA installs the adapter."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    assert "custom.metrics.k8s.io" in plan.outputs["controllers"]
    (policy,) = [p for p in plan.of_type(POLICY) if p.name.endswith("-controller-unavailable")]
    query = policy.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert 'deployment="lws-controller-manager"' in query
    assert "custom-metrics-stackdriver-adapter" not in query
    (stuck,) = [p for p in plan.of_type(POLICY) if p.name.endswith("-autoscaler-stuck")]
    assert stuck.inputs["severity"] == "WARNING"
