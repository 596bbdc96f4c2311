"""What a watched deployment watches of its serving (:attr:`tpu_serving.phases.Context.metrics`): the backend's
metrics, its serving probe and, behind an InferencePool, the endpoint picker's."""

import dataclasses

from ..backends import BACKENDS, probed
from ..backends.vllm import VllmServingConfig
from ..common.naming import compute_class_name, gateway_name
from ..config.checks import serving_probe
from ..config.models import StackConfig
from .observability import ServingMetrics
from .serving_metrics import with_router


def watched_metrics(cfg: StackConfig) -> ServingMetrics:
    """The backend's metrics with its serving probe (:func:`.config.checks.serving_probe`) and, behind an InferencePool,
    its endpoint picker's: a PodMonitoring of its metrics port (the tenancy's scrape policy opens it to the collectors)
    and its alerts (:func:`.observability_roles.router_alerts`); with a capacity fallback, the ComputeClass its groups
    select (their wait for a slice: :func:`.serving_alerts.capacity_wait_alert`)."""
    assert cfg.serving is not None
    backend = BACKENDS[cfg.serving.backend]
    metrics = probed(backend.metrics(cfg.serving), serving_probe(cfg))
    if backend.fallback(cfg.serving):  # the groups select the deployment's ComputeClass (its pool phase)
        metrics = dataclasses.replace(metrics, compute_class=compute_class_name(cfg.workload_identity.namespace))
    if cfg.gateway is None or not cfg.gateway.inference_pool or not isinstance(cfg.serving, VllmServingConfig):
        return metrics
    return with_router(metrics, f"{gateway_name(cfg.serving.service_name)}-epp", cfg.serving.disaggregation is not None)
