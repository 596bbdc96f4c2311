"""Cloud Storage FUSE CSI volumes: every mount option is a gcsfuse flag or config entry."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving_tools.conformance.table import Table, load
from tpu_serving_tools.runtime.planview import PlanView, entries, qualified_name
from tpu_serving_tools.runtime.result import Finding

GCSFUSE_TAG = "v3.11.2"
"""The gcsfuse release the table is taken from: the newest v3 release in reach when extracted (2026-11-23). Which
gcsfuse a GKE version's CSI driver bundles is not published where it could be read; an option this release lacks
was not in the releases before it either, unless it was removed."""
DRIVER = "gcsfuse.csi.storage.gke.io"
CSI_ATTRIBUTES = frozenset({"mountOptions", "bucketName"})
"""Volume attributes that are not gcsfuse options themselves."""


def _volumes(view: PlanView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(label, csi volume) of every GCS FUSE volume in the plan's pod templates (LWS, JobSet, Deployment, Job)."""
    for obj in view.kubernetes_objects():
        for key, volumes in entries(obj.get("spec")):
            for v in volumes if key == "volumes" and isinstance(volumes, list) else ():
                csi = v.get("csi") if isinstance(v, Mapping) else None
                if isinstance(csi, Mapping) and csi.get("driver") == DRIVER:
                    yield f"{qualified_name(obj)} {obj['kind']} volume {v.get('name')}", csi


def option_problem(option: str, table: Table) -> str:
    """Why ``option`` is not a gcsfuse option of the release, or ``""``."""
    if ":" in option and "=" not in option.split(":", 1)[0]:
        section, rest = option.split(":", 1)
        key = rest.split(":", 1)[0]
        return "" if f"{section}.{key}" in table.config_keys else f"{section}:{key}: no such config entry"
    name = option.split("=", 1)[0]
    return "" if name in table.flags else f"{name}: no such flag"


def findings(view: PlanView) -> list[Finding]:
    table = load(f"gcsfuse-{GCSFUSE_TAG}")
    out = []
    seen: set[str] = set()
    for label, csi in _volumes(view):
        if label in seen:
            continue
        seen.add(label)
        options = [o for o in str((csi.get("volumeAttributes") or {}).get("mountOptions", "")).split(",") if o]
        problems = [f"{p} in gcsfuse {GCSFUSE_TAG}" for o in options if (p := option_problem(o, table))]
        out.append(Finding(f"engine {label}", not problems, "; ".join(problems) or f"{len(options)} mount options"))
    return out
