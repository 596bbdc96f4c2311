"""The serving pods' startup window against what a group's start is published to take, and the not-ready alert's
window against the startup window: the probes and the alert wait on the same figures the preview prints
(:mod:`tpu_serving.cost.serve_time`)."""

from __future__ import annotations

import math

from ..backends import BACKENDS
from ..common.settings import PROJECT_NAMESPACE
from ..cost import serve_time
from .models import StackConfig
from .serving_facts import serving_kind_names


def not_ready_window_problems(cfg: StackConfig) -> list[str]:
    """The not-ready alert must wait longer than the serving pods may take to start."""
    window = BACKENDS[cfg.serving.backend].startup_seconds(cfg.serving) if cfg.serving is not None else 0
    minutes = cfg.observability.not_ready_minutes
    if not cfg.observability.enabled or minutes * 60 > window:
        return []
    return [
        f"{PROJECT_NAMESPACE}:observability.notReadyMinutes = {minutes}: the serving pods may take "
        f"{window // 60} minutes to start (serving.probes.maxStartupSeconds = {window}), so the not-ready alert "
        f"would fire on every cold start and scale-up; set it above {window // 60}"
    ]


def startup_window_problems(cfg: StackConfig) -> list[str]:
    """The startup probes' window must cover the least a group's start is published to take (the preview's time to
    serve, :func:`tpu_serving.cost.serve_time.group_start`): below it, the kubelet restarts the engine before it can
    answer, on every start, and the group's slices bill while it never serves. The image pull adds nothing to the
    least (no rate is published), so the image settings do not matter here."""
    serving = cfg.serving
    if serving is None:
        return []
    backend = BACKENDS[serving.backend]
    profile = backend.engine_profile(serving)
    if profile is None:
        return []
    size = backend.model_size(serving)
    window = backend.startup_seconds(serving)
    kinds = {s.name: s for s in cfg.tpu_slices}
    vms = sorted({kinds[n].shape.vms for n in serving_kind_names(serving) if n in kinds})
    problems = []
    for n in vms:
        start = serve_time.group_start(profile, size.gib if size else None, False, False, n)
        if start.low_seconds > window:
            least = math.ceil(start.low_seconds)
            problems.append(
                f"{PROJECT_NAMESPACE}:serving.probes.maxStartupSeconds = {window}: a group's start on {n} VM(s) is "
                f"published to take at least {least} s ({'; '.join(start.terms)}), so the startup probe would "
                f"restart the engine before it serves, on every start; set it to {least} or more"
            )
    return problems
