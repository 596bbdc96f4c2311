"""tpu_serving.operations.refused_pods: the serving stacks count their StatefulSets' refused pods and page on refusals that
persist (SRE review 37, M1: a surge rollout stalled on a refused group paged nobody)."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving.operations import refused_pods

STACK = "vllm-llama33-70b-v6e8"


def test_refused_pods_metric_and_page_in_the_plan():
    plan = plan_of(STACK)
    (metric,) = [r for r in plan.of_type("gcp:logging/metric:Metric") if r.name.endswith(f"-{refused_pods.KEY}-metric")]
    assert metric.inputs["name"] == "vllm70bv6e-vllm-llama70b-lws-pods-refused"
    query = metric.inputs["filter"]
    assert 'jsonPayload.reason="FailedCreate"' in query and 'jsonPayload.involvedObject.kind="StatefulSet"' in query
    assert 'jsonPayload.involvedObject.name=~"^(vllm)(-[0-9]+)?$"' in query
    assert 'jsonPayload.involvedObject.namespace="vllm-llama70b"' in query
    (policy,) = [r for r in plan.of_type("gcp:monitoring/alertPolicy:AlertPolicy") if r.name.endswith(refused_pods.KEY)]
    assert policy.inputs["severity"] == "ERROR" and metric.urn in policy.dependencies
    (condition,) = policy.inputs["conditions"]
    threshold = condition["conditionThreshold"]
    assert metric.inputs["name"] in threshold["filter"] and threshold["thresholdValue"] == 0
    assert threshold["aggregations"] == [{"alignmentPeriod": "1200s", "perSeriesAligner": "ALIGN_SUM"}]
    assert threshold["duration"] == "1800s"


def test_refused_pods_timing_pages_persisting_refusals_and_not_one():
    # the StatefulSet controller retries at most 1000 s apart: persisting refusals keep every window's sum up
    assert refused_pods.WINDOW_SECONDS > 1000
    # one refusal keeps the sum up for one window only: shorter than the alert's hold
    assert refused_pods.HELD_SECONDS > refused_pods.WINDOW_SECONDS
