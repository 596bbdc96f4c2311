"""The pod templates inside the controllers' custom resources, as Pods that Checkov's Kubernetes checks read.

Checkov checks Pods and the built-in workload kinds (Deployment, Job...) but not custom resources, so the
pods that LeaderWorkerSet, JobSet and PathwaysJob make would go unscanned. Each template becomes one Pod
named ``<kind>/<object>/<role>`` in the object's namespace. The template paths are those of the pinned CRDs
(``../shared/reference/crds``, ``SOURCES.txt``):
- LeaderWorkerSet (``lws-v0.10.0-leaderworkersets-crd.yaml``): ``spec.leaderWorkerTemplate.leaderTemplate``
  and ``.workerTemplate`` (a group of one has only the worker template);
- JobSet (``jobset-v0.12.0-jobsets-crd.yaml``): ``spec.replicatedJobs[].template.spec.template``;
- PathwaysJob (``pathwaysjob-v0.1.4-crd.yaml``): ``spec.controller.template``, the user's main container. The
  Pathways servers' pods are built by the controller from its own code
  (``pathways-job-v0.1.4-pathwaysjob_controller.go``), not from the stack, and are not in the plan.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def _pod(obj: Mapping[str, Any], role: str, template: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata", {})
    inner = template.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{obj['kind']}/{meta.get('name')}/{role}",
            "namespace": meta.get("namespace", "default"),
            **({"labels": inner["labels"]} if inner.get("labels") else {}),
            **({"annotations": inner["annotations"]} if inner.get("annotations") else {}),
        },
        "spec": template.get("spec", {}),
    }


def templates(obj: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(role, pod template) of each pod template inside ``obj``; nothing for kinds without one."""
    spec = obj.get("spec") or {}
    kind = obj.get("kind")
    if kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        for role in ("leaderTemplate", "workerTemplate"):
            if lwt.get(role):
                yield role.removesuffix("Template"), lwt[role]
    elif kind == "JobSet":
        for job in spec.get("replicatedJobs") or []:
            template = ((job.get("template") or {}).get("spec") or {}).get("template")
            if template:
                yield str(job.get("name")), template
    elif kind == "PathwaysJob":
        template = (spec.get("controller") or {}).get("template")
        if template:
            yield "main", template


def extracted_pods(objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A Pod for every pod template inside the custom resources among ``objects``."""
    return [_pod(o, role, t) for o in objects for role, t in templates(o)]
