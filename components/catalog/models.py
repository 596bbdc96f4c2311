"""Model sizes: how much HBM the weights of a model need, for the slice-fit checks.

A stack declares a model's size (parameters and precision), or the library derives it from
an exact model name it knows (never from a substring of a name).
"""

import typing
from dataclasses import dataclass
from typing import Literal

from .. import catalog
from ..common.settings import described
from ..common.validation import Choice

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]


class WeightPrecision(Choice):
    """:data:`Precision` as a component argument takes it (a field of an arguments dataclass is never a
    ``Literal``: the component provider's schema has enums); the same values."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


BYTES_PER_PARAMETER: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
"""Weight bytes per parameter by precision (seed 002: N billion 16-bit parameters need about 2N GB)."""

MAXTEXT_MODEL_PARAMETERS: dict[str, float] = {
    "llama2-7b": 7,
    "llama2-13b": 13,
    "llama2-70b": 70,
    "llama3-8b": 8,
    "llama3-70b": 70,
    "llama3.1-8b": 8,
    "llama3.1-70b": 70,
    "llama3.1-405b": 405,
}
"""Parameters (billions) of MaxText ``model_name`` values (MaxText ``configs/models/<name>.yml``),
as the model cards state them (meta-llama/Llama-2-70b, meta-llama/Llama-3.1-405B on Hugging Face)."""


KV_CACHE_BYTES = 2
"""Bytes of one KV-cache element: vLLM TPU keeps its KV cache in bfloat16 unless told otherwise
(vllm-project/tpu-inference v0.27.0 ``tpu_inference/runner/kv_cache.py`` l.40, ``DEFAULT_KV_CACHE_DTYPE``)."""

KV_HEAD_LANES = 128
"""Each cached head is padded to a multiple of 128 elements (tpu-inference v0.27.0
``tpu_inference/kernels/ragged_paged_attention/v3/kernel.py`` l.261-275, ``get_kv_cache_shape``:
``align_to(actual_head_dim, 128)``)."""


@dataclass(frozen=True)
class Attention:
    """The attention shape that sizes a model's KV cache, as its Hugging Face ``config.json`` states it. The fit
    check needs it: weights that fit leave an engine no room for the cache of one full-length request, and vLLM
    then refuses to start (vllm-project/vllm ``vllm/v1/core/kv_cache_utils.py``, ``_check_enough_kv_cache_memory``:
    "To serve at least one request with the model's max seq len ... KV cache is needed")."""

    layers: int = described("Decoder layers (`num_hidden_layers` of the model's config.json).", ge=1, le=1024)
    kv_heads: int = described(
        "Key-value heads of a layer (`num_key_value_heads`; `num_attention_heads` when it has none).", ge=1, le=1024
    )
    head_dim: int = described(
        "Elements of one head (`head_dim`; `hidden_size` / `num_attention_heads` when it has none).", ge=1, le=1024
    )

    def kv_gib(self, tokens: int, tensor_parallel: int) -> float:
        """GiB of KV cache ``tokens`` take over a slice whose heads are split ``tensor_parallel`` ways: K and V of
        every layer; fewer KV heads than ``tensor_parallel`` are replicated up to it (tpu-inference v0.27.0
        ``tpu_inference/layers/vllm/custom_ops/linear.py`` l.73-120, ``replicas = tp // total_num_kv_heads``)."""
        heads = max(self.kv_heads, tensor_parallel)
        lanes = -(-self.head_dim // KV_HEAD_LANES) * KV_HEAD_LANES
        return tokens * self.layers * 2 * heads * lanes * KV_CACHE_BYTES / 2**30


@dataclass(frozen=True)
class ModelCard:
    """A published model's size, the precision of its released weights and its attention shape."""

    parameters_billions: float
    precision: Precision
    attention: Attention


# The attention shapes are MaxText's configs of the same models (AI-Hypercomputer/maxtext e591f30,
# maxtext-v0.2.4-10, src/maxtext/configs/models/<name>.yml l.17-24: base_num_decoder_layers, base_num_kv_heads,
# head_dim), which load the Hugging Face checkpoints.
LLAMA31_8B = Attention(layers=32, kv_heads=8, head_dim=128)  # llama3.1-8b.yml
LLAMA3_70B = Attention(layers=80, kv_heads=8, head_dim=128)  # llama3.1-70b.yml, llama3.3-70b.yml
LLAMA31_405B = Attention(layers=126, kv_heads=8, head_dim=128)  # llama3.1-405b.yml
QWEN3_235B_A22B = Attention(layers=94, kv_heads=4, head_dim=128)  # qwen3-235b-a22b.yml


HUGGING_FACE_MODELS: dict[str, ModelCard] = {
    # https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct ("8B"; BF16 weights).
    "meta-llama/Llama-3.1-8B-Instruct": ModelCard(8, "bf16", LLAMA31_8B),
    # https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct ("70B").
    "meta-llama/Llama-3.1-70B-Instruct": ModelCard(70, "bf16", LLAMA3_70B),
    # https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct ("70B", BF16).
    "meta-llama/Llama-3.3-70B-Instruct": ModelCard(70, "bf16", LLAMA3_70B),
    # https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct ("405B").
    "meta-llama/Llama-3.1-405B-Instruct": ModelCard(405, "bf16", LLAMA31_405B),
    # https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct-FP8 (the 405B model quantized to FP8).
    "meta-llama/Llama-3.1-405B-Instruct-FP8": ModelCard(405, "fp8", LLAMA31_405B),
    # https://huggingface.co/RedHatAI/Meta-Llama-3.1-405B-Instruct-quantized.w8a8 (Llama 3.1 405B
    # Instruct with INT8 weights and activations, a compressed-tensors checkpoint).
    "RedHatAI/Meta-Llama-3.1-405B-Instruct-quantized.w8a8": ModelCard(405, "int8", LLAMA31_405B),
    # https://huggingface.co/Qwen/Qwen3-235B-A22B ("Number of Parameters: 235B in total", BF16).
    "Qwen/Qwen3-235B-A22B": ModelCard(235, "bf16", QWEN3_235B_A22B),
}
"""Hugging Face repository ids -> size and released precision, as their model cards state them.
Matched exactly (never by substring) against the name a stack serves."""


def maxtext_precision(quantization: str | None, weight_dtype: str) -> Precision:
    """The precision the served weights have: the quantization, else the weight dtype.

    ``intmp`` (mixed int4/int8) is counted as int8, the larger of the two.
    """
    if quantization in ("int8", "intmp"):
        return "int8"
    if quantization == "int4":
        return "int4"
    if quantization == "fp8":
        return "fp8"
    return "fp32" if weight_dtype == "float32" else "bf16"


def weight_gib(parameters_billions: float, precision: str) -> float:
    """GiB of HBM the weights take."""
    # str(): a WeightPrecision hashes as its member's name, not as its value
    return parameters_billions * 1e9 * BYTES_PER_PARAMETER[str(precision)] / 2**30


def hbm_fit_problem(at: str, parameters_billions: float, precision: str, shape: catalog.SliceShape) -> str:
    """Why the weights don't fit one slice of ``shape`` (naming the smallest topology that does), or ``""``."""
    need = weight_gib(parameters_billions, precision)
    if need <= shape.hbm_gib:
        return ""
    fit = catalog.smallest_fitting_topology(shape.machine_type.name, need)
    hint = (
        f"the smallest {shape.machine_type.name} topology that fits is {fit.topology} ({fit.hbm_gib} GiB)"
        if fit
        else f"no {shape.machine_type.name} topology fits; {generation_fit(shape, need)}"
    )
    return (
        f"{at}: {parameters_billions:g}B parameters in {precision} need about {need:.0f} GiB of HBM, more than "
        f"one {shape.topology} slice has ({shape.hbm_gib} GiB); {hint}"
    )


@dataclass(frozen=True)
class ModelSize:
    """What a served model's weights take: its parameters and the precision they are served in. A component that
    places a model takes it (``VllmServingArgs.model_size``), as a stack file's ``serving.modelSize`` does."""

    parameters_billions: float = described("Parameter count in billions.", gt=0)
    precision: WeightPrecision = described("Precision of the served weights.")
    attention: Attention | None = described(
        "The model's attention shape, which sizes its KV cache; vLLM's fit check requires it with a declared size "
        "(the library knows it for the models it names).",
        default=None,
    )

    @property
    def gib(self) -> float:
        """GiB of HBM the weights take (one copy)."""
        return weight_gib(self.parameters_billions, self.precision)


def generation_fit(shape: catalog.SliceShape, required_gib: float) -> str:
    """Where weights no slice of ``shape``'s machine type holds would fit: the smallest slice of its generation
    that holds ``required_gib`` (a single-host type such as ``ct5lp-hightpu-8t`` has one topology only), or none."""
    gen = shape.generation
    fit = catalog.smallest_fitting_slice(gen, required_gib)
    if fit is None:
        return f"no {gen.name} slice holds them either"
    return (
        f"the smallest {gen.name} slice that does is {fit.slice_name} ({fit.machine_type.name}, topology "
        f"{fit.topology}: {fit.hbm_gib} GiB)"
    )


def size_example(key: str, python: bool = False, attention: bool = False) -> str:
    """How a stack file declares a model's size at ``key`` (``modelSize``, ``model``), or with ``python`` a
    component's argument ``key`` (``model_size``): one valid value, with its ``attention`` shape when the reader's
    fit check needs it, and the precisions it takes."""
    if python:
        shape = ", Attention(layers=40, kv_heads=40, head_dim=128)" if attention else ""
        value = f"{key}=ModelSize(13, WeightPrecision.BF16{shape})"
    else:
        shape = ", attention: {layers: 40, kvHeads: 40, headDim: 128}" if attention else ""
        value = f"{key}: {{parametersBillions: 13, precision: bf16{shape}}}"
    return f"set it, e.g. `{value}` (precision: {', '.join(typing.get_args(Precision))})"
