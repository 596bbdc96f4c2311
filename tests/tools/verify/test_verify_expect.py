"""tpu_serving_tools.verify.expect: what verify compares a cluster with, from a stack file's plan (its settings) or a
program's that builds the components itself (its resources alone)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STACKS, plan_of
from tests.fixtures.pools import pool_args
from tpu_serving import TpuNodePool
from tpu_serving.config.loading import load_stack_config
from tpu_serving_tools.preview.offline import run_program
from tpu_serving_tools.verify.checks import Pool
from tpu_serving_tools.verify.expect import expectations, pools, resource_pools


def _json(plan: object) -> dict:
    return json.loads(json.dumps(plan.as_json(), default=str))  # type: ignore[attr-defined]


def test_expectations_of_a_program_without_a_stack_file_come_from_its_resources():
    """User review round 42, M3: verify refused a library program's plan for missing stack-file keys."""
    plan = run_program(
        lambda: TpuNodePool("tpu", pool_args(pool_names=("c-a",))), {}, project="my-platform", stack="dev"
    )
    expect = expectations(_json(plan))
    assert expect.pools == {"c-a": Pool("c-a", "tpu-v6e-slice", "4x4", 4, 4)}
    assert expect.serving is False


@pytest.mark.parametrize("stack", [s for s in STACKS if not s.endswith("-existing")])
def test_resource_pools_agree_with_the_stack_settings_pools(stack: str):
    """The two readings of a created cluster's TPU pools, off the plan's NodePools and off the stack's settings,
    agree, and find some."""
    plan = _json(plan_of(stack))
    from_settings = pools(load_stack_config(plan["config"]))
    assert from_settings and resource_pools(plan["resources"]) == from_settings


def test_expectations_of_a_stack_files_plan_still_read_its_settings():
    plan = _json(plan_of("vllm-llama33-70b-existing"))
    expect = expectations(plan)
    assert expect.pools and expect.serving  # existing pools: only the settings name them
    assert resource_pools(plan["resources"]) == {}


def test_expectations_read_the_settings_under_the_plans_own_project():
    """User review 11, M1: a ``TpuServingDeployment`` program whose Pulumi project has another name records its
    settings as ``<project>:key``; verify refused them as missing ``tpu-serving:`` keys."""
    plan = _json(plan_of("vllm-llama33-70b-existing"))
    renamed = {
        ("acme-serving:" + k.split(":", 1)[1] if k.startswith("tpu-serving:") else k): v
        for k, v in plan["config"].items()
    }
    assert renamed != plan["config"]
    theirs = expectations({**plan, "project": "acme-serving", "config": renamed})
    assert theirs == expectations(plan)
    assert theirs.pools and theirs.serving


def test_verify_expect_a_patch_resource_is_the_object_of_its_kind():
    """The e2e run of vllm-llama33-70b-existing failed verify: its shared-cluster PriorityClasses, declared as
    PriorityClassPatch resources, were looked up as a kind PriorityClassPatch, which no API server serves."""
    from tpu_serving_tools.verify.expect import api_version, declared_objects

    assert api_version("kubernetes:scheduling.k8s.io/v1:PriorityClassPatch") == (
        "scheduling.k8s.io/v1",
        "PriorityClass",
    )
    assert api_version("kubernetes:core/v1:Service") == ("v1", "Service")
    patch = {
        "type": "kubernetes:scheduling.k8s.io/v1:PriorityClassPatch",
        "inputs": {"metadata": {"name": "tpu-serving-online"}},
    }
    assert declared_objects([patch]) == [("scheduling.k8s.io/v1", "PriorityClass", None, "tpu-serving-online")]


def test_expectations_class_pools_give_each_compute_class_its_pools_slice() -> None:
    expect = expectations(_json(plan_of("vllm-llama31-405b-v6e16")))
    assert expect.classes == {"vllm-llama405b-serving": Pool("vllm-llama405b-serving", "tpu-v6e-slice", "4x4", 4, 4)}
    assert expectations(_json(plan_of("vllm-llama33-70b-v5e16"))).classes == {}
