"""Leader-worker group recreations: the log-based metric, its alert and its chart, for the backends that run
LeaderWorkerSets only, and how the runtime model examines them."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import ROOT, plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.backends import BACKENDS
from tpu_serving.common.naming import group_recreations_metric
from tpu_serving.config import load_stack_config
from tpu_serving.operations import group_recreations as recreations
from tpu_serving.operations.observability import Scope, charts, dashboard_json
from tpu_serving.operations.observability_settings import ObservabilitySettings
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack_files import load_project, stack_config
from tpu_serving_tools.runtime import admission, prereqs
from tpu_serving_tools.runtime.planview import PlanView

VLLM_STACK = "vllm-llama33-70b-v5e16"
JETSTREAM_STACK = "llama31-405b-v6e16"
SAX_STACK = "saxml-175b-v5e32x2"
BATCH_STACK = "pathwaysjob-batch-v6e16"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
METRIC = "gcp:logging/metric:Metric"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
GROUPS = recreations.Groups("proj-1", "c1", "ns1", ("lws-a", "lws-b"))


def _recreation_policies(plan) -> list:
    return [r for r in plan.of_type(POLICY) if r.name.endswith(f"-{recreations.KEY}")]


def _threshold(policy) -> dict:
    """The hourly condition (the second counts over 24 hours)."""
    hourly, _slow_loop = policy.inputs["conditions"]
    return hourly["conditionThreshold"]


# ------------------------------------------------------------------------- builders


def test_recreations_event_filter_names_the_log_cluster_namespace_reason_kind_and_sets():
    text = recreations.event_filter(GROUPS)
    for term in (
        'logName="projects/proj-1/logs/events"',
        'resource.type="k8s_cluster"',
        'resource.labels.cluster_name="c1"',
        'jsonPayload.reason="RecreateGroup"',
        'jsonPayload.involvedObject.kind="LeaderWorkerSet"',
        'jsonPayload.involvedObject.namespace="ns1"',
        '(jsonPayload.involvedObject.name="lws-a" OR jsonPayload.involvedObject.name="lws-b")',
    ):
        assert term in text, term
    assert text.count(" AND ") == 6  # every term restricts: none is left out of the conjunction


def test_recreations_metric_is_a_labelled_counter_named_after_the_cluster_and_namespace():
    """One per namespace: two namespaces' Observability on one cluster each create theirs, and a log-based metric's
    name is unique in the project (library review 3, B1)."""
    args = recreations.metric_args(GROUPS)
    assert args.name == group_recreations_metric("c1", "ns1") == "c1-ns1-lws-group-recreations"
    assert group_recreations_metric("c1", "ns2") != args.name
    assert args.project == "proj-1" and args.filter == recreations.event_filter(GROUPS)
    descriptor = args.metric_descriptor
    assert (descriptor.metric_kind, descriptor.value_type, descriptor.unit) == ("DELTA", "INT64", "1")
    (label,) = descriptor.labels
    assert args.label_extractors == {label.key: "EXTRACT(jsonPayload.involvedObject.name)"}
    assert GROUPS.metric_type == "logging.googleapis.com/user/c1-ns1-lws-group-recreations"


def test_recreations_alert_counts_per_hour_above_the_threshold_of_the_settings():
    settings = ObservabilitySettings(
        group_recreations_per_hour=7, notification_channels=("projects/p-123/notificationChannels/9",)
    )
    args = recreations.alert_policy_args(GROUPS, settings)
    assert args.display_name == "c1: Leader-worker groups recreated repeatedly" and args.project == "proj-1"
    assert args.notification_channels == ["projects/p-123/notificationChannels/9"]
    condition, _slow_loop = args.conditions
    threshold = condition.condition_threshold
    assert threshold.filter == (
        'metric.type="logging.googleapis.com/user/c1-ns1-lws-group-recreations" AND resource.type="k8s_cluster"'
    )
    assert (threshold.comparison, threshold.threshold_value) == ("COMPARISON_GT", 7.0)
    (aggregation,) = threshold.aggregations
    assert (aggregation.alignment_period, aggregation.per_series_aligner) == ("3600s", "ALIGN_SUM")
    assert threshold.evaluation_missing_data == "EVALUATION_MISSING_DATA_INACTIVE" and threshold.duration == "60s"
    runbook = args.documentation.content
    assert "more than 7 times within an hour" in runbook and "lws-a, lws-b" in runbook
    assert "kubectl -n ns1 get events --field-selector reason=RecreateGroup" in runbook
    assert "serving.probes.maxStartupSeconds" in runbook and "RecreateGroupAfterStart" in runbook


def test_recreations_alert_sees_a_slow_loop_over_a_day():
    # A group that fails each time it has loaded is recreated once per startup window (an hour, three for 405B):
    # never more than 2 in an hour, so only a count over a longer window sees the loop.
    settings = ObservabilitySettings(group_recreations_per_day=4)
    args = recreations.alert_policy_args(GROUPS, settings)
    assert args.combiner == "OR"
    _hourly, slow = args.conditions
    assert slow.display_name == "Leader-worker groups recreated in a slow loop"
    threshold = slow.condition_threshold
    assert threshold.filter == recreations.series_filter(GROUPS)
    assert (threshold.comparison, threshold.threshold_value) == ("COMPARISON_GT", 4.0)
    (aggregation,) = threshold.aggregations
    # Longer than the longest startup window a stack sets, within the 90,000 s an alerting policy takes.
    assert (aggregation.alignment_period, aggregation.per_series_aligner) == ("86400s", "ALIGN_SUM")
    assert threshold.evaluation_missing_data == "EVALUATION_MISSING_DATA_INACTIVE"
    assert "more than 4 times within 24 hours" in args.documentation.content
    assert ObservabilitySettings().group_recreations_per_day == 3


def test_recreations_chart_reads_the_alert_series_per_hour():
    scope = Scope("c1", "ns1")
    assert [c.title for c in charts(scope, None)] == ["TPU duty cycle by pod", "TPU HBM in use by pod"]
    *_, chart = charts(scope, None, GROUPS)
    assert chart.title == "Leader-worker group recreations per hour"
    (tile,) = json.loads(dashboard_json("t", [chart]))["mosaicLayout"]["tiles"]
    (data_set,) = tile["widget"]["xyChart"]["dataSets"]
    assert data_set["timeSeriesQuery"] == {
        "timeSeriesFilter": {
            "filter": recreations.series_filter(GROUPS),
            "aggregation": {"alignmentPeriod": "3600s", "perSeriesAligner": "ALIGN_SUM"},
        }
    }


# ------------------------------------------------------------------------- what each backend declares


def _config(stack: str):
    return load_stack_config(stack_config(load_project(ROOT), stack))


def _declared(stack: str) -> tuple[str, ...]:
    serving = _config(stack).serving
    return tuple(BACKENDS[serving.backend].metrics(serving).leader_worker_sets)


@pytest.mark.parametrize("stack", [VLLM_STACK, JETSTREAM_STACK])
def test_recreations_leader_worker_set_backends_declare_the_sets_they_create(stack):
    created = tuple(o["metadata"]["name"] for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "LeaderWorkerSet")
    assert created and _declared(stack) == created


@pytest.mark.parametrize("stack", [SAX_STACK, BATCH_STACK])
def test_recreations_jobset_backends_declare_none_and_get_no_metric_alert_or_chart(stack):
    plan = plan_of(stack)
    assert _declared(stack) == () and not plan.of_type(METRIC) and not _recreation_policies(plan)
    (dash,) = plan.of_type(DASHBOARD)
    assert recreations.PANEL_TITLE not in dash.inputs["dashboardJson"]


# ------------------------------------------------------------------------- the plans


@pytest.mark.parametrize("stack", [VLLM_STACK, JETSTREAM_STACK])
def test_recreations_plan_has_the_metric_and_the_alert_created_after_it(stack):
    plan = plan_of(stack)
    (metric,) = [m for m in plan.of_type(METRIC) if m.name.endswith(f"-{recreations.KEY}-metric")]
    (policy,) = _recreation_policies(plan)
    assert metric.urn in policy.dependencies
    (observability,) = [r for r in plan.resources if r.type == "tpu-serving:index:Observability"]
    assert metric.parent == policy.parent == observability.urn
    assert _threshold(policy)["filter"].startswith(f'metric.type="logging.googleapis.com/user/{metric.inputs["name"]}"')
    namespace = _config(stack).workload_identity.namespace
    assert f'jsonPayload.involvedObject.namespace="{namespace}"' in metric.inputs["filter"]
    (logging_api,) = [
        r for r in plan.of_type("gcp:projects/service:Service") if r.inputs["service"] == "logging.googleapis.com"
    ]
    assert logging_api.urn in metric.dependencies


def test_recreations_threshold_setting_reaches_the_condition_and_the_runbook():
    plan = plan_edited(VLLM_STACK, observability=lambda o: o.update(groupRecreationsPerHour=5))
    (policy,) = _recreation_policies(plan)
    assert _threshold(policy)["thresholdValue"] == 5
    assert "more than 5 times within an hour" in policy.inputs["documentation"]["content"]
    assert _threshold(_recreation_policies(plan_of(VLLM_STACK))[0])["thresholdValue"] == 2  # the default


def test_recreations_jetstream_without_metrics_port_is_still_watched():
    plan = plan_edited(JETSTREAM_STACK, serving=lambda s: s["maxtext"].update(prometheusPort=None))
    recreations = [m for m in plan.of_type(METRIC) if m.name.endswith("-group-recreations-metric")]
    assert len(recreations) == 1 and len(_recreation_policies(plan)) == 1


def _view(stack: str = VLLM_STACK) -> PlanView:
    return PlanView(copy.deepcopy(plan_of(stack).as_json()))


def _resource(view: PlanView, type_: str, suffix: str) -> dict:
    (r,) = [r for r in view.of_type(type_) if r["name"].endswith(suffix)]
    return r


def _prereq(view: PlanView, subject_start: str):
    (finding,) = [f for f in prereqs.check(view).findings if f.subject.startswith(subject_start)]
    return finding


def test_recreations_runtime_model_wants_the_metric_created_before_the_policy():
    view = _view()
    storm = f"log metric vllm70b-vllm-llama70b-lws-group-recreations of vllm70b-observability-{recreations.KEY}"
    assert _prereq(view, storm).ok
    # the capacity alert reads the same metric, and is created after it too
    assert _prereq(
        view,
        f"log metric vllm70b-vllm-llama70b-lws-group-recreations of vllm70b-observability-{recreations.RELOAD_KEY}",
    ).ok
    policy = _resource(view, POLICY, f"-{recreations.KEY}")
    metric = _resource(view, METRIC, f"-{recreations.KEY}-metric")
    policy["dependencies"] = [u for u in policy["dependencies"] if u != metric["urn"]]
    finding = _prereq(view, storm)
    assert not finding.ok and "does not depend on" in finding.reason and "#11102" in finding.reason
    view.plan["resources"].remove(metric)
    finding = _prereq(view, storm)
    assert not finding.ok and "no gcp:logging/metric:Metric of the plan creates it" in finding.reason


def test_recreations_runtime_model_refuses_what_the_apis_refuse():
    view = _view()
    policy = _resource(view, POLICY, f"-{recreations.KEY}")
    threshold = policy["inputs"]["conditions"][0]["conditionThreshold"]
    threshold["filter"] = threshold["filter"].split(" AND ")[0]
    threshold["duration"] = "30s"
    metric = _resource(view, METRIC, f"-{recreations.KEY}-metric")
    metric["inputs"]["labelExtractors"] = {}
    metric["inputs"]["name"] = "/starts-with-a-slash"
    failures = {f.subject: f.reason for f in admission.check(view).failures()}
    reason = failures[f"admission AlertPolicy {policy['name']}"]
    assert "filter names no resource.type" in reason and "'30s' is not a multiple of a minute" in reason
    assert "evaluationMissingData needs a duration of 60s or more" in reason
    reason = failures[f"admission Metric {metric['name']}"]
    assert "label 'leaderworkerset' has no labelExtractors entry" in reason and "does not match" in reason


def test_recreations_reload_policy_opens_within_minutes_of_any_recreation():
    """SRE review M7: losing one of two groups was silent for the not-ready alert's 75 minutes. A second policy on
    the recreations' metric opens when any group was recreated in the last five minutes, at severity WARNING."""
    plan = plan_of(VLLM_STACK)
    (reload,) = [r for r in plan.of_type(POLICY) if r.name.endswith(f"-{recreations.RELOAD_KEY}")]
    (storm,) = [r for r in plan.of_type(POLICY) if r.name.endswith(f"-{recreations.KEY}")]
    (condition,) = reload.inputs["conditions"]
    threshold = condition["conditionThreshold"]
    assert threshold["filter"] == storm.inputs["conditions"][0]["conditionThreshold"]["filter"]
    assert threshold["comparison"] == "COMPARISON_GT" and threshold["thresholdValue"] == 0
    assert threshold["aggregations"] == [{"alignmentPeriod": "300s", "perSeriesAligner": "ALIGN_SUM"}]
    assert reload.inputs["severity"] == "WARNING" and "one group less" in reload.inputs["documentation"]["content"]
