"""tpu_serving.pools.pool_phase: the node account of the serving pools under a capacity fallback."""

from __future__ import annotations

from tests.conftest import plan_of
from tests.fixtures.configs import ZONES_STACK as STACK
from tests.fixtures.configs import plan_edited

ACCOUNT = "gcp:serviceaccount/account:Account"
MEMBER = "gcp:projects/iAMMember:IAMMember"
POOL = "gcp:container/nodePool:NodePool"


def test_class_account_runs_every_serving_pool_as_the_first_kinds_account_and_waits_for_its_roles() -> None:
    """GKE review of the capacity fallback, Blocker: GKE matches a pool with the class only where its configuration
    matches the class's ``nodePoolConfig`` (its service account among it); second GKE review, m2: the pools that share
    the first kind's account wait for its roles as the first kind's pools do."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    pools = [r for r in plan.resources if r.type == POOL and r.name != "vllm70bv6e-cpu"]
    assert sorted(r.name for r in pools) == [f"vllm70bv6e-v6e8{k}" for k in "abcs"], [r.name for r in pools]
    urns = {r.urn: r for r in plan.resources}
    for pool in pools:
        (account,) = [urns[u] for u in pool.property_dependencies["nodeConfig"] if urns[u].type == ACCOUNT]
        assert account.name == "vllm70bv6e-v6e8a-nodes", (pool.name, account.name)
        roles = {urns[u].name for u in pool.dependencies if urns[u].type == MEMBER}
        assert len(roles) == 5 and all(n.startswith("vllm70bv6e-v6e8a-nodes-") for n in roles), (pool.name, roles)


def test_class_account_leaves_each_kind_its_own_account_without_a_fallback() -> None:
    plan = plan_of("vllm-llama33-70b-v5e16")
    urns = {r.urn: r for r in plan.resources}
    accounts = {
        urns[u].name
        for r in plan.resources
        if r.type == POOL and r.name != "vllm70b-cpu"
        for u in r.property_dependencies["nodeConfig"]
        if urns[u].type == ACCOUNT
    }
    assert accounts == {f"vllm70b-{k}-nodes" for k in ("v5e16", "v5e16b", "v5e16c", "v5e16s")}, accounts


def _second_zone(slices: list) -> None:
    slices[1]["zone"] = "us-west4-b"


def test_pool_phase_zones_each_slice_stays_in_its_one_zone():
    plan = plan_edited(STACK, tpuSlices=_second_zone)
    pools = {r.name: r.inputs for r in plan.of_type("gcp:container/nodePool:NodePool") if "v5e16" in r.name}
    assert pools["vllm70b-v5e16"]["nodeLocations"] == ["us-west4-a"]
    assert pools["vllm70b-v5e16b"]["nodeLocations"] == ["us-west4-b"]
    # The second group's slice (always on at autoscaling.minReplicas 2) is one whole slice in its own zone.
    assert pools["vllm70b-v5e16b"]["nodeCount"] == 4
    assert pools["vllm70b-v5e16b"]["placementPolicy"]["tpuTopology"] == "4x4"
    (cpu,) = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name == "vllm70b-cpu"]
    # the CPU pool spans the region's zones, the stack's first
    assert cpu.inputs["nodeLocations"] == ["us-west4-a", "us-west4-b", "us-west4-c"]
