"""The typed arguments of :class:`~tpu_serving.backends.vllm.component.VllmServing`.

Weights come from a GCS bucket, never from Hugging Face unless the stack asks for it: through a
read-only Cloud Storage FUSE CSI volume with the parallel-download file cache, or read by the
Run:ai model streamer straight from ``gs://``. The XLA compilation cache persists in a bucket.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ... import lws
from ...buckets import is_object_path
from ...catalog import SliceShape
from ...images import pinned_image_problem
from ...podspec import ProbeSettings
from ...settings import described, quantity
from ...validation import Choice
from ...versions import PINS
from .facts import DEFAULT_IMAGE, LIBRARY_FLAGS

_FLAG = re.compile(r"^--[a-z0-9][a-z0-9-]*(=.*)?$")


class WeightsLoader(Choice):
    """How the engine reads the weights."""

    GCSFUSE = "gcsfuse"
    """A read-only Cloud Storage FUSE volume with the parallel-download file cache."""
    RUNAI_STREAMER = "runai-streamer"
    """The Run:ai model streamer reads ``gs://`` directly (``--load-format=runai_streamer``)."""
    HUGGING_FACE = "hugging-face"
    """Downloaded from the Hugging Face Hub at start; ``model`` is a repository id."""


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
    """Why ``args`` are not engine flags ``--flag`` / ``--flag=value`` the library leaves to the user, or ``""``."""
    found = []
    bad = [a for a in args if not isinstance(a, str) or not _FLAG.match(a)]
    if bad:
        found.append(f"{', '.join(map(repr, bad))}: each must be `--flag` or `--flag=value` (lower-case flag name)")
    owned = sorted({a.split("=", 1)[0] for a in args if isinstance(a, str)} & LIBRARY_FLAGS)
    if owned:
        found.append(f"{', '.join(owned)}: set by the component from its own settings; use those instead")
    return "; ".join(found)


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
        "Pipeline stages (`--pipeline-parallel-size`); tensor x pipeline must equal the slice's chips.",
        default=1,
        ge=1,
        le=64,
    )
    memory_utilization: float = described(
        "Share of each chip's HBM the engine may use for weights, activations and KV cache (`--gpu-memory-utilization`).",
        default=0.9,
        ge=0.1,
        le=0.98,
    )
    extra_args: Sequence[str] = described(
        "Further engine arguments, each `--flag` or `--flag=value`, appended as given.",
        default=(),
        check=extra_args_problem,
    )

    def parallelism(self, chips: int) -> tuple[int, int]:
        """``(tensor, pipeline)`` over ``chips``: tensor derived when unset."""
        pp = self.pipeline_parallel_size
        return (self.tensor_parallel_size or max(chips // pp, 1)), pp


@dataclass(frozen=True)
class VllmImages:
    """Container image of the engine."""

    vllm: str = described(
        "vLLM TPU image (leader and workers), pinned to a release tag or digest (`latest` is refused).",
        default=DEFAULT_IMAGE,
        check=pinned_image_problem,
    )


@dataclass(frozen=True)
class VllmRequests:
    """CPU, memory and shared memory of the pods; each pod has a TPU VM to itself."""

    leader_cpu: str = quantity("Leader CPU request.", "24")
    leader_memory: str = quantity("Leader memory request.", "96Gi")
    worker_cpu: str = quantity("Worker CPU request (per TPU VM).", "24")
    worker_memory: str = quantity("Worker memory request (per TPU VM).", "96Gi")
    shm_size: str = quantity("Size of the memory-backed `/dev/shm` of every pod.", "30Gi")


@dataclass(frozen=True)
class SecretKey:
    """A key of a Kubernetes Secret in the serving namespace."""

    name: str = described("Secret name.", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    key: str = described("Key inside the Secret.", default="token", pattern=r"^[-._a-zA-Z0-9]+$")


@dataclass(frozen=True)
class VllmServingArgs:
    """Arguments of :class:`VllmServing`."""

    namespace: str
    """Namespace of the workload."""
    service_account: str
    """Kubernetes service account of every pod (workload identity: weights and cache buckets)."""
    shape: SliceShape
    """Shape of each serving slice; one group per slice."""
    model: str
    """The weights: a path inside ``weights_bucket`` (a Hugging Face snapshot: config, tokenizer,
    safetensors), or a Hugging Face repository id when ``loader`` is ``hugging-face``."""
    served_model_name: str
    """The model name clients send (``--served-model-name``)."""
    loader: WeightsLoader = WeightsLoader.GCSFUSE
    """How the weights are read."""
    weights_bucket: str | None = None
    """Bucket holding ``model`` (``gcsfuse`` and ``runai-streamer``)."""
    cache_bucket: str | None = None
    """Bucket of the persistent XLA compilation cache; ``None`` compiles afresh on every start."""
    cache_path: str = "vllm-compilation-cache"
    """Folder of the compilation cache inside ``cache_bucket``."""
    hf_token_secret: SecretKey | None = None
    """Secret holding a Hugging Face token (``hugging-face`` loader only)."""
    replicas: int = 1
    """Groups, one slice each."""
    autoscaled: bool = False
    """An HPA owns the group count (``replicas`` is left out of the LeaderWorkerSet, so a ``pulumi up``
    never resets what the HPA chose)."""
    rollout: lws.Rollout = described(lws.ROLLOUT_DESCRIPTION, default=lws.Rollout.IN_PLACE)
    lws_version: str = described(
        "The LeaderWorkerSet release the cluster runs; it picks the group restart policy.",
        default=PINS["lws"].value,
        check=lws.version_problem,
    )
    name: str = "vllm"
    """LeaderWorkerSet name; its first leader pod is ``<name>-0``."""
    service_name: str = "vllm-api"
    """Name of the ClusterIP Service on the leaders' serving port."""
    engine: VllmEngineSettings = field(default_factory=VllmEngineSettings)
    """Engine settings."""
    images: VllmImages = field(default_factory=VllmImages)
    """Container image."""
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    """Health probe timing of the server."""
    requests: VllmRequests = field(default_factory=VllmRequests)
    """CPU, memory and shared memory."""
    priority_class_name: str | None = None
    """PriorityClass of the group's pods."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.validation`)."""
        found = []
        if self.loader != WeightsLoader.HUGGING_FACE and not self.weights_bucket:
            found.append(f"weights_bucket: required with loader {self.loader.value!r}")
        if self.loader != WeightsLoader.HUGGING_FACE and (not is_object_path(self.model)):
            found.append(f"model = {self.model!r}: must be a path inside the weights bucket, e.g. llama-3.3-70b")
        if self.hf_token_secret is not None and self.loader != WeightsLoader.HUGGING_FACE:
            found.append("hf_token_secret: only the hugging-face loader reads a token")
        found += parallelism_problems("engine", self.engine, self.shape)
        if clash := lws.service_name_problem(self.name, self.service_name):
            found.append(f"service_name = {self.service_name!r}: {clash}")
        return found

    @property
    def group_size(self) -> int:
        """Pods per group: one per TPU VM of the slice (the leader holds chips too)."""
        return self.shape.vms

    @property
    def multi_host(self) -> bool:
        return self.shape.vms > 1


def parallelism_problems(at: str, engine: VllmEngineSettings, shape: SliceShape) -> list[str]:
    """Tensor x pipeline parallelism must use exactly the chips of one slice."""
    tp, pp = engine.parallelism(shape.chips)
    if tp * pp == shape.chips:
        return []
    given = "tensorParallelSize" if engine.tensor_parallel_size else "pipelineParallelSize"
    valid = [f"{t} x {shape.chips // t}" for t in range(1, shape.chips + 1) if shape.chips % t == 0]
    return [
        f"{at}.{given}: tensor {tp} x pipeline {pp} = {tp * pp} chips, but a {shape.topology} slice "
        f"({shape.machine_type.name}) has {shape.chips}; valid tensor x pipeline: {', '.join(valid)}"
    ]
