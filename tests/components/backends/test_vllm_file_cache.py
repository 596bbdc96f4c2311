"""backends.vllm.file_cache: where the gcsfuse loader's file cache of the weights lives, as the rendered pods, the
quota and the stack checks carry it."""

from __future__ import annotations

import pytest

from tests.components.backends.test_vllm import args_of
from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load, with_serving
from tpu_serving import catalog
from tpu_serving.backends.vllm.args import VllmEngineSettings
from tpu_serving.backends.vllm.file_cache import (
    CACHE_VOLUME,
    FileCache,
    cache_gib,
    max_size_option,
    memory_gib,
    memory_problem,
)
from tpu_serving.common.quota import memory_bytes
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects

GIB = 2**30
V6E8 = catalog.resolve_slice_name("v6e-8")
TEMPLATE = "leaderWorkerTemplate"


def _workers(stack: str) -> list[dict]:
    """Every pod template of the stack's vLLM groups (a LeaderWorkerSet's, or each DisaggregatedSet role's)."""
    out = []
    for o in kubernetes_objects(plan_of(stack)):
        if o["kind"] == "LeaderWorkerSet":
            out.append(o["spec"][TEMPLATE]["workerTemplate"])
        elif o["kind"] == "DisaggregatedSet":
            out += [r["spec"][TEMPLATE]["workerTemplate"] for r in o["spec"]["roles"]]
    assert out, f"{stack}: no vLLM group"
    return out


def _mount_options(template: dict) -> list[str]:
    (weights,) = [v for v in template["spec"]["volumes"] if v["name"] == "model-weights"]
    return weights["csi"]["volumeAttributes"]["mountOptions"].split(",")


def test_file_cache_cache_gib_rounds_up_with_headroom():
    assert cache_gib(130.0) == 138  # 130 x 1.05 = 136.5, up to 137, plus 1
    assert cache_gib(1.0) == 3


def test_file_cache_auto_is_memory_on_a_v6e_host_and_the_boot_disk_on_a_v5e_host():
    pod = memory_bytes("96Gi") + memory_bytes("30Gi")
    assert memory_gib(FileCache.AUTO, "ct6e-standard-8t", pod, 130.0) == 138  # 1440 GiB of memory
    assert memory_gib(FileCache.AUTO, "ct5lp-hightpu-4t", pod, 130.0) is None  # 192 GiB: 126 GiB taken
    assert memory_gib(FileCache.BOOT_DISK, "ct6e-standard-8t", pod, 130.0) is None
    assert memory_gib(FileCache.MEMORY, "ct6e-standard-8t", pod, None) is None  # no size, no sized volume


def test_file_cache_memory_refused_where_the_vm_cannot_hold_it():
    pod = memory_bytes("96Gi") + memory_bytes("30Gi")
    why = memory_problem("ct5lp-hightpu-4t", pod, 130.0)
    assert "ct5lp-hightpu-4t" in why and "138 GiB" in why and "boot-disk or auto" in why
    assert memory_problem("ct6e-standard-8t", pod, 130.0) == ""


def test_file_cache_component_refuses_memory_on_a_small_host_and_renders_it_on_a_large_one():
    small = args_of(file_cache=FileCache.MEMORY)  # v5e 4x4: ct5lp-hightpu-4t
    assert any(p.startswith("file_cache = 'memory'") for p in small.problems())
    large = args_of(shape=V6E8, file_cache=FileCache.MEMORY, engine=VllmEngineSettings(tensor_parallel_size=8))
    assert not [p for p in large.problems() if p.startswith("file_cache")]
    assert large.memory_cache_gib == 138


def test_file_cache_stack_refuses_memory_on_a_v5e_slice():
    with pytest.raises(ConfigError) as err:
        load(with_serving(VLLM, fileCache="memory"))
    assert 'tpu-serving:serving.fileCache = "memory"' in str(err.value)


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v6e8", "vllm-llama33-70b-disagg-v6e8x2"])
def test_file_cache_in_memory_on_the_v6e_stacks_is_sized_alike_in_volume_option_and_request(stack):
    for template in _workers(stack):
        (cache,) = [v for v in template["spec"]["volumes"] if v["name"] == CACHE_VOLUME]
        assert cache["emptyDir"]["medium"] == "Memory"
        size = cache["emptyDir"]["sizeLimit"]
        assert template["metadata"]["annotations"]["gke-gcsfuse/memory-request"] == size
        assert max_size_option(int(size.removesuffix("Gi"))) in _mount_options(template)


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v5e16", "vllm-llama33-70b-existing"])
def test_file_cache_stays_on_the_boot_disk_on_the_v5e_stacks(stack):
    for template in _workers(stack):
        assert CACHE_VOLUME not in [v["name"] for v in template["spec"]["volumes"]]
        assert "gke-gcsfuse/memory-request" not in template["metadata"]["annotations"]
        assert "file-cache:max-size-mb:-1" in _mount_options(template)


def test_file_cache_the_quota_holds_every_pod_with_its_cache_request():
    """The namespace quota (the plan's ResourceQuota) covers the groups at their maximum plus the surge group, each
    pod with its container's and its cache's requests (read off the rendered pods, not off the quota code)."""
    plan = plan_of("vllm-llama33-70b-v6e8")
    (quota,) = [o for o in kubernetes_objects(plan) if o["kind"] == "ResourceQuota"]
    hard = memory_bytes(quota["spec"]["hard"]["requests.memory"])
    (template,) = _workers("vllm-llama33-70b-v6e8")
    cache = memory_bytes(template["metadata"]["annotations"]["gke-gcsfuse/memory-request"])
    container = memory_bytes(template["spec"]["containers"][0]["resources"]["requests"]["memory"])
    (hpa,) = [o for o in kubernetes_objects(plan) if o["kind"] == "HorizontalPodAutoscaler"]
    groups = hpa["spec"]["maxReplicas"] + 1  # the surge rollout's extra group
    assert hard >= groups * (cache + container)
    assert cache >= 130 * GIB
