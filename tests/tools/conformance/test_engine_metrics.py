"""The vLLM metrics the HPAs scale on (tools/conformance/engine_metrics.py), against the names the pinned vllm-tpu
wheel's v1 metrics logger registers (tables/vllm-0.29.0.json ``metrics``, tools/conformance/extract_vllm.py): a
mistyped metric (``vllm:num_requests_waitng``) passed every check, and its HPA never scales (library review)."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.conformance import category, engine_metrics
from tpu_serving_tools.runtime.planview import PlanView


def _with_metric(metric: str) -> PlanView:
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    (hpa,) = [r for r in plan["resources"] if r["type"].endswith(":HorizontalPodAutoscaler")]
    hpa["inputs"]["spec"]["metrics"][0]["pods"]["metric"]["name"] = f"prometheus.googleapis.com|{metric}|gauge"
    return PlanView(plan)


def test_engine_metrics_the_shipped_stacks_hpas_scale_on_metrics_the_engine_exports():
    for stack in ("vllm-llama33-70b-v6e8", "vllm-llama33-70b-disagg-v6e8x2"):
        found = engine_metrics.findings(PlanView(plan_of(stack).as_json()))
        assert found and all(f.ok for f in found), found


@pytest.mark.parametrize("metric", ["vllm:num_requests_waitng", "vllm:gpu_cache_usage_perc"])
def test_engine_metrics_an_hpa_on_a_vllm_metric_the_engine_does_not_export_fails_the_check(metric):
    failures = category.check(_with_metric(metric)).failures()
    (finding,) = [f for f in failures if " HorizontalPodAutoscaler metric " in f.subject]
    assert finding.subject == f"engine vllm-llama70b/vllm HorizontalPodAutoscaler metric {metric}"
    assert finding.reason.startswith(f"vllm 0.29.0 (tables/vllm-0.29.0.json) exports no {metric} "), finding.reason
    assert "the HPA never scales; closest: " in finding.reason


def test_engine_metrics_the_typo_names_the_closest_known_names():
    (finding,) = engine_metrics.findings(_with_metric("vllm:num_requests_waitng"))
    assert finding.reason.endswith(
        "closest: vllm:num_requests_waiting (gauge), vllm:num_requests_running (gauge), "
        "vllm:num_requests_waiting_by_reason (gauge)"
    ), finding.reason


def test_engine_metrics_a_metric_of_the_programs_own_is_not_judged():
    assert engine_metrics.findings(_with_metric("my_queue_depth")) == []


def test_engine_metrics_the_stack_files_mistyped_metric_is_previewed_and_fails_the_check():
    """The stack-file path: ``serving.autoscaling.metric`` is validated only for its shape (the config layer cannot
    import the tables), so the typo is previewed, and the check fails its HPA."""
    from tests.fixtures.configs import plan_edited

    plan = plan_edited(
        "vllm-llama33-70b-v6e8", serving=lambda s: s["autoscaling"].update(metric="vllm:num_requests_waitng")
    )
    (finding,) = engine_metrics.findings(PlanView(plan.as_json()))
    assert not finding.ok and "exports no vllm:num_requests_waitng" in finding.reason, finding.reason
