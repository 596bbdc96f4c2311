"""tpu_serving.platform.buckets: the stack's buckets (Buckets), the buckets it shares with others (SharedBuckets),
and their names."""

from __future__ import annotations

from tests.fixtures.components import run
from tpu_serving import Buckets, BucketsArgs, BucketSpec


def test_buckets_component_protects_checkpoints_only():
    def program():
        Buckets(
            "b",
            BucketsArgs(
                project="p-123456",
                buckets=[
                    BucketSpec("checkpoints", "p-ckpt", "us-east5"),
                    BucketSpec("scratch", "p-tmp", "us-east5", ttl_days=3),
                ],
            ),
        )

    plan = run(program)
    by_name = {b.inputs["name"]: b for b in plan.of_type("gcp:storage/bucket:Bucket")}
    assert by_name["p-ckpt"].protect and not by_name["p-tmp"].protect
    assert by_name["p-tmp"].inputs["lifecycleRules"] == [{"action": {"type": "Delete"}, "condition": {"age": 3}}]
    assert all(b.inputs["publicAccessPrevention"] == "enforced" for b in by_name.values())


def test_buckets_name_rule_is_spelled_out():
    """buckets.bucket_name_problem (mutmut_5): the message states Cloud Storage's naming rule."""
    from tpu_serving.platform.buckets import bucket_name_problem

    assert bucket_name_problem("ok-bucket") == ""
    assert bucket_name_problem("Bad_Bucket").endswith("starting and ending with a letter or digit")
