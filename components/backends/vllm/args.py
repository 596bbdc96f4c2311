"""The typed arguments of :class:`~tpu_serving.backends.vllm.component.VllmServing`.

Weights come from a GCS bucket, never from Hugging Face unless the stack asks for it: through a
read-only Cloud Storage FUSE CSI volume with the parallel-download file cache, or read by the
Run:ai model streamer straight from ``gs://``. The XLA compilation cache persists in a bucket.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ... import catalog
from ...catalog import SliceShape
from ...catalog.models import HUGGING_FACE_MODELS, ModelSize, WeightPrecision, generation_fit, size_example
from ...catalog.versions import PINS
from ...common.naming import NameLimit, check_dns_name, namespace_problem
from ...common.podspec import Shutdown
from ...common.settings import described, quantity
from ...common.spread import ZoneSpread
from ...common.validation import Choice
from ...platform import lws
from ...platform.buckets import is_object_path
from ...pools import compute_class
from .engine_settings import Dtype as Dtype  # re-exported: the arguments name them
from .engine_settings import VllmEngineSettings as VllmEngineSettings
from .engine_settings import VllmQuantization as VllmQuantization
from .engine_settings import extra_args_problem as extra_args_problem
from .file_cache import FileCache, memory_gib, memory_problem, pod_memory
from .images import VllmImages as VllmImages  # re-exported: the serving arguments name it
from .kv import KvTransfer
from .progress import VllmProbeSettings


class WeightsLoader(Choice):
    """How the engine reads the weights."""

    GCSFUSE = "gcsfuse"
    """A read-only Cloud Storage FUSE volume with the parallel-download file cache."""
    RUNAI_STREAMER = "runai-streamer"
    """The Run:ai model streamer reads ``gs://`` directly (``--load-format=runai_streamer``)."""
    HUGGING_FACE = "hugging-face"
    """Downloaded from the Hugging Face Hub at start; ``model`` is a repository id."""


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

    name: str = described("Secret name.", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", unshown=True)
    key: str = described("Key inside the Secret.", default="token", pattern=r"^[-._a-zA-Z0-9]+$", unshown=True)


def node_pools_problem(pools: Sequence[str]) -> str:
    """Each a GKE node pool name (library review 10, m3: an upper-case typo was reported only through the pods it
    left unplaced)."""
    bad = [(p, why) for p in pools if (why := check_dns_name(p, limit=NameLimit.GKE_NODE_POOL))]
    return f"{bad[0][0]!r}: {bad[0][1]}" if bad else ""


def aliases_problem(aliases: Sequence[str]) -> str:
    """Each alias a model name of 1 to 256 characters with no blank, each once."""
    bad = [a for a in aliases if not 1 <= len(a) <= 256 or any(c.isspace() for c in a)]
    if bad:
        return f"{bad[0]!r}: a model name of 1 to 256 characters, without blanks"
    twice = sorted({a for a in aliases if aliases.count(a) > 1})
    if twice:
        return f"{twice[0]!r} twice: each name once"
    return ""


def revision_problem(revision: str | None) -> str:
    """A Hub revision: a commit sha, tag or branch name of 1 to 255 characters, without blanks, not starting with
    ``-``."""
    if revision is None:
        return ""
    if 0 < len(revision) <= 255 and not revision.startswith("-") and not any(c.isspace() for c in revision):
        return ""
    return "must be a commit sha, tag or branch of 1 to 255 characters, without blanks, e.g. a 40-hex commit sha"


@dataclass(frozen=True)
class VllmServingArgs:
    """Arguments of :class:`VllmServing`."""

    namespace: str = described("Namespace of the workload.", check=namespace_problem)
    service_account: str = described(
        "Kubernetes service account of every pod (workload identity: weights and cache buckets).",
        check=check_dns_name,
    )
    """Kubernetes service account of every pod (workload identity: weights and cache buckets)."""
    shape: SliceShape = described("Shape of each serving slice; one group per slice.")
    model: str = described(
        "The weights: a path inside `weights_bucket` (a Hugging Face snapshot: config, tokenizer, safetensors), "
        "or a Hugging Face repository id when `loader` is `hugging-face`."
    )
    """The weights: a path inside ``weights_bucket`` (a Hugging Face snapshot: config, tokenizer,
    safetensors), or a Hugging Face repository id when ``loader`` is ``hugging-face``."""
    served_model_name: str = described(
        "The model name clients send, e.g. `meta-llama/Llama-3.3-70B-Instruct`.", min_length=1, max_length=256
    )
    """The model name clients send (``--served-model-name``)."""
    served_model_aliases: Sequence[str] = described(
        "Further names clients may send for the same model: vLLM answers to every name of `--served-model-name` and "
        "names the first in its responses (vllm-project/vllm#2894). To rename the served model without 404s during "
        "the rollout, add the new name here first, move the clients, then make it `served_model_name` "
        "(docs/upgrade.md, 'Renaming the served model').",
        default=(),
        check=aliases_problem,
    )
    loader: WeightsLoader = WeightsLoader.GCSFUSE
    """How the weights are read."""
    model_revision: str | None = described(
        "The Hub revision the `hugging-face` loader downloads (`--revision`): a commit sha, or a tag or branch. "
        "Unset, each group takes the repository's default branch when it starts, so groups started on different "
        "days may serve different files; a change of it is a rollout the preview shows. Production stacks pin a "
        "commit sha.",
        default=None,
        check=revision_problem,
    )
    file_cache: FileCache = described(
        "Where the `gcsfuse` loader's file cache (the whole model, filled at every group start) lives: `memory` (the "
        "FUSE sidecar requests it), `boot-disk`, or `auto`: memory when the VM holds it beside the pod's requests.",
        default=FileCache.AUTO,
    )
    weights_bucket: str | None = None
    """Bucket holding ``model`` (``gcsfuse`` and ``runai-streamer``)."""
    cache_bucket: str | None = None
    """Bucket of the persistent XLA compilation cache; ``None`` compiles afresh on every start."""
    cache_path: str = "vllm-compilation-cache"
    """Folder of the compilation cache inside ``cache_bucket``."""
    hf_token_secret: SecretKey | None = None
    """Secret holding a Hugging Face token (``hugging-face`` loader only)."""
    replicas: int = described(
        "Leader-worker groups; each takes one whole slice. Leave unset with `autoscaling`.", default=1, ge=1, le=64
    )
    """Groups, one slice each."""
    autoscaled: bool = False
    """An HPA owns the group count (``replicas`` is left out of the LeaderWorkerSet, so a ``pulumi up``
    never resets what the HPA chose; ``replicas`` then gives the HPA's minimum, which ``canary_groups`` counts from)."""
    rollout: lws.Rollout = described(lws.ROLLOUT_DESCRIPTION, default=lws.Rollout.IN_PLACE)
    canary_groups: int | None = described(lws.CANARY_DESCRIPTION, default=None, ge=1, le=63)
    """Groups, from the highest index, that take a template change; the others are held (``partition``). With
    ``autoscaled``, counted from ``replicas`` as the HPA's minimum."""
    lws_version: str = described(
        "The LeaderWorkerSet release the cluster runs; it picks the group restart policy.",
        default=PINS["lws"].value,
        check=lws.version_problem,
    )
    name: str = described(
        "LeaderWorkerSet name; the first leader pod is `<name>-0`.", default="vllm", check=check_dns_name
    )
    """LeaderWorkerSet name; its first leader pod is ``<name>-0``."""
    service_name: str = described(
        "Name of the ClusterIP Service on port 8000; not the LeaderWorkerSet's name, whose headless Service the LWS "
        "controller creates.",
        default="vllm-api",
        check=check_dns_name,
    )
    """Name of the ClusterIP Service on the leaders' serving port."""
    engine: VllmEngineSettings = field(default_factory=VllmEngineSettings)
    """Engine settings."""
    images: VllmImages = field(default_factory=VllmImages)
    """Container image."""
    probes: VllmProbeSettings = field(default_factory=VllmProbeSettings)
    """Health probe timing of the server, and how long its engine may stand still with requests running."""
    shutdown: Shutdown = field(default_factory=Shutdown)
    """How the group's pods leave: the drain of the requests in flight and the grace period that covers it (a prefill
    server's hold is its KV pull timeout, :func:`~.pods.shutdown`)."""
    requests: VllmRequests = field(default_factory=VllmRequests)
    """CPU, memory and shared memory."""
    node_pools: Sequence[str] = described(
        "GKE node pools the groups may take (`cloud.google.com/gke-nodepool`); empty: any pool of the slice's shape.",
        default=(),
        check=node_pools_problem,
    )
    """A disaggregated role takes its own slice kind's pools only, though the other role's have the same shape."""
    compute_class: str | None = described(
        "ComputeClass the groups select (`cloud.google.com/compute-class`, tolerating its taint on the class's own "
        "pools): a :class:`~tpu_serving.pools.compute_class.TpuComputeClass` of the slice's shape; None: none.",
        default=None,
        check=compute_class.name_problem,
    )
    zones: int = described(
        "Zones the serving slices span. Two or more: the groups' leaders spread over that many zones (`zone_spread`).",
        default=1,
        ge=1,
    )
    zone_spread: ZoneSpread = described(
        "`required`: the standing groups (the HPA's minimum) wait in their zones for a free slice, the others take "
        "any zone's; `preferred`: every group takes any zone's (a change rolls every group).",
        default=ZoneSpread.REQUIRED,
    )
    model_size: ModelSize | None = described(
        "Size of the served model for the HBM fit check; unset derives it from the served model name (an exact "
        "Hugging Face id the library knows) and the engine's quantization and dtype, and any other name is refused.",
        default=None,
    )
    """Parameters and served precision of the model, checked against the HBM of one slice of ``shape``."""
    kv_transfer: KvTransfer | None = None
    """The engine's part in a disaggregated prefill/decode pair (:class:`~.disagg_args.VllmDisaggregatedArgs`
    sets it); None serves alone."""
    priority_class_name: str | None = None
    """PriorityClass of the group's pods."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        found = []
        if self.served_model_name in self.served_model_aliases:
            found.append(f"served_model_aliases: {self.served_model_name!r} is served_model_name already")
        if self.loader != WeightsLoader.HUGGING_FACE and not self.weights_bucket:
            found.append(f"weights_bucket: required with loader {self.loader.value!r}")
        if self.loader != WeightsLoader.HUGGING_FACE and (not is_object_path(self.model)):
            found.append(f"model = {self.model!r}: must be a path inside the weights bucket, e.g. llama-3.3-70b")
        if self.hf_token_secret is not None and self.loader != WeightsLoader.HUGGING_FACE:
            found.append("hf_token_secret: only the hugging-face loader reads a token")
        if self.model_revision is not None and self.loader != WeightsLoader.HUGGING_FACE:
            found.append("model_revision: only the hugging-face loader downloads a revision; valid: unset")
        found += parallelism_problems("engine", self.engine, self.shape)
        if clash := lws.service_name_problem(self.name, self.service_name):
            found.append(f"service_name = {self.service_name!r}: {clash}")
        if self.canary_groups is not None and (
            why := lws.canary_problem(self.canary_groups, self.replicas, "replicas")
        ):
            found.append(f"canary_groups = {self.canary_groups}: {why}")
        if self.file_cache == FileCache.MEMORY and (why := memory_problem(*self._cache_terms())):
            found.append(f"file_cache = 'memory': {why}")
        return found + fit_problems(self.model_size, self.served_model_name, [("", self.engine)], self.shape, PYTHON)

    def _cache_terms(self) -> tuple[str, int, float | None]:
        """The VM's machine type, the largest pod's own memory (container and ``/dev/shm``), the weights' GiB."""
        r, size = self.requests, served_size(self.model_size, self.served_model_name, self.engine)
        gib = None if size is None else size.gib
        return self.shape.machine_type.name, pod_memory(r), gib

    @property
    def memory_cache_gib(self) -> int | None:
        """GiB of the memory-backed file cache of the weights (:mod:`.file_cache`); None: on the boot disk, or none."""
        return memory_gib(self.file_cache, *self._cache_terms()) if self.loader == WeightsLoader.GCSFUSE else None

    @property
    def group_size(self) -> int:
        """Pods per group: one per TPU VM of the slice (the leader holds chips too)."""
        return self.shape.vms

    @property
    def multi_host(self) -> bool:
        return self.shape.vms > 1


def parallelism_problems(
    at: str, engine: VllmEngineSettings, shape: SliceShape, spell: Callable[[str], str] = str
) -> list[str]:
    """Tensor x pipeline parallelism must use exactly the chips of one slice (``spell`` writes a field's name as the
    keys do: Python's for arguments, camelCase for a stack file)."""
    devices = shape.devices
    tp, pp = engine.parallelism(devices)
    if tp * pp == devices:
        return []
    given = spell("tensor_parallel_size" if engine.tensor_parallel_size else "pipeline_parallel_size")
    valid = [f"{t} x {devices // t}" for t in range(1, devices + 1) if devices % t == 0]
    unit = "chips" if devices == shape.chips else f"devices ({shape.generation.devices_per_chip} per chip)"
    return [
        f"{at}.{given}: tensor {tp} x pipeline {pp} = {tp * pp} {unit}, but a {shape.topology} slice "
        f"({shape.machine_type.name}) has {devices}; valid tensor x pipeline: {', '.join(valid)}"
    ]


@dataclass(frozen=True)
class Keys:
    """How a message of the HBM fit names the settings it speaks of: the stack file's keys or the component's fields."""

    prefix: str
    """Before a field's name: ``tpu-serving:serving.`` in a stack file, nothing in Python."""
    spell: Callable[[str], str]
    """A field's name as the keys write it (camelCase in a stack file)."""
    declare: str
    """Where the reader declares the model's size, as the hint names it."""
    example: str
    """A valid declared size and the precisions it takes."""


PYTHON = Keys("", str, "model_size", size_example("model_size", python=True, attention=True))
"""The component's arguments' spelling (``VllmServingArgs``)."""


def served_precision(engine: VllmEngineSettings, released: str) -> WeightPrecision:
    """The precision the served weights have: fp8 when quantized at load, the checkpoint's own (``released``) for
    a pre-quantized checkpoint or ``dtype: auto``, else the dtype."""
    if engine.quantization == VllmQuantization.FP8:
        return WeightPrecision.FP8
    if engine.quantization is not None or engine.dtype == Dtype.AUTO:
        return WeightPrecision(released)
    return WeightPrecision.FP32 if engine.dtype == Dtype.FLOAT32 else WeightPrecision.BF16


def served_size(declared: ModelSize | None, served_model_name: str, engine: VllmEngineSettings) -> ModelSize | None:
    """The declared size, else that of the exact Hugging Face id :data:`~tpu_serving.catalog.models.HUGGING_FACE_MODELS`
    knows, in the precision ``engine`` serves it; None when neither."""
    if declared is not None:
        return declared
    known = HUGGING_FACE_MODELS.get(served_model_name)
    if known is None:
        return None
    return ModelSize(known.parameters_billions, served_precision(engine, known.precision), known.attention)


def fit_problems(
    declared: ModelSize | None,
    served_model_name: str,
    engines: Sequence[tuple[str, VllmEngineSettings]],
    shape: SliceShape,
    keys: Keys,
) -> list[str]:
    """The one HBM fit rule of the stack file's check and the component's arguments: the model's size is known
    (declared, or :func:`served_size`), and its weights fit the share of one ``shape`` slice's HBM each engine
    may use (``engines``: the suffix of its key in a message and the engine; the first one's dtype and
    quantization give the served precision, as disaggregated roles share them)."""
    size = served_size(declared, served_model_name, engines[0][1])
    if size is None:
        return [
            f"{keys.prefix}{keys.spell('model_size')}: required for the HBM fit check, since "
            f"{keys.spell('served_model_name')} {json.dumps(served_model_name)} is not a model the library knows; "
            f"{keys.example}; known: {', '.join(HUGGING_FACE_MODELS)}"
        ]
    at = keys.prefix + keys.spell("model_size" if declared is not None else "served_model_name")
    if size.attention is None:
        return [
            f"{keys.prefix}{keys.spell('model_size')}.attention: required for the KV cache's share of the HBM fit "
            f"check: the layers, key-value heads and head dimension of the model's config.json "
            f"(num_hidden_layers, num_key_value_heads, head_dim); {keys.example}"
        ]
    found = (_fit_problem(at + suffix, size, e, shape, keys, declared is None) for suffix, e in engines)
    return [p for p in found if p]


def _fit_problem(
    at: str, size: ModelSize, engine: VllmEngineSettings, shape: SliceShape, keys: Keys, derived: bool
) -> str:
    """The weights and the KV cache of one ``max_model_len`` request must fit in the share of the slice's HBM the
    engine may use (vLLM refuses to start without that cache: :class:`~tpu_serving.catalog.models.Attention`); the message
    names the smallest slice of the machine type that would hold them, the longest request the room left holds
    when the weights alone fit, suggests quantizing only when the engine does not already, and declaring the size
    only when it was ``derived`` from the name."""
    assert size.attention is not None  # fit_problems asks for it first
    tensor_parallel = engine.tensor_parallel_size or shape.devices // engine.pipeline_parallel_size
    per_token = size.attention.kv_gib(1, tensor_parallel)
    kv, utilization = per_token * engine.max_model_len, engine.memory_utilization
    need, usable = size.gib + kv, shape.hbm_gib * utilization
    if need <= usable:
        return ""
    key = f"engine.{keys.spell('max_model_len')}"
    shorter = (
        f"lower {key} to at most {int((usable - size.gib) / per_token)}, or "
        if usable - size.gib >= per_token * 128
        else ""
    )
    quantize = "" if engine.quantization is not None else ", quantize (engine.quantization)"
    declare = f" or, for a smaller checkpoint, declare its size ({keys.declare})" if derived else ""
    return (
        f"{at}: {size.parameters_billions:g}B parameters in {size.precision} need about {size.gib:.0f} GiB of HBM, "
        f"and one request of {key} {engine.max_model_len} tokens {kv:.1f} GiB of KV cache: {need:.1f} GiB, more "
        f"than the {usable:.1f} GiB the engine may use on one {shape.topology} slice "
        f"({shape.hbm_gib} GiB x engine.{keys.spell('memory_utilization')} {utilization:g}); "
        f"{shorter}{_larger_slice(shape, need / utilization)}{quantize}{declare}"
    )


def _larger_slice(shape: SliceShape, required_gib: float) -> str:
    """The smallest slice that holds ``required_gib`` of HBM: one VM's first, as vLLM across VMs is the caution's
    (MULTI_HOST_CAUTION; user review round 42, M2), else the machine type's, else the generation's."""
    mt = shape.machine_type.name
    fit = catalog.smallest_fitting_topology(mt, required_gib)
    one_vm = catalog.smallest_fitting_slice(shape.generation, required_gib, one_vm=True)
    if one_vm is not None and (fit is None or fit.multi_host):
        across = f"; a {mt} slice needs {fit.topology} over {fit.vms} VMs, which vLLM spans with Ray" if fit else ""
        return (
            f"use a larger slice: one VM holds them (machineType {one_vm.machine_type.name}, topology "
            f"{one_vm.topology}: {one_vm.hbm_gib} GiB{across})"
        )
    if fit:
        return (
            f"use a larger slice (the smallest {mt} slice that holds them is {fit.slice_name}, topology "
            f"{fit.topology}: {fit.hbm_gib} GiB)"
        )
    return f"no {mt} slice holds them; {generation_fit(shape, required_gib)}"
