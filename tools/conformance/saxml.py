"""Saxml containers (admin server, model servers, sax-http): their flags and environment against the release of
their image tag."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tpu_serving_tools.conformance.table import load
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.result import Finding

RELEASES: Mapping[str, str] = {
    "sax-admin-server:v1.1.0": "v1.1.0",
    "sax-model-server:v1.1.0": "v1.1.0",
    "sax-http:v1.0.0": "v1.0.0",
}
"""Image (name:tag, us-docker.pkg.dev/cloud-tpu-images/inference/) -> the google/saxml release it is built from
(the images carry the release's tag: saxml/tools/docker, GKE's Saxml tutorial)."""


OTHER_ENV: Mapping[str, str] = {
    "MEGASCALE_NUM_SLICES": (
        "read by libtpu, the TPU runtime (closed source), for multislice: JobSet's TPU multislice examples set the "
        "MEGASCALE_* variables; seed 002's model servers set it empty (each slice serves alone)"
    ),
}
"""Variables of Saxml containers read by something other than Saxml, with the reader."""


def _containers(view: PlanView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for kind in ("Deployment", "JobSet"):
        for obj in view.kubernetes_objects(kind):
            specs = (
                [obj["spec"]["template"]["spec"]]
                if kind == "Deployment"
                else [rj["template"]["spec"]["template"]["spec"] for rj in obj["spec"].get("replicatedJobs") or ()]
            )
            for spec in specs:
                for c in spec.get("containers") or ():
                    if "/sax-" in str(c.get("image", "")):
                        yield f"{qualified_name(obj)} {c['name']}", c


def findings(view: PlanView) -> list[Finding]:
    """Per Saxml container: a tabled image, every flag and environment variable read by that release."""
    out = []
    for label, c in _containers(view):
        image = str(c["image"]).rsplit("/", 1)[-1]
        release = RELEASES.get(image)
        if release is None:
            out.append(Finding(f"engine {label}", False, f"image {image}: no Saxml release table for it"))
            continue
        t = load(f"saxml-{release}")
        given = [str(a).split("=", 1)[0] for a in c.get("args") or () if str(a).startswith("--")]
        problems = [f"{f}: no such flag in saxml {release}" for f in given if f not in t.flags]
        problems += [
            f"env {e['name']}: read by nothing in saxml {release}"
            for e in c.get("env") or ()
            if e["name"] not in t.env and e["name"] not in OTHER_ENV
        ]
        n = len(given) + len(c.get("env") or ())
        out.append(
            Finding(f"engine {label}", not problems, "; ".join(problems) or f"{n} flags and variables, each read")
        )
    return out
