"""Checks of the ``jetstream-pathways`` settings against the rest of the stack (fit, parallelism, replicas)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel

from ...catalog import SliceShape
from ...catalog.models import ModelSize
from ...common.settings import (
    PROJECT_NAMESPACE,
    to_settings,
)
from ...platform import lws
from .. import rollout, scaling

if TYPE_CHECKING:
    from ..base import Stack
from .args import MaxTextSettings, disaggregation_problem, fit_problems, maxtext_size
from .facts import METRIC_KINDS, METRICS_PORT, JetStreamMetric
from .settings import NAME, PathwaysServingConfig

SPANNING = (
    "GKE provisions each slice's node pool on its own, so a group spanning several slices could hold one "
    "slice while it waits for the other"
)
"""Why an autoscaled group takes exactly one slice: a multi-host slice pool scales atomically on its own
("If GKE is unable to deploy one node in the slice, no nodes in the TPU slice node are deployed",
https://cloud.google.com/kubernetes-engine/docs/concepts/tpus), but nothing provisions two pools together."""


def problems(cfg: Stack, serving: PathwaysServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Groups share the slices evenly (one slice each when autoscaled); the buckets exist; parallelism and
    HBM fit the slice."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found = rollout.canary_problems(serving)
    found += rollout.problems(serving, pools) or replica_problems(
        cfg, serving, shape, scaling.group_slices(serving, pools)
    )
    if clash := lws.service_name_problem(serving.name, serving.service_name):
        found.append(f"{key}.serviceName = {json.dumps(serving.service_name)}: {clash}")
    for purpose in ("checkpoints", "scratch"):
        b = cfg.bucket(purpose)
        if b is None or b.workload_access == "none":
            found.append(f"{PROJECT_NAMESPACE}:buckets: {NAME} needs a `{purpose}` bucket the workloads can access")
    return found + _parallelism_problems(key, serving.maxtext, shape) + _fit_problems(serving, shape)


def replica_problems(cfg: Stack, serving: PathwaysServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Fixed groups share the slices evenly (two per group when disaggregated); autoscaled groups take one
    slice each, in interleaved mode, and the HPA needs JetStream's metrics."""
    key = f"{PROJECT_NAMESPACE}:serving"
    if serving.autoscaling is not None:
        found = scaling.autoscaling_problems(
            cfg,
            serving,
            shape,
            pools,
            JetStreamMetric.PREFILL_BACKLOG.value,
            ("JetStream", METRIC_KINDS),
            spanning=SPANNING,
        )
        if serving.mode == "disaggregated":
            found.append(
                f'{key}.autoscaling: mode "disaggregated" spreads each group over two slices (prefill and '
                f"decode), and an autoscaled group takes exactly one slice ({SPANNING}); use mode "
                '"interleaved" or remove autoscaling'
            )
        if not serving.maxtext.prometheus_port:
            found.append(
                f"{key}.autoscaling: the HPA reads JetStream's metrics, which the server exports only on "
                f"maxtext.prometheusPort (unset); set maxtext.prometheusPort (e.g. {METRICS_PORT}) or remove "
                "autoscaling"
            )
        return found
    found = []
    if pools % serving.replicas:
        found.append(f"{key}.replicas = {serving.replicas}: {pools} slice(s) cannot be shared evenly")
    per_group = pools // serving.replicas
    if serving.mode == "disaggregated" and per_group != 2:
        found.append(
            f'{key}.mode = "disaggregated": needs exactly 2 slices per group (prefill and decode), got {per_group}'
        )
    if serving.mode == "disaggregated" and (why := disaggregation_problem(shape)):
        found.append(f'{key}.mode = "disaggregated": {why}')
    return found


def model_size(serving: PathwaysServingConfig) -> ModelSize | None:
    """The declared size, else the size of a MaxText model name the library knows, else None."""
    return maxtext_size(declared_size(serving), to_settings(serving.maxtext, MaxTextSettings))


def declared_size(serving: PathwaysServingConfig) -> ModelSize | None:
    """The size ``serving.model`` declares, as the component's argument takes it."""
    return None if serving.model is None else to_settings(serving.model, ModelSize)


def _fit_problems(serving: PathwaysServingConfig, shape: SliceShape) -> list[str]:
    """The component's own rule (PathwaysServingArgs.problems), in the stack file's keys."""
    maxtext = to_settings(serving.maxtext, MaxTextSettings)
    return fit_problems(declared_size(serving), maxtext, shape, f"{PROJECT_NAMESPACE}:serving.", to_camel, "model")


def _parallelism_problems(key: str, mt: Any, shape: SliceShape) -> list[str]:
    dims = {
        "iciFsdpParallelism": mt.ici_fsdp_parallelism,
        "iciAutoregressiveParallelism": mt.ici_autoregressive_parallelism,
        "iciTensorParallelism": mt.ici_tensor_parallelism,
    }
    bad = [k for k, v in dims.items() if v == 0 or v < -1]
    if bad:
        return [f"{key}.maxtext.{k}: must be a positive integer or -1" for k in bad]
    if list(dims.values()).count(-1) > 1:
        return [f"{key}.maxtext: at most one ici parallelism may be -1"]
    known = math.prod(v for v in dims.values() if v != -1)
    if (-1 in dims.values() and shape.chips % known) or (-1 not in dims.values() and known != shape.chips):
        return [
            f"{key}.maxtext: ici parallelism {' x '.join(str(v) for v in dims.values())} does not "
            f"match the {shape.chips} chips of a {shape.topology} slice"
        ]
    return []
