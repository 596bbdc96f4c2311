"""The ``engines`` category of ``make check``: every engine container against its release's tables."""

from __future__ import annotations

from tpu_serving_tools.conformance import epp, gcsfuse, saxml, vllm
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult

MODULES = (vllm, epp, saxml, gcsfuse)
"""Engines with release tables. JetStream/MaxText and Pathways have none yet: their
containers are not examined (README, "What it cannot know")."""


def check(view: PlanView) -> CategoryResult:
    return CategoryResult("engines", [f for m in MODULES for f in m.findings(view)])
