"""The runtime model's alert-job findings (tools/runtime/alert_jobs.py): each alert that reads a scrape's ``job``
names a PodMonitoring the plan declares (library review 7, M1)."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import alert_jobs
from tpu_serving_tools.runtime.planview import PlanView


def _found(plan: dict) -> dict[str, tuple[bool, str]]:
    return {f.subject: (f.ok, f.reason) for f in alert_jobs.findings(PlanView(plan))}


def test_alert_jobs_the_shipped_stack_scrapes_every_job_its_alerts_read():
    found = _found(plan_of("vllm-llama33-70b-v6e8").as_json())
    probe = "ref AlertPolicy vllm70bv6e-observability-probe-missing -> PodMonitoring vllm-llama70b/vllm-api-prober"
    assert found[probe] == (True, "scraped by it")
    assert len(found) >= 5 and all(ok for ok, _ in found.values()), found


def test_alert_jobs_an_alert_on_a_job_nothing_scrapes_fails():
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    plan["resources"] = [
        r
        for r in plan["resources"]
        if not (r["inputs"].get("kind") == "PodMonitoring" and r["inputs"]["metadata"]["name"] == "vllm-api-prober")
    ]
    failed = {s: why for s, (ok, why) in _found(plan).items() if not ok}
    probe = "ref AlertPolicy vllm70bv6e-observability-probe-missing -> PodMonitoring vllm-llama70b/vllm-api-prober"
    assert failed[probe].startswith("no PodMonitoring of that name in the plan: the alert reads series nothing writes")
    assert all(s.endswith("/vllm-api-prober") for s in failed), failed


def test_alert_jobs_reads_each_selectors_job_and_namespace():
    assert list(alert_jobs._jobs('up{job="a", namespace="n"} or absent(x{job="b"})')) == [("n", "a"), (None, "b")]


def test_alert_jobs_picker_findings_fail_an_endpoint_picker_no_pod_monitoring_scrapes():
    """Library review 8, M4: a program without routed() had its endpoint picker unscraped, and every check passed."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    subject = "ref InferencePool vllm-llama70b/vllm-api-gateway endpoint picker vllm-api-gateway-epp -> PodMonitoring"
    (found,) = alert_jobs.picker_findings(PlanView(plan))
    assert (found.subject, found.ok, found.reason) == (subject, True, "scraped by vllm-api-gateway-epp")
    plan["resources"] = [
        r
        for r in plan["resources"]
        if not (
            r["inputs"].get("kind") == "PodMonitoring" and r["inputs"]["metadata"]["name"] == "vllm-api-gateway-epp"
        )
    ]
    (found,) = alert_jobs.picker_findings(PlanView(plan))
    assert not found.ok and found.reason.startswith("no PodMonitoring scrapes its pods"), found


def _objects_found(plan: dict) -> dict[str, tuple[bool, str]]:
    from tpu_serving_tools.runtime import objects

    return {f.subject: (f.ok, f.reason) for f in objects.check(PlanView(plan)).findings}


STUCK = "ref HorizontalPodAutoscaler vllm-llama70b/vllm -> AlertPolicy autoscaler-stuck"


def test_alert_jobs_an_hpa_of_an_observed_namespace_without_the_autoscaler_stuck_alert_fails():
    """Library review: ``neighbours(chat_args)`` without the autoscaling built an Observability with alert policies but
    none on the HPA's conditions, and ``tpu-serving check`` passed the HPA, unalerted."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    assert _objects_found(plan)[STUCK] == (True, "its kube_horizontalpodautoscaler_status_condition conditions alerted")
    plan["resources"] = [r for r in plan["resources"] if not r["urn"].endswith("-observability-autoscaler-stuck")]
    ok, why = _objects_found(plan)[STUCK]
    assert not ok
    assert why.startswith("namespace vllm-llama70b has alert policies but none on this HPA's conditions"), why
    assert "neighbours(args, autoscaling)" in why and "ObservabilityArgs.metrics.autoscalers" in why, why


def test_alert_jobs_an_hpa_of_a_namespace_without_alert_policies_is_not_judged():
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    plan["resources"] = [r for r in plan["resources"] if r["type"] != "gcp:monitoring/alertPolicy:AlertPolicy"]
    assert not [f for f in alert_jobs.autoscaler_findings(PlanView(plan))]
