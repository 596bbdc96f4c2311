"""tpu_serving_tools.conformance.category: make check's engines category, every engine container against its
release's tables."""

from __future__ import annotations

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.conformance import category
from tpu_serving_tools.runtime.planview import PlanView


def _serving_namespace(plan: dict) -> str:
    kinds = ("LeaderWorkerSet", "DisaggregatedSet", "JobSet")
    return next(r["inputs"]["metadata"]["namespace"] for r in plan["resources"] if r["inputs"].get("kind") in kinds)


@pytest.mark.parametrize(
    "stack",
    ["vllm-llama33-70b-v6e8", "vllm-llama33-70b-disagg-v6e8x2", "llama31-405b-v6e16", "saxml-175b-v5e32x2"],
)
def test_category_same_named_servings_of_two_namespaces_are_each_checked(stack):
    """Library review 4, m4: two default-named VllmServing in two namespaces shared one subject, and the count
    dropped by one. Every engine subject (vLLM, the endpoint picker, JetStream, Saxml, GCS FUSE volumes) names its
    namespace, so the twin's findings are as many as the first's, each under its own namespace."""
    from tests.fixtures.twin import twin_namespace

    plan = plan_of(stack).as_json()
    ns = _serving_namespace(plan)
    one = [f.subject for f in category.check(PlanView(plan)).findings]
    both = [f.subject for f in category.check(PlanView(twin_namespace(plan, ns, "second"))).findings]
    assert one and all(s.startswith(f"engine {ns}/") for s in one), one
    assert sorted(both) == sorted(one + [s.replace(f"engine {ns}/", "engine second/", 1) for s in one])
