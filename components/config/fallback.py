"""The checks of ``serving.fallback`` (:mod:`tpu_serving.pools.compute_class`) against the rest of the stack: where the class
can be made, the shape's rules and the cluster's version."""

from __future__ import annotations

import json

from ..backends.vllm import VllmServingConfig
from ..common.settings import PROJECT_NAMESPACE
from ..pools.compute_class import AUTO_CREATION_MIN_GKE, FLEX_START_TPU_MIN_GKE
from ..pools.compute_class import fallback_problems as shape_problems
from .gke_version import older_than
from .models import StackConfig

KEY = f"{PROJECT_NAMESPACE}:serving.fallback"

assert not older_than(AUTO_CREATION_MIN_GKE, FLEX_START_TPU_MIN_GKE), "the auto-creation minimum covers flex-start's"


def _where_problems(serving: VllmServingConfig, said: str) -> list[str]:
    """A class is one workload's: a disaggregated serving's roles each take slice kinds of their own."""
    if serving.disaggregation is not None:
        return [f"{KEY} = {said}: a disaggregated serving's roles take slice kinds of their own; not supported there"]
    return []


def _version_problems(cfg: StackConfig) -> list[str]:
    """The cluster's pinned version against node pool auto-creation's minimum, later than flex-start's (unset: the
    release channel's default, later than both). A platform's cluster is its owner's to pin."""
    version = cfg.cluster.min_master_version
    if version is None or cfg.platform is not None or not older_than(version, AUTO_CREATION_MIN_GKE):
        return []
    return [
        f"{PROJECT_NAMESPACE}:cluster.minMasterVersion = {json.dumps(version)}: serving.fallback needs GKE "
        f"{AUTO_CREATION_MIN_GKE} or later, where GKE creates a class's pools without cluster-wide auto-provisioning "
        '(GKE, "Configure node pool auto-creation"); '
        f"set it to {AUTO_CREATION_MIN_GKE} or later, or leave it unset on a release channel"
    ]


def fallback_problems(cfg: StackConfig) -> list[str]:
    """Every problem of ``serving.fallback``, at its key or the cluster version's."""
    serving = cfg.serving
    if not isinstance(serving, VllmServingConfig) or not serving.fallback:
        return []
    steps = [str(s) for s in serving.fallback]
    said = json.dumps(steps)
    found = _where_problems(serving, said)
    shape = next(s.shape for s in cfg.tpu_slices if s.name == serving.slices[0])
    found += [f"{KEY} = {said}: {p}" for p in shape_problems(steps, shape)]
    return found + _version_problems(cfg)
