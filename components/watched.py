"""What a watched deployment watches of its serving (:attr:`tpu_serving.phases.Context.metrics`): the backend's
metrics, its serving probe and, behind an InferencePool, the endpoint picker's."""

import dataclasses

from .backends import BACKENDS, probed
from .backends.vllm import VllmServingConfig
from .config.checks import serving_probe
from .config.models import StackConfig
from .epp import EPP_METRICS_PORT
from .gateway import failure_mode
from .naming import gateway_name
from .observability import ScrapeTarget, ServingMetrics


def watched_metrics(cfg: StackConfig) -> ServingMetrics:
    """The backend's metrics with its serving probe (:func:`.config.checks.serving_probe`) and, behind an InferencePool,
    its endpoint picker's: a PodMonitoring of its metrics port (the tenancy's scrape policy opens it to the collectors)
    and its alerts (:func:`.observability_roles.router_alerts`)."""
    assert cfg.serving is not None
    metrics = probed(BACKENDS[cfg.serving.backend].metrics(cfg.serving), serving_probe(cfg))
    if cfg.gateway is None or not cfg.gateway.inference_pool or not isinstance(cfg.serving, VllmServingConfig):
        return metrics
    epp = f"{gateway_name(cfg.serving.service_name)}-epp"
    target = ScrapeTarget(epp, {"app": epp}, EPP_METRICS_PORT)
    closed = failure_mode(cfg.serving.disaggregation is not None) == "FailClose"
    return dataclasses.replace(metrics, scrape=[*metrics.scrape, target], router=epp, router_fails_closed=closed)
