"""The check's ``file cache`` findings and the preview's ``File cache:`` lines: where each serving's GCS FUSE file
cache goes, read off the rendered pod templates, and whether the boot disk of each pool its pods land on holds it
(library review, M6: with ``file_cache='auto'`` a model too big for the VM's memory cached on a boot disk too small
for it, and nothing in the library path said so)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving_tools.check import run_checks, summary
from tpu_serving_tools.preview import stack as preview
from tpu_serving_tools.runtime.planview import PlanView

ON_DISK = "vllm-llama33-70b-v5e16"
"""Llama 3.3 70B on ct5lp-hightpu-4t VMs (192 GiB of memory): ``auto`` puts the cache on the boot disk (300 GB)."""
IN_MEMORY = "vllm-llama33-70b-v6e8"
"""The same model on ct6e-standard-8t VMs (1440 GiB): ``auto`` puts it in memory."""
TPU_POOL = "gcp:container/nodePool:NodePool"
MODEL = "meta-llama/Llama-3.3-70B-Instruct"


def _with_disk(stack: str, gb: int) -> dict[str, Any]:
    """The plan of ``stack`` with every TPU pool's boot disk at ``gb``, as a program declaring that would render it."""
    plan = copy.deepcopy(plan_of(stack).as_json())
    for r in plan["resources"]:
        config = r.get("inputs", {}).get("nodeConfig") or {}
        if r["type"] == TPU_POOL and str(config.get("machineType", "")).startswith("ct"):
            config["diskSizeGb"] = gb
    return plan


def _replaced(plan: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    text = json.dumps(plan)
    assert old in text
    return json.loads(text.replace(old, new))


def _volumes(value: Any) -> list[dict[str, Any]]:
    """Every entry of every ``volumes`` list in the plan's values."""
    if isinstance(value, list):
        return [v for x in value for v in _volumes(x)]
    if not isinstance(value, dict):
        return []
    listed = value.get("volumes") if isinstance(value.get("volumes"), list) else []
    return [v for v in listed if isinstance(v, dict)] + [v for x in value.values() for v in _volumes(x)]


def _cache_findings(plan: dict[str, Any]) -> list[tuple[str, bool, str]]:
    (scheduling,) = [r for r in run_checks(PlanView(plan)) if r.category == "scheduling"]
    return [(f.subject, f.ok, f.reason) for f in scheduling.findings if f.subject.startswith("file cache ")]


def test_check_fails_a_boot_disk_too_small_for_the_file_cache():
    plan = _with_disk(ON_DISK, 150)
    lines = summary("small-disk", run_checks(PlanView(plan)))
    failures = [x for x in lines if x.startswith("  [scheduling] file cache ")]
    assert failures, lines
    (line,) = failures
    # 70B in bf16: 130 GiB of weights, plus the stack rule's 40 GiB for the images: 183 GB
    assert "has diskSizeGb 150" in line and "model-weights (130 GiB)" in line, line
    assert "needs at least 183 GB" in line and "disk_size_gb" in line and "file_cache: memory" in line, line
    assert "file caches fit 0/1" in lines[0], lines[0]


def test_check_passes_the_same_cache_on_a_disk_that_holds_it():
    (finding,) = _cache_findings(_with_disk(ON_DISK, 200))
    assert finding[1], finding
    assert finding[2] == "130 GiB, boot disk of 200 GB (4 pools)", finding


def test_check_fails_a_file_cache_whose_model_the_catalog_does_not_know():
    """An unbounded cache of a model not in the catalog has no known size: the check says so, not passes."""
    plan = _replaced(_with_disk(ON_DISK, 2000), f"--served-model-name={MODEL}", "--served-model-name=acme/private-70b")
    ((_, ok, reason),) = _cache_findings(plan)
    assert not ok and "'acme/private-70b' is not in the catalog" in reason, reason


def test_check_fails_a_file_cache_whose_pods_no_pool_takes():
    """A selector that selects no pool leaves no boot disk to size: that fails (not passes with nothing checked)."""
    plan = _replaced(plan_of(ON_DISK).as_json(), '"tpu-v5-lite-podslice"', '"tpu-v5-nowhere"')
    ((_, ok, reason),) = _cache_findings(plan)
    assert not ok and "no node pool takes pod" in reason, reason


def test_check_counts_the_cache_in_memory_as_fitting_without_a_disk():
    ((_, ok, reason),) = _cache_findings(_with_disk(IN_MEMORY, 50))
    assert ok and reason.endswith("memory"), reason


@pytest.mark.parametrize("stack", STACKS)
def test_check_counts_a_file_cache_finding_for_every_gcsfuse_stack(stack: str):
    plan = plan_of(stack).as_json()
    gcsfuse_weights = any(
        v.get("csi", {}).get("driver") == "gcsfuse.csi.storage.gke.io" and v["csi"].get("readOnly")
        for v in _volumes(plan)
    )
    found = _cache_findings(plan)
    assert all(ok for _, ok, _ in found), found
    head = summary(stack, run_checks(PlanView(plan)))[0]
    if gcsfuse_weights:
        assert found and f"file caches fit {len(found)}/{len(found)}" in head, head
    else:
        assert "file caches fit" not in head, head


def test_preview_prints_where_the_file_cache_goes():
    disk = [x for x in preview.summary(plan_of(ON_DISK)).splitlines() if x.startswith("File cache: ")]
    assert disk == ["File cache: vllm-llama70b/vllm: 130 GiB, boot disk of 300 GB (4 pools)"]
    memory = [x for x in preview.summary(plan_of(IN_MEMORY)).splitlines() if x.startswith("File cache: ")]
    assert memory == ["File cache: vllm-llama70b/vllm: 130 GiB, memory"]


def test_preview_of_a_program_says_when_the_disk_is_too_small():
    plan = plan_of(ON_DISK)
    small = copy.copy(plan)
    small.outputs = {}  # a program that builds the components itself: no stack outputs
    small.resources = [copy.deepcopy(r) for r in plan.resources]
    for r in small.resources:
        if r.type == TPU_POOL and "diskSizeGb" in (r.inputs.get("nodeConfig") or {}):
            r.inputs["nodeConfig"]["diskSizeGb"] = 150
    (line,) = [x for x in preview.summary(small).splitlines() if x.startswith("File cache: ")]
    assert "boot disk of 150 GB" in line and "`tpu-serving check` fails" in line, line


def test_check_fails_the_reviews_405b_on_the_default_disk():
    """The review's program: Llama 3.1 405B in bf16 (754 GiB) cached on 200 GB boot disks."""
    plan = _replaced(
        _with_disk(ON_DISK, 200),
        f"--served-model-name={MODEL}",
        "--served-model-name=meta-llama/Llama-3.1-405B-Instruct",
    )
    ((_, ok, reason),) = _cache_findings(plan)
    assert not ok and "(754 GiB)" in reason and "needs at least 853 GB" in reason, reason


def test_check_fails_a_cache_on_an_existing_pool_that_declares_no_disk():
    """An existing pool's boot disk is outside the plan unless declared (ExistingTpuNodePoolArgs.disk_size_gb)."""
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-existing").as_json())
    for r in plan["resources"]:
        if r["type"] == "tpu-serving:index:ExistingTpuNodePool":
            assert r["inputs"].pop("diskSizeGb") == 300
    ((_, ok, reason),) = _cache_findings(plan)
    assert not ok and "declares no boot disk size" in reason, reason


def test_cache_disk_how_of_a_pod_no_pool_takes_names_no_empty_list():
    """New-user review 16, m3: the preview's File cache line printed "boot disk ()" for a pod placed on no pool."""
    from tpu_serving_tools.runtime.cache_disk import Cache, _how

    how = _how(Cache(("weights",), "boot disk", 15.0), [])
    assert how == "15 GiB, boot disk of no pool (the pod is placed on none)" and "()" not in how
