"""What the components beside a ``VllmServing`` need of it (:class:`~tpu_serving.backends.base.ServingNeighbours`),
from its arguments and the autoscaling a program gives its groups: the stack file's deployment reads the same off its
settings (:mod:`.backend`), through the same builders."""

from __future__ import annotations

import dataclasses
import json

from ...common.quota import PodSet
from ...common.validation import check_arguments
from ...operations.autoscaling import AutoscalingSettings
from ...operations.observability import ScrapeTarget, ServingMetrics
from ...operations.prober import ProbeTarget, prober_pods
from ...platform import lws
from ..base import ServingNeighbours, probed
from .args import VllmServingArgs, WeightsLoader
from .facts import (
    COMPLETION_ANSWER,
    COMPLETIONS_PATH,
    HEALTH_PATH,
    HTTP_PORT,
    HTTP_RESPONSES,
    METRICS_PATH,
    PROBE_PROMPT,
    SIGNALS,
    VllmMetric,
)
from .pods import leader_labels
from .quota import group_pods

PROBE_COVERS = (
    "it goes through the Service to one leader's vLLM server and engine, as kube-proxy picks; not through a "
    "Gateway's load balancer nor an endpoint picker (where the stack has them), whose own errors (502, 503, 504) it "
    "does not see"
)


def probe_target(service: str, served_model_name: str, covers: str = PROBE_COVERS) -> ProbeTarget:
    """The serving probe of a vLLM server behind ``service``: a 1-token completion of ``served_model_name``, its
    answer a completion object (:mod:`tpu_serving.operations.prober`)."""
    return ProbeTarget(
        server=HTTP_RESPONSES.server,
        service=service,
        port=HTTP_PORT,
        path=COMPLETIONS_PATH,
        body=json.dumps({"model": served_model_name, "prompt": PROBE_PROMPT, "max_tokens": 1}),
        answer=COMPLETION_ANSWER,
        covers=covers,
    )


def leader_metrics(
    name: str, leaders: dict[str, str], fewest: int, autoscalers: tuple[str, ...], compute_class: str | None = None
) -> ServingMetrics:
    """The leaders' server exports vLLM's metrics on the serving port, its HTTP responses by status among them; the
    workers run Ray workers only. Its one LeaderWorkerSet ``name``'s group recreations are watched, and with a
    ``compute_class`` (a capacity fallback) its groups' wait for a slice."""
    target = ScrapeTarget(f"{name}-leaders", leaders, HTTP_PORT, METRICS_PATH)
    return ServingMetrics(
        scrape=[target],
        signals=SIGNALS,
        leader_worker_sets=(name,),
        http_responses=dataclasses.replace(HTTP_RESPONSES, jobs=(target.name,)),
        fewest_groups=fewest,
        autoscalers=autoscalers,
        compute_class=compute_class,
    )


def neighbours(
    args: VllmServingArgs, autoscaling: AutoscalingSettings | None = None, *, probe: bool = True
) -> ServingNeighbours:
    """What Tenancy, Observability, ServingAutoscaler and ServingGateway need of a ``VllmServing`` of ``args``, its
    groups scaled by an HPA of ``autoscaling`` (:class:`tpu_serving.ServingAutoscaler`, named after the
    LeaderWorkerSet) or fixed at ``args.replicas``. With ``probe`` (the default, as a stack file's deployment), its
    metrics carry the serving probe (:func:`probe_target`, :func:`tpu_serving.backends.probed`: the request, the
    exporter's scrape target, which ``Observability`` deploys and scrapes and ``Tenancy`` opens to the collectors) and
    its pod sets the prober's pods (library review 7, M1: a probe added by hand was never scraped). ``args`` and
    ``autoscaling`` are validated as the components validate theirs (library review 9, m1: a bad argument raised an
    AttributeError here, before any component named it)."""
    args = check_arguments("neighbours()", args, VllmServingArgs)
    if autoscaling is not None:
        autoscaling = check_arguments("neighbours()", autoscaling, AutoscalingSettings)
    leaders = leader_labels(args)
    most = autoscaling.max_replicas if autoscaling is not None else args.replicas
    fewest = autoscaling.min_replicas if autoscaling is not None else args.replicas
    group = group_pods(
        args.requests,
        args.shape,
        gcsfuse=args.loader == WeightsLoader.GCSFUSE or bool(args.cache_bucket),
        prefetch=args.loader == WeightsLoader.GCSFUSE,
        cache_gib=args.memory_cache_gib,
    )
    metric = autoscaling.metric if autoscaling is not None and autoscaling.metric else VllmMetric.REQUESTS_WAITING
    scalers = (args.name,) if autoscaling is not None else ()
    metrics = leader_metrics(args.name, leaders, fewest, scalers, args.compute_class)
    serving = PodSet(f"LeaderWorkerSet {args.name}", group, most, surge=lws.surge_groups(args.rollout))
    return ServingNeighbours(
        serving_pods=leaders,
        serving_ports=(HTTP_PORT,),
        metrics=probed(metrics, probe_target(args.service_name, args.served_model_name)) if probe else metrics,
        pod_sets=(serving, prober_pods()) if probe else (serving,),
        restart_unit_chips=args.shape.chips,
        autoscaling_metric=str(metric),
        service=args.service_name,
        port=HTTP_PORT,
        health_path=HEALTH_PATH,
    )
