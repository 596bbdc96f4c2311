"""tpu_serving.operations.autoscaling: the HPA reads a gauge: an autoscaling metric named like a counter's, a histogram's or a summary's series, or one
the backend's metrics table knows as no gauge, is refused, in the stack file and the components alike (issue
"A platform team adopts it", item 9)."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import SERVING_AUTOSCALED, VLLM, load
from tpu_serving.common.validation import ArgumentsError, argument_problems, check_arguments
from tpu_serving.config import ConfigError
from tpu_serving.operations.autoscaling import AutoscalingSettings, ServingAutoscalerArgs


def autoscaled_vllm(metric: str) -> dict:
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["autoscaling"] = {"maxReplicas": 1, "metric": metric}
    return cfg


def autoscaled_jetstream(metric: str) -> dict:
    cfg = copy.deepcopy(SERVING_AUTOSCALED)
    cfg["tpu-serving:serving"]["autoscaling"] = {"maxReplicas": 2, "metric": metric}
    return cfg


def problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


@pytest.mark.parametrize(
    ("metric", "suffix"),
    [
        ("vllm:request_success_total", "_total"),
        ("vllm:e2e_request_latency_seconds_bucket", "_bucket"),
        ("vllm:e2e_request_latency_seconds_count", "_count"),
        ("vllm:e2e_request_latency_seconds_sum", "_sum"),
        ("vllm:request_success_created", "_created"),
    ],
)
def test_autoscaling_metric_a_counter_histogram_or_summary_series_is_refused(metric, suffix):
    (problem,) = problems(autoscaled_vllm(metric))
    assert problem.startswith(f'tpu-serving:serving.autoscaling.metric = "{metric}": ends in {suffix}, a series of a ')
    assert "the HPA reads a gauge (prometheus.googleapis.com|<metric>|gauge)" in problem
    with pytest.raises(ArgumentsError) as err:
        check_arguments("AutoscalingSettings", AutoscalingSettings(max_replicas=2, metric=metric), AutoscalingSettings)
    assert err.value.problems[0].startswith(f"AutoscalingSettings.metric = '{metric}': ends in {suffix}")
    scaler = ServingAutoscalerArgs(
        project="p", namespace="n", target="t", settings=AutoscalingSettings(1), metric=metric
    )
    with pytest.raises(ArgumentsError) as err:
        check_arguments("ServingAutoscaler", scaler, ServingAutoscalerArgs)
    assert err.value.problems[0].startswith(f"ServingAutoscalerArgs.metric = '{metric}': ends in {suffix}")


@pytest.mark.parametrize(
    ("cfg", "metric", "server"),
    [
        (autoscaled_vllm, "vllm:time_to_first_token_seconds", "vLLM"),
        (autoscaled_vllm, "vllm:gpu_prefix_cache_hits", "vLLM"),
        (autoscaled_jetstream, "jetstream_time_to_first_token", "JetStream"),
    ],
)
def test_autoscaling_metric_a_known_non_gauge_is_refused_by_the_backends_table(cfg, metric, server):
    (problem,) = [p for p in problems(cfg(metric)) if "autoscaling.metric" in p]
    assert problem.startswith(f'tpu-serving:serving.autoscaling.metric = "{metric}": {metric} is a ')
    assert f"of {server}; the HPA reads a gauge: " in problem


def test_autoscaling_metric_gauges_are_accepted():
    assert load(autoscaled_vllm("vllm:kv_cache_usage_perc")).serving.autoscaling.metric == "vllm:kv_cache_usage_perc"
    assert load(autoscaled_vllm("my_queue_depth")).serving.autoscaling.metric == "my_queue_depth"
    assert load(autoscaled_jetstream("jetstream_slots_used_percentage")).serving.autoscaling is not None


def test_autoscaling_metric_given_twice_must_agree():
    """Library review 7, m3: settings.metric and metric disagreeing was taken silently, metric winning."""
    both = ServingAutoscalerArgs(
        project="p-123456",
        namespace="n",
        target="t",
        settings=AutoscalingSettings(1, metric="vllm:num_requests_running"),
        metric="vllm:num_requests_waiting",
    )
    with pytest.raises(ArgumentsError) as err:
        check_arguments("ServingAutoscaler", both, ServingAutoscalerArgs)
    assert err.value.problems == [
        "ServingAutoscalerArgs.metric = 'vllm:num_requests_waiting', but settings.metric = 'vllm:num_requests_running': "
        "give the gauge once (the same value in both, or settings.metric unset)"
    ]
    agreeing = ServingAutoscalerArgs(
        project="p-123456",
        namespace="n",
        target="t",
        settings=AutoscalingSettings(1),
        metric="vllm:num_requests_waiting",
    )
    check_arguments("ServingAutoscaler", agreeing, ServingAutoscalerArgs)


# Issue 22, a new user's review: an engine-prefixed name the engine's table does not know is not refused: the tables
# are not complete lists of what an engine exports (vLLM 0.29.0's loggers.py alone registers gauges such as
# vllm:engine_sleep_state).


def test_autoscaling_an_engine_gauge_the_table_lacks_is_not_refused():
    for metric in ("vllm:engine_sleep_state", "vllm:num_requests_waiting_by_reason"):
        assert not argument_problems(AutoscalingSettings(max_replicas=1, metric=metric)), metric


def test_autoscaling_a_metric_without_an_engine_prefix_stays_the_users_own():
    assert not argument_problems(AutoscalingSettings(max_replicas=1, metric="my_queue_depth"))
    assert not argument_problems(AutoscalingSettings(max_replicas=1, metric="vllm:num_requests_waiting"))
