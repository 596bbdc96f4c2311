"""The pods the JobSet controller creates: per replicated job, ``replicas`` child Jobs of pods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.pods_model import LimitDefaults, Pod, _Placement, make_pod

# --------------------------------------------------------------------------- JobSet


def _job_pod_count(job_spec: Mapping[str, Any]) -> int:
    parallelism = int(job_spec.get("parallelism", 1))
    completions = job_spec.get("completions")
    return min(parallelism, int(completions)) if completions is not None else parallelism


def expand_jobset(
    obj: Mapping[str, Any],
    defaults: LimitDefaults,
    *,
    owner: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> list[Pod]:
    """Every pod of a JobSet: per replicated job, ``replicas`` child Jobs of ``parallelism`` pods."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    name, ns = meta["name"], meta.get("namespace", "default")
    owner = owner or f"JobSet/{name}"
    js_excl = (meta.get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
    pods: list[Pod] = []
    for rjob in spec.get("replicatedJobs") or ():
        job_t = rjob.get("template") or {}
        pod_t = (job_t.get("spec") or {}).get("template") or {}
        excl = (
            ((pod_t.get("metadata") or {}).get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
            or ((job_t.get("metadata") or {}).get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
            or js_excl
        )
        role = (roles or {}).get(rjob["name"], rjob["name"])
        for j in range(int(rjob.get("replicas", 1))):
            job_key = f"{ns}/{owner}/{rjob['name']}-{j}"  # namespaced, as an LWS group's
            for p in range(_job_pod_count(job_t.get("spec") or {})):
                labels = {F.JOBSET_NAME_LABEL: name, F.JOBSET_REPLICATED_JOB_LABEL: rjob["name"]}
                where = _Placement(
                    f"{name}-{rjob['name']}-{j}-{p}", ns, owner, role, job_key, f"{ns}/{owner}", excl, job_key, labels
                )
                pods.append(make_pod(pod_t, where, defaults))
    return pods
