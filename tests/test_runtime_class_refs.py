"""tpu_serving_tools.runtime.class_refs: a ComputeClass's pools and zones against the plan's node pools."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import class_refs
from tpu_serving_tools.runtime.node_pool import COMPUTE_CLASS_TYPE
from tpu_serving_tools.runtime.planview import PlanView


def test_class_refs_findings_resolve_the_stacks_class_and_fail_a_pool_or_zone_it_lacks() -> None:
    """New-user review of the capacity fallback, M1: a program's class naming a pool it lacks, or a zone of another
    region, passed preview and check."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    found = class_refs.findings(PlanView(plan))
    assert len(found) == 6 and all(f.ok for f in found), found  # four pools, two zones
    (cc,) = [r for r in plan["resources"] if r["type"] == COMPUTE_CLASS_TYPE]
    spec = cc["inputs"]["spec"]
    spec["priorities"][0]["nodepools"][0] = "serving-v6e9"
    spec["priorityDefaults"]["location"]["zones"] = ["us-east5-a", "europe-west4-a"]
    bad = {f.subject: f for f in class_refs.findings(PlanView(plan)) if not f.ok}
    assert sorted(bad) == [
        "ref ComputeClass vllm-llama70b-serving -> node pool serving-v6e9",
        "ref ComputeClass vllm-llama70b-serving -> zone europe-west4-a",
    ], bad
    assert "every group takes a fallback step" in bad[sorted(bad)[0]].reason
