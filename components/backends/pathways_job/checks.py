"""Checks of the ``pathways-job`` settings against the rest of the stack (machine types, the head's pool)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...catalog import SliceShape, machines
from ...common.settings import PROJECT_NAMESPACE
from ...platform.controllers import parse_version

if TYPE_CHECKING:
    from ..base import Stack
from .args import head_requests
from .facts import PATHWAYS_JOB_MACHINE_TYPES
from .settings import (
    JOBSET_FOR_PATHWAYS_JOB,
    LIMIT_RANGE_DEFAULT_CPU,
    LIMIT_RANGE_DEFAULT_MEMORY,
    PathwaysJobConfig,
)


def problems(cfg: Stack, serving: PathwaysJobConfig, shape: SliceShape, pools: int) -> list[str]:
    """The CRD accepts the machine type; batch has a container; JobSet is new enough; the head fits."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found: list[str] = []
    if shape.machine_type.name not in PATHWAYS_JOB_MACHINE_TYPES:
        found.append(
            f"{key}.slices: machine type {shape.machine_type.name!r} is not accepted by the PathwaysJob API; "
            f"valid: {', '.join(PATHWAYS_JOB_MACHINE_TYPES)}"
        )
    if serving.workload == "batch" and serving.container is None:
        found.append(f"{key}.container: required for a batch workload (the user's container)")
    if serving.workload == "interactive" and serving.container is not None:
        found.append(f"{key}.container: an interactive workload has no container; a JAX client connects instead")
    if parse_version(serving.jobset_version) < parse_version(JOBSET_FOR_PATHWAYS_JOB):
        found.append(
            f"{key}.jobsetVersion = {json.dumps(serving.jobset_version)}: PathwaysJob needs JobSet "
            f"{JOBSET_FOR_PATHWAYS_JOB} or later"
        )
    if "max_slice_restarts" in serving.model_fields_set and not serving.elastic_slices:
        # pathways-job v0.1.4 pathwaysjob_controller.go l.712-715: the workers' backoffLimit takes maxSliceRestarts
        # only when controller.elasticSlices > 0; otherwise the field is read nowhere (the CRD's description says
        # "Used with elasticSlices", pathwaysjob-v0.1.4 CRD).
        found.append(
            f"{key}.maxSliceRestarts = {serving.max_slice_restarts}: has no effect without elasticSlices (the "
            "PathwaysJob controller reads it only for elastic slices); set elasticSlices, or remove maxSliceRestarts "
            "and use maxRestarts (JobSet restarts of the whole job)"
        )
    if serving.elastic_slices is not None and serving.elastic_slices >= pools:
        found.append(f"{key}.elasticSlices = {serving.elastic_slices}: must be fewer than the {pools} slice(s)")
    scratch = cfg.bucket("scratch")
    if scratch is None or scratch.workload_access != "readWrite":
        found.append(
            f"{PROJECT_NAMESPACE}:buckets: pathways-job needs a `scratch` bucket with workloadAccess readWrite (pathwaysDir)"
        )
    if serving.deployment_mode == "default":
        found += _head_fit_problems(cfg, serving)
    elif serving.workload == "interactive":
        found.append(
            f'{key}.deploymentMode = "colocate_head_with_workers": an interactive job has no pod template, so the '
            "controller's head pod carries no toleration for the TPU nodes' google.com/tpu taint and cannot be "
            "scheduled there; valid: default"
        )
    return found


def _head_fit_problems(cfg: Stack, job: PathwaysJobConfig) -> list[str]:
    """The head must fit its pool, and (interactive: it cannot be pinned) must not fit the CPU pool."""
    key = f"{PROJECT_NAMESPACE}:serving.headPool.machineType"
    user_cpu, user_memory = (LIMIT_RANGE_DEFAULT_CPU, LIMIT_RANGE_DEFAULT_MEMORY) if job.container else (0.0, 0.0)
    cpu, memory = head_requests(user_cpu, user_memory)
    need = f"{cpu:g} CPU and {memory / machines.GIB:.1f} GiB (pathways-rm and pathways-proxy as the PathwaysJob v0.1.4 controller sizes them)"
    head = machines.machine(job.head_pool.machine_type)
    problems = []
    if head is None:
        problems.append(
            f"{key} = {json.dumps(job.head_pool.machine_type)}: unknown machine type; the head needs {need}; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    elif not head.fits(cpu, memory):
        problems.append(
            f"{key} = {json.dumps(head.name)}: the head needs {need}; {head.name} has "
            f"{head.allocatable_cpu:.2f} CPU and {head.allocatable_memory / machines.GIB:.1f} GiB allocatable; "
            f"valid: {', '.join(machines.fitting_cpu_machines(cpu, memory)[:8])}"
        )
    cpu_pool = machines.machine(cfg.cluster.cpu_pool.machine_type)
    if job.container is None and (cpu_pool is None or cpu_pool.fits(cpu, memory)):
        problems.append(
            f"{PROJECT_NAMESPACE}:cluster.cpuPool.machineType = {json.dumps(cfg.cluster.cpu_pool.machine_type)}: an "
            "interactive Pathways head cannot be pinned to its pool, so the CPU pool must be too small for it "
            "(its nodes hold no scratch bucket role for the head's host-network pods); choose a smaller known machine type"
        )
    return problems
