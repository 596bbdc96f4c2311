"""What the components beside a ``VllmServing`` need of it (:class:`~tpu_serving.backends.base.ServingNeighbours`),
from its arguments and the autoscaling a program gives its groups: the stack file's deployment reads the same off its
settings (:mod:`.backend`), through the same builders."""

from __future__ import annotations

import dataclasses

from ... import lws
from ...autoscaling import AutoscalingSettings
from ...observability import ScrapeTarget, ServingMetrics
from ...quota import PodSet
from ..base import ServingNeighbours
from .args import VllmServingArgs, WeightsLoader
from .facts import HTTP_PORT, HTTP_RESPONSES, METRICS_PATH, SIGNALS, VllmMetric
from .pods import leader_labels
from .quota import group_pods


def leader_metrics(name: str, leaders: dict[str, str], fewest: int, autoscalers: tuple[str, ...]) -> ServingMetrics:
    """The leaders' server exports vLLM's metrics on the serving port, its HTTP responses by status among them; the
    workers run Ray workers only. Its one LeaderWorkerSet ``name``'s group recreations are watched."""
    target = ScrapeTarget(f"{name}-leaders", leaders, HTTP_PORT, METRICS_PATH)
    return ServingMetrics(
        scrape=[target],
        signals=SIGNALS,
        leader_worker_sets=(name,),
        http_responses=dataclasses.replace(HTTP_RESPONSES, jobs=(target.name,)),
        fewest_groups=fewest,
        autoscalers=autoscalers,
    )


def neighbours(args: VllmServingArgs, autoscaling: AutoscalingSettings | None = None) -> ServingNeighbours:
    """What Tenancy, Observability, ServingAutoscaler and ServingGateway need of a ``VllmServing`` of ``args``, its
    groups scaled by an HPA of ``autoscaling`` (:class:`tpu_serving.ServingAutoscaler`, named after the
    LeaderWorkerSet) or fixed at ``args.replicas``."""
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
    return ServingNeighbours(
        serving_pods=leaders,
        serving_ports=(HTTP_PORT,),
        metrics=leader_metrics(args.name, leaders, fewest, (args.name,) if autoscaling is not None else ()),
        pod_sets=(PodSet(f"LeaderWorkerSet {args.name}", group, most, surge=lws.surge_groups(args.rollout)),),
        restart_unit_chips=args.shape.chips,
        autoscaling_metric=str(metric),
    )
