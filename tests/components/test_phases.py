"""tpu_serving.phases: the deployment's phases, from a stack's settings to its components."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of
from tests.fixtures.components import _children
from tests.fixtures.configs import plan_edited


def test_buckets_a_bucket_without_workload_access_gets_no_grant():
    """phases.build_identity (mutmut_34): `workloadAccess: none` means no grant to the workload identity."""
    plan = plan_edited(
        "llama31-405b-v6e16",
        buckets=lambda b: b.append({"purpose": "state", "workloadAccess": "none"}),
    )
    (state,) = [r for r in plan.resources if r.type == "gcp:storage/bucket:Bucket" and r.name.endswith("-state")]
    grants = [r for r in plan.resources if r.type.startswith("gcp:storage/bucketIAM") and "-wi-" in r.name]
    assert grants, "the workload identity has grants on the other buckets"
    assert not [g for g in grants if "state" in g.name], [g.name for g in grants]
    assert state.inputs["name"]


# Each resource's aliases as the recording monitor records them, held to the plan's parent links.


DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
BORN_UNDER_THE_DEPLOYMENT = {
    "tpu-serving:index:Observability",
    "tpu-serving:index:ExistingCluster",
    "tpu-serving:index:ExistingTpuNodePool",
    "tpu-serving:index:ExistingCpuNodePool",
    "tpu-serving:index:HostMaintenanceGate",
    "tpu-serving:index:PlatformCluster",
    "tpu-serving:index:TpuComputeClass",
}
"""Direct children of the deployment that the program never created at the top of the stack (those of an existing
cluster came after the deployment component, as did the host-maintenance gate)."""


@pytest.mark.parametrize("stack", STACKS)
def test_each_child_of_the_deployment_keeps_its_old_place_at_the_top_of_the_stack(stack: str):
    """Before the deployment component existed its children sat at the top of the stack: each direct child
    carries an alias without a parent (the engine's spelling of the stack's top), so a stack deployed then
    keeps its resources; nothing else carries one. Observability came later, under the component from the
    start: it has no older place."""
    plan = plan_of(stack)
    (deployment,) = plan.of_type(DEPLOYMENT)
    direct = {r.urn for r in _children(plan, deployment) if r.type not in BORN_UNDER_THE_DEPLOYMENT}
    aliased = {r.urn for r in plan.resources if {"spec": {"noParent": True}} in r.aliases}
    assert direct and aliased == direct
