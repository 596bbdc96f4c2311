"""tpu_serving_tools.runtime.class_refs: a ComputeClass's pools and zones against the plan's node pools."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime import class_refs
from tpu_serving_tools.runtime.node_pool import COMPUTE_CLASS_TYPE
from tpu_serving_tools.runtime.planview import PlanView


def test_class_refs_findings_resolve_the_stacks_class_and_fail_a_pool_or_zone_it_lacks() -> None:
    """New-user review of the capacity fallback, M1: a program's class naming a pool it lacks, or a zone of another
    region, passed preview and check."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    found = class_refs.findings(PlanView(plan))
    assert len(found) == 10 and all(f.ok for f in found), found  # four pools, two zones, four pools' accounts
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


def test_class_refs_findings_fail_a_pool_that_runs_as_another_account_than_the_class() -> None:
    """GKE review of the capacity fallback, Blocker: GKE matches a pool with the class only where its configuration
    matches the class's ``nodePoolConfig`` (its service account among it), and three of the 70B stack's four serving
    pools ran as accounts of their own."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    accounts = [r["urn"] for r in plan["resources"] if r["type"] == "gcp:serviceaccount/account:Account"]
    (pool,) = [r for r in plan["resources"] if r["type"] == NODE_POOL and r["inputs"]["name"] == "vllm70bv6e-v6e8c"]
    other = next(u for u in accounts if u not in pool["propertyDependencies"]["nodeConfig"])
    pool["propertyDependencies"]["nodeConfig"] = [other]
    bad = [f for f in class_refs.findings(PlanView(plan)) if not f.ok]
    assert [f.subject for f in bad] == [
        "ref ComputeClass vllm-llama70b-serving -> node account of pool vllm70bv6e-v6e8c"
    ]
    assert "takes none of the class's groups" in bad[0].reason, bad[0].reason
