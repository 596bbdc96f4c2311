"""Sizing hints: the smallest slice that holds a vLLM model, quantization suggested only when it is not set, and
a single-host machine type named where a slice name means a multi-host one (issue "A platform team adopts it")."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load
from tpu_serving import catalog
from tpu_serving.config import ConfigError
from tpu_serving.models import hbm_fit_problem
from tpu_serving_tools.preview import single_host_equivalent, sizing_notes


def vllm_on(slice_name: str, **engine: object) -> dict:
    """The vLLM fixture (Llama 3.3 70B in bf16) on one slice of ``slice_name``."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:tpuSlices"][0]["slice"] = slice_name
    cfg["tpu-serving:serving"]["engine"] = {
        "tensorParallelSize": catalog.resolve_slice_name(slice_name).chips,
        **engine,
    }
    return cfg


def fit_problem(cfg: dict) -> str:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    (problem,) = [p for p in err.value.problems if "GiB of HBM" in p]
    return problem


def test_sizing_vllm_names_the_smallest_slice_that_holds_the_model():
    # 70.6B parameters in bf16, about 131 GiB; a v5litepod-8 has 128 GiB, 4x4 (256 GiB) is the first that holds
    # 131 GiB at memoryUtilization 0.9 (a 4x2 would need 146 GiB).
    problem = fit_problem(vllm_on("v5litepod-8"))
    assert "the smallest ct5lp-hightpu-4t slice that holds them is v5litepod-16, topology 4x4: 256 GiB" in problem
    assert "quantize (engine.quantization)" in problem


def test_sizing_vllm_names_the_generations_smallest_slice_past_a_single_host_machine_type():
    """ct5lp-hightpu-8t has one topology, 2x4: the message names the smallest v5e slice that holds the model, of
    the 4-chip machine type, instead of ending at "no ct5lp-hightpu-8t slice holds them"."""
    cfg = vllm_on("v5litepod-8")
    pool = cfg["tpu-serving:tpuSlices"][0]
    del pool["slice"]
    pool |= {"machineType": "ct5lp-hightpu-8t", "topology": "2x4"}
    problem = fit_problem(cfg)
    assert (
        "no ct5lp-hightpu-8t slice holds them; the smallest v5e slice that does is v5litepod-16 (ct5lp-hightpu-4t, "
        "topology 4x4: 256 GiB), quantize (engine.quantization)" in problem
    )


def test_sizing_hbm_fit_names_the_generations_smallest_slice_past_a_single_host_machine_type():
    """The JetStream and Saxml check (models.hbm_fit_problem) alike: 405B in int8 on a v6e 2x4 VM."""
    problem = hbm_fit_problem("k", 405, "int8", catalog.slice_shape("ct6e-standard-8t", "2x4"))
    assert problem.endswith(
        "no ct6e-standard-8t topology fits; the smallest v6e slice that does is v6e-16 (ct6e-standard-4t, "
        "topology 4x4: 512 GiB)"
    )
    assert catalog.smallest_fitting_slice(catalog.V5E, 10_000) is None


def test_sizing_vllm_model_size_required_shows_a_value():
    cfg = vllm_on("v5litepod-16")
    cfg["tpu-serving:serving"]["servedModelName"] = "acme/house-model"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    (problem,) = [p for p in err.value.problems if "modelSize" in p]
    assert (
        "set it, e.g. `modelSize: {parametersBillions: 13, precision: bf16}` (precision: fp32, bf16, fp16, fp8, "
        "int8, int4)" in problem
    )


def test_sizing_vllm_does_not_suggest_quantizing_a_quantized_engine():
    problem = fit_problem(vllm_on("v5litepod-4", quantization="fp8"))
    assert "quantize" not in problem and "use a larger slice" in problem


def test_sizing_single_host_equivalent_of_a_multi_host_slice_name():
    v6e8 = catalog.resolve_slice_name("v6e-8")
    assert (v6e8.machine_type.name, v6e8.vms) == ("ct6e-standard-4t", 2)
    one = single_host_equivalent(v6e8)
    assert one is not None and (one.machine_type.name, one.topology, one.vms) == ("ct6e-standard-8t", "2x4", 1)
    # a slice no single VM holds, and a slice that is one VM already, have none
    assert single_host_equivalent(catalog.resolve_slice_name("v6e-16")) is None
    assert single_host_equivalent(catalog.slice_shape("ct6e-standard-8t", "2x4")) is None


def test_sizing_preview_note_names_the_single_host_machine_type_once_per_shape():
    v6e8 = catalog.resolve_slice_name("v6e-8")
    (note,) = sizing_notes([("a", v6e8), ("b", v6e8), ("c", catalog.resolve_slice_name("v6e-16"))])
    assert note == (
        "  note: a, b are each 2 ct6e-standard-4t VMs (multi-host); one ct6e-standard-8t VM holds the same 8 chips "
        "(tpuSlices: machineType: ct6e-standard-8t, topology: 2x4) if the workload wants one host"
    )


def test_sizing_vllm_names_the_one_vm_slice_before_a_multi_host_one():
    """User review round 42, M2: the refusal sent a 70B model on a v6e-4 to v6e-8 on ct6e-standard-4t, two VMs under
    Ray, which the preview then cautions against; ct6e-standard-8t holds it on one VM."""
    problem = fit_problem(vllm_on("v6e-4"))
    assert (
        "use a larger slice: one VM holds them (machineType ct6e-standard-8t, topology 2x4: 256 GiB; a "
        "ct6e-standard-4t slice needs 2x4 over 2 VMs, which vLLM spans with Ray)" in problem
    )
