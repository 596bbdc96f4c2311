"""TpuNodePool's resource names: each pool's ``gcp.container.NodePool`` is named after its GKE pool, so a change
of the pool list never renames another pool's resource; each has its old, place-in-the-list name as an alias
(library review, M5: adding ``chat-v6e8-a3`` beside ``chat-v6e8-a1`` renamed ``chat-v6e8-a-pool`` to
``chat-v6e8-a-0``, a create of a pool GKE has and a delete of a serving slice)."""

from __future__ import annotations

import pytest

from tests.fixtures.pools import pool_args
from tpu_serving import TpuNodePool
from tpu_serving_tools.diff.aliases import alias_urns
from tpu_serving_tools.diff.review import diff_plans
from tpu_serving_tools.preview.offline import Plan, run_program

NODE_POOL = "gcp:container/nodePool:NodePool"
PREFIX = "urn:pulumi:test::tpu-serving::tpu-serving:index:TpuNodePool$gcp:container/nodePool:NodePool::"


def _plan(*pool_names: str) -> Plan:
    return run_program(
        lambda: TpuNodePool("tpu", pool_args(pool_names=pool_names)), {}, project="tpu-serving", stack="test"
    )


def _pools(*pool_names: str) -> dict[str, dict]:
    """{GKE pool name: the pool's resource as the plan records it}."""
    return {r.inputs["name"]: r.as_json() for r in _plan(*pool_names).of_type(NODE_POOL)}


def test_nodepool_names_each_pool_resource_is_named_after_its_gke_pool():
    pools = _pools("c-a1", "c-a2")
    assert {gke: r["urn"] for gke, r in pools.items()} == {"c-a1": PREFIX + "c-a1", "c-a2": PREFIX + "c-a2"}


def test_nodepool_names_adding_a_pool_to_one_keeps_its_urn():
    before, after = _pools("c-a1"), _pools("c-a1", "c-a3")
    assert after["c-a1"]["urn"] == before["c-a1"]["urn"]


def test_nodepool_names_removing_the_first_of_two_keeps_the_other_urn():
    before, after = _pools("c-a1", "c-a2"), _pools("c-a2")
    assert after["c-a2"]["urn"] == before["c-a2"]["urn"]


def test_nodepool_names_removing_or_reordering_keeps_every_other_urn():
    before = _pools("c-a1", "c-a2", "c-a3")
    for after in (_pools("c-a2", "c-a3"), _pools("c-a3", "c-a1", "c-a2")):
        assert {gke: r["urn"] for gke, r in after.items()} == {gke: before[gke]["urn"] for gke in after}


@pytest.mark.parametrize(
    ("pool_names", "old_names"),
    [
        (("c-a1",), {"c-a1": "tpu-pool"}),
        (("c-a1", "c-a3"), {"c-a1": "tpu-0", "c-a3": "tpu-1"}),
    ],
)
def test_nodepool_names_aliases_hold_the_old_names_for_the_list(pool_names, old_names):
    """The name the scheme before gave each pool for this same list (``<name>-pool`` alone, ``<name>-<i>`` among
    several), as a URN the engine finds in a deployed stack's state."""
    pools = _pools(*pool_names)
    assert {gke: alias_urns(r) for gke, r in pools.items()} == {gke: [PREFIX + old] for gke, old in old_names.items()}


def test_nodepool_names_no_alias_when_the_old_name_is_a_pool_of_the_list():
    """Pools named as the old scheme named them keep their URNs with no alias; and none is aliased to another pool's
    name, which would take that pool's resource."""
    assert _pools("tpu-pool")["tpu-pool"].get("aliases") is None
    assert all(r.get("aliases") is None for r in _pools("tpu-0", "tpu-1").values())
    assert all(r.get("aliases") is None for r in _pools("tpu-1", "tpu-0").values())


def _as_old_scheme(plan: Plan) -> dict:
    """``plan`` as the scheme before named its pools: each by its alias (the plan of a deployed stack)."""
    out = plan.as_json()
    for r in out["resources"]:
        if r["type"] == NODE_POOL:
            (r["urn"],) = alias_urns(r)
            r["name"] = r["urn"].rsplit("::", 1)[1]
            del r["aliases"]
    return out


def test_nodepool_names_diff_of_an_upgrade_with_the_list_unchanged_renames_and_recreates_nothing():
    head = _plan("c-a1", "c-a2")
    diff = diff_plans("test", _as_old_scheme(head), head.as_json())
    assert not diff.warnings and not diff.added and not diff.removed
    assert sorted(c.fields for c in diff.changed) == [
        [("(alias) name", "tpu-0", "c-a1")],
        [("(alias) name", "tpu-1", "c-a2")],
    ]


def test_nodepool_names_diff_of_an_upgrade_that_also_adds_a_pool_first_says_the_capture():
    """Upgrading and adding a pool before the others in one ``up``: the new pool's alias ``tpu-0`` is the old
    resource of ``c-a1``, which the diff shows recreated under the new pool's name, as the engine would do it."""
    diff = diff_plans("test", _as_old_scheme(_plan("c-a1", "c-a2")), _plan("c-a0", "c-a1", "c-a2").as_json())
    assert any('Recreates TPU node pool `c-a0`: `name` "c-a1" → "c-a0"' in w for w in diff.warnings)
