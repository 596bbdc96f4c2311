"""tpu_serving.backends.vllm.args: the rules of VllmServingArgs' fields."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from pydantic.alias_generators import to_snake

from tests.components.common.test_settings import vllm_args
from tests.fixtures.configs import VLLM, load, stack_problems
from tpu_serving import catalog
from tpu_serving.backends.vllm import VllmServingArgs
from tpu_serving.backends.vllm.args import PYTHON, VllmEngineSettings, fit_problems
from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError


def test_node_pools_problem_names_a_pool_gke_cannot_have():
    """Library review 10, m3: ``node_pools=('chat-v6e8-A',)`` passed the component, and the check spoke only of the
    pods it left unplaced."""
    from tpu_serving.backends.vllm.args import node_pools_problem

    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-b")) == ""
    assert node_pools_problem(("chat-v6e8-a", "chat-v6e8-A")).startswith("'chat-v6e8-A': must consist of lower-case")


def test_vllm_args_vllm_token_without_hugging_face_loader_is_refused_in_python():
    """vllm.args.VllmServingArgs.problems: a token secret with another loader, in Python's spelling."""
    from tpu_serving.backends.vllm.args import SecretKey

    args = _vllm_args(
        hf_token_secret=SecretKey(name="hf", key="token"),
    )
    assert "hf_token_secret: only the hugging-face loader reads a token" in args.problems()


def _vllm_args(**changes: object):
    """Valid vLLM serving arguments for a v5e-16 slice, with ``changes``."""
    from tpu_serving.backends.vllm.args import VllmServingArgs
    from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision

    base: dict[str, object] = dict(
        namespace="ns",
        service_account="sa",
        shape=catalog.resolve_slice_name("v5litepod-16"),
        model="m",
        served_model_name="x",
        model_size=ModelSize(8, WeightPrecision.BF16, Attention(layers=32, kv_heads=8, head_dim=128)),  # "x": unknown
        weights_bucket="b",
    )
    return VllmServingArgs(**{**base, **changes})  # type: ignore[arg-type]


# Sizing hints: the smallest slice that holds a vLLM model, quantization suggested only when it is not set (issue
# "A platform team adopts it").


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


def test_vllm_args_sizing_vllm_names_the_smallest_slice_that_holds_the_model():
    # 70.6B parameters in bf16, about 131 GiB; a v5litepod-8 (one ct5lp-hightpu-8t VM) has 128 GiB, and the v5e
    # 4x4 (256 GiB) is the first that holds 131 GiB and a request's KV cache at memoryUtilization 0.9.
    problem = fit_problem(vllm_on("v5litepod-8"))
    assert (
        "no ct5lp-hightpu-8t slice holds them; the smallest v5e slice that does is v5litepod-16 (ct5lp-hightpu-4t, "
        "topology 4x4: 256 GiB)" in problem
    )
    assert "quantize (engine.quantization)" in problem


def test_vllm_args_sizing_vllm_names_the_generations_smallest_slice_past_a_single_host_machine_type():
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


def test_vllm_args_sizing_vllm_model_size_required_shows_a_value():
    cfg = vllm_on("v5litepod-16")
    cfg["tpu-serving:serving"]["servedModelName"] = "acme/house-model"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    (problem,) = [p for p in err.value.problems if "modelSize" in p]
    assert (
        "set it, e.g. `modelSize: {parametersBillions: 13, precision: bf16, attention: {layers: 40, kvHeads: 40, "
        "headDim: 128}}` (precision: fp32, bf16, fp16, fp8, int8, int4)" in problem
    )


def test_vllm_args_sizing_vllm_does_not_suggest_quantizing_a_quantized_engine():
    problem = fit_problem(vllm_on("v5litepod-4", quantization="fp8"))
    assert "quantize" not in problem and "use a larger slice" in problem


def test_vllm_args_sizing_vllm_names_the_one_vm_slice_before_a_multi_host_one():
    """User review round 42, M2: the refusal sent a 70B model on a v6e-4 to v6e-8 on ct6e-standard-4t, two VMs under
    Ray, which the preview then cautions against; ct6e-standard-8t holds it on one VM."""
    problem = fit_problem(vllm_on("v6e-4"))
    assert (
        "use a larger slice: one VM holds them (machineType ct6e-standard-8t, topology 2x4: 256 GiB; a "
        "ct6e-standard-4t slice needs 2x4 over 2 VMs, which vLLM spans with Ray)" in problem
    )


def test_vllm_args_sizing_vllm_counts_the_kv_cache_of_one_max_model_len_request():
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


def test_vllm_args_sizing_vllm_declared_size_needs_its_attention_shape():
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


# The HBM fit (issue 38, point 1), refused alike by the stack file and the component's arguments (issue "A platform
# team adopts it", item 9: components refuse what the stack file refuses).


SHAPE = {"attention": {"layers": 80, "kvHeads": 8, "headDim": 128}}
"""A declared size's attention shape (a Llama 3 70B's)."""

FIT_REFUSALS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # id: (the stack's one tpuSlices entry, its serving keys changed)
    "405B-bf16-on-v6e-16": ({"slice": "v6e-16"}, {"servedModelName": "meta-llama/Llama-3.1-405B-Instruct"}),
    "70B-bf16-on-v5e-2x4-vm": ({"machineType": "ct5lp-hightpu-8t", "topology": "2x4"}, {}),
    "70B-bf16-on-v5e-8": ({"slice": "v5litepod-8"}, {}),
    "70B-float32-on-v6e-8": ({"slice": "v6e-8"}, {"engine": {"dtype": "float32"}}),
    "405B-fp8-at-load-on-v5e-16": (
        {"slice": "v5litepod-16"},
        {"servedModelName": "meta-llama/Llama-3.1-405B-Instruct", "engine": {"quantization": "fp8"}},
    ),
    "declared-200B-on-v5e-16": (
        {"slice": "v5litepod-16"},
        {"servedModelName": "acme/house-model", "modelSize": {"parametersBillions": 200, "precision": "bf16", **SHAPE}},
    ),
    "declared-70B-int8-at-half-hbm-on-v5e-4": (
        {"slice": "v5litepod-4"},
        {
            "servedModelName": "acme/house-model",
            "modelSize": {"parametersBillions": 70, "precision": "int8", **SHAPE},
            "engine": {"memoryUtilization": 0.5},
        },
    ),
    "235B-bf16-kv-cache-on-v6e-16": (
        {"slice": "v6e-16"},
        {"servedModelName": "Qwen/Qwen3-235B-A22B", "engine": {"maxModelLen": 32768, "tensorParallelSize": 16}},
    ),
}
"""Stacks whose model the slice's HBM does not hold (the issue's 405B in bf16 on a v6e-16, a model too big for a
v5e 2x4 VM), each with the vLLM fixture's other settings."""


def fit_stack(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> dict:
    cfg = copy.deepcopy(VLLM)
    pool = cfg["tpu-serving:tpuSlices"][0]
    del pool["slice"]
    pool |= tpu_slice
    cfg["tpu-serving:serving"] |= serving
    return cfg


def fit_args(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> VllmServingArgs:
    """The same model, slice and engine as the component's arguments."""
    shape = (
        catalog.resolve_slice_name(tpu_slice["slice"])
        if "slice" in tpu_slice
        else catalog.slice_shape(tpu_slice["machineType"], tpu_slice["topology"])
    )
    size = serving.get("modelSize")
    return vllm_args(
        shape=shape,
        served_model_name=serving.get("servedModelName", VLLM["tpu-serving:serving"]["servedModelName"]),
        engine=VllmEngineSettings(**{to_snake(k): v for k, v in serving.get("engine", {}).items()}),
        model_size=None if size is None else ModelSize(size["parametersBillions"], size["precision"], _shape(size)),
    )


def _shape(size: dict[str, Any]) -> Attention | None:
    """A declared size's ``attention``, as the component's argument takes it."""
    a = size.get("attention")
    return None if a is None else Attention(layers=a["layers"], kv_heads=a["kvHeads"], head_dim=a["headDim"])


def in_python(problem: str, args: str = "VllmServingArgs") -> str:
    """A stack file's problem as the component's arguments spell it: its fields from ``args``, in snake case
    (``serving.modelSize`` is the argument ``model_size``)."""
    text = problem.replace("(serving.modelSize)", "(model_size)").replace("tpu-serving:serving.", f"{args}.")
    return re.sub(r"\b[a-z]+(?:[A-Z][a-z]+)+\b", lambda m: to_snake(m.group()), text)


@pytest.mark.parametrize(("tpu_slice", "serving"), FIT_REFUSALS.values(), ids=FIT_REFUSALS.keys())
def test_vllm_args_hbm_fit_refusal_is_the_same_for_both(tpu_slice, serving):
    (refused,) = [p for p in stack_problems(fit_stack(tpu_slice, serving)) if "GiB of HBM" in p]
    assert argument_problems(fit_args(tpu_slice, serving)) == [in_python(refused)]


def test_vllm_args_hbm_fit_of_the_issue_names_the_fitting_slice_for_both():
    """Issue 38: Llama-3.1-405B in bf16 on a v6e-16 passed the library's checks; now its arguments are refused
    with the stack file's figures (754 GiB needed, 461 GiB usable, v6e-32 the smallest slice that holds it)."""
    (problem,) = argument_problems(fit_args(*FIT_REFUSALS["405B-bf16-on-v6e-16"]))
    assert problem == (
        "VllmServingArgs.served_model_name: 405B parameters in bf16 need about 754 GiB of HBM, and one request of "
        "engine.max_model_len 8192 tokens 7.9 GiB of KV cache: 762.2 GiB, more than the 460.8 GiB the engine may use "
        "on one 4x4 slice (512 GiB x engine.memory_utilization 0.9); use a larger slice (the "
        "smallest ct6e-standard-4t slice that holds them is v6e-32, topology 4x8: 1024 GiB), quantize "
        "(engine.quantization) or, for a smaller checkpoint, declare its size (model_size)"
    )


def test_vllm_args_unknown_model_size_is_required_by_both():
    """An unknown served name and no size: both refuse, each naming its own key and showing a value for it."""
    serving = {"servedModelName": "acme/house-model"}
    (refused,) = [p for p in stack_problems(fit_stack({"slice": "v5litepod-16"}, serving)) if "modelSize" in p]
    (python,) = argument_problems(fit_args({"slice": "v5litepod-16"}, serving))
    assert refused.startswith('tpu-serving:serving.modelSize: required for the HBM fit check, since servedModelName "')
    assert python.startswith('VllmServingArgs.model_size: required for the HBM fit check, since served_model_name "')
    assert (
        "`model_size=ModelSize(13, WeightPrecision.BF16, Attention(layers=40, kv_heads=40, head_dim=128))` "
        "(precision: fp32, bf16, fp16, fp8, int8, int4)" in python
    )
    assert refused.split("; known: ")[1] == python.split("; known: ")[1]
    fits = dict(serving, modelSize={"parametersBillions": 13, "precision": "bf16", **SHAPE})
    assert argument_problems(fit_args({"slice": "v5litepod-16"}, fits)) == []
