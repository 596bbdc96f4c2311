"""make diff: a change that recreates the VMs of several standing serving groups' node pools in one `pulumi up`
(in place, as a boot disk's size, or by replacing the pools, as a reservation's renewal) says so, names the pools,
says what to do instead, and the Drain line no longer claims that groups keep serving."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving_tools.diff.review import StackDiff, diff_plans, render_markdown
from tpu_serving_tools.gcp_types import NODE_POOL

V6E8 = "vllm-llama33-70b-v6e8"
"""The production example: two standing groups, at first on v6e8a (us-east5-a) and v6e8b (us-east5-b); the HPA's
third group's pool v6e8c and the rollout's spare v6e8s scale from zero, and a repair, a maintenance or an earlier
one-pool run moves a standing group onto them: all four can hold one."""
STANDING = ("vllm70bv6e-v6e8a", "vllm70bv6e-v6e8b")
NOT_STANDING = ("vllm70bv6e-v6e8c", "vllm70bv6e-v6e8s")
SERVING_POOLS = tuple(sorted(STANDING + NOT_STANDING))
AT_ONCE = "**One `pulumi up` takes"
KEEP_SERVING = "1 of 2 groups at least keep serving"


def every_slice(**values: Any):
    def edit(slices: list[dict[str, Any]]) -> None:
        for s in slices:
            s.update(values)

    return edit


def renew_reservations(slices: list[dict[str, Any]]) -> None:
    for s in slices:
        s["reservation"] += "-2027"


def first_slice_disk(slices: list[dict[str, Any]]) -> None:
    slices[0]["diskSizeGb"] = 400


def spare_slices_disk(slices: list[dict[str, Any]]) -> None:
    for s in slices:
        if s["name"] in ("v6e8c", "v6e8s"):
            s["diskSizeGb"] = 400


def team_label(labels: dict[str, Any]) -> None:
    labels["team"] = "ml-serving"


EDITS = {
    "disk-all": {"tpuSlices": every_slice(diskSizeGb=400)},
    "renewal": {"tpuSlices": renew_reservations},
    "disk-one": {"tpuSlices": first_slice_disk},
    "disk-spares": {"tpuSlices": spare_slices_disk},
    "label": {"labels": team_label},
}


@functools.cache
def diff_of(edit: str, stack: str = V6E8) -> StackDiff:
    """The diff of ``stack``'s shipped plan against the plan with ``EDITS[edit]`` applied."""
    return diff_plans(stack, plan_of(stack).as_json(), plan_edited(stack, **EDITS[edit]).as_json())


def pool_changes(diff: StackDiff) -> dict[str, Any]:
    """{pool name: Change} of the node pools ``diff`` changes; fails when there is none, so that a check that finds
    no warning cannot pass on a plan (or an edit) without node pools."""
    pools = {c.name.removesuffix("-pool"): c for c in diff.changed if c.type == NODE_POOL}
    assert pools, f"{diff.stack}: no node pool changes: a check that finds nothing here proves nothing"
    return pools


def drain_line(diff: StackDiff) -> str:
    (line,) = [line for title, line in diff.lifecycle if title == "Drain"]
    return line


def test_disk_size_on_every_pool_recreates_their_nodes_and_takes_both_standing_groups_at_once():
    """The review's case: diskSizeGb 300 -> 400 on every slice of the production example is 4 in-place changes, and
    GKE recreates every node of each pool; v6e8a and v6e8b hold the two standing groups, so one `pulumi up` takes
    both."""
    diff = diff_of("disk-all")
    pools = pool_changes(diff)
    assert sorted(pools) == sorted(STANDING + NOT_STANDING)
    assert not diff.added and not diff.removed and all(not c.recreates for c in pools.values())
    for name in STANDING + NOT_STANDING:
        assert f"Recreates the nodes of TPU node pool `{name}`: `nodeConfig.diskSizeGb` 300 → 400" in "\n".join(
            diff.warnings
        )
    first = diff.warnings[0]
    assert first.startswith(f"{AT_ONCE} up to 2 of the 2 standing serving groups down at once:**")
    assert f"node pools {', '.join(f'`{n}`' for n in SERVING_POOLS)}, which hold them" in first
    assert "first the pools that hold no group now" in first
    for name in SERVING_POOLS:
        assert f"`pulumi up --target 'urn:pulumi:{V6E8}::tpu-serving::tpu-serving:index:TpuNodePool$" in first
        assert f"NodePool::{name}'`" in first
    assert "none may serve meanwhile" in first and "up to about 60 minutes each" in first
    assert KEEP_SERVING not in drain_line(diff)
    assert "up to 2 of 2 groups can reload together" in drain_line(diff)
    report = render_markdown(diff, "main")
    assert f"> - {AT_ONCE} up to 2 of the 2" in report and KEEP_SERVING not in report
    assert report.count("⚠ recreates nodes") == 4


def test_reservation_renewal_replacing_every_pool_says_the_standing_groups_go_at_once():
    """New reservation names replace every pool (ForceNew; the bridge deletes a named pool before creating it): the
    four "Recreates TPU node pool" lines now come after the warning that two of them hold the standing groups."""
    diff = diff_of("renewal")
    pools = pool_changes(diff)
    assert all(c.recreates for c in pools.values()) and len(pools) == 4
    assert sum(w.startswith("Recreates TPU node pool") for w in diff.warnings) == 4
    assert diff.warnings[0].startswith(f"{AT_ONCE} up to 2 of the 2 standing serving groups down at once:**")
    assert all(f"`{name}`" in diff.warnings[0] for name in SERVING_POOLS)
    assert KEEP_SERVING not in drain_line(diff)


def test_one_pool_recreates_its_nodes_without_the_at_once_warning():
    """The same change on v6e8a alone recreates that pool's nodes (one standing group reloads, the other serves):
    its own warning, no "at once" one, and the Drain line keeps its claim."""
    from tpu_serving_tools.diff.pool_disruption import standing

    diff = diff_of("disk-one")
    pools = pool_changes(diff)
    assert list(pools) == ["vllm70bv6e-v6e8a"]
    held = standing(plan_of(V6E8).as_json())
    assert held is not None and "vllm70bv6e-v6e8a" in held.pools, "the changed pool holds a standing group"
    (warning,) = diff.warnings
    assert warning.startswith("Recreates the nodes of TPU node pool `vllm70bv6e-v6e8a`: `nodeConfig.diskSizeGb`")
    assert KEEP_SERVING in drain_line(diff)


def test_a_label_on_every_pool_recreates_nothing():
    """A label is updated in place on every pool, with no node recreated: no warning of either kind."""
    diff = diff_of("label")
    pools = pool_changes(diff)
    assert sorted(STANDING + NOT_STANDING) == sorted(p for p in pools if p != "vllm70bv6e-cpu")
    assert all(path.startswith("nodeConfig.resourceLabels") for c in pools.values() for path, _, _ in c.fields)
    assert all(c.recreates == [] and c.recreates_nodes == [] for c in pools.values())
    assert diff.warnings == []
    assert KEEP_SERVING in drain_line(diff)


def test_the_checks_fail_on_a_plan_without_node_pools():
    """No vacuous pass: with the node pools left out of the plans, the helper the checks above go through fails, and
    nothing can be found at once."""
    from tpu_serving_tools.diff.pool_disruption import at_once

    plan = plan_of(V6E8).as_json()
    bare = {**plan, "resources": [r for r in plan["resources"] if r["type"] != NODE_POOL]}
    with pytest.raises(AssertionError, match="no node pool changes"):
        pool_changes(diff_plans(V6E8, bare, bare))
    assert at_once({}, plan, plan) is None


def test_standing_pools_come_from_the_plan_outputs():
    """The pools that can hold the standing groups: every serving slice's (outputs.slices), the spares and the
    pools that scale from zero included; the count: the autoscaler's minimum. A plan whose outputs name no
    LeaderWorkerSet groups has none."""
    from tpu_serving_tools.diff.pool_disruption import standing

    v6e8 = standing(plan_of(V6E8).as_json())
    assert v6e8 is not None and (v6e8.groups, sorted(v6e8.pools)) == (2, list(SERVING_POOLS))
    v5e16 = standing(plan_of("vllm-llama33-70b-v5e16").as_json())
    assert v5e16 is not None and sorted(v5e16.pools) == [
        "vllm70b-v5e16",
        "vllm70b-v5e16b",
        "vllm70b-v5e16c",
        "vllm70b-v5e16s",
    ]
    assert standing(plan_of("saxml-175b-v5e32x2").as_json()) is None
    assert standing(None) is None


def test_one_group_over_two_slices_is_not_taken_twice():
    """llama2-70b-disagg-v6e8x2 serves one group over both its slices: a disk change on both recreates their nodes,
    which the pools' own lines say, but no "several standing groups" warning (there is one)."""
    diff = diff_of("disk-all", "llama2-70b-disagg-v6e8x2")
    assert len(pool_changes(diff)) == 2
    assert sum(w.startswith("Recreates the nodes of TPU node pool") for w in diff.warnings) == 2
    assert not any(w.startswith(AT_ONCE) for w in diff.warnings)


@pytest.mark.parametrize(
    "path",
    [
        "nodeConfig.machineType",
        "nodeConfig.diskSizeGb",
        "nodeConfig.diskType",
        "nodeConfig.imageType",
        "nodeConfig.gcfsConfig.enabled",
        "nodeConfig.kubeletConfig.cpuManagerPolicy",
        "nodeConfig.linuxNodeConfig.sysctls.net.core.somaxconn",
    ],
)
def test_node_recreating_fields_are_updated_in_place(path):
    """Each field the rule lists recreates the nodes and is not ForceNew in the provider's schema (else the pool
    would be replaced, which the schema's rule already reports)."""
    from tpu_serving_tools import provider_rules
    from tpu_serving_tools.provider_rules.node_recreation import recreates_nodes

    assert recreates_nodes(NODE_POOL, path) is not None
    assert provider_rules.force_new(NODE_POOL, path) is None


@pytest.mark.parametrize("path", ["nodeConfig.resourceLabels.team", "nodeConfig.labels.team", "nodeCount"])
def test_other_fields_recreate_no_nodes(path):
    from tpu_serving_tools.provider_rules.node_recreation import recreates_nodes

    assert recreates_nodes(NODE_POOL, path) is None
    assert recreates_nodes("gcp:container/cluster:Cluster", "nodeConfig.diskSizeGb") is None


def test_a_change_on_the_pools_that_scale_from_zero_still_warns_at_once():
    """GKE review round 50, M2: after one-pool runs on v6e8a and v6e8b, the standing groups run on v6e8c and v6e8s,
    so a change that recreates those two together takes both; the warning counted only the pools that start with
    VMs and said nothing, and the Drain line kept its claim."""
    diff = diff_of("disk-spares")
    assert sorted(pool_changes(diff)) == list(NOT_STANDING)
    first = diff.warnings[0]
    assert first.startswith(f"{AT_ONCE} up to 2 of the 2 standing serving groups down at once:**")
    assert all(f"`{name}`" in first for name in NOT_STANDING)
    assert KEEP_SERVING not in drain_line(diff)
