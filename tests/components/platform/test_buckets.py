"""tpu_serving.platform.buckets: the stack's buckets (Buckets), the buckets it shares with others (SharedBuckets),
and their names."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tests.fixtures.components import run
from tests.fixtures.configs import VLLM, load
from tpu_serving import Buckets, BucketsArgs, BucketSpec
from tpu_serving_tools.preview.offline import main_program, run_program
from tpu_serving_tools.preview.stack_files import load_project, stack_config
from tpu_serving_tools.runtime.planview import PlanView


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


# Shared buckets (sharedBuckets, SharedBuckets): read at bucket scope, by the node account too where pods share their
# node's network.


def test_buckets_security_shared_buckets_are_read_at_bucket_scope():
    project = load_project(ROOT)
    config = stack_config(project, "vllm-llama33-70b-v5e16")
    config["tpu-serving:sharedBuckets"] = json.dumps([{"name": "team-llama-weights", "key": "weights"}])
    plan = run_program(main_program(project), config, project=project.name, stack="vllm-llama33-70b-v5e16")
    (shared,) = plan.of_type("tpu-serving:index:SharedBuckets")
    assert shared.inputs == {"bucketNames": ["team-llama-weights"]}
    grants = [
        r
        for r in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if r.inputs["bucket"] == "team-llama-weights"
    ]
    (grant,) = grants
    assert grant.inputs["role"] == "roles/storage.objectViewer" and "shared-weights" in grant.name


@pytest.mark.parametrize(
    "shared, problem",
    [
        ([{"name": "Bad_Bucket", "key": "w"}], "sharedBuckets[0].name"),
        ([{"name": "b1x", "key": "w"}, {"name": "b2x", "key": "w"}], "key 'w' is declared twice"),
    ],
)
def test_buckets_security_shared_buckets_refuse_bad_names_and_twice_declared_keys(shared, problem):
    from tpu_serving.config import ConfigError

    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:sharedBuckets": shared})
    assert problem in str(err.value)


def test_buckets_security_host_network_pods_read_shared_buckets_as_their_nodes():
    from tpu_serving_tools.runtime import identity

    project = load_project(ROOT)
    config = stack_config(project, "saxml-175b-v5e32x2")
    config["tpu-serving:sharedBuckets"] = json.dumps([{"name": "team-weights", "key": "weights"}])
    plan = run_program(main_program(project), config, project=project.name, stack="saxml-175b-v5e32x2").as_json()
    grants = [
        r
        for r in plan["resources"]
        if r["type"] == "gcp:storage/bucketIAMMember:BucketIAMMember" and r["inputs"]["bucket"] == "team-weights"
    ]
    # the workload identity's account, and the node account of the model servers' slices (host network)
    assert len(grants) == 2 and all(r["inputs"]["role"] == "roles/storage.objectViewer" for r in grants)
    assert len({r["parent"] for r in grants}) == 2
    (need,) = [f for f in identity.check(PlanView(plan)).findings if "team-weights" in f.subject]
    assert need.ok and "sax-model-server" in need.subject
    # without the node account's grant the model servers could not read it, and make check says so
    node_grant = next(r for r in grants if "-wi-" not in r["name"])
    plan["resources"].remove(node_grant)
    (need,) = [f for f in identity.check(PlanView(plan)).findings if "team-weights" in f.subject]
    assert not need.ok and "no storage role" in need.reason
