"""Checks of the ``vllm`` settings against the rest of the stack (slices, disks, replicas)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic.alias_generators import to_camel

from ...catalog import SliceShape
from ...common.settings import (
    PROJECT_NAMESPACE,
    to_settings,
)
from ...platform import lws
from .. import rollout, scaling

if TYPE_CHECKING:
    from ..base import Stack
from . import disagg_checks, progress
from .args import VllmEngineSettings, VllmRequests, WeightsLoader, fit_problems, parallelism_problems
from .facts import METRIC_KINDS, VllmMetric
from .file_cache import memory_problem, pod_memory
from .settings import (
    DISK_ALLOWANCE_GIB,
    NAME,
    STACK,
    VllmServingConfig,
    declared_size,
    engines,
    memory_cache_gib,
    served_model_size,
)


def problems(cfg: Stack, serving: VllmServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """One group per slice; the buckets exist; parallelism, HBM and the file cache fit the slice."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found = rollout.canary_problems(serving, disaggregated=serving.disaggregation is not None)
    found += progress.window_problems(f"{key}.probes", to_settings(serving.probes, progress.VllmProbeSettings))
    if serving.disaggregation is not None:
        found += disagg_checks.problems(cfg, serving, shape)
    else:
        found += rollout.problems(serving, pools, per_group=1) or replica_problems(
            cfg, serving, shape, scaling.group_slices(serving, pools)
        )
        found += parallelism_problems(f"{key}.engine", to_settings(serving.engine, VllmEngineSettings), shape, to_camel)
    if serving.loader != WeightsLoader.HUGGING_FACE:
        b = cfg.bucket("checkpoints")
        if b is None or b.workload_access == "none":
            found.append(f"{PROJECT_NAMESPACE}:buckets: {NAME} needs a `checkpoints` bucket the workloads can read")
    if serving.compilation_cache:
        b = cfg.bucket("scratch")
        if b is None or b.workload_access != "readWrite":
            found.append(
                f"{key}.compilationCache = true: needs a `scratch` bucket with workloadAccess readWrite "
                f"({PROJECT_NAMESPACE}:buckets)"
            )
        elif b.scratch_ttl_days is not None:
            # A lifecycle Age condition counts from the object's creation
            # (https://cloud.google.com/storage/docs/lifecycle#age), and JAX writes each cache entry once, then only
            # reads it: the rule would delete a warm cache every scratchTtlDays. The scratch bucket of this backend
            # holds nothing but the cache.
            found.append(
                f"{PROJECT_NAMESPACE}:buckets: the scratch bucket's scratchTtlDays = {b.scratch_ttl_days} would delete "
                f"the XLA compilation cache it holds ({key}.compilationCache = true) {b.scratch_ttl_days} days after "
                "each entry was written, and every start after that compiles cold; remove scratchTtlDays (the cache "
                "is the bucket's only content), or set compilationCache: false"
            )
    if serving.hf_token_secret is not None and serving.loader != WeightsLoader.HUGGING_FACE:
        found.append(
            f"{key}.hfTokenSecret: only read with loader hugging-face (loader is {json.dumps(serving.loader.value)})"
        )
    if serving.model_revision is not None and serving.loader != WeightsLoader.HUGGING_FACE:
        found.append(
            f"{key}.modelRevision = {json.dumps(serving.model_revision)}: only the hugging-face loader downloads a "
            f"revision (loader is {json.dumps(serving.loader.value)}); valid: unset"
        )
    if clash := lws.service_name_problem(serving.name, serving.service_name):
        found.append(f"{key}.serviceName = {json.dumps(serving.service_name)}: {clash}")
    if serving.served_model_name in serving.served_model_aliases:
        found.append(
            f"{key}.servedModelAliases: {json.dumps(serving.served_model_name)} is servedModelName already (valid: "
            "other names the same model answers to)"
        )
    # the component's own rule (VllmServingArgs.problems), in the stack file's keys
    found += fit_problems(declared_size(serving), serving.served_model_name, engines(serving), shape, STACK)
    size = served_model_size(serving)
    if size is not None and serving.loader == WeightsLoader.GCSFUSE:
        found += _file_cache_problems(cfg, serving, shape, size.gib)
    return found


def _file_cache_problems(cfg: Stack, serving: VllmServingConfig, shape: SliceShape, weights: float) -> list[str]:
    """The file cache in memory must fit the VM beside the pods' requests (the component's own rule); on the boot
    disk, the disk must hold it."""
    if memory_cache_gib(serving, shape) is None:
        return _disk_problems(cfg, serving, weights)
    r = to_settings(serving.requests, VllmRequests)
    why = memory_problem(shape.machine_type.name, pod_memory(r), weights)
    return [f'{PROJECT_NAMESPACE}:serving.fileCache = "memory": {why}'] if why else []


def replica_problems(cfg: Stack, serving: VllmServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """Each group takes one whole slice: the fixed count, or the autoscaled maximum, equals the serving slices."""
    if serving.autoscaling is not None:
        return scaling.autoscaling_problems(
            cfg, serving, shape, pools, VllmMetric.REQUESTS_WAITING.value, ("vLLM", METRIC_KINDS)
        )
    if serving.replicas == pools:
        return []
    return [
        f"{PROJECT_NAMESPACE}:serving.replicas = {serving.replicas}: each vLLM group takes one whole slice, and "
        f"serving.slices provide {pools}; set replicas to {pools} or change the slices' count"
    ]


def _disk_problems(cfg: Stack, serving: VllmServingConfig, weights: float) -> list[str]:
    """The FUSE file cache holds the whole model on each VM's boot disk."""
    found = []
    for i, s in enumerate(cfg.tpu_slices):
        if s.name not in serving.slices:
            continue
        have = s.disk_size_gb * 1e9 / 2**30
        need = weights + DISK_ALLOWANCE_GIB
        if have < need:
            found.append(
                f"{PROJECT_NAMESPACE}:tpuSlices[{i}].diskSizeGb = {s.disk_size_gb}: loader gcsfuse caches the "
                f"weights ({weights:.0f} GiB) on each VM's boot disk next to the images ({DISK_ALLOWANCE_GIB} GiB); "
                f"needs at least {int(need * 2**30 / 1e9) + 1} GB"
            )
    return found
