"""Sizing hints: the smallest slice that holds a vLLM model, quantization suggested only when it is not set, and
a single-host machine type named where a slice name means a multi-host one (issue "A platform team adopts it")."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load
from tpu_serving import catalog
from tpu_serving.backends.vllm.args import PYTHON, VllmEngineSettings, fit_problems
from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision, hbm_fit_problem
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.stack import single_host_equivalent, sizing_notes


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
    # 70.6B parameters in bf16, about 131 GiB; a v5litepod-8 (one ct5lp-hightpu-8t VM) has 128 GiB, and the v5e
    # 4x4 (256 GiB) is the first that holds 131 GiB and a request's KV cache at memoryUtilization 0.9.
    problem = fit_problem(vllm_on("v5litepod-8"))
    assert (
        "no ct5lp-hightpu-8t slice holds them; the smallest v5e slice that does is v5litepod-16 (ct5lp-hightpu-4t, "
        "topology 4x4: 256 GiB)" in problem
    )
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
        "set it, e.g. `modelSize: {parametersBillions: 13, precision: bf16, attention: {layers: 40, kvHeads: 40, "
        "headDim: 128}}` (precision: fp32, bf16, fp16, fp8, int8, int4)" in problem
    )


def test_sizing_vllm_does_not_suggest_quantizing_a_quantized_engine():
    problem = fit_problem(vllm_on("v5litepod-4", quantization="fp8"))
    assert "quantize" not in problem and "use a larger slice" in problem


def test_sizing_single_host_equivalent_of_a_multi_host_slice_name():
    v6e8 = catalog.slice_shape("ct6e-standard-4t", "2x4")  # the two-VM 2x4 (slice name v6e-8 is the one VM)
    assert (v6e8.machine_type.name, v6e8.vms) == ("ct6e-standard-4t", 2)
    one = single_host_equivalent(v6e8)
    assert one is not None and (one.machine_type.name, one.topology, one.vms) == ("ct6e-standard-8t", "2x4", 1)
    # a slice no single VM holds, and a slice that is one VM already, have none
    assert single_host_equivalent(catalog.resolve_slice_name("v6e-16")) is None
    assert single_host_equivalent(catalog.slice_shape("ct6e-standard-8t", "2x4")) is None


def test_sizing_preview_note_names_the_single_host_machine_type_once_per_shape():
    v6e8 = catalog.slice_shape("ct6e-standard-4t", "2x4")
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


def test_sizing_vllm_counts_the_kv_cache_of_one_max_model_len_request():
    """Library review 11, M1: Qwen3-235B-A22B in bf16 (438 GiB) fits a v6e-16's 461 GiB alone, but vLLM refuses to
    start without the KV cache of one maxModelLen request: 94 layers x 16 heads (its 4 replicated to the 16-way
    tensor parallelism) x K and V x 128 x 2 bytes = 0.72 MiB a token, 23.5 GiB for 32768 tokens."""
    cfg = vllm_on("v6e-16", maxModelLen=32768)
    cfg["tpu-serving:serving"]["servedModelName"] = "Qwen/Qwen3-235B-A22B"
    problem = fit_problem(cfg)
    assert "one request of engine.maxModelLen 32768 tokens 23.5 GiB of KV cache: 461.2 GiB" in problem
    assert "lower engine.maxModelLen to at most 32180, or use a larger slice" in problem
    cfg["tpu-serving:serving"]["engine"]["maxModelLen"] = 32180
    load(cfg)  # the longest request the message names fits


def test_sizing_vllm_declared_size_needs_its_attention_shape():
    """The library user's plant of library review 11 (246B in bf16 on a v6e-16) is refused in Python's spelling too,
    and a declared size without its attention shape is refused before any sum."""
    shape, engine = catalog.resolve_slice_name("v6e-16"), [("", VllmEngineSettings())]
    (bare,) = fit_problems(ModelSize(246, WeightPrecision.BF16), "acme/m", engine, shape, PYTHON)
    assert bare.startswith("model_size.attention: required for the KV cache's share of the HBM fit check")
    qwen = Attention(layers=94, kv_heads=4, head_dim=128)
    (full,) = fit_problems(ModelSize(246, WeightPrecision.BF16, qwen), "acme/m", engine, shape, PYTHON)
    assert full.startswith("model_size: 246B parameters in bf16 need about 458 GiB of HBM, and one request of ")
    assert "lower engine.max_model_len to at most 3610" in full
    assert fit_problems(ModelSize(200, WeightPrecision.BF16, qwen), "acme/m", engine, shape, PYTHON) == []


def test_sizing_attention_kv_gib_replicates_heads_and_pads_lanes():
    """KV heads fewer than the tensor parallelism are replicated up to it, a head is padded to 128 lanes."""
    llama = Attention(layers=80, kv_heads=8, head_dim=128)
    assert llama.kv_gib(2**20, 8) == 80 * 2 * 8 * 128 * 2 / 2**10
    assert llama.kv_gib(1, 16) == 2 * llama.kv_gib(1, 8) == 2 * llama.kv_gib(1, 1)
    assert Attention(layers=1, kv_heads=1, head_dim=64).kv_gib(2**30, 1) == 2 * 128 * 2


def test_sizing_jetstream_fit_refuses_an_attention_shape_it_does_not_read():
    """The JetStream fit counts weights only: a declared ``attention`` there would be a setting nobody reads."""
    from tpu_serving.backends.jetstream.args import MaxTextSettings
    from tpu_serving.backends.jetstream.args import fit_problems as jetstream_fit

    maxtext = MaxTextSettings(
        "base.yml", "house", max_prefill_predict_length=1024, max_target_length=2048, per_device_batch_size=1
    )
    shape = catalog.resolve_slice_name("v6e-16")
    shaped = ModelSize(13, WeightPrecision.BF16, Attention(layers=40, kv_heads=40, head_dim=128))
    assert jetstream_fit(shaped, maxtext, shape) == [
        "model_size.attention: vLLM's KV cache check reads it; the JetStream fit counts the weights only: leave it out"
    ]
    assert jetstream_fit(ModelSize(13, WeightPrecision.BF16), maxtext, shape) == []
