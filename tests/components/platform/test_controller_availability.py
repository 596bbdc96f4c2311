"""``Availability``: the LWS and JobSet installs run two replicas spread over nodes under a disruption budget, so a
node drain never leaves their fail-closed webhooks without a server (the e2e run with the real managers shows it:
tests/e2e/test_e2e_controllers.py ``test_e2e_controller_serves_its_webhooks_through_a_drain``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import plan_of
from tpu_serving.platform.controllers import JOBSET, LWS, PATHWAYS_JOB, Availability, Controller


def deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "x-system"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "manager"}]}}},
    }


def availability(controller: Controller) -> Availability:
    found = controller.availability
    assert found is not None
    return found


@pytest.mark.parametrize("controller", [LWS, JOBSET], ids=["lws", "jobset"])
def test_availability_installed_gives_the_deployment_two_replicas_on_different_nodes(controller: Controller):
    a = availability(controller)
    changed = a.installed(deployment(a.deployment))
    assert changed["spec"]["replicas"] == 2
    spread, zones = changed["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert spread == {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": dict(a.selector)},
    }
    assert zones["topologyKey"] == "topology.kubernetes.io/zone" and zones["whenUnsatisfiable"] == "ScheduleAnyway"
    assert changed["spec"]["template"]["spec"]["containers"] == [{"name": "manager"}]
    other = deployment("another")
    assert a.installed(other) is other
    service = {"kind": "Service", "metadata": {"name": a.deployment}}
    assert a.installed(service) is service


@pytest.mark.parametrize("controller", [LWS, JOBSET], ids=["lws", "jobset"])
def test_availability_budget_keeps_one_replica_of_two(controller: Controller):
    a = availability(controller)
    assert a.budget() == {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": a.deployment, "namespace": a.namespace},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": dict(a.selector)}},
    }
    assert controller.extra_objects() == [a.budget()]
    assert a.replicas > 1  # minAvailable 1 of one replica would block every drain


def test_availability_controller_installed_applies_the_probe_and_the_replicas():
    """LWS's install changes its Deployment twice (the webhook readiness probe, then the replicas): both hold."""
    lws = deployment("lws-controller-manager", replicas=2)
    changed = LWS.installed(lws, "v0.10.0")
    (manager,) = changed["spec"]["template"]["spec"]["containers"]
    assert manager["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    assert changed["spec"]["replicas"] == 2 and changed["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert len(LWS.transforms("v0.10.0")) == 2 and len(JOBSET.transforms("v0.12.0")) == 1


def test_availability_pathways_job_keeps_its_release_as_shipped():
    """PathwaysJob v0.1.4 has no webhook (nothing fails closed while it is down), and no control plane here runs it:
    its install is left as upstream ships it."""
    assert PATHWAYS_JOB.availability is None and PATHWAYS_JOB.extra_objects() == []
    assert PATHWAYS_JOB.transforms("v0.1.4") == []


@pytest.mark.parametrize(
    ("stack", "group", "name"),
    [("vllm-llama33-70b-v5e16", "vllm70b-lws-manifests", "lws-controller-manager"),
     ("saxml-175b-v5e32x2", "saxml175b-jobset-manifests", "jobset-controller-manager")],
)  # fmt: skip
def test_availability_the_plan_applies_the_budget_with_the_release(stack: str, group: str, name: str):
    (config_group,) = [r for r in plan_of(stack).as_json()["resources"] if r["name"] == group]
    (budget,) = config_group["inputs"]["objs"]
    assert budget["kind"] == "PodDisruptionBudget" and budget["metadata"]["name"] == name


def test_availability_of_the_metrics_adapter_runs_two_replicas_under_a_budget():
    """SRE review m4: while no adapter serves, every HPA holds its size."""
    from tpu_serving.operations.autoscaling import METRICS_ADAPTER

    a = availability(METRICS_ADAPTER)
    assert (a.deployment, a.namespace) == ("custom-metrics-stackdriver-adapter", "custom-metrics")
    assert a.selector == {"run": a.deployment, "k8s-app": a.deployment}
    assert METRICS_ADAPTER.extra_objects() == [a.budget()]
    changed = a.installed(deployment(a.deployment))
    assert changed["spec"]["replicas"] == 2
