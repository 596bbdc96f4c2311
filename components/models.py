"""Model sizes: how much HBM the weights of a model need, for the slice-fit checks.

A stack declares a model's size (parameters and precision), or the library derives it from
an exact model name it knows (never from a substring of a name).
"""

import typing
from dataclasses import dataclass
from typing import Literal

from . import catalog
from .settings import described
from .validation import Choice

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


@dataclass(frozen=True)
class ModelCard:
    """A published model's size and the precision of its released weights."""

    parameters_billions: float
    precision: Precision


HUGGING_FACE_MODELS: dict[str, ModelCard] = {
    # https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct ("8B"; BF16 weights).
    "meta-llama/Llama-3.1-8B-Instruct": ModelCard(8, "bf16"),
    # https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct ("70B").
    "meta-llama/Llama-3.1-70B-Instruct": ModelCard(70, "bf16"),
    # https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct ("70B", BF16).
    "meta-llama/Llama-3.3-70B-Instruct": ModelCard(70, "bf16"),
    # https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct ("405B").
    "meta-llama/Llama-3.1-405B-Instruct": ModelCard(405, "bf16"),
    # https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct-FP8 (the 405B model quantized to FP8).
    "meta-llama/Llama-3.1-405B-Instruct-FP8": ModelCard(405, "fp8"),
    # https://huggingface.co/RedHatAI/Meta-Llama-3.1-405B-Instruct-quantized.w8a8 (Llama 3.1 405B
    # Instruct with INT8 weights and activations, a compressed-tensors checkpoint).
    "RedHatAI/Meta-Llama-3.1-405B-Instruct-quantized.w8a8": ModelCard(405, "int8"),
    # https://huggingface.co/Qwen/Qwen3-235B-A22B ("Number of Parameters: 235B in total", BF16).
    "Qwen/Qwen3-235B-A22B": ModelCard(235, "bf16"),
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


def size_example(key: str, python: bool = False) -> str:
    """How a stack file declares a model's size at ``key`` (``modelSize``, ``model``), or with ``python`` a
    component's argument ``key`` (``model_size``): one valid value and the precisions it takes."""
    value = (
        f"{key}=ModelSize(13, WeightPrecision.BF16)"
        if python
        else f"{key}: {{parametersBillions: 13, precision: bf16}}"
    )
    return f"set it, e.g. `{value}` (precision: {', '.join(typing.get_args(Precision))})"
