"""The pods the controllers create from a plan's Kubernetes objects.

Expands LeaderWorkerSets, DisaggregatedSets (through the LeaderWorkerSets their controller creates,
:mod:`.pods_ds`), JobSets, PathwaysJobs (through the JobSet their controller creates), Deployments, Jobs and bare Pods into :class:`Pod` values, applying what the API server and the
controllers add on the way: LWS environment variables, Kubernetes request defaulting
(limits -> requests, LimitRange defaults), PathwaysJob head and worker containers. The facts used
are named in :mod:`.facts`; their values and sources are in ``data/kubernetes.json``.

The expansions live per controller (:mod:`.pods_lws`, :mod:`.pods_jobset`, :mod:`.pods_pathwaysjob`), the
pod model and template handling in :mod:`.pods_model`, quantities in :mod:`.quantities`; this module expands
Deployments, Jobs and bare Pods, walks the plan (:func:`pods_of`) and re-exports the public names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods_ds import expand_disaggregatedset
from tpu_serving_tools.runtime.pods_jobset import _job_pod_count, expand_jobset
from tpu_serving_tools.runtime.pods_lws import expand_leaderworkerset
from tpu_serving_tools.runtime.pods_model import (
    Container,
    LimitDefaults,
    Pod,
    Toleration,
    Volume,
    _Placement,
    injected_sidecars,
    limit_defaults,
    make_container,
    make_pod,
)
from tpu_serving_tools.runtime.pods_pathwaysjob import expand_pathwaysjob, pathwaysjob_to_jobset
from tpu_serving_tools.runtime.quantities import Resources, parse_quantity

__all__ = [
    "Container",
    "LimitDefaults",
    "Pod",
    "Resources",
    "Toleration",
    "Volume",
    "expand_deployment",
    "expand_job",
    "expand_jobset",
    "expand_leaderworkerset",
    "expand_pathwaysjob",
    "expand_pod",
    "gs_uris",
    "hpa_bounds",
    "injected_sidecars",
    "limit_defaults",
    "make_container",
    "make_pod",
    "parse_quantity",
    "pathwaysjob_to_jobset",
    "pods_of",
    "with_replicas",
]

# --------------------------------------------------------------------------- Deployment, Job, Pod


def expand_deployment(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """``replicas`` pods (default 1); a rolling update surges one pod at a time, so each pod is its own unit."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name, ns, owner = meta["name"], meta.get("namespace", "default"), f"Deployment/{meta['name']}"
    return [
        make_pod(
            spec.get("template") or {},
            _Placement(f"{name}-{i}", ns, owner, name, f"{owner}/{i}", f"{owner}/{i}"),
            defaults,
        )
        for i in range(int(spec.get("replicas", 1)))
    ]


def expand_job(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """``parallelism`` pods (default 1, at most ``completions``)."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name, ns, owner = meta["name"], meta.get("namespace", "default"), f"Job/{meta['name']}"
    return [
        make_pod(spec.get("template") or {}, _Placement(f"{name}-{i}", ns, owner, name, owner, owner), defaults)
        for i in range(_job_pod_count(spec))
    ]


def expand_pod(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    meta = obj["metadata"]
    owner = f"Pod/{meta['name']}"
    where = _Placement(meta["name"], meta.get("namespace", "default"), owner, meta["name"], owner, owner)
    return [make_pod(obj, where, defaults)]


_EXPANDERS = {
    "LeaderWorkerSet": expand_leaderworkerset,
    "JobSet": expand_jobset,
    "PathwaysJob": expand_pathwaysjob,
    "Deployment": expand_deployment,
    "Job": expand_job,
    "Pod": expand_pod,
}


def hpa_bounds(view: PlanView) -> dict[tuple[str, str, str], tuple[int, int]]:
    """``(namespace, kind, name)`` of each HPA's scale target -> its ``(minReplicas, maxReplicas)``."""
    out = {}
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        meta, spec = hpa.get("metadata") or {}, hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        key = (meta.get("namespace", "default"), str(ref.get("kind")), str(ref.get("name")))
        out[key] = (int(spec.get("minReplicas", 1)), int(spec["maxReplicas"]))
    return out


def scaled_by(view: PlanView) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """``(namespace, kind, name)`` of each HPA's scale target -> the names of the HPAs that scale it, sorted."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        meta, ref = hpa.get("metadata") or {}, (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        key = (meta.get("namespace", "default"), str(ref.get("kind")), str(ref.get("name")))
        out.setdefault(key, []).append(str(meta.get("name")))
    return {k: tuple(sorted(v)) for k, v in out.items()}


def with_replicas(obj: Mapping[str, Any], replicas: int) -> dict[str, Any]:
    """``obj`` with ``spec.replicas`` set, as a scale subresource update (an HPA's) leaves it."""
    return {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}}


def pods_of(view: PlanView, replicas: Mapping[tuple[str, str, str], int] | None = None) -> list[Pod]:
    """Every pod the plan's workload objects make, in plan order.

    An object an HPA scales runs its ``minReplicas`` (the HPA raises it there at once) unless
    ``replicas`` (``(namespace, kind, name)`` -> count) says otherwise; a DisaggregatedSet's External roles are
    scaled through their DisaggregatedSetRoleScaler's key (:mod:`.pods_ds`).
    """
    defaults = limit_defaults(view)
    counts = {k: lo for k, (lo, _) in hpa_bounds(view).items()}
    counts.update(replicas or {})
    out: list[Pod] = []
    for obj in view.kubernetes_objects():
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace", "default")
        if obj.get("kind") == "DisaggregatedSet":  # its roles' replicas are keyed by their scalers
            out.extend(expand_disaggregatedset(obj, defaults.get(ns, LimitDefaults()), counts))
            continue
        expand = _EXPANDERS.get(str(obj.get("kind")))
        if expand is not None:
            count = counts.get((ns, str(obj.get("kind")), str(meta.get("name"))))
            out.extend(expand(obj if count is None else with_replicas(obj, count), defaults.get(ns, LimitDefaults())))
    return out


def gs_uris(values: Iterable[str]) -> Iterator[str]:
    """Every ``gs://...`` substring in ``values``."""
    for v in values:
        yield from re.findall(r"gs://[^\s,;'\"]+", v)
