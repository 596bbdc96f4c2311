"""tpu_serving.config.models, the stack file's models: its booleans are true or false, its integers numbers (issue 22 review, item 3): pydantic's lax mode
read `publicControlPlane: "yes"` as true, `imageStreaming: no` (text to the Pulumi CLI's YAML 1.2) as false and
`count: true` as 1."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.configs import GOOD, SERVING, VLLM, as_engine_config, load, with_change
from tpu_serving.config import ConfigError, StackConfig, load_stack_config


def problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


TRUE_OR_FALSE = "must be true or false"


@pytest.mark.parametrize(
    ("path", "value", "key"),
    [
        ("tpu-serving:cluster/binaryAuthorization", "yes", "tpu-serving:cluster.binaryAuthorization"),
        ("tpu-serving:cluster/imageStreaming", "no", "tpu-serving:cluster.imageStreaming"),
        ("tpu-serving:cluster/gcsFuseCsiDriver", "off", "tpu-serving:cluster.gcsFuseCsiDriver"),
        ("tpu-serving:cluster/privateNodes", "true", "tpu-serving:cluster.privateNodes"),
        ("tpu-serving:cluster/deletionProtection", 0, "tpu-serving:cluster.deletionProtection"),
        ("tpu-serving:tpuSlices/0/spot", "on", "tpu-serving:tpuSlices[0].spot"),
        ("tpu-serving:buckets/0/versioning", "1", "tpu-serving:buckets[0].versioning"),
    ],
)
def test_models_stack_scalars_a_boolean_is_true_or_false(path, value, key):
    (problem,) = problems(with_change(path, value))
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    assert problem.startswith(f"{key} = {shown}: {TRUE_OR_FALSE}"), problem


@pytest.mark.parametrize(
    ("path", "value", "key"),
    [
        ("tpu-serving:tpuSlices/0/count", True, "tpu-serving:tpuSlices[0].count = true"),
        ("tpu-serving:tpuSlices/0/diskSizeGb", False, "tpu-serving:tpuSlices[0].diskSizeGb = false"),
        ("tpu-serving:tpuSlices/0/count", "2", 'tpu-serving:tpuSlices[0].count = "2"'),
        ("tpu-serving:buckets/0/scratchTtlDays", True, "tpu-serving:buckets[0].scratchTtlDays = true"),
        ("tpu-serving:tpuSlices/0/maxRunDurationHours", True, "tpu-serving:tpuSlices[0].maxRunDurationHours = true"),
    ],
)
def test_models_stack_scalars_an_integer_is_a_number(path, value, key):
    (problem,) = problems(with_change(path, value))
    assert problem.startswith(f"{key}: must be an integer"), problem


def test_models_stack_scalars_a_number_is_not_a_boolean():
    (problem,) = problems(with_change("tpu-serving:buckets/0/expectedSizeGb", True))
    assert problem.startswith("tpu-serving:buckets[0].expectedSizeGb = true: must be a number"), problem


def test_models_stack_scalars_nested_settings_of_every_backend_are_strict():
    vllm = copy.deepcopy(VLLM)
    vllm["tpu-serving:serving"].update(replicas=True, compilationCache="no")
    vllm["tpu-serving:serving"]["engine"] = {"maxModelLen": True, "memoryUtilization": "0.9"}
    found = problems(vllm)
    assert "tpu-serving:serving.replicas = true: must be an integer" in " ".join(found), found
    assert f'tpu-serving:serving.compilationCache = "no": {TRUE_OR_FALSE}' in " ".join(found), found
    assert "tpu-serving:serving.engine.maxModelLen = true: must be an integer" in " ".join(found), found
    assert 'tpu-serving:serving.engine.memoryUtilization = "0.9": must be a number' in " ".join(found), found
    jetstream = copy.deepcopy(SERVING)
    jetstream["tpu-serving:serving"]["maxtext"]["scanLayers"] = "false"
    jetstream["tpu-serving:serving"]["maxtext"]["perDeviceBatchSize"] = True
    found = problems(jetstream)
    assert f'tpu-serving:serving.maxtext.scanLayers = "false": {TRUE_OR_FALSE}' in " ".join(found), found
    assert "tpu-serving:serving.maxtext.perDeviceBatchSize = true: must be an integer" in " ".join(found), found


def test_models_stack_scalars_json_booleans_and_numbers_still_load():
    cfg = with_change("tpu-serving:cluster/imageStreaming", False)
    cfg = with_change("tpu-serving:tpuSlices/0/count", 2, cfg)
    cfg = with_change("tpu-serving:tpuSlices/0/diskSizeGb", 300.0, cfg)  # an integral float is its integer
    cfg = with_change("tpu-serving:buckets/0/expectedSizeGb", 800, cfg)  # an integer where a number goes
    stack = load(cfg)
    assert stack.cluster.image_streaming is False
    assert stack.tpu_slices[0].count == 2 and stack.tpu_slices[0].disk_size_gb == 300
    assert stack.buckets[0].expected_size_gb == 800.0
    vllm = copy.deepcopy(VLLM)
    vllm["tpu-serving:serving"]["engine"] = {"memoryUtilization": 1 - 0.25, "maxModelLen": 4096}
    assert load(vllm).serving.engine.memory_utilization == 0.75
    # The engine hands over the objects as JSON text: nested booleans arrive as JSON booleans.
    assert '"imageStreaming": false' in as_engine_config(cfg)["tpu-serving:cluster"]
    assert load_stack_config(as_engine_config(GOOD)).cluster.maintenance.exclusions[0].name == "hold-node-upgrades"


def _schemas(node: Any) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _schemas(v)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from _schemas(v)


def test_models_stack_scalars_every_boolean_integer_and_number_of_a_stack_file_is_strict():
    """Every bool, int and float the stack file's models validate, at any depth and in every backend, is strict:
    a setting added later with a plain ``bool`` fails here."""
    scalars = [s for s in _schemas(StackConfig.__pydantic_core_schema__) if s.get("type") in {"bool", "int", "float"}]
    assert len([s for s in scalars if s["type"] == "bool"]) > 20
    lax = [s for s in scalars if not s.get("strict")]
    assert not lax, lax


def test_models_zones_unset_means_the_stacks_zone():
    cfg = load(VLLM)
    assert cfg.zone_of(cfg.tpu_slices[0]) == "us-west4-a"
    moved = load(with_change("tpu-serving:tpuSlices/0/zone", "us-west4-c", VLLM))
    assert moved.zone_of(moved.tpu_slices[0]) == "us-west4-c"
