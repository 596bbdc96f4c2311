"""The runtime model over every stack: would it schedule, connect, authenticate and apply twice cleanly?"""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, STACKS_ROOT, plan_of
from tpu_serving_tools.check import run_checks
from tpu_serving_tools.preview.offline import preview_stack
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.second_apply import findings as second_apply_findings


@pytest.mark.parametrize("stack", STACKS)
def test_runtime_stacks_pass_every_category(stack):
    results = run_checks(PlanView(plan_of(stack).as_json()))
    failures = [f"[{r.category}] {f.subject}: {f.reason}" for r in results for f in r.failures()]
    assert failures == []
    counts = {r.category: r.total for r in results}
    # Every category really looked at something in every stack.
    assert all(counts[c] > 0 for c in ("scheduling", "network", "identity", "prerequisites")), counts


@pytest.mark.parametrize("stack", STACKS)
def test_runtime_stacks_second_up_replaces_nothing(stack):
    first = plan_of(stack).as_json()
    second = preview_stack(STACKS_ROOT, stack).as_json()  # a fresh run of the unchanged stack
    assert [(r["urn"], r["inputs"]) for r in second["resources"]] == [
        (r["urn"], r["inputs"]) for r in first["resources"]
    ]
    checked = second_apply_findings(PlanView(second))
    # the cluster's read-backs, where the stack creates its cluster (an existing cluster has none to read back)
    creates_cluster = any(r["type"] == "gcp:container/cluster:Cluster" for r in second["resources"])
    assert [f.subject.split()[2] for f in checked] == (["Cluster"] if creates_cluster else [])
    assert all(f.ok for f in checked), [f"{f.subject}: {f.reason}" for f in checked if not f.ok]
