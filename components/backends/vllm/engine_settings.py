"""The engine settings of ``vllm serve`` (:class:`VllmEngineSettings`) and the rules of its ``extra_args``: the flags
the library sets or derives, those that turn off its metrics and those that name a secret are refused."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...common.settings import described, names_a_secret
from ...common.validation import Choice
from .facts import (
    CONFIG_FILE_FLAG,
    ENGINE_FLAGS,
    LIBRARY_FLAGS,
    PARALLEL_FLAGS_ALLOWED,
    SECRET_FLAGS,
    SERVING_FLAGS,
    STATS_OFF_FLAGS,
    TOPOLOGY_FLAGS,
)

_FLAG = re.compile(r"^--[a-z0-9][a-z0-9-]*(=.*)?$")
_NAME = re.compile(r"^--[A-Za-z0-9][A-Za-z0-9_-]*$")
"""A flag's name as a message may show it (the part of an entry before any ``=``), in either case and with ``_``
too, so that ``--API-KEY=...`` and ``--hf_token=...`` are refused as secrets by name; a name with a space, a ``:``
or a single dash is no flag's (``--hf-token hf_...``) and is never shown."""


class Dtype(Choice):
    """``--dtype`` of the weights and activations (``auto`` takes the checkpoint's)."""

    AUTO = "auto"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"


class VllmQuantization(Choice):
    """``--quantization`` methods vLLM TPU serves (vllm-project/tpu-inference@v0.27.0
    tpu_inference/platforms/tpu_platform.py ``supported_quantization``; the same list in the tpu-inference
    0.29.0 wheel the pinned image requires)."""

    COMPRESSED_TENSORS = "compressed-tensors"
    """A pre-quantized checkpoint (INT8 W8A8 on v5e/v6e: tpu-inference docs/includes/quantization.md)."""
    AUTO_AWQ = "auto_awq"
    """A pre-quantized AWQ checkpoint (INT4 W4A16)."""
    FP8 = "fp8"
    """FP8 weights, quantized at load (native FP8 on TPU7x only, per the same table)."""


def extra_args_problem(args: Sequence[str]) -> str:
    """Why ``args`` are not engine flags ``--flag`` / ``--flag=value`` the library leaves to the user, or ``""``.

        Refused: a flag the component sets (:data:`~.facts.LIBRARY_FLAGS`, or an abbreviation of one, which
        ``vllm serve`` would take for it), one that changes the chips or hosts an engine spans
        (:data:`~.facts.TOPOLOGY_FLAGS`), one that turns off the engine's metrics (:data:`~.facts.STATS_OFF_FLAGS`),
        ``--config`` and a flag that names a secret (:func:`names_a_secret`) or carries
    one (:data:`~.facts.SECRET_FLAGS`, or an abbreviation: ``--hf-tok=...`` is ``--hf-token``).
        A message never shows a value: it may be a secret (a ``--api-key=...``, or the item after a bare one). It names
        flags by their names (the part before any ``=``, when it has a flag's shape), and an entry that is no ``--flag`` / ``--flag=value`` by
        its position only: it may be a token pasted as it is, or a flag and its value in one string (``--hf-token hf_...``,
        ``--api-key:...``).
    """
    names = [n for a in args if isinstance(a, str) and _NAME.match(n := a.split("=", 1)[0])]
    engine = _engine_flags(names)
    rules = [
        (
            _malformed(args),
            "each must be `--flag` or `--flag=value` with a lower-case flag name (named by position: the entry is "
            "not shown)",
        ),
        (
            engine,
            f"set by the component from the engine settings ({', '.join(dict.fromkeys(engine.values()))}); "
            "set those instead",
        ),
        (
            _serving_flags(names),
            "set by the component from the serving settings (the model, its name, the loader, the port the Service "
            "and probes use, Ray across a multi-host group)",
        ),
        (
            _topology_flags(names),
            "would change the chips or hosts one engine spans; the library runs one engine per slice over all its "
            "chips (tensor x pipeline parallelism), so serve more copies with more slices",
        ),
        (
            [n for n in names if _flag(n, STATS_OFF_FLAGS) in STATS_OFF_FLAGS],
            "turns off vLLM's stat loggers and with them every vllm: metric (vllm:num_requests_running, "
            "vllm:num_requests_waiting, vllm:generation_tokens...), which the leaders' readiness and liveness, the "
            "autoscaler and the alerts read",
        ),
        (
            [n for n in names if n == CONFIG_FILE_FLAG],
            "a config file may set any flag, those the component sets too; pass the flags here",
        ),
        (
            _secret_flags(names),
            "a secret on the command line is readable by anyone who can read the pod spec or the plan; the "
            "Hugging Face token comes from a Kubernetes Secret (hf_token_secret, hfTokenSecret in a stack file), "
            "and the library passes no other secret",
        ),
    ]
    return "; ".join(f"{', '.join(sorted(set(which)))}: {why}" for which, why in rules if which)


def _malformed(args: Sequence[str]) -> list[str]:
    """The entries that are no ``--flag`` / ``--flag=value``, by position, in order, as one item (or none)."""
    malformed = [f"[{i}]" for i, a in enumerate(args) if not isinstance(a, str) or not _FLAG.match(a)]
    return [", ".join(malformed)] if malformed else []


def _engine_flags(names: list[str]) -> dict[str, str]:
    """Each name that is (or abbreviates) a flag the component sets from an engine setting -> that setting."""
    return {n: ENGINE_FLAGS[_flag(n, LIBRARY_FLAGS)] for n in names if _flag(n, LIBRARY_FLAGS) in ENGINE_FLAGS}


def _serving_flags(names: list[str]) -> list[str]:
    """The names that are (or abbreviate) a flag the component sets from the serving settings."""
    return [n for n in names if _flag(n, LIBRARY_FLAGS) in SERVING_FLAGS]


def _topology_flags(names: list[str]) -> list[str]:
    """The names, none of the component's flags, that change the chips or hosts one engine spans."""
    return [n for n in names if _flag(n, LIBRARY_FLAGS) not in LIBRARY_FLAGS and _changes_topology(n)]


def _secret_flags(names: list[str]) -> list[str]:
    """The names that name a secret or are (or abbreviate) a flag that carries one."""
    return [n for n in names if names_a_secret(n) or _flag(n, SECRET_FLAGS) in SECRET_FLAGS]


def _changes_topology(name: str) -> bool:
    """A flag of :data:`~.facts.TOPOLOGY_FLAGS` (or its abbreviation), or any ``-parallel`` flag but the allowed."""
    return _flag(name, TOPOLOGY_FLAGS) in TOPOLOGY_FLAGS or (
        "-parallel" in name and _flag(name, PARALLEL_FLAGS_ALLOWED) not in PARALLEL_FLAGS_ALLOWED
    )


def _flag(name: str, flags: frozenset[str]) -> str:
    """The flag of ``flags`` that ``name`` is, or abbreviates (``vllm serve`` keeps argparse's ``allow_abbrev``:
    ``--tensor-parallel`` is ``--tensor-parallel-size``), else ``name``."""
    if name in flags:
        return name
    return next((f for f in sorted(flags) if len(name) > 2 and f.startswith(name)), name)


@dataclass(frozen=True)
class VllmEngineSettings:
    """Engine settings of ``vllm serve``."""

    max_model_len: int = described(
        "Longest prompt plus output, in tokens (`--max-model-len`).", default=8192, ge=128, le=1048576
    )
    dtype: Dtype = described(
        "Weights and activations dtype (`--dtype`); `auto` takes the checkpoint's.", default=Dtype.AUTO
    )
    quantization: VllmQuantization | None = described(
        "Weight quantization (`--quantization`); unset serves the checkpoint as it is.", default=None
    )
    tensor_parallel_size: int | None = described(
        "Tensor parallelism (`--tensor-parallel-size`); unset uses every chip of the slice over the pipeline stages.",
        default=None,
        ge=1,
        le=256,
    )
    pipeline_parallel_size: int = described(
        "Pipeline stages (`--pipeline-parallel-size`); tensor x pipeline must equal the slice's chips (its TensorCores "
        "on TPU7x, two devices a chip).",
        default=1,
        ge=1,
        le=64,
    )
    block_size: int | None = described(
        "Tokens per KV-cache block (`--block-size`); unset takes the engine's. Disaggregated roles must agree.",
        default=None,
        ge=1,
        le=4096,
    )
    memory_utilization: float = described(
        "Share of each chip's HBM the engine may use for weights, activations and KV cache (`--gpu-memory-utilization`).",
        default=0.9,
        ge=0.1,
        le=0.98,
    )
    extra_args: Sequence[str] = described(
        "Further engine arguments, each `--flag` or `--flag=value`, appended as given; a flag the library sets or "
        "derives (the engine settings, serving, parallelism and topology flags), one that turns off its metrics "
        "(`--disable-log-stats`) or one that names a secret is refused.",
        default=(),
        check=extra_args_problem,
        unshown=True,
    )

    def parallelism(self, devices: int) -> tuple[int, int]:
        """``(tensor, pipeline)`` over a slice's ``devices`` (:attr:`~tpu_serving.catalog.SliceShape.devices`): tensor
        derived when unset."""
        pp = self.pipeline_parallel_size
        return (self.tensor_parallel_size or max(devices // pp, 1)), pp
