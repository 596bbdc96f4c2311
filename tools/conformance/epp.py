"""The endpoint picker's containers: their flags against the EPP release the image is."""

from __future__ import annotations

from tpu_serving_tools.conformance.table import load
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding

EPP_TAG = "v1.3.1"
CONTROLLER_RUNTIME_TAG = "v0.22.4"
"""The EPP release the tables describe, and the controller-runtime its go.mod requires (whose zap flags it adds)."""
EPP_IMAGE = f"registry.k8s.io/gateway-api-inference-extension/epp:{EPP_TAG}"


def findings(view: PlanView) -> list[Finding]:
    """Per EPP container of the plan's Deployments: the image is the tabled release, every flag exists in it."""
    table = load(f"epp-{EPP_TAG}")
    out = []
    for dep in view.kubernetes_objects("Deployment"):
        for c in dep["spec"]["template"]["spec"].get("containers") or ():
            if "gateway-api-inference-extension/epp:" not in str(c.get("image", "")):
                continue
            problems = [] if c["image"] == EPP_IMAGE else [f"image {c['image']} is not {EPP_IMAGE}, the tabled release"]
            given = [str(a).split("=", 1)[0] for a in c.get("args") or () if str(a).startswith("--")]
            problems += [f"{f}: no such flag in the EPP {EPP_TAG}" for f in given if f not in table.flags]
            subject = f"engine {dep['metadata']['name']} {c['name']}"
            out.append(Finding(subject, not problems, "; ".join(problems) or f"{len(given)} flags, each the EPP's"))
    return out
