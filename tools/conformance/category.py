"""The ``engines`` category of ``make check``: every engine container against its release's tables."""

from __future__ import annotations

from tpu_serving_tools.conformance import engine_metrics, epp, gcsfuse, jetstream, saxml, vllm
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult

MODULES = (vllm, engine_metrics, epp, saxml, gcsfuse, jetstream)
"""Engines with release tables: vLLM TPU (vllm, tpu-inference, Ray), the endpoint picker, Saxml, GCS FUSE, and
JetStream + Pathways (MaxText's config, the Pathways flags as the PathwaysJob controller passes them); and the vLLM
metrics the HPAs scale on (:mod:`.engine_metrics`)."""


def check(view: PlanView) -> CategoryResult:
    return CategoryResult("engines", [f for m in MODULES for f in m.findings(view)])
