"""tpu_serving.phases: the deployment's phases, from a stack's settings to its components."""

from __future__ import annotations

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
